/* Report text as Markdown that renders as the same characters
 * (markdown_text.h). The rules are CommonMark's as GitHub's cmark-gfm
 * 0.29.0.gfm.6 applies them: any ASCII punctuation may be escaped with a
 * backslash (spec 2.4), and nothing inside a code span is (spec 6.1). */
#include "reports/markdown_text.h"

#include <string.h>
#include <strings.h>

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

/* Text that GitHub turns into a link or a notification when it is not in
 * code: cmark-gfm's autolinks (http://, https://, ftp:// and www. URLs,
 * e-mail addresses), then what github.com itself links in issues and
 * comments (GitHub Docs, "Autolinked references and URLs"; @mentions):
 * @user and @org/team, #123, GH-123 and owner/repo#123. A quoted loader
 * message or the source a rule cites can hold any of them; pasted into an
 * issue they would ping a stranger or link (and cross-reference) an
 * unrelated issue, and an autolinked URL shows the backslashes that escape
 * its _ ~ & * (https://x.org/a\_b). The word that holds one is written as
 * a code span instead (linked_word): the same characters, and GitHub
 * neither links nor mentions inside code. */
static bool word_char(unsigned char c)
{
    return ascii_alnum(c) || c == '_';
}

/* A run of characters from `set` (or ASCII letters and digits) at s. */
static size_t run_of(const char *s, const char *set)
{
    size_t n = 0;
    while (ascii_alnum((unsigned char)s[n]) || (s[n] && strchr(set, s[n])))
        n++;
    return n;
}

/* A URL's extent from s, about as cmark-gfm's autolink extension finds
 * its end: to a space, a control character or '<' (and '>', '"' and '`'),
 * less trailing punctuation and a ')' that closes no '(' of the URL. */
static size_t url_end(const char *s, size_t from)
{
    size_t n = from;
    while ((unsigned char)s[n] > ' ' && s[n] != 0x7f && !strchr("<>\"`", s[n]))
        n++;
    for (;;) {
        size_t open = 0, close = 0;
        for (size_t k = 0; k < n; k++) {
            open += s[k] == '(';
            close += s[k] == ')';
        }
        if (n > from && (strchr("?!.,:*_~'\";", s[n - 1]) || (s[n - 1] == ')' && close > open)))
            n--;
        else
            return n;
    }
}

