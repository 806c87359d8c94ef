/* One check as the parts a person reads, in the order they read them,
 * shared by the HTML cards and the Markdown list.
 *
 * Which fields show, in what order, which are left out when empty and what
 * stands in for a missing observation are decided here once; each renderer
 * only says what markup goes around each part and how text is escaped. */
#ifndef AITK_REPORTS_CHECK_PARTS_H
#define AITK_REPORTS_CHECK_PARTS_H

#include "common/str.h"
#include "reports/identity.h"

typedef struct cJSON cJSON;

/* The parts of one check, in the order they are written. The *_END parts
 * carry no text: they mark where a line or a block closes. */
typedef enum aitk_check_part {
    AITK_CHECK_PART_STATUS,
    AITK_CHECK_PART_TITLE,
    AITK_CHECK_PART_ID,
    AITK_CHECK_PART_MESSAGE,      /* only when the check has a message */
    AITK_CHECK_PART_HEAD_END,
    AITK_CHECK_PART_OBSERVED,     /* only with an observed or an expected value */
    AITK_CHECK_PART_EXPECTED,     /* only with an expected value */
    AITK_CHECK_PART_OBSERVED_END, /* only when OBSERVED was written */
    AITK_CHECK_PART_FOLLOWS,      /* only when the check follows a failed one */
    AITK_CHECK_PART_REMEDY,       /* only when the check has a remedy */
    AITK_CHECK_PART_SOURCE,       /* only when the check names a source */
    AITK_CHECK_PART_END,
    AITK_CHECK_PART_COUNT
} aitk_check_part;

/* What a format writes before and after one part's text. A NULL `before`
 * leaves the part out of that format altogether (Markdown files a check
 * under its group's heading, so it does not repeat the status). */
typedef struct aitk_check_markup {
    const char *before;
    const char *after;
    /* How this part's text is written, where it differs from the rest
     * (Markdown writes an id as a code span of its own); NULL: as the rest. */
    aitk_text_escape escape;
} aitk_check_markup;

/* Appends check `c` to `out`: for each part that applies, markup[part].before,
 * the part's text through `escape`, then markup[part].after. */
void aitk_check_parts_append(aitk_str *out, const cJSON *c,
                             const aitk_check_markup markup[AITK_CHECK_PART_COUNT],
                             aitk_text_escape escape);

/* Appends every check in `checks` whose status is `status`, in report order,
 * with `heading` (written as is) before the first. Returns how many. */
int aitk_check_parts_group(aitk_str *out, const cJSON *checks, const char *status,
                           const char *heading,
                           const aitk_check_markup markup[AITK_CHECK_PART_COUNT],
                           aitk_text_escape escape);

#endif
