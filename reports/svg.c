/* Horizontal bar charts as inline SVG (see svg.h). */
#include "reports/svg.h"

#include <math.h>

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
