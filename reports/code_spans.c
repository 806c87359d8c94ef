/* Backtick code spans in report text (code_spans.h). */
#include "reports/code_spans.h"

size_t aitk_backtick_run(const char *s)
{
    size_t n = 0;
    while (s[n] == '`')
        n++;
    return n;
}

const char *aitk_code_span_end(const char *s, size_t n)
{
    for (const char *p = s + n; *p;) {
        size_t m = aitk_backtick_run(p);
        if (m == n)
            return p;
        p += m ? m : 1;
    }
    return NULL;
}
