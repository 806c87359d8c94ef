/* The run's identity line (identity.h). */
#include "reports/identity.h"

#include <cjson/cJSON.h>

#include "reports/fields.h"

void aitk_report_version(aitk_str *out, const cJSON *report, aitk_text_escape escape)
{
    const cJSON *tool = aitk_field_obj(report, "tool");
    escape(out, aitk_field_str(tool, "version"));
    if (*aitk_field_str(tool, "git_commit")) {
        aitk_str_append(out, " (");
        escape(out, aitk_field_str(tool, "git_commit"));
        aitk_str_append(out, ")");
    }
}

void aitk_report_run(aitk_str *out, const cJSON *report, aitk_text_escape escape)
{
    aitk_str_append(out, "level ");
    escape(out, aitk_field_str(report, "level"));
    aitk_str_append(out, " · profile ");
    escape(out, aitk_field_str(report, "profile"));
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "strict")))
        aitk_str_append(out, " · strict");
    aitk_str_append(out, " · ");
    escape(out, aitk_field_str(report, "created_at"));
}

void aitk_report_identity(aitk_str *out, const cJSON *report, const char *after_version,
                          aitk_text_escape escape)
{
    aitk_report_version(out, report, escape);
    aitk_str_append(out, after_version);
    aitk_report_run(out, report, escape);
}
