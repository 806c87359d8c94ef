/* JUnit XML rendering of a report, for CI systems (Jenkins, GitLab, GitHub
 * test reporters).
 *
 * One <testsuite> per check category plus one "workloads" suite; one
 * <testcase> per check and per workload target (time per 1000 steps, peak
 * memory). Failed checks carry <failure> with the message, observed/expected
 * and remedy; skipped checks carry <skipped/>. Warnings pass, with their text
 * in <system-out>, unless the report was made with --strict. */
#ifndef AITK_REPORTS_JUNIT_H
#define AITK_REPORTS_JUNIT_H

#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

aitk_status aitk_render_junit(const cJSON *report, aitk_str *out);

#endif
