/* The report model: one cJSON tree, schema-versioned, the single result of a run.
 *
 * Everything a person or a CI job sees (Markdown, HTML, JUnit) is a pure
 * function of this tree, so `aitk-validate render report.json` reproduces it
 * anywhere. The shape is fixed by reports/schema/report.schema.json. */
#ifndef AITK_REPORTS_REPORT_H
#define AITK_REPORTS_REPORT_H

#include <stdbool.h>

#include "common/status.h"
#include "common/str.h"
#include "reports/check.h"

typedef struct cJSON cJSON;

#define AITK_REPORT_SCHEMA_VERSION "1.0"

typedef struct aitk_report_meta {
    const char *tool_version;
    const char *git_commit;
    const char *level;    /* quick | standard | full */
    const char *profile;  /* compatibility profile name */
    const char *command;  /* the subcommand or "validate" */
    bool strict;
} aitk_report_meta;

typedef enum aitk_verdict {
    AITK_VERDICT_PASS, /* nothing failed (warnings allowed unless strict) */
    AITK_VERDICT_WARN, /* warnings only, not strict */
    AITK_VERDICT_FAIL, /* a check failed, or warned under --strict */
} aitk_verdict;

/* A new report with tool, created_at (UTC now), profile, level, empty checks. */
cJSON *aitk_report_new(const aitk_report_meta *meta);
/* Appends a check (strings are copied). */
aitk_status aitk_report_add_check(cJSON *report, const aitk_check *check);
/* Attaches a section ("host", "environment", ...); the report takes ownership. */
aitk_status aitk_report_set_section(cJSON *report, const char *name, cJSON *section);
/* Computes summary {counts, verdict}; call once all checks are in. */
aitk_status aitk_report_finish(cJSON *report, aitk_verdict *verdict);
/* Verdict a summary was written with (for saved reports). */
aitk_status aitk_report_verdict(const cJSON *report, aitk_verdict *verdict);
const char *aitk_verdict_name(aitk_verdict v);

/* cJSON through aitk_malloc / aitk_free from now on (idempotent); the
 * parser calls it itself. */
void aitk_report_use_project_allocator(void);

/* Replaces every ill-formed UTF-8 byte in the tree's strings and keys with
 * U+FFFD: a path or variable may hold any bytes, a report must be UTF-8.
 * AITK_E_NOMEM is the only failure. */
aitk_status aitk_json_repair_utf8(cJSON *node);
/* Pretty JSON text with a trailing newline. */
aitk_status aitk_report_to_json(const cJSON *report, aitk_str *out);
/* Parses a saved report and checks the fields renderers rely on;
 * errors say "path: problem". Out of memory is AITK_E_NOMEM with "path: out
 * of memory while reading it", never taken for bad input. */
aitk_status aitk_report_parse(const char *path, const char *text, size_t len, cJSON **out,
                              aitk_str *err);

#endif
