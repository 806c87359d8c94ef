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
    bool of_driver; /* `of_driver: true`: the NVIDIA display driver installs it */
} aitk_remedy;

typedef struct aitk_remedies aitk_remedies;

/* AITK_E_PARSE with "validate/libdeps/remedies.yaml:L:C: ..." when malformed. */
aitk_status aitk_remedies_load(aitk_remedies **out, aitk_str *err);
/* What is wrong with the library, as `when:` in remedies.yaml names it.
 * A `when: missing` entry (the default) answers every problem kind; the
 * others only their own. */
typedef enum aitk_remedy_when {
    AITK_REMEDY_MISSING,     /* missing, or unusable in a way no other kind names */
    AITK_REMEDY_DUPLICATE,   /* several copies on the search path */
    AITK_REMEDY_WRONG_ARCH,  /* found, built for another architecture */
    AITK_REMEDY_TRUNCATED,   /* found, cut short */
    AITK_REMEDY_OLD_VERSION, /* found, lacks a version or function the requester needs */
    AITK_REMEDY_NOT_LIBRARY, /* named like a library, is none: empty, a Git LFS pointer, text */
    AITK_REMEDY_REFUSED,     /* found, refused by the loader as it is: a program, an object
                              * file, a foreign ELF flavour, a folder or pipe */
    AITK_REMEDY_CORRUPT,     /* found, its headers damaged (not cut short) */
    AITK_REMEDY_OTHER_RELEASE, /* found, has the version but lacks symbols of it: another
                                * release of the library than the requester's */
} aitk_remedy_when;

/* The first remedy for this file name and kind; NULL when none applies. */
const aitk_remedy *aitk_remedies_find_kind(const aitk_remedies *r, const char *name,
                                           aitk_remedy_when kind);
/* aitk_remedies_find_kind with AITK_REMEDY_DUPLICATE or AITK_REMEDY_MISSING. */
const aitk_remedy *aitk_remedies_find(const aitk_remedies *r, const char *name, bool duplicate);
void aitk_remedies_free(aitk_remedies *r);

/* Whether the library is one of the NVIDIA display driver's own (its
 * missing-library remedy says `of_driver: true`): absent on a machine with
 * no driver, where gpu.nvml and gpu.cuda_driver say so first. */
bool aitk_remedies_of_driver(const aitk_remedies *r, const char *name);

/* Case-insensitive match with * and ? (exported for the tests). */
bool aitk_remedies_glob(const char *pattern, const char *name);

#endif
