/* Symbol tables for optional libraries (the nvtop / DCGM-stub habit).
 *
 * Each entry lists a function's names newest version first ("nvmlInit_v2",
 * then "nvmlInit") and whether the probe cannot work without it. A missing
 * required symbol is reported by name so it becomes a finding, never a call
 * through a NULL pointer. */
#ifndef AITK_VALIDATE_PROBES_DLSYMS_H
#define AITK_VALIDATE_PROBES_DLSYMS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/dynload.h"
#include "common/status.h"
#include "common/str.h"

typedef struct aitk_dlsym_spec {
    const char *names[3]; /* newest first; unused tail NULL */
    bool required;
    void **slot;          /* receives the address, NULL when absent */
} aitk_dlsym_spec;

/* Resolves every entry. Returns AITK_E_DLSYM when a required one is absent,
 * with "nameA, nameB" of the missing required functions in `missing`;
 * optional absences only leave their slot NULL. */
aitk_status aitk_dlsyms_resolve(aitk_dl *dl, const aitk_dlsym_spec *specs, size_t count,
                                aitk_str *missing);

typedef struct cJSON cJSON;

/* Opens the first of `names` that loads and resolves `specs`, recording in
 * `out`: loaded, path (the file mapped, else the name that loaded),
 * loader_error when nothing loads, missing_symbols when a required function
 * is absent. On AITK_OK *dl is open (the caller closes it). AITK_E_DLOPEN and
 * AITK_E_DLSYM are findings, already recorded; AITK_E_NOMEM is an error. */
aitk_status aitk_dlsyms_open(const char *const *names, const aitk_dlsym_spec *specs,
                             size_t count, cJSON *out, aitk_dl **dl);

#endif
