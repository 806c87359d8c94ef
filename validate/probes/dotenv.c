#include "validate/probes/dotenv.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"

/* What a name holds once a line has set it: only whether it is blank
 * matters (huggingface_hub strips the token it reads). A line with no '='
 * sets the name to None, which a ${NAME} later reads as "" and which keeps
 * the default of ${NAME:-default} out, as a blank value does. */
typedef enum binding { UNSET, BLANK, NONBLANK } binding;

#define MAX_NAMES 128
#define MAX_NAME 255

/* The names the file has set so far, each at its latest value: the lines
 * above are what python-dotenv 1.2.4's resolve_variables looks a ${NAME}
 * up in when the environment lacks it (load_dotenv's override=False: the
 * environment first). A file with more names than fit forgets the rest,
 * which only matters to a ${...} naming one of them. */
typedef struct bindings {
    char names[MAX_NAMES][MAX_NAME + 1];
    binding values[MAX_NAMES];
    size_t n;
} bindings;

static binding lookup(const bindings *b, const char *name)
{
    for (size_t i = b->n; i-- > 0;)
        if (strcmp(b->names[i], name) == 0)
            return b->values[i];
    return UNSET;
}

static void bind(bindings *b, const char *name, size_t len, binding value)
{
    char key[MAX_NAME + 1];
    snprintf(key, sizeof key, "%.*s", (int)(len < MAX_NAME ? len : MAX_NAME), name);
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->names[i], key) == 0) {
            b->values[i] = value;
            return;
        }
    if (b->n < MAX_NAMES) {
        memcpy(b->names[b->n], key, sizeof key);
        b->values[b->n++] = value;
    }
}

/* Whether v[0..n) holds anything but spaces once each ${NAME} or
 * ${NAME:-default} in it is replaced as python-dotenv's load_dotenv
 * replaces it (variables.py): the environment's value, else the value a
 * line above gave the name, else the default, else nothing. */
static bool nonblank_expanded(const char *v, size_t n, bool expand, const bindings *b)
{
    for (size_t i = 0; i < n; i++) {
        const char *close = expand && i + 1 < n && v[i] == '$' && v[i + 1] == '{'
                                ? memchr(v + i, '}', n - i)
                                : NULL;
        if (!close) {
            if (!isspace((unsigned char)v[i]))
                return true;
            continue;
        }
        const char *name = v + i + 2, *dflt = NULL;
        size_t name_len = (size_t)(close - name), dflt_len = 0;
        const char *colon = memchr(name, ':', name_len);
        if (colon && colon + 1 < close && colon[1] == '-') {
            dflt = colon + 2;
            dflt_len = (size_t)(close - dflt);
            name_len = (size_t)(colon - name);
        }
        char key[MAX_NAME + 1];
        snprintf(key, sizeof key, "%.*s", (int)(name_len < MAX_NAME ? name_len : MAX_NAME), name);
        const char *value = getenv(key);
        const binding above = value ? UNSET : lookup(b, key);
        if (value ? !aitk_text_blank(value)
                  : above != UNSET ? above == NONBLANK
                                   : nonblank_expanded(dflt, dflt_len, false, b))
            return true;
        i = (size_t)(close - v);
    }
    return false;
}

/* The value of one "KEY=value" line (after the key and '='): whether it
 * holds a token once its quotes or its comment are taken off. ${...} is
 * expanded in every kind of value: python-dotenv 1.2.4's load_dotenv does
 * so inside single quotes too (seen by realworld.linux.hub-access). */
static binding value_of(const char *v, size_t n, const bindings *b)
{
    while (n && (*v == ' ' || *v == '\t')) {
        v++;
        n--;
    }
    if (n && (*v == '"' || *v == '\'')) {
        const char *close = memchr(v + 1, *v, n - 1);
        return close && nonblank_expanded(v + 1, (size_t)(close - v - 1), true, b) ? NONBLANK
                                                                                    : BLANK;
    }
    /* Unquoted: a '#' after a space starts a comment. */
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '#' && (i == 0 || v[i - 1] == ' ' || v[i - 1] == '\t'))
            n = i;
    }
    return nonblank_expanded(v, n, true, b) ? NONBLANK : BLANK;
}

/* One line: the name it sets into `b`, if it sets one. */
static void read_line(const char *s, const char *end, bindings *b)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if ((size_t)(end - s) > 7 && strncmp(s, "export", 6) == 0 && (s[6] == ' ' || s[6] == '\t'))
        for (s += 6; s < end && (*s == ' ' || *s == '\t');)
            s++;
    const char *name = s;
    while (s < end && !strchr("=# \t", *s))
        s++;
    const size_t len = (size_t)(s - name);
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if (!len || (s < end && *s != '='))
        return;
    /* A later line sets it again: the last one counts. */
    bind(b, name, len, s < end ? value_of(s + 1, (size_t)(end - s - 1), b) : BLANK);
}

bool aitk_dotenv_sets(const char *text, const char *key)
{
    bindings *b = calloc(1, sizeof *b);
    if (!b)
        return false;
    /* python-dotenv takes a UTF-8 byte-order mark off the file's start
     * (Notepad's "UTF-8 with BOM"). */
    if (text && strncmp(text, "\xEF\xBB\xBF", 3) == 0)
        text += 3;
    for (const char *line = text; line && *line;) {
        const size_t n = strcspn(line, "\r\n");
        read_line(line, line + n, b);
        line = line[n] ? line + n + 1 : line + n;
    }
    const bool set = lookup(b, key) == NONBLANK;
    free(b);
    return set;
}
