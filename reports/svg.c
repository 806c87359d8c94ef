/* Bar and line charts as inline SVG (see svg.h). */
#include "reports/svg.h"

#include <math.h>

#include "reports/fields.h"
#include "reports/metrics.h"
#include "reports/xml_escape.h"

enum { WIDTH = 640, LABEL_W = 170, PLOT_W = 340, ROW_H = 30, BAR_H = 18, MARK_H = 16 };

static double usable(double v)
{
    return isfinite(v) && v > 0 ? v : 0;
}

aitk_status aitk_svg_bar_chart(aitk_str *out, const char *title, const aitk_svg_bar *bars,
                               size_t nbars, const aitk_svg_marker *marks, size_t nmarks)
{
    double max = 0;
    for (size_t i = 0; i < nbars; i++)
        max = fmax(max, usable(bars[i].value));
    for (size_t i = 0; i < nmarks; i++)
        max = fmax(max, usable(marks[i].value));
    /* Headroom so the longest bar's text and the last marker stay readable. */
    max = max > 0 ? max * 1.08 : 1;
    double top = (double)nmarks * MARK_H + 6;
    double height = top + (double)nbars * ROW_H + 8;

    aitk_str_appendf(out,
                     "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 %d %.0f\" width=\"%d\" "
                     "height=\"%.0f\"><title>",
                     WIDTH, height, WIDTH, height);
    aitk_xml_escape(out, title);
    aitk_str_append(out, "</title>\n");
    for (size_t i = 0; i < nbars; i++) {
        double y = top + (double)i * ROW_H;
        double w = usable(bars[i].value) / max * PLOT_W;
        aitk_str_appendf(out, "<text class=\"label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
                         LABEL_W - 8, y + BAR_H - 4);
        aitk_xml_escape(out, bars[i].label);
        aitk_str_appendf(out, "</text><rect class=\"bar ");
        aitk_xml_escape(out, bars[i].css_class ? bars[i].css_class : "ref");
        aitk_str_appendf(out, "\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" rx=\"2\"/>",
                         LABEL_W, y, w, BAR_H);
        /* The value is written past any reference line just after the bar,
         * so that a line does not cut through the figure. */
        double tx = LABEL_W + w + 6;
        for (int pass = 0; pass < 2; pass++)
            for (size_t k = 0; k < nmarks; k++) {
                double mx = LABEL_W + usable(marks[k].value) / max * PLOT_W;
                if (mx >= tx - 8 && mx < tx + 60)
                    tx = mx + 6;
            }
        aitk_str_appendf(out, "<text class=\"value\" x=\"%.1f\" y=\"%.1f\">", tx,
                         y + BAR_H - 4);
        aitk_xml_escape(out, bars[i].value_text);
        aitk_str_append(out, "</text>\n");
    }
    for (size_t i = 0; i < nmarks; i++) {
        double x = LABEL_W + usable(marks[i].value) / max * PLOT_W;
        double label_y = (double)(i + 1) * MARK_H - 4;
        aitk_str_append(out, "<line class=\"marker ");
        aitk_xml_escape(out, marks[i].css_class ? marks[i].css_class : "limit");
        aitk_str_appendf(out, "\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", x, x,
                         label_y + 3, height - 4);
        /* Labels near the right edge are anchored at their end to stay inside. */
        aitk_str_appendf(out, "<text class=\"mark-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">",
                         x, label_y, x > WIDTH - 150 ? "end" : "middle");
        aitk_xml_escape(out, marks[i].label);
        aitk_str_append(out, "</text>\n");
    }
    aitk_str_append(out, "</svg>\n");
    return aitk_str_status(out);
}

/* LINE_LEFT holds the longest axis label, "0.4348 images/s". */
enum { LINE_W = 660, LINE_H = 170, LINE_LEFT = 118, LINE_RIGHT = 14, LINE_TOP = 10, LINE_BOTTOM = 26 };

typedef struct line_scale {
    double lo, hi;
    double plot_w, plot_h;
    size_t nx;
} line_scale;

static double line_px(const line_scale *s, size_t x)
{
    double f = s->nx > 1 ? (double)x / (double)(s->nx - 1) : 0.5;
    return LINE_LEFT + f * s->plot_w;
}

static double line_py(const line_scale *s, double y)
{
    return LINE_TOP + (s->hi - y) / (s->hi - s->lo) * s->plot_h;
}

/* The range of the finite values and the band, padded so that no dot sits on
 * the frame; a flat series gets a range around its value. */
