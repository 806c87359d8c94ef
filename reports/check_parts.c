/* The shared walk over one check's fields for the HTML and Markdown views. */
#include "reports/check_parts.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "reports/fields.h"

static void part(aitk_str *out, const aitk_check_markup *markup, aitk_check_part p,
                 const char *text, aitk_text_escape escape)
{
    if (!markup[p].before)
        return;
    aitk_str_append(out, markup[p].before);
    (markup[p].escape ? markup[p].escape : escape)(out, text);
    aitk_str_append(out, markup[p].after);
}

void aitk_check_parts_append(aitk_str *out, const cJSON *c,
                             const aitk_check_markup markup[AITK_CHECK_PART_COUNT],
                             aitk_text_escape escape)
{
    const char *message = aitk_field_str(c, "message");
    const char *observed = aitk_field_str(c, "observed");
    const char *expected = aitk_field_str(c, "expected");
    const char *remedy = aitk_field_str(c, "remedy");
    const char *source = aitk_field_str(c, "source");
    const char *follows = aitk_field_str(c, "follows");
    part(out, markup, AITK_CHECK_PART_STATUS, aitk_field_str(c, "status"), escape);
    part(out, markup, AITK_CHECK_PART_TITLE, aitk_field_str(c, "title"), escape);
    part(out, markup, AITK_CHECK_PART_ID, aitk_field_str(c, "id"), escape);
    if (*message)
        part(out, markup, AITK_CHECK_PART_MESSAGE, message, escape);
    part(out, markup, AITK_CHECK_PART_HEAD_END, "", escape);
    /* An expectation with nothing observed still says so in words, so a
     * reader does not take the empty place for a rendering fault. */
    if (*observed || *expected) {
        part(out, markup, AITK_CHECK_PART_OBSERVED, *observed ? observed : "(nothing)", escape);
        if (*expected)
            part(out, markup, AITK_CHECK_PART_EXPECTED, expected, escape);
        part(out, markup, AITK_CHECK_PART_OBSERVED_END, "", escape);
    }
    if (*follows)
        part(out, markup, AITK_CHECK_PART_FOLLOWS, follows, escape);
    if (*remedy)
        part(out, markup, AITK_CHECK_PART_REMEDY, remedy, escape);
    if (*source)
        part(out, markup, AITK_CHECK_PART_SOURCE, source, escape);
    part(out, markup, AITK_CHECK_PART_END, "", escape);
}

int aitk_check_parts_group(aitk_str *out, const cJSON *checks, const char *status,
                           const char *heading,
                           const aitk_check_markup markup[AITK_CHECK_PART_COUNT],
                           aitk_text_escape escape)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, checks)
    {
        if (strcmp(aitk_field_str(c, "status"), status) != 0)
            continue;
        if (n++ == 0)
            aitk_str_append(out, heading);
        aitk_check_parts_append(out, c, markup, escape);
    }
    return n;
}
