/* The files one validation run writes, planned before any probing and
 * written together at the end: --output-dir (4 files), --support-bundle (3,
 * redacted) and the single-file options (4), one of which may be "-":
 * standard output, written once every file is in place. The output folders
 * are held (common/dirlock.h) from the plan to the end of the run. */
#ifndef AITK_VALIDATE_OUTPUTS_H
#define AITK_VALIDATE_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/dirlock.h"
#include "common/status.h"
#include "common/str.h"
#include "reports/redact.h"
#include "validate/cli.h"

typedef struct cJSON cJSON;

enum {
    AITK_OUT_JSON,
    AITK_OUT_MARKDOWN,
    AITK_OUT_HTML,
    AITK_OUT_JUNIT,
    AITK_OUT_KINDS,
    AITK_MAX_OUTPUTS = 11
};

typedef struct aitk_output_file {
    aitk_str path;
    aitk_str what; /* the option that names it, for messages */
    int kind;
    bool redacted;
    bool in_dir; /* in --output-dir or --support-bundle, a folder this run holds */
    bool to_stdout; /* "-": standard output, not a file */
} aitk_output_file;

typedef struct aitk_output_plan {
    aitk_output_file files[AITK_MAX_OUTPUTS];
    size_t count;
    bool any_redacted;
    /* One output goes to standard output: what the run says for a person
     * (the summary, where the files are) goes to stderr instead, so that
     * stdout holds that output alone (`--json - | jq`). */
    bool to_stdout;
    /* Folders this run created for --output-dir / --support-bundle: each
     * path and the length of its part that existed before. A run refused
     * before it starts (exit 2) removes them again. */
    aitk_str made[2];
    size_t existed[2];
    aitk_dir_lock *locks[2]; /* the output folders, held for the run */
} aitk_output_plan;

/* Refuses unusable output places (a folder that cannot be made or
 * written, a name that is a folder, an output that would replace an input
 * or another output), then takes the output folders and clears what a
 * killed run left staged there. Before any probing: a run that cannot save
 * its result should not spend minutes first. */
aitk_status aitk_outputs_plan(const aitk_options *o, aitk_output_plan *plan, aitk_str *err);

/* Renders every planned file (the redacted ones from `redacted`) and
 * replaces them together: each is written in full beside its target first,
 * and only when all are written are they put in place, so a full disk
 * leaves the last run's files as they were; the output to standard output
 * goes there after them. AITK_E_NOMEM when a rendering ran out of memory
 * (logged here); AITK_E_IO with every failure named in `err`, "; " between
 * them. */
aitk_status aitk_outputs_write(const aitk_output_plan *plan, const cJSON *report,
                               const cJSON *redacted, aitk_str *err);

/* One line a written file on `out`: what it is and where, the path through
 * `redactor` when there is one. */
void aitk_outputs_print(const aitk_output_plan *plan, aitk_redactor *redactor, FILE *out);

/* Lets the output folders go; `refused`: the run was refused before it
 * started (exit 2), so the folders it created are removed again. */
void aitk_outputs_end(aitk_output_plan *plan, bool refused);

#endif
