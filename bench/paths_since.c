/* A backend's paths since a snapshot (paths_since.h). */
#include "bench/paths_since.h"

#include <string.h>

static const aitk_backend_path *find(const aitk_backend_path *p, size_t n,
                                     const aitk_backend_path *like)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(p[i].op, like->op) && !strcmp(p[i].kernel, like->kernel))
            return &p[i];
    return NULL;
}

aitk_status aitk_paths_since(const aitk_backend_path *now, size_t n_now,
                             const aitk_backend_path *before, size_t n_before,
                             aitk_backend_path *out, size_t cap, size_t *n)
{
    if (!n || (n_now && !now) || (n_before && !before) || (cap && !out))
        return AITK_E_INVAL;
    *n = 0;
    for (size_t i = 0; i < n_now; i++) {
        aitk_backend_path d = now[i];
        const aitk_backend_path *b = find(before, n_before, &now[i]);
        if (b) {
            if (b->calls > d.calls)
                return AITK_E_INVAL;
            d.calls -= b->calls;
            if (b->ms >= 0.0 && d.ms >= 0.0)
                d.ms -= b->ms;
        }
        if (d.calls == 0)
            continue;
        if (*n < cap)
            out[*n] = d;
        (*n)++;
    }
    return *n > cap ? AITK_E_RANGE : AITK_OK;
}
