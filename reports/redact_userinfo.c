/* Credentials in a URL's userinfo: scheme://user:PASSWORD@host (in quotes,
 * a password with spaces), a token as the user (https://TOKEN@host), and a
 * proxy's user:PASSWORD@host written without a scheme. Like the shapes of redact_secrets.c, every
 * report loses these (aitk_scrub_secrets); the user name stays for
 * --redact to judge, unless it is the credential itself. */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "reports/redact_patterns.h"

/* A user name that is the credential itself (https://TOKEN@host, Gemfury's
 * and GitLab's form): machine-made and 8+ characters, or 20+ of any kind.
 * A login ("git", "jdoe") is neither, and stays for --redact to judge. */
static bool token_as_user(const char *u, size_t n)
{
    return (n >= 8 && aitk_redact_machine_made(u, n)) || (n >= 20 && !memchr(u, '.', n));
}

/* A host with a port (proxy:3128) or a dotted name (proxy.corp.example). */
static bool proxy_host(const char *h)
{
    size_t n = 0, digits = 0;
    bool dot = false;
    for (; isalnum((unsigned char)h[n]) || h[n] == '-' || h[n] == '.'; n++)
        dot |= h[n] == '.';
    if (n && h[n] == ':')
        while (isdigit((unsigned char)h[n + 1 + digits]))
            digits++;
    return n && (dot || (digits >= 1 && digits <= 5 && !isalnum((unsigned char)h[n + 1 + digits])));
}

/* Whether text[0..n) holds "://": another URL, not a password. */
static bool holds_url(const char *text, size_t n)
{
    for (size_t i = 0; i + 3 <= n; i++)
        if (strncmp(text + i, "://", 3) == 0)
            return true;
    return false;
}

/* A password holding '/', '?' or '#' written into a URL unencoded
 * (https://user:pa#ss@host/): the authority scan stopped at `stop`, after
 * "user:" and before any '@'. The '@' further on, before a space or a
 * quote, with a host name after it, ends the password; a port
 * (host:8080/...) is digits and is not one. Where that '@' is, or 0. */
static size_t password_past_delimiter(const char *p, size_t stop)
{
    const char *colon = memchr(p + 3, ':', stop - 3);
    if (!colon || !strchr("/?#", p[stop]))
        return 0;
    bool digits = true;
    for (const char *q = colon + 1; q < p + stop; q++)
        digits &= isdigit((unsigned char)*q) != 0;
    if (digits)
        return 0;
    size_t at = stop;
    while (p[at] && !isspace((unsigned char)p[at]) && !strchr("@\"'<>`", p[at]))
        at++;
    if (p[at] != '@' || !proxy_host(p + at + 1) || holds_url(p + stop, at - stop))
        return 0;
    return at;
}

/* The userinfo of a URL at p = "://" (the scheme is behind it): what comes
 * before the last '@' ahead of the path, query or fragment; a ':' in it
 * separates the user from the password. */
static bool url_userinfo(const char *p, aitk_url_credentials *c)
{
    size_t end = 3, at = 0;
    while (p[end] && !isspace((unsigned char)p[end]) && !strchr("/?#\"'<>`", p[end])) {
        if (p[end] == '@')
            at = end;
        end++;
    }
    if (!at)
        at = password_past_delimiter(p, end);
    if (!at)
        return false;
    const char *colon = memchr(p + 3, ':', at - 3);
    c->user_at = 3;
    c->user_len = (colon ? (size_t)(colon - p) : at) - 3;
    c->colon = colon != NULL;
    c->password_at = colon ? (size_t)(colon - p) + 1 : at;
    c->password_len = at - c->password_at;
    c->end = at + 1;
    /* TOKEN:@host, an empty password: the user is the credential. */
    c->user_secret = c->user_len && (colon ? !c->password_len : token_as_user(p + 3, c->user_len));
    return c->password_len || c->user_secret;
}

/* user:password@host[:port] with no scheme, the way http_proxy and
 * no_proxy-era tools are often set (http_proxy=user:pass@proxy:8080). At
 * p = the user. "mailto:" is a scheme, not a user. */
static bool bare_userinfo(const char *p, aitk_url_credentials *c)
{
    size_t u = 0, w;
    while (isalnum((unsigned char)p[u]) || (p[u] && strchr("._~%!$*+-_", p[u])))
        u++;
    if (u == 0 || p[u] != ':' || (u == 6 && strncasecmp(p, "mailto", 6) == 0))
        return false;
    for (w = u + 1; p[w] && !isspace((unsigned char)p[w]) && !strchr("@/\"'<>`", p[w]); w++)
        ;
    if (w == u + 1 || p[w] != '@' || !proxy_host(p + w + 1))
        return false;
    *c = (aitk_url_credentials){0, u, u + 1, w - u - 1, w + 1, true, false};
    return true;
}

/* A URL in quotes (git clone "https://user:my pass@host/r.git", pip's
 * --index-url '...'), at p = "://": the closing quote, not a space, ends
 * it, so a password may hold spaces, and '@' too (p@ss w0rd). It runs to
 * the last '@' before that quote that a host follows with no space after
 * it, and holds a space (a password without one is url_userinfo's, whose
 * '@' is the first ahead of the path: u:p@h/x?mail=a@b.org). A '/' before
 * the first space is the URL's path ('https://u:p@h/ then a@b.org'): the
 * URL ended there. */
static bool quoted_userinfo(const char *p, char quote, aitk_url_credentials *c)
{
    size_t u = 3, at = 0, close;
    bool spaced = false;
    while (p[u] && !isspace((unsigned char)p[u]) && !strchr(":/?#@\"'<>`", p[u]))
        u++;
    if (p[u] != ':')
        return false;
    for (close = u + 1; p[close] && p[close] != quote && p[close] != '\n'; close++)
        if (p[close] == '@')
            at = close;
    if (p[close] != quote || at <= u + 1 || !proxy_host(p + at + 1))
        return false;
    for (size_t k = u + 1; k < close; k++) {
        if ((isspace((unsigned char)p[k]) && k > at) || (p[k] == '/' && !spaced && k < at))
            return false;
        spaced |= isspace((unsigned char)p[k]) != 0;
    }
    if (!spaced || holds_url(p + u + 1, at - u - 1))
        return false;
    *c = (aitk_url_credentials){3, u - 3, u + 1, at - u - 1, at + 1, true, false};
    return true;
}

bool aitk_redact_match_userinfo(const char *in, size_t i, aitk_url_credentials *c)
{
    char prev = i ? in[i - 1] : '\0';
    if (strncmp(in + i, "://", 3) == 0) {
        size_t scheme = i;
        while (scheme > 0 && (isalnum((unsigned char)in[scheme - 1]) || in[scheme - 1] == '+' ||
                              in[scheme - 1] == '.' || in[scheme - 1] == '-'))
            scheme--;
        char quote = scheme > 0 ? in[scheme - 1] : '\0';
        if (i > 0 && (quote == '"' || quote == '\'') && quoted_userinfo(in + i, quote, c))
            return true;
        return i > 0 && isalnum((unsigned char)prev) && url_userinfo(in + i, c);
    }
    bool word_start = i == 0 || isspace((unsigned char)prev) || strchr("=\"'(,;<`", prev);
    return word_start && bare_userinfo(in + i, c);
}
