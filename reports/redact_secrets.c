/* Secret shapes: what a password, key or token looks like in free text.
 *
 * Every report gets these (aitk_scrub_secrets), not only --redact ones: a
 * secret is never worth keeping, and each shape here is one that ordinary
 * report text does not take (a hash or a commit is not matched; long random
 * runs, which hashes resemble, are --redact's job: see match_random in
 * redact_patterns.c). Names, paths and addresses are not secrets: they are
 * --redact's too. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "reports/redact_patterns.h"

/* Names whose value is secret when it is machine-made, that is long (8+
 * characters): anywhere in the name, any case, as before. */
bool aitk_redact_secret_name(const char *name, size_t n)
{
    static const char *const words[] = {"token", "secret", "password", "passwd", "credential",
                                        "api_key", "apikey", "access_key", "private_key",
                                        "auth_key"};
    if (aitk_redact_ci_contains(name, n, "tokenizer"))
        return false;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (aitk_redact_ci_contains(name, n, words[i]))
            return true;
    return false;
}

/* The word of name[0..n) that starts at *at (words split at '_', '-', '.'
 * and at a lower-to-upper change: MYSQL_PWD, clientSecret); advances *at. */
static size_t next_word(const char *name, size_t n, size_t *at, size_t *start)
{
    size_t i = *at;
    while (i < n && strchr("_-.", name[i]))
        i++;
    *start = i;
    while (i < n && !strchr("_-.", name[i]) &&
           !(i > *start && isupper((unsigned char)name[i]) && islower((unsigned char)name[i - 1])))
        i++;
    *at = i;
    return i - *start;
}

static bool word_is(const char *w, size_t n, const char *want)
{
    return strlen(want) == n && strncasecmp(w, want, n) == 0;
}

/* A name whose value is a password however short it is ("hunter2"): one
 * of whose words is PASSWORD, PASSWD or PASSPHRASE (any case, alone or in a
 * compound: MY_PASSWORD, "password", dbPassword), or PASS or PWD written
 * in capitals as the last word of a compound, the way environment
 * variables are (DB_PASS, MYSQL_PWD). PASS and PWD alone, or in lower case,
 * are ordinary words of the report and of code ("forward pass: 12 ms",
 * bytes_per_pass) or the shell's working folder ($PWD, $OLDPWD).
 *
 * TOKEN, SECRET and KEY are not here: their values are machine-made and
 * long, so aitk_redact_secret_name's 8-character minimum (and KEY as a word
 * of a compound, below) finds them, while a short value after such a name
 * is a count or a setting ("elementwise_per_token: 2", "sort_key=name"). */
static bool password_name(const char *name, size_t n)
{
    size_t at = 0, start = 0, words = 0, len;
    bool last_is_short_word = false;
    while ((len = next_word(name, n, &at, &start)) > 0) {
        const char *w = name + start;
        words++;
        if (word_is(w, len, "password") || word_is(w, len, "passwd") ||
            word_is(w, len, "passphrase"))
            return true;
        last_is_short_word = (len == 4 && strncmp(w, "PASS", 4) == 0) ||
                             (len == 3 && strncmp(w, "PWD", 3) == 0);
    }
    return words >= 2 && last_is_short_word;
}

/* KEY as the last word of a compound (SSH_KEY, ENCRYPTION_KEY, apiKey): a
 * key. "key" alone is a config or dictionary key ("missing key: train.lr"),
 * and Python's KeyError names one. */
static bool key_name(const char *name, size_t n)
{
    size_t at = 0, start = 0, words = 0, len;
    bool key_last = false;
    while ((len = next_word(name, n, &at, &start)) > 0) {
        words++;
        key_last = word_is(name + start, len, "key");
    }
    return key_last && words >= 2;
}

/* The last word of name[0..n) is one of `words` (any case). */
static bool last_word_in(const char *name, size_t n, const char *const *words, size_t count)
{
    size_t at = 0, start = 0, len, last = 0, last_len = 0;
    while ((len = next_word(name, n, &at, &start)) > 0) {
        last = start;
        last_len = len;
    }
    for (size_t i = 0; i < count; i++)
        if (word_is(name + last, last_len, words[i]))
            return true;
    return false;
}

/* A field whose value is a secret whatever it looks like ("hunter2", "two
 * words secret", "12345"): a JSON key, a header, a command-line flag. It
 * names a password (password_name), or a key in a compound (api_key,
 * x-api-key, SSH_KEY: key_name), or its last word names a secret (HF_TOKEN,
 * client_secret, X-Auth-Token, auth, credentials, Cookie). Only the last
 * word counts for these: HF_TOKEN_PATH is a path, secret_name a name, and
 * text_tokens or a tokenizer is not a token. */
