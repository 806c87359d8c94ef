/* The environment record python.bitsandbytes reads, as the python provider
 * leaves it: the selected environment with bitsandbytes' version and site,
 * torch's CUDA and (for the load beyond --quick) the interpreter. Shared by
 * test_bnb.c and test_bnb_load.c. */
#ifndef AITK_TESTS_PROBES_BNB_ENV_H
#define AITK_TESTS_PROBES_BNB_ENV_H

#include <cjson/cJSON.h>

/* Built, not printed: a Windows folder's backslashes are JSON escapes.
 * `interpreter` may be NULL. */
static inline cJSON *bnb_env(const char *version, const char *cuda, const char *site,
                             const char *interpreter)
{
    cJSON *env = cJSON_CreateObject();
    cJSON *sel = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(env, "python"),
                                                "environments"),
                         sel);
    if (interpreter)
        cJSON_AddStringToObject(sel, "interpreter", interpreter);
    cJSON *bnb = cJSON_AddObjectToObject(cJSON_AddObjectToObject(sel, "packages"), "bitsandbytes");
    cJSON_AddStringToObject(bnb, "version", version);
    cJSON_AddStringToObject(bnb, "site", site);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(sel, "torch"), "cuda", cuda);
    return env;
}

#endif
