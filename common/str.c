/* Growable owned strings; see str.h for the sticky-failure contract. */
#include "common/str.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

static aitk_status reserve(aitk_str *s, size_t extra)
{
    if (s->failed)
        return AITK_E_NOMEM;
    if (extra > (size_t)-1 - s->len - 1) {
        s->failed = true;
        return AITK_E_NOMEM;
    }
    size_t need = s->len + extra + 1;
    if (need <= s->cap)
        return AITK_OK;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < need)
        cap = cap > ((size_t)-1) / 2 ? need : cap * 2;
    char *p = aitk_realloc(s->ptr, cap);
    if (!p) {
        s->failed = true;
        return AITK_E_NOMEM;
    }
    s->ptr = p;
    s->cap = cap;
    return AITK_OK;
}

aitk_status aitk_str_appendn(aitk_str *s, const char *text, size_t n)
{
    aitk_status st = reserve(s, n);
    if (st)
        return st;
    if (n)
        memcpy(s->ptr + s->len, text, n);
    s->len += n;
    s->ptr[s->len] = '\0';
    return AITK_OK;
}

aitk_status aitk_str_append(aitk_str *s, const char *text)
{
    return aitk_str_appendn(s, text ? text : "", text ? strlen(text) : 0);
}

aitk_status aitk_str_appendc(aitk_str *s, char c) { return aitk_str_appendn(s, &c, 1); }

aitk_status aitk_str_vappendf(aitk_str *s, const char *fmt, va_list ap)
{
    va_list probe;
    va_copy(probe, ap);
    int n = vsnprintf(NULL, 0, fmt, probe);
    va_end(probe);
    if (n < 0)
        return AITK_E_INVAL;
    aitk_status st = reserve(s, (size_t)n);
    if (st)
        return st;
    vsnprintf(s->ptr + s->len, (size_t)n + 1, fmt, ap);
    s->len += (size_t)n;
    return AITK_OK;
}

aitk_status aitk_str_appendf(aitk_str *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    aitk_status st = aitk_str_vappendf(s, fmt, ap);
    va_end(ap);
    return st;
}

aitk_status aitk_str_append_number(aitk_str *s, double v)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof buf, "%.17g", v);
    return aitk_str_append(s, buf);
}

const char *aitk_str_cstr(const aitk_str *s) { return s->ptr ? s->ptr : ""; }

aitk_status aitk_str_status(const aitk_str *s) { return s->failed ? AITK_E_NOMEM : AITK_OK; }

void aitk_str_clear(aitk_str *s)
{
    s->len = 0;
    if (s->ptr)
        s->ptr[0] = '\0';
}

char *aitk_str_steal(aitk_str *s)
{
    char *p = NULL;
    if (!s->failed) {
        p = s->ptr ? s->ptr : aitk_strdup("");
        s->ptr = NULL;
    }
    aitk_str_free(s);
    return p;
}

void aitk_str_free(aitk_str *s)
{
    aitk_free(s->ptr);
    *s = (aitk_str)AITK_STR_INIT;
}

size_t aitk_utf8_sequence(const unsigned char *s)
{
    const unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    /* Lead byte: the length and the allowed range of the second byte
     * (Unicode Table 3-7), which rules out overlongs and surrogates. */
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

char *aitk_utf8_repaired(const char *s, bool *nomem)
{
    *nomem = false;
    const unsigned char *p = (const unsigned char *)s;
    size_t n;
    while (*p && (n = aitk_utf8_sequence(p)) != 0)
        p += n;
    if (!*p)
        return NULL;
    aitk_str out = AITK_STR_INIT;
    aitk_str_appendn(&out, s, (size_t)(p - (const unsigned char *)s));
    while (*p) {
        n = aitk_utf8_sequence(p);
        if (n) {
            aitk_str_appendn(&out, (const char *)p, n);
            p += n;
        } else {
            aitk_str_append(&out, "\xEF\xBF\xBD"); /* U+FFFD REPLACEMENT CHARACTER */
            p++;
        }
    }
    char *r = aitk_str_steal(&out);
    *nomem = r == NULL;
    return r;
}

aitk_status aitk_fputs_printable(const char *text, FILE *out)
{
    aitk_str shown = AITK_STR_INIT;
    aitk_status st = aitk_str_append_printable(&shown, text, true);
    if (!st)
        fwrite(aitk_str_cstr(&shown), 1, shown.len, out);
    aitk_str_free(&shown);
    return st;
}

aitk_status aitk_str_append_printable(aitk_str *s, const char *text, bool lines)
{
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        if (*p < 0x20 && !(lines && (*p == '\n' || *p == '\t'))) {
            aitk_str_appendf(s, "\\x%02x", *p);
            p++;
        } else if (*p == 0x7f) {
            /* \u, as for C1 below: also a valid escape inside a JSON string,
             * where cJSON leaves DEL raw (C0 it escapes itself). */
            aitk_str_append(s, "\\u007f");
            p++;
        } else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            aitk_str_appendf(s, "\\u%04x", p[1]);
            p += 2;
        } else if (*p >= 0x80) {
            /* A well-formed UTF-8 character passes whole; a stray byte is
             * shown, since a terminal in an 8-bit mode reads 0x9b as CSI. */
            size_t n = aitk_utf8_sequence(p);
            if (n)
                aitk_str_appendn(s, (const char *)p, n);
            else
                aitk_str_appendf(s, "\\x%02x", *p);
            p += n ? n : 1;
        } else {
            aitk_str_appendc(s, (char)*p);
            p++;
        }
    }
    return aitk_str_status(s);
}

bool aitk_text_ends_with(const char *s, const char *tail)
{
    const size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

bool aitk_text_blank(const char *s)
{
    for (; s && *s; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}