static line_scale line_range(const aitk_svg_line_spec *spec)
{
    line_scale s = {.lo = INFINITY, .hi = -INFINITY, .nx = spec->nx ? spec->nx : 1,
                    .plot_w = LINE_W - LINE_LEFT - LINE_RIGHT,
                    .plot_h = LINE_H - LINE_TOP - LINE_BOTTOM};
    for (size_t i = 0; i < spec->npoints; i++) {
        if (!isfinite(spec->points[i].y))
            continue;
        s.lo = fmin(s.lo, spec->points[i].y);
        s.hi = fmax(s.hi, spec->points[i].y);
    }
    if (spec->band && isfinite(spec->band_lo) && isfinite(spec->band_hi)) {
        s.lo = fmin(s.lo, spec->band_lo);
        s.hi = fmax(s.hi, spec->band_hi);
    }
    if (!(s.lo <= s.hi)) {
        s.lo = 0;
        s.hi = 1;
    }
    double pad = (s.hi - s.lo) * 0.08;
    if (!(pad > 0))
        pad = s.lo != 0 ? fabs(s.lo) * 0.05 : 1;
    s.lo -= pad;
    s.hi += pad;
    return s;
}

static void line_axis(aitk_str *out, const aitk_svg_line_spec *spec, const line_scale *s)
{
    aitk_str t = AITK_STR_INIT;
    double yv[2] = {s->hi, s->lo};
    for (int i = 0; i < 2; i++) {
        aitk_str_clear(&t);
        aitk_metric_value_text(&t, yv[i], spec->unit ? spec->unit : "");
        aitk_str_appendf(out, "<text class=\"label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
                         LINE_LEFT - 6, line_py(s, yv[i]) + (i ? 0 : 10));
        aitk_xml_escape(out, aitk_str_cstr(&t));
        aitk_str_append(out, "</text>\n");
    }
    aitk_field_scratch_free(out, &t);
    aitk_str_appendf(out, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\"/>\n",
                     LINE_LEFT, LINE_TOP, s->plot_w, s->plot_h);
    const char *xl[2] = {spec->x_first, spec->x_last};
    for (int i = 0; i < 2; i++) {
        if (!xl[i] || (i == 1 && s->nx < 2))
            continue;
        aitk_str_appendf(out, "<text class=\"label\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">",
                         line_px(s, i ? s->nx - 1 : 0), LINE_H - 8, i ? "end" : "start");
        aitk_xml_escape(out, xl[i]);
        aitk_str_append(out, "</text>\n");
    }
}

aitk_status aitk_svg_line_chart(aitk_str *out, const aitk_svg_line_spec *spec)
{
    line_scale s = line_range(spec);
    aitk_str_appendf(out,
                     "<svg class=\"chart trend\" role=\"img\" viewBox=\"0 0 %d %d\" width=\"%d\" "
                     "height=\"%d\"><title>",
                     LINE_W, LINE_H, LINE_W, LINE_H);
    aitk_xml_escape(out, spec->title ? spec->title : "");
    aitk_str_append(out, "</title>\n");
    line_axis(out, spec, &s);
    if (spec->band && isfinite(spec->band_lo) && isfinite(spec->band_hi) &&
        isfinite(spec->band_mid)) {
        double top = line_py(&s, fmax(spec->band_lo, spec->band_hi));
        double bottom = line_py(&s, fmin(spec->band_lo, spec->band_hi));
        aitk_str_appendf(out,
                         "<rect class=\"band\" x=\"%d\" y=\"%.1f\" width=\"%.0f\" "
                         "height=\"%.1f\"/>\n<line class=\"base\" x1=\"%d\" x2=\"%.0f\" "
                         "y1=\"%.1f\" y2=\"%.1f\"/>\n",
                         LINE_LEFT, top, s.plot_w, bottom - top, LINE_LEFT,
                         LINE_LEFT + s.plot_w, line_py(&s, spec->band_mid),
                         line_py(&s, spec->band_mid));
    }
    aitk_str_append(out, "<polyline class=\"line\" points=\"");
    for (size_t i = 0; i < spec->npoints; i++)
        if (isfinite(spec->points[i].y))
            aitk_str_appendf(out, "%.1f,%.1f ", line_px(&s, spec->points[i].x),
                             line_py(&s, spec->points[i].y));
    aitk_str_append(out, "\"/>\n");
    for (size_t i = 0; i < spec->npoints; i++) {
        const aitk_svg_point *p = &spec->points[i];
        if (!isfinite(p->y))
            continue;
        aitk_str_append(out, "<circle class=\"pt");
        if (p->css_class) {
            aitk_str_append(out, " ");
            aitk_xml_escape(out, p->css_class);
        }
        aitk_str_appendf(out, "\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\"><title>", line_px(&s, p->x),
                         line_py(&s, p->y), p->css_class ? "4" : "2.5");
        aitk_xml_escape(out, p->tip ? p->tip : "");
        aitk_str_append(out, "</title></circle>\n");
    }
    aitk_str_append(out, "</svg>\n");
    return aitk_str_status(out);
}
