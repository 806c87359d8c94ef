/* Inline SVG charts for the HTML pages: horizontal bars with reference lines
 * (a report's workloads), and lines over runs with a reference band (trend).
 *
 * Charts are plain SVG elements styled by the page's CSS classes, so they
 * follow the page's light/dark colours and print without scripts. */
#ifndef AITK_REPORTS_SVG_H
#define AITK_REPORTS_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"

typedef struct aitk_svg_bar {
    const char *label;      /* left of the bar */
    double value;           /* >= 0; scale units are the caller's */
    const char *value_text; /* right of the bar: the value as people read it */
    const char *css_class;  /* bar colour: "good", "bad", "ref" */
} aitk_svg_bar;

typedef struct aitk_svg_marker {
    const char *label;     /* above the line: "VRAM 24.0 GiB" */
    double value;
    const char *css_class; /* "limit", "minimum" */
} aitk_svg_marker;

/* One chart: `title` is its accessible name (an SVG <title>). Bars are drawn
 * to one scale that includes every marker; negative or non-finite values are
 * drawn as empty bars rather than refused, since a chart must not hide the
 * rest of the report. */
aitk_status aitk_svg_bar_chart(aitk_str *out, const char *title, const aitk_svg_bar *bars,
                               size_t nbars, const aitk_svg_marker *marks, size_t nmarks);

/* One point of a line chart: run `x` of 0..nx-1. */
typedef struct aitk_svg_point {
    size_t x;
    double y;              /* a non-finite value is left out */
    const char *tip;       /* the point's tooltip (an SVG <title>) */
    const char *css_class; /* dot colour: "good", "bad", "other"; NULL: plain */
} aitk_svg_point;

typedef struct aitk_svg_line_spec {
    const char *title;            /* accessible name */
    const char *unit;             /* axis labels, as aitk_metric_value_text writes them */
    size_t nx;                    /* positions on the x axis */
    const char *x_first, *x_last; /* labels under the first and the last position */
    const aitk_svg_point *points; /* in increasing x */
    size_t npoints;
    bool band;                    /* a shaded band [band_lo, band_hi] with a dashed band_mid */
    double band_lo, band_mid, band_hi;
} aitk_svg_line_spec;

/* A line through the points over an axis scaled to them and the band, with
 * the top and bottom of the scale labelled. The scale does not start at 0:
 * a trend is about change, and the band shows how much change is allowed. */
aitk_status aitk_svg_line_chart(aitk_str *out, const aitk_svg_line_spec *spec);

#endif
