/* Escaping text for HTML and XML output (the HTML and JUnit renderers). */
#ifndef AITK_REPORTS_XML_ESCAPE_H
#define AITK_REPORTS_XML_ESCAPE_H

#include "common/status.h"
#include "common/str.h"

/* Appends `s` with & < > " ' escaped. Bytes XML 1.0 cannot carry (control
 * characters other than tab/newline/return, invalid UTF-8) become U+FFFD, so
 * a report holding odd bytes (a library's error text, a path) still gives a
 * document every parser accepts. NULL appends nothing. */
aitk_status aitk_xml_escape(aitk_str *out, const char *s);

/* Formats like printf, then escapes the result. */
AITK_PRINTF(2, 3)
aitk_status aitk_xml_escapef(aitk_str *out, const char *fmt, ...);

#endif
