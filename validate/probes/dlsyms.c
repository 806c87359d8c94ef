/* Resolving symbol tables, newest name first. */
#include "validate/probes/dlsyms.h"

#include <cjson/cJSON.h>

aitk_status aitk_dlsyms_resolve(aitk_dl *dl, const aitk_dlsym_spec *specs, size_t count,
                                aitk_str *missing)
{
    aitk_status result = AITK_OK;
    for (size_t i = 0; i < count; i++) {
        const aitk_dlsym_spec *s = &specs[i];
        *s->slot = NULL;
        for (size_t k = 0; k < 3 && s->names[k] && !*s->slot; k++) {
            void *p = NULL;
            /* The loader's text for an absent symbol says nothing the name does not. */
            if (aitk_dl_sym(dl, s->names[k], &p, NULL) == AITK_OK)
                *s->slot = p;
        }
        if (!*s->slot && s->required) {
            aitk_str_appendf(missing, "%s%s", result ? ", " : "", s->names[0]);
            result = AITK_E_DLSYM;
        }
    }
    if (aitk_str_status(missing))
        return AITK_E_NOMEM;
    return result;
}

aitk_status aitk_dlsyms_open(const char *const *names, const aitk_dlsym_spec *specs,
                             size_t count, cJSON *out, aitk_dl **dl)
{
    aitk_str err = AITK_STR_INIT, path = AITK_STR_INIT;
    const char *which = NULL;
    *dl = NULL;
    aitk_status st = aitk_dl_open_first(names, AITK_DL_DEFAULT, dl, &which, &err);
    cJSON_AddBoolToObject(out, "loaded", st == AITK_OK);
    if (st) {
        cJSON_AddStringToObject(out, "loader_error", aitk_str_cstr(&err));
    } else {
        cJSON_AddStringToObject(out, "path", aitk_dl_path(*dl, &path) == AITK_OK
                                                 ? aitk_str_cstr(&path)
                                                 : which);
        st = aitk_dlsyms_resolve(*dl, specs, count, &err);
        if (st == AITK_E_DLSYM)
            cJSON_AddStringToObject(out, "missing_symbols", aitk_str_cstr(&err));
        if (st) {
            aitk_dl_close(*dl);
            *dl = NULL;
        }
    }
    aitk_str_free(&err);
    aitk_str_free(&path);
    return st;
}
