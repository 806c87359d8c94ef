/* Inline SVG charts for the HTML report: horizontal bars with reference lines.
 *
 * Charts are plain SVG elements styled by the page's CSS classes, so they
 * follow the page's light/dark colours and print without scripts. */
#ifndef AITK_REPORTS_SVG_H
#define AITK_REPORTS_SVG_H

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

#endif
