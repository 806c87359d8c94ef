/* The wording of the buyer section (see buyer.h). */
#include "reports/buyer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

static const char *text(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static bool has_number(const cJSON *o, const char *key)
{
    return cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, key));
}

static double number(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key)->valuedouble;
}

/* "45 min", "2 h", "3 h 20 min": minutes the way the targets are written. */
static void append_minutes(aitk_str *out, double min)
{
    double whole = round(min);
    if (whole >= 120 && fmod(whole, 60) == 0)
        aitk_str_appendf(out, "%.0f h", whole / 60);
    else if (whole >= 120)
        aitk_str_appendf(out, "%.0f h %.0f min", floor(whole / 60), fmod(whole, 60));
    else if (min >= 10)
        aitk_str_appendf(out, "%.0f min", whole);
    else
        aitk_str_appendf(out, "%.2g min", min);
}

/* "fits; 41 min per 1000 steps, predicted for X" and its variants. */
static void append_answer(aitk_str *out, const cJSON *e)
{
    const char *source = text(e, "source");
    const cJSON *fits = cJSON_GetObjectItemCaseSensitive(e, "fits");
    const char *gpu = text(e, "gpu");
    if (strcmp(source, "measured") && strcmp(source, "predicted")) {
        aitk_str_append(out, "not measured");
        if (*text(e, "reason"))
            aitk_str_appendf(out, " (%s)", text(e, "reason"));
        return;
    }
    aitk_str_append(out, cJSON_IsTrue(fits) ? "fits" : cJSON_IsFalse(fits) ? "does not fit"
                                                                           : "fit not known");
    if (cJSON_IsTrue(fits) && has_number(e, "minutes_per_1000")) {
        aitk_str_append(out, "; ");
        append_minutes(out, number(e, "minutes_per_1000"));
        aitk_str_append(out, " per 1000 steps");
    }
    aitk_str_appendf(out, ", %s %s", strcmp(source, "measured") ? "predicted for" : "measured on",
                     *gpu ? gpu : "an unnamed GPU");
    /* A prediction for PyTorch on Windows, which runs attention without
     * flash attention (validate/buyer.c). */
    if (!strcmp(source, "predicted") && !strcmp(text(e, "os"), "windows"))
        aitk_str_append(out, " with PyTorch on Windows");
}

aitk_status aitk_buyer_sentence(const cJSON *e, aitk_str *out)
{
    aitk_str_appendf(out, "%s: ", *text(e, "title") ? text(e, "title") : text(e, "model"));
    append_answer(out, e);
    aitk_str_append(out, ".");
    if (has_number(e, "target_gb") && has_number(e, "target_minutes")) {
        aitk_str_appendf(out, " Target: %.0f GB, %s, ", number(e, "target_gb"),
                         text(e, "target_gpu"));
        append_minutes(out, number(e, "target_minutes"));
        aitk_str_append(out, " per 1000 steps.");
    }
    /* validate/buyer.c sets it beside a GPU figure only. */
    if (*text(e, "not_modelled"))
        aitk_str_appendf(out, " Not in this figure (ai-toolkit's code): %s.",
                         text(e, "not_modelled"));
    if (has_number(e, "cpu_minutes_per_1000")) {
        aitk_str_append(out, " CPU figures of the small configuration (not a GPU measurement): ");
        append_minutes(out, number(e, "cpu_minutes_per_1000"));
        aitk_str_append(out, " per 1000 steps.");
    }
    return aitk_str_status(out);
}
