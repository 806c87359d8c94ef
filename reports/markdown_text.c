/* Report text as Markdown that renders as the same characters
 * (markdown_text.h). The rules are CommonMark's as GitHub's cmark-gfm
 * 0.29.0.gfm.6 applies them: any ASCII punctuation may be escaped with a
 * backslash (spec 2.4), and nothing inside a code span is (spec 6.1). */
#include "reports/markdown_text.h"

#include <string.h>

#include "reports/code_spans.h"

static bool ascii_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Writes the character at s, or the C1 pair at s, as the escape a terminal
 * shows instead of acting on it (cat report.md); returns the bytes it took,
 * or 0 when s holds no control character. */
static size_t control(aitk_str *out, const char *s)
{
    const unsigned char c = (unsigned char)s[0];
    const unsigned char next = (unsigned char)s[1];
    bool c1 = c == 0xc2 && next >= 0x80 && next <= 0x9f;
    if (!((c < 0x20 && c != '\t') || c == 0x7f || c1))
        return 0;
    char one[3] = {s[0], c1 ? s[1] : '\0', '\0'};
    aitk_str_append_printable(out, one, false);
    return c1 ? 2 : 1;
}

/* The text inside a code span, which Markdown takes literally: only line
 * breaks, control characters and, in a table, the cell-ending pipe need
 * care. A newline would end a table row or a list item. */
static void code_text(aitk_str *out, const char *s, size_t len, bool cell)
{
    for (size_t i = 0; i < len;) {
        size_t took = control(out, s + i);
        if (took) {
            i += took;
            continue;
        }
        if (s[i] == '\n' || s[i] == '\r')
            aitk_str_appendc(out, ' ');
        else if (s[i] == '|' && cell)
            aitk_str_append(out, "\\|");
        else
            aitk_str_appendc(out, s[i]);
        i++;
    }
}

/* One character outside a code span, at s within text that starts at start. */
static void text_char(aitk_str *out, const char *start, const char *s)
{
    const unsigned char c = (unsigned char)*s;
    const unsigned char prev = s > start ? (unsigned char)s[-1] : '\0';
    const unsigned char next = (unsigned char)s[1];
    switch (c) {
    case '\n':
    case '\r': aitk_str_appendc(out, ' '); return;
    /* &lt; rather than \<, as before: the same in every Markdown. */
    case '<': aitk_str_append(out, "&lt;"); return;
    /* Emphasis, strikethrough (one tilde is enough in cmark-gfm: C:\PROGRA~1\NVIDIA~1),
     * links and images, entities (&amp;), table cells and unpaired backticks. */
    case '*':
    case '~':
    case '[':
    case '&':
    case '|':
    case '`':
        aitk_str_appendc(out, '\\');
        aitk_str_appendc(out, (char)c);
        return;
    /* An underscore between two letters or digits can neither open nor
     * close emphasis (spec 6.2), so torch_cuda.dll stays as it is;
     * __init__ or _C after a backslash would not. */
    case '_':
        if (!(ascii_alnum(prev) && ascii_alnum(next)))
            aitk_str_appendc(out, '\\');
        aitk_str_appendc(out, '_');
        return;
    /* A backslash is literal before a letter, a digit, a space or a
     * non-ASCII character, so C:\Users\me stays readable; before anything
     * else (torch\_C.pyd, \\server, the end of the text, which markup may
     * follow) it is doubled. */
    case '\\':
        if (!(ascii_alnum(next) || next == ' ' || next >= 0x80))
            aitk_str_appendc(out, '\\');
        aitk_str_appendc(out, '\\');
        return;
    default: aitk_str_appendc(out, (char)c); return;
    }
}

static void markdown_text(aitk_str *out, const char *s, bool cell)
{
    const char *start = s;
    while (*s) {
        size_t took = control(out, s);
        if (took) {
            s += took;
            continue;
        }
        size_t run = aitk_backtick_run(s);
        const char *end = run ? aitk_code_span_end(s, run) : NULL;
        if (end) {
            aitk_str_appendn(out, s, run);
            code_text(out, s + run, (size_t)(end - s - run), cell);
            aitk_str_appendn(out, end, run);
            s = end + run;
            continue;
        }
        /* An unpaired run: each backtick escaped, so no later one pairs
         * with part of it. */
        for (size_t i = 0; i < (run ? run : 1); i++, s++)
            text_char(out, start, s);
    }
}

void aitk_markdown_inline(aitk_str *out, const char *s)
{
    markdown_text(out, s, false);
}

void aitk_markdown_cell(aitk_str *out, const char *s)
{
    markdown_text(out, s, true);
}

void aitk_markdown_code(aitk_str *out, const char *s, bool cell)
{
    if (!*s)
        return;
    size_t longest = 0;
    for (const char *p = s; *p;) {
        size_t n = aitk_backtick_run(p);
        longest = n > longest ? n : longest;
        p += n ? n : 1;
    }
    size_t len = strlen(s);
    /* A space keeps a backtick at either end off the fence, and keeps a
     * text that starts and ends with a space from losing them (spec 6.1). */
    bool pad = s[0] == '`' || s[len - 1] == '`' || (s[0] == ' ' && s[len - 1] == ' ');
    for (size_t i = 0; i <= longest; i++)
        aitk_str_appendc(out, '`');
    if (pad)
        aitk_str_appendc(out, ' ');
    code_text(out, s, len, cell);
    if (pad)
        aitk_str_appendc(out, ' ');
    for (size_t i = 0; i <= longest; i++)
        aitk_str_appendc(out, '`');
}
