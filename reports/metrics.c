/* Metric table and change rule shared by compare and trend (see metrics.h). */
#include "reports/metrics.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "reports/fields.h"

const aitk_metric_def aitk_workload_metrics[] = {
    {"step_time_s", "median", "median step time", "s", false},
    {"step_time_s", "p95", "p95 step time", "s", false},
    {"time_per_1000_steps", "measured_s", "time per 1000 steps", "s", false},
    {"throughput", "steps_per_s", "steps/s", "steps/s", true},
    {"throughput", "images_per_s", "images/s", "images/s", true},
    {"throughput", "tflops", "TFLOP/s", "TFLOP/s", true},
    {"memory", "peak_bytes", "peak memory", "bytes", false},
};
const size_t aitk_workload_metric_count =
    sizeof aitk_workload_metrics / sizeof *aitk_workload_metrics;

bool aitk_micro_higher_is_better(const cJSON *m)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(m, "higher_is_better");
    if (cJSON_IsBool(h))
        return cJSON_IsTrue(h);
    return strstr(aitk_field_str(m, "unit"), "/s") != NULL;
}

aitk_change aitk_change_judge(double base, double now, bool higher_is_better,
                              double threshold_pct)
{
    aitk_change c = {.text = "n/a"};
    if (!isfinite(base) || !isfinite(now)) {
        c.regression = true;
    } else if (base == 0) {
        if (now == 0) {
            c.has_delta = true;
        } else {
            c.text = "from 0";
            bool worse = higher_is_better ? now < 0 : now > 0;
            c.regression = worse;
            c.improvement = !worse;
        }
    } else {
        c.has_delta = true;
        c.delta_pct = (now - base) / fabs(base) * 100;
        double worse = higher_is_better ? -c.delta_pct : c.delta_pct;
        /* "More than the threshold" must not hinge on rounding: 2.3 -> 2.415
         * s is +5.000000000000004% in doubles, exactly 5% in decimal. A
         * change within a relative 1e-9 of the threshold is not beyond it;
         * no real measurement sits in that sliver. compare and trend judge
         * alike. */
        double beyond = threshold_pct + 1e-9 * fmax(threshold_pct, 1.0);
        c.regression = worse > beyond;
        c.improvement = -worse > beyond;
    }
    return c;
}

void aitk_change_delta_text(aitk_str *out, double delta_pct)
{
    if (fabs(delta_pct) < 1e6)
        aitk_str_appendf(out, "%+.1f%%", delta_pct);
    else
        aitk_str_appendf(out, "%+.3g%%", delta_pct);
}

void aitk_metric_value_text(aitk_str *out, double v, const char *unit)
{
    double mag = fabs(v);
    bool secs = strcmp(unit, "s") == 0, bytes = strcmp(unit, "bytes") == 0;
    /* The fixed-point forms grow with the value (1.7e308 s is 309 digits,
     * past any column or chart label) and show a tiny non-zero time as
     * "0.000 s": outside the range they read well in, 4 significant digits
     * (as the other units always are). */
    if ((secs && mag != 0 && (mag < 1e-3 || mag >= 1e7)) ||
        (bytes && mag != 0 && (mag < 1 || mag >= 1e15)) || !isfinite(v))
        aitk_str_appendf(out, "%.4g %s", v, unit);
    else if (secs)
        aitk_str_appendf(out, "%.3f s", v);
    else if (strcmp(unit, "bytes") != 0)
        aitk_str_appendf(out, "%.4g %s", v, unit);
    else if (mag >= 1073741824.0)
        aitk_str_appendf(out, "%.2f GiB", v / 1073741824.0);
    else if (mag >= 1048576.0)
        aitk_str_appendf(out, "%.1f MiB", v / 1048576.0);
    else if (mag >= 1024.0)
        aitk_str_appendf(out, "%.1f KiB", v / 1024.0);
    else
        aitk_str_appendf(out, "%.0f bytes", v);
}
