/* PEP 440 equality for pins (pep440.h). */
#include "validate/probes/pep440.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define MAX_RELEASE 8
#define MAX_LOCAL 64

typedef struct version {
    long epoch;
    long rel[MAX_RELEASE];
    int nrel;
    int pre;  /* 0 none, 1 a, 2 b, 3 rc */
    long pre_n;
    long post; /* -1: none */
    long dev;  /* -1: none */
    char local[MAX_LOCAL]; /* lower case, separators as '.' */
} version;

typedef struct cursor {
    const char *s;
    size_t i, n;
} cursor;

static bool at_digit(const cursor *c)
{
    return c->i < c->n && isdigit((unsigned char)c->s[c->i]);
}

static long number(cursor *c)
{
    long x = 0;
    while (at_digit(c)) {
        if (x < 100000000)
            x = x * 10 + (c->s[c->i] - '0');
        c->i++;
    }
    return x;
}

static bool separator(char ch)
{
    return ch == '.' || ch == '-' || ch == '_';
}

/* One of `words` (longest first) at the cursor, after an optional
 * separator; its index, or -1 with the cursor unmoved. */
static int word(cursor *c, const char *const *words, size_t count)
{
    const size_t at = c->i;
    if (c->i < c->n && separator(c->s[c->i]))
        c->i++;
    for (size_t w = 0; w < count; w++) {
        const size_t len = strlen(words[w]);
        if (c->n - c->i >= len && strncasecmp(c->s + c->i, words[w], len) == 0) {
            c->i += len;
            return (int)w;
        }
    }
    c->i = at;
    return -1;
}

/* The number after a tag, past an optional separator; 0 when none. */
static long tag_number(cursor *c)
{
    const size_t at = c->i;
    if (c->i < c->n && separator(c->s[c->i]))
        c->i++;
    if (!at_digit(c)) {
        c->i = at;
        return 0;
    }
    return number(c);
}

static bool parse_local(cursor *c, version *v)
{
    size_t k = 0;
    for (c->i++; c->i < c->n; c->i++) {
        const char ch = c->s[c->i];
        if (!isalnum((unsigned char)ch) && !separator(ch))
            return false;
        if (k + 1 >= MAX_LOCAL)
            return false;
        v->local[k++] = separator(ch) ? '.' : (char)tolower((unsigned char)ch);
    }
    v->local[k] = '\0';
    return k > 0;
}

static bool parse(const char *s, version *v)
{
    static const char *const pre_words[] = {"alpha", "a", "beta", "b", "preview", "pre", "rc",
                                            "c"};
    static const int pre_kind[] = {1, 1, 2, 2, 3, 3, 3, 3};
    static const char *const post_words[] = {"post", "rev", "r"};
    static const char *const dev_words[] = {"dev"};
    memset(v, 0, sizeof *v);
    v->post = v->dev = -1;
    cursor c = {s, 0, strlen(s)};
    while (c.n && isspace((unsigned char)s[c.n - 1]))
        c.n--;
    while (c.i < c.n && isspace((unsigned char)s[c.i]))
        c.i++;
    if (c.i < c.n && (s[c.i] == 'v' || s[c.i] == 'V'))
        c.i++;
    if (!at_digit(&c))
        return false;
    long first = number(&c);
    if (c.i < c.n && s[c.i] == '!') {
        v->epoch = first;
        c.i++;
        if (!at_digit(&c))
            return false;
        first = number(&c);
    }
    v->rel[v->nrel++] = first;
    while (c.i + 1 < c.n && s[c.i] == '.' && isdigit((unsigned char)s[c.i + 1])) {
        c.i++;
        const long x = number(&c);
        if (v->nrel == MAX_RELEASE)
            return false;
        v->rel[v->nrel++] = x;
    }
    int w = word(&c, pre_words, sizeof pre_words / sizeof *pre_words);
    if (w >= 0) {
        v->pre = pre_kind[w];
        v->pre_n = tag_number(&c);
    }
    if (c.i + 1 < c.n && s[c.i] == '-' && isdigit((unsigned char)s[c.i + 1])) {
        c.i++; /* "1.0-1": an implicit post-release */
        v->post = number(&c);
    } else if (word(&c, post_words, sizeof post_words / sizeof *post_words) >= 0) {
        v->post = tag_number(&c);
    }
    if (word(&c, dev_words, 1) >= 0)
        v->dev = tag_number(&c);
    if (c.i < c.n && s[c.i] == '+' && !parse_local(&c, v))
        return false;
    return c.i == c.n;
}

bool aitk_pep440_pin_matches(const char *pin, const char *installed)
{
    version p, q;
    if (!parse(pin, &p) || !parse(installed, &q))
        return strcasecmp(pin, installed) == 0;
    if (p.epoch != q.epoch || p.pre != q.pre || p.pre_n != q.pre_n || p.post != q.post ||
        p.dev != q.dev)
        return false;
    for (int i = 0; i < MAX_RELEASE; i++)
        if ((i < p.nrel ? p.rel[i] : 0) != (i < q.nrel ? q.rel[i] : 0))
            return false;
    /* A pin without a local label matches any; one with must be met. */
    return !p.local[0] || strcmp(p.local, q.local) == 0;
}