bool aitk_redact_secret_field(const char *name, size_t n)
{
    static const char *const last[] = {"token",      "secret",      "secrets", "apikey",
                                       "auth",       "authorization", "credential",
                                       "credentials", "cookie"};
    return password_name(name, n) || key_name(name, n) ||
           last_word_in(name, n, last, sizeof last / sizeof *last);
}

/* A value a machine made, as tokens and keys are: letters and digits
 * together (base64's '/' and '+' allowed, an AWS secret has them), no dots
 * or spaces, not a path. What follows "tokens_per_second:", "max_tokens:"
 * or "missing_key:" in a report is a number or a dotted name
 * ("model.diffusion_model.input_blocks"), and is kept. */
static bool machine_made(const char *v, size_t n)
{
    bool alpha = false, digit = false;
    if (n && (v[0] == '/' || v[0] == '~'))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c == '.' || c == '\\' || isspace(c))
            return false;
        alpha |= isalpha(c) != 0;
        digit |= isdigit(c) != 0;
    }
    return alpha && digit;
}

/* The value after `NAME=`, `NAME: `, `"NAME": "` at p[at]: its length. A
 * quoted value runs to its closing quote (a passphrase has spaces); a bare
 * one to a space, quotes, or , ; & (the next item of a list or a URL's
 * query: tokens=77&page=2 is a count, then another parameter). */
static size_t value_length(const char *p, size_t at, char quote)
{
    size_t v = 0;
    if (quote) {
        while (p[at + v] && p[at + v] != quote && p[at + v] != '\n')
            v++;
        return v;
    }
    while (p[at + v] && !isspace((unsigned char)p[at + v]) && !strchr("\"',;&", p[at + v]))
        v++;
    return v;
}

/* SOME_TOKEN=value, api_key: "value", "password": "value" (JSON inside
 * text). *name_len gets the part to keep (name, separator, opening quote). */
size_t aitk_redact_match_assignment(const char *p, char prev, size_t *name_len)
{
    /* A path's last part ("/etc/passwd: not an executable program") names a
     * file, not a variable. */
    if (prev == '/' || prev == '\\')
        return 0;
    size_t n = 0;
    while (aitk_redact_is_word(p[n]))
        n++;
    if (n == 0)
        return 0;
    size_t min;
    if (password_name(p, n))
        min = 1;
    else if (aitk_redact_secret_name(p, n) || key_name(p, n))
        min = 8;
    else
        return 0;
    size_t at = n;
    if (p[at] == '"' || p[at] == '\'') /* "password": the name's closing quote */
        at++;
    while (p[at] == ' ')
        at++;
    if (p[at] != '=' && p[at] != ':')
        return 0;
    at++;
    while (p[at] == ' ')
        at++;
    char quote = p[at] == '"' || p[at] == '\'' ? p[at] : 0;
    if (quote)
        at++;
    size_t v = value_length(p, at, quote);
    /* '[': already a placeholder; '(': the tool's own "(set; value not shown)". */
    if (v < min || p[at] == '[' || p[at] == '(')
        return 0;
    /* After a token or key name: only a value that looks machine-made. */
    if (min > 1 && !machine_made(p + at, v))
        return 0;
    *name_len = at;
    return at + v;
}

/* Where a value runs to in a URL's query: the next parameter, the fragment,
 * or the end of the URL. */
static size_t query_value_length(const char *p)
{
    size_t v = 0;
    while (p[v] && !isspace((unsigned char)p[v]) && !strchr("&#\"'<>`", p[v]))
        v++;
    return v;
}

/* A credential in a URL's query string: the value of a parameter whose
 * name says it is one (Azure SAS sig=, X-Amz-Signature, X-Goog-Signature,
 * X-Amz-Credential, token, access_token, key=AIza...). The name decides,
 * never the value's shape: a signature is percent-encoded
 * (sig=Xy%2BAb...%3D), which cuts it into runs too short for any shape
 * rule, and a signed URL is a bearer credential until it expires. Only the
 * value goes: the other parameters (sv=, se= the expiry, X-Amz-Expires)
 * hold nothing secret and tell a reader why a download failed. At p = the
 * name, after its '?' or '&' (prev). */
size_t aitk_redact_match_query_secret(const char *p, char prev, size_t *keep)
{
    static const char *const last[] = {"sig", "signature", "key", "credential", "pass", "pwd"};
    if (prev != '?' && prev != '&')
        return 0;
    size_t n = 0;
    while (aitk_redact_is_name_char(p[n]) || p[n] == '.')
        n++;
    if (n == 0 || p[n] != '=' || p[n + 1] == '[')
        return 0;
    if (!aitk_redact_secret_field(p, n) && !last_word_in(p, n, last, sizeof last / sizeof *last))
        return 0;
    size_t v = query_value_length(p + n + 1);
    *keep = n + 1;
    return v ? n + 1 + v : 0;
}

