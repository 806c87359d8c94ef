#include "validate/probes/dotenv.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"

/* Whether v[0..n) holds anything but spaces once each ${NAME} or
 * ${NAME:-default} in it is replaced as python-dotenv's load_dotenv
 * replaces it (variables.py: the environment's value, else the default,
 * else nothing; names set earlier in the same file are not looked up
 * here). huggingface_hub strips the token it reads, so spaces alone are no
 * token. */
static bool nonblank_expanded(const char *v, size_t n, bool expand)
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
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(name_len < 255 ? name_len : 255), name);
        const char *value = getenv(key);
        if (value ? !aitk_text_blank(value) : nonblank_expanded(dflt, dflt_len, false))
            return true;
        i = (size_t)(close - v);
    }
    return false;
}

/* The value of one "KEY=value" line (after the key and '='): whether it
 * holds a token once its quotes or its comment are taken off. ${...} is
 * expanded in every kind of value: python-dotenv 1.2.4's load_dotenv does
 * so inside single quotes too (seen by realworld.linux.hub-access). */
static bool value_set(const char *v, size_t n)
{
    while (n && (*v == ' ' || *v == '\t')) {
        v++;
        n--;
    }
    if (n && (*v == '"' || *v == '\'')) {
        const char *close = memchr(v + 1, *v, n - 1);
        return close && nonblank_expanded(v + 1, (size_t)(close - v - 1), true);
    }
    /* Unquoted: a '#' after a space starts a comment. */
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '#' && (i == 0 || v[i - 1] == ' ' || v[i - 1] == '\t'))
            n = i;
    }
    return nonblank_expanded(v, n, true);
}

bool aitk_dotenv_sets(const char *text, const char *key)
{
    const size_t klen = strlen(key);
    bool set = false;
    /* python-dotenv takes a UTF-8 byte-order mark off the file's start
     * (Notepad's "UTF-8 with BOM"). */
    if (text && strncmp(text, "\xEF\xBB\xBF", 3) == 0)
        text += 3;
    for (const char *line = text; line && *line;) {
        size_t n = strcspn(line, "\r\n");
        const char *s = line, *end = line + n;
        line = *end ? end + 1 : end;
        while (s < end && (*s == ' ' || *s == '\t'))
            s++;
        if ((size_t)(end - s) > 7 && strncmp(s, "export", 6) == 0 && (s[6] == ' ' || s[6] == '\t'))
            for (s += 6; s < end && (*s == ' ' || *s == '\t');)
                s++;
        if ((size_t)(end - s) < klen || strncmp(s, key, klen) != 0)
            continue;
        const char *eq = s + klen;
        while (eq < end && (*eq == ' ' || *eq == '\t'))
            eq++;
        if (eq < end && *eq == '=')
            /* A later line sets it again: the last one counts. */
            set = value_set(eq + 1, (size_t)(end - eq - 1));
    }
    return set;
}