static bool ascii_letter(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* http://, https:// or ftp:// (any case) after anything but a letter, as
 * cmark-gfm finds them ("git+https://x" links from "https"); www. at the
 * start of a word or after * _ ~ (, whatever follows it. */
static size_t url_at(const char *start, const char *s)
{
    static const char *const schemes[] = {"http://", "https://", "ftp://"};
    const unsigned char prev = s > start ? (unsigned char)s[-1] : ' ';
    if (ascii_letter(prev))
        return 0;
    for (size_t k = 0; k < sizeof schemes / sizeof *schemes; k++) {
        size_t len = strlen(schemes[k]);
        if (strncasecmp(s, schemes[k], len) == 0) {
            size_t n = url_end(s, len);
            return n > len ? n : 0;
        }
    }
    /* cmark-gfm links "www" of "www." with nothing after it too. */
    if (strchr(" \t\n\r*_~(", prev) && strncasecmp(s, "www.", 4) == 0)
        return url_end(s, 4);
    return 0;
}

/* local@domain.tld (cmark-gfm: the domain has a '.' before a letter or
 * digit, and ends in a letter), or @user and @org/team after anything but
 * a letter, a digit or '_' ("x-@jdoe" pings jdoe; "jdoe@host" no one). */
static size_t address_at(const char *start, const char *s)
{
    const unsigned char prev = s > start ? (unsigned char)s[-1] : ' ';
    if (s[0] == '@') {
        if (word_char(prev) || !ascii_alnum((unsigned char)s[1]))
            return 0;
        size_t n = 1 + run_of(s + 1, "._-/");
        while (strchr("._-/", s[n - 1]))
            n--;
        return n;
    }
    size_t local = run_of(s, ".+_-");
    if (!local || s[local] != '@' || ascii_alnum(prev) || strchr(".+_-", prev))
        return 0;
    size_t n = local + 1 + run_of(s + local + 1, "._-"), end = n;
    bool dot = false;
    for (size_t k = local + 1; k + 1 < n; k++)
        dot |= s[k] == '.' && ascii_alnum((unsigned char)s[k + 1]);
    while (end > local + 1 && s[end - 1] == '.')
        end--;
    return dot && ascii_letter((unsigned char)s[end - 1]) ? n : 0;
}

/* s + at starts an issue's number: digits, then no letter, digit or '_'.
 * Where the number ends, or 0. */
static size_t number_end(const char *s, size_t at)
{
    size_t n = at;
    while (s[n] >= '0' && s[n] <= '9')
        n++;
    return n > at && !word_char((unsigned char)s[n]) ? n : 0;
}

/* #123, GH-123, owner/repo#123, each after a character that ends a word
 * (an owner's name runs on over '-'). */
static size_t issue_at(const char *start, const char *s)
{
    const unsigned char prev = s > start ? (unsigned char)s[-1] : ' ';
    if (word_char(prev))
        return 0;
    if (s[0] == '#')
        return number_end(s, 1);
    size_t n = strncasecmp(s, "GH-", 3) == 0 ? number_end(s, 3) : 0;
    if (n || prev == '-')
        return n;
    size_t owner = run_of(s, "-");
    size_t repo = owner && s[owner] == '/' ? run_of(s + owner + 1, "_.-") : 0;
    return repo && s[owner + 1 + repo] == '#' ? number_end(s, owner + 1 + repo + 1) : 0;
}

static size_t link_at(const char *start, const char *s)
{
    size_t n = url_at(start, s);
    if (!n)
        n = address_at(start, s);
    return n ? n : issue_at(start, s);
}

static bool space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Where the code span of the text that opens at s closes (past its
 * fence), or NULL: s holds no backtick, or an unpaired run. */
static const char *span_end(const char *s)
{
    size_t run = aitk_backtick_run(s);
    const char *end = run ? aitk_code_span_end(s, run) : NULL;
    return end ? end + run : NULL;
}

/* The next piece of a word at p: a code span of the text whole, a run of
 * backticks, or one character. */
static const char *next_piece(const char *p)
{
    const char *end = span_end(p);
    size_t run = aitk_backtick_run(p);
    return end ? end : p + (run ? run : 1);
}

/* The word at s: to a space or the end of the text, a code span of the
 * text inside it counting whole (its spaces too). */
static const char *word_end(const char *s)
{
    while (*s && !space(*s))
        s = next_piece(s);
    return s;
}

/* Where in the word s..end the first link starts and the last ends
 * (outside the text's own code spans); false when it holds none. */
static bool word_links(const char *start, const char *s, const char *end, const char **first,
                       const char **last)
{
    bool any = false;
    for (const char *p = s; p < end;) {
        size_t n = span_end(p) ? 0 : link_at(start, p);
        if (!n) {
            p = next_piece(p);
            continue;
        }
        *first = any ? *first : p;
        *last = p + n;
        any = true;
        p += n;
    }
    return any;
}

/* Punctuation that may stay outside the code span of a linked word
 * ("(see https://x.org/a)."): none of it continues a link, an address, a
 * mention or a reference, and none escapes or emphasises. */
static bool word_edge(char c)
{
    return c && strchr("()[]{}<>\"',.;:!?", c);
}

/* The characters of s..end as code: a code span of the text gives its
 * content. Calls `each` on every run of them (whole, so that a
 * two-byte control character stays in one), so that one walk both
 * measures and writes. */
static void code_content(const char *s, const char *end,
                         void (*each)(void *ctx, const char *text, size_t len), void *ctx)
{
    for (const char *p = s; p < end;) {
        const char *close = span_end(p);
        if (close) {
            size_t run = aitk_backtick_run(p);
            each(ctx, p + run, (size_t)(close - p - 2 * run));
            p = close;
            continue;
        }
        const char *q = p;
        while (q < end && !span_end(q))
            q = next_piece(q);
        each(ctx, p, (size_t)(q - p));
        p = q;
    }
}

typedef struct code_measure {
    size_t longest; /* the longest run of backticks */
    char first, last;
} code_measure;

static void measure(void *ctx, const char *text, size_t len)
{
    code_measure *m = ctx;
    for (size_t k = 0; k < len; k++) {
        size_t n = aitk_backtick_run(text + k);
        m->longest = n > m->longest ? n : m->longest;
    }
    if (len) {
        m->first = m->first ? m->first : text[0];
        m->last = text[len - 1];
    }
}

typedef struct code_writer {
    aitk_str *out;
    bool cell;
} code_writer;

static void write_code(void *ctx, const char *text, size_t len)
{
    code_writer *w = ctx;
    code_text(w->out, text, len, w->cell);
}

/* A word that holds a link (link_at), as one code span from its first
 * character to its last but the punctuation at its edges: a span that
 * ended or began inside the word would leave text beside it that GitHub
 * reads on its own (a span then "@x" is a mention, "GH-1" then a span a
 * reference), and two spans side by side would run their fences together.
 * The fence is longer than any run of backticks inside, and a space keeps
 * a backtick at either end off it (spec 6.1). */
static void linked_word(aitk_str *out, const char *start, const char *s, const char *end,
                        const char *first, const char *last, bool cell)
{
    const char *from = s, *to = end;
    while (from < first && word_edge(*from))
        text_char(out, start, from++);
    while (to > last && word_edge(to[-1]))
        to--;
    code_measure m = {0, '\0', '\0'};
    code_content(from, to, measure, &m);
    bool pad = m.first == '`' || m.last == '`' || (m.first == ' ' && m.last == ' ');
    for (size_t i = 0; i <= m.longest; i++)
        aitk_str_appendc(out, '`');
    if (pad)
        aitk_str_appendc(out, ' ');
    code_writer w = {out, cell};
    code_content(from, to, write_code, &w);
    if (pad)
        aitk_str_appendc(out, ' ');
    for (size_t i = 0; i <= m.longest; i++)
        aitk_str_appendc(out, '`');
    for (; to < end; to++)
        text_char(out, start, to);
}

static void markdown_text(aitk_str *out, const char *s, bool cell)
{
    const char *start = s;
    while (*s) {
        const char *word = s == start || space(s[-1]) ? word_end(s) : NULL, *first, *last;
        if (word && word_links(start, s, word, &first, &last)) {
            linked_word(out, start, s, word, first, last, cell);
            s = word;
            continue;
        }
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