/* RFC 6750's b64token: what follows "Bearer ". */
static size_t token68(const char *p)
{
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || (p[n] && strchr("-._~+/", p[n])))
        n++;
    while (p[n] == '=')
        n++;
    return n;
}

/* "Bearer <token>" (any case; "Authorization: Bearer x" included) and
 * "Authorization: Basic <base64>": the word stays, the credential goes.
 * 8+ characters, so that prose ("bearer of bad news") is left alone. */
size_t aitk_redact_match_bearer(const char *p, size_t *keep)
{
    static const char *const schemes[] = {"bearer ", "basic "};
    size_t at = 0;
    bool authorization = strncasecmp(p, "authorization:", 14) == 0;
    if (authorization) {
        at = 14;
        while (p[at] == ' ')
            at++;
    }
    for (size_t k = 0; k < sizeof schemes / sizeof *schemes; k++) {
        size_t s = strlen(schemes[k]);
        if (strncasecmp(p + at, schemes[k], s) != 0 || (k == 1 && !authorization))
            continue;
        size_t t = at + s;
        while (p[t] == ' ')
            t++;
        size_t n = token68(p + t);
        /* A credential has digits; prose after "Bearer" ("authentication
         * required") has none. */
        bool digit = false;
        for (size_t i = 0; i < n; i++)
            digit |= isdigit((unsigned char)p[t + i]) != 0;
        if (n < 8 || !digit || p[t] == '[' || aitk_redact_is_word(p[t + n]))
            return 0;
        *keep = t;
        return t + n;
    }
    return 0;
}

static size_t base64url_run(const char *p)
{
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '-')
        n++;
    return n;
}

/* A JSON Web Token: base64url header (a JSON object, so "eyJ"), payload and
 * signature joined by dots; the signature is empty for alg "none". */
size_t aitk_redact_match_jwt(const char *p)
{
    if (strncmp(p, "eyJ", 3) != 0)
        return 0;
    size_t h = base64url_run(p);
    if (h < 10 || p[h] != '.')
        return 0;
    size_t b = base64url_run(p + h + 1);
    if (b < 2 || p[h + 1 + b] != '.')
        return 0;
    size_t end = h + 1 + b + 1;
    return end + base64url_run(p + end);
}

/* A PEM private key, "-----BEGIN [RSA |EC |OPENSSH |ENCRYPTED ]PRIVATE
 * KEY-----" through its END line (or to the end of a text cut short). The
 * BEGIN line stays, so a reader sees what was there. */
size_t aitk_redact_match_pem(const char *p, size_t *keep)
{
    static const char begin[] = "-----BEGIN ";
    if (strncmp(p, begin, sizeof begin - 1) != 0)
        return 0;
    const char *head_end = strstr(p + sizeof begin - 1, "-----");
    if (!head_end)
        return 0;
    size_t label = (size_t)(head_end - p);
    if (label < 11 + 11 || strncmp(head_end - 11, "PRIVATE KEY", 11) != 0 ||
        memchr(p, '\n', label))
        return 0;
    *keep = label + 5;
    const char *end = strstr(head_end + 5, "-----END ");
    if (!end)
        return strlen(p);
    const char *close = strstr(end + 9, "-----");
    return close ? (size_t)(close + 5 - p) : strlen(p);
}

/* A user name that is the credential itself (https://TOKEN@host, Gemfury's
 * and GitLab's form): machine-made and 8+ characters, or 20+ of any kind.
 * A login ("git", "jdoe") is neither, and stays for --redact to judge. */
static bool token_as_user(const char *u, size_t n)
{
    return (n >= 8 && machine_made(u, n)) || (n >= 20 && !memchr(u, '.', n));
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

bool aitk_redact_match_userinfo(const char *in, size_t i, aitk_url_credentials *c)
{
    char prev = i ? in[i - 1] : '\0';
    if (strncmp(in + i, "://", 3) == 0)
        return i > 0 && isalnum((unsigned char)prev) && url_userinfo(in + i, c);
    bool word_start = i == 0 || isspace((unsigned char)prev) || strchr("=\"'(,;<`", prev);
    return word_start && bare_userinfo(in + i, c);
}

size_t aitk_redact_match_secret(const char *p, char prev, bool random, unsigned flags,
                                size_t *keep)
{
    *keep = 0;
    size_t n = aitk_redact_match_query_secret(p, prev, keep);
    if (!n)
        n = aitk_redact_match_token(p);
    if (!n)
        n = aitk_redact_match_jwt(p);
    if (!n && random)
        n = aitk_redact_match_random(p, flags);
    if (!n)
        n = aitk_redact_match_pem(p, keep);
    if (!n)
        n = aitk_redact_match_bearer(p, keep);
    if (!n)
        n = aitk_redact_match_assignment(p, prev, keep);
    return n;
}
