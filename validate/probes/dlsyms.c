/* Resolving symbol tables, newest name first. */
#include "validate/probes/dlsyms.h"

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
