/* Escaping for HTML/XML: markup characters, control bytes and invalid UTF-8. */
#include "reports/xml_escape.h"

#include <stdarg.h>
#include <stddef.h>

#include "common/str.h"

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* Length of the well-formed UTF-8 sequence at p (1..4), or 0: the general
 * rule (common/str.h), plus U+FFFE and U+FFFF, which are no XML characters. */
static size_t utf8_len(const unsigned char *p)
{
    size_t n = aitk_utf8_sequence(p);
    if (n == 3 && p[0] == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF))
        return 0;
    return n;
}

aitk_status aitk_xml_escape(aitk_str *out, const char *s)
{
    if (!s)
        return aitk_str_status(out);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        switch (*p) {
        case '&': aitk_str_append(out, "&amp;"); p++; continue;
        case '<': aitk_str_append(out, "&lt;"); p++; continue;
        case '>': aitk_str_append(out, "&gt;"); p++; continue;
        case '"': aitk_str_append(out, "&quot;"); p++; continue;
        case '\'': aitk_str_append(out, "&#39;"); p++; continue;
        default: break;
        }
        if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') {
            aitk_str_append(out, replacement);
            p++;
            continue;
        }
        size_t n = utf8_len(p);
        if (n == 0) {
            aitk_str_append(out, replacement);
            p++;
            continue;
        }
        aitk_str_appendn(out, (const char *)p, n);
        p += n;
    }
    return aitk_str_status(out);
}

aitk_status aitk_xml_escapef(aitk_str *out, const char *fmt, ...)
{
    aitk_str tmp = AITK_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    aitk_status st = aitk_str_vappendf(&tmp, fmt, ap);
    va_end(ap);
    if (!st)
        st = aitk_xml_escape(out, aitk_str_cstr(&tmp));
    /* A failure in the scratch is a failure of `out`: sticky, like aitk_str. */
    if (tmp.failed)
        out->failed = true;
    aitk_str_free(&tmp);
    return st ? st : aitk_str_status(out);
}
