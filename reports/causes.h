/* Which failure to fix first: the report's checks linked by "follows".
 *
 * One broken link fails several checks: with no NVIDIA driver, NVML,
 * libcuda, torch's CUDA, the CUDA plugin, ai-toolkit's start-up and a
 * dependency tree all fail. Each such check names the one it comes from
 * (aitk_check.follows); this keeps those links that point at a failed check
 * (of a comma-separated list, the first that failed) and groups every
 * failure under the one at the head of its chain, so a reader starts there. */
#ifndef AITK_REPORTS_CAUSES_H
#define AITK_REPORTS_CAUSES_H

#include <stdbool.h>

#include "common/status.h"
#include "common/str.h"
#include "reports/identity.h"

typedef struct cJSON cJSON;

/* Rewrites each failed or warned check's "follows" to the first check it
 * names that failed; drops it where none did, on a check that passed or was
 * skipped, and on the first check of a loop. Returns summary's "fix_first":
 * one entry per failed check that follows none, in report order, {id, title,
 * explains: [the ids of the checks whose chain of "follows" ends at it]}.
 * NULL when out of memory. */
cJSON *aitk_report_link_causes(cJSON *checks);

/* One entry of summary's "fix_first" as plain text, when it explains other
 * checks: "gpu.nvml (its title): 5 other checks follow from it: a, b, c, d,
 * e". Writes nothing and returns false for an entry that explains none
 * (the list of failures already shows it). */
bool aitk_fix_first_sentence(const cJSON *entry, aitk_str *out);

/* For each entry of `summary`'s "fix_first" that explains other checks:
 * `before`, its sentence through `escape`, then `after` (each view's "Fix
 * first" lines; an entry that explains none is left out). */
void aitk_fix_first_lines(aitk_str *out, const cJSON *summary, const char *before,
                          const char *after, aitk_text_escape escape);

#endif
