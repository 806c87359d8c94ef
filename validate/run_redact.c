/* The redaction of a run (run_redact.h): who runs it and where, learnt
 * before any probe, so that stderr is redacted from the first line. */
#include "validate/run_redact.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <sys/utsname.h>
#endif

#include "common/alloc.h"

/* This machine's network name: what --redact must remove wherever it appears. */
static int machine_name(char *out, size_t size)
{
#ifdef _WIN32
    DWORD n = (DWORD)size;
    return GetComputerNameA(out, &n) ? 0 : -1;
#else
    struct utsname un;
    if (uname(&un) != 0)
        return -1;
    snprintf(out, size, "%s", un.nodename);
    return 0;
#endif
}

/* The last part of the home folder, which is the account name on POSIX
 * systems and Windows alike. Trailing separators are not a part: env -i
 * jobs and container images often set HOME=/data/jdoe/, and with USER
 * unset that name would be learnt from nowhere else. */
static aitk_status add_home_user(aitk_redactor *r, const char *home)
{
    size_t end = home ? strlen(home) : 0, start;
    while (end > 0 && (home[end - 1] == '/' || home[end - 1] == '\\'))
        end--;
    for (start = end; start > 0 && home[start - 1] != '/' && home[start - 1] != '\\'; start--)
        ;
    if (start == end || start == 0)
        return AITK_OK;
    char *name = aitk_strndup(home + start, end - start);
    aitk_status st = name ? aitk_redactor_add(r, AITK_REDACT_USER, name) : AITK_E_NOMEM;
    aitk_free(name);
    return st;
}

aitk_redactor *aitk_run_redactor_new(void)
{
    aitk_redactor *r = NULL;
    /* The user's name as POSIX shells and Windows set it, and the home
     * folder's. */
    static const char *user_vars[] = {"USER", "LOGNAME", "USERNAME"};
    const char *home = getenv("HOME");
    if (!home || !*home)
        home = getenv("USERPROFILE");
    aitk_status st = aitk_redactor_new(&r);
    for (size_t i = 0; i < sizeof user_vars / sizeof *user_vars && !st; i++)
        if (getenv(user_vars[i]) && *getenv(user_vars[i]))
            st = aitk_redactor_add(r, AITK_REDACT_USER, getenv(user_vars[i]));
    if (!st)
        st = add_home_user(r, home);
    char host[256];
    if (!st && machine_name(host, sizeof host) == 0 && host[0])
        st = aitk_redactor_add(r, AITK_REDACT_HOST, host);
    if (st) {
        aitk_redactor_free(r);
        return NULL;
    }
    return r;
}

int aitk_run_redact_message(void *redactor, const char *message, aitk_str *out)
{
    return aitk_redactor_text(redactor, message, out) != AITK_OK;
}

cJSON *aitk_run_redacted_copy(const cJSON *report, aitk_redactor *r)
{
    cJSON *copy = cJSON_Duplicate(report, 1);
    aitk_status st = copy ? aitk_redactor_apply(r, copy) : AITK_E_NOMEM;
    if (!st) {
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "redacted");
        if (!cJSON_AddBoolToObject(copy, "redacted", 1))
            st = AITK_E_NOMEM;
    }
    if (st) {
        cJSON_Delete(copy);
        return NULL;
    }
    return copy;
}
