/* Remedies for known missing or duplicated libraries (remedies.yaml, with
 * the source of each). Loaded from the embedded data file, or from
 * AITK_DATA_DIR when set, so a person can try an edited list. */
#ifndef AITK_LIBDEPS_REMEDIES_H
#define AITK_LIBDEPS_REMEDIES_H

#include <stdbool.h>

#include "common/status.h"
#include "common/str.h"

typedef struct aitk_remedy {
    const char *comes_from, *symptom, *fix, *source; /* borrowed from the loaded list */
} aitk_remedy;

typedef struct aitk_remedies aitk_remedies;

/* AITK_E_PARSE with "validate/libdeps/remedies.yaml:L:C: ..." when malformed. */
aitk_status aitk_remedies_load(aitk_remedies **out, aitk_str *err);
/* The first remedy for this file name; `duplicate` selects the `when:
 * duplicate` entries. NULL when none applies. */
const aitk_remedy *aitk_remedies_find(const aitk_remedies *r, const char *name, bool duplicate);
void aitk_remedies_free(aitk_remedies *r);

/* Case-insensitive match with * and ? (exported for the tests). */
bool aitk_remedies_glob(const char *pattern, const char *name);

#endif
