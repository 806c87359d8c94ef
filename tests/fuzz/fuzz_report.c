/* libFuzzer target: the report reader render, compare and trend share --
 * the JSON parse with its refusals (a NUL in a string, text after the
 * value), then the figure and name checks of aitk_compare_check_report, and
 * the Markdown of a report that passes them (its "Fix first" lines read
 * summary.fix_first as it comes). */
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/str.h"
#include "reports/compare.h"
#include "reports/markdown.h"
#include "reports/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *r = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_report_parse("fuzz.json", (const char *)data, size, &r, &err) == AITK_OK) {
        aitk_str_clear(&err);
        if (aitk_compare_check_report(r, "fuzz.json", &err) == AITK_OK) {
            aitk_str md = AITK_STR_INIT;
            (void)aitk_render_markdown(r, &md);
            aitk_str_free(&md);
        }
        cJSON_Delete(r);
    }
    aitk_str_free(&err);
    return 0;
}
