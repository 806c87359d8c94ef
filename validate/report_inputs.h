/* The reports a command reads (trend, fleet): each path named, and each
 * folder as its *.json files plus the report.json of each folder inside it,
 * the layouts a nightly job (one --output-dir per night) and a scheduler
 * (one --output-dir per node) leave. */
#ifndef AITK_VALIDATE_REPORT_INPUTS_H
#define AITK_VALIDATE_REPORT_INPUTS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"

typedef struct aitk_report_inputs {
    const char *cmd; /* names the command in messages: "trend" */
    size_t max;      /* more paths than this are refused (a whole disk given) */
    char **paths;
    bool *in_folder; /* per path: found by expanding a folder, not named */
    size_t count, cap;
} aitk_report_inputs;

/* Adds a path; AITK_E_RANGE past `max`, with one line in err. */
aitk_status aitk_report_inputs_add(aitk_report_inputs *l, const char *path, aitk_str *err);
/* DIR/NAME.json, then DIR/x/report.json for each folder x, by name.
 * AITK_E_NOTFOUND when the folder holds none; AITK_E_PARSE for a named pipe
 * or device among the *.json. */
aitk_status aitk_report_inputs_expand(aitk_report_inputs *l, const char *dir, aitk_str *err);
/* Every report once: a path naming the same file as one before it (the
 * file named directly and through its folder, or by two paths) is dropped,
 * so its figures are not counted twice. Paths whose file cannot be
 * identified are kept (reading them says why). */
void aitk_report_inputs_unique(aitk_report_inputs *l);
void aitk_report_inputs_free(aitk_report_inputs *l);

#endif
