/* Secret shapes: what a password, key or token looks like in free text.
 *
 * Every report gets these (aitk_scrub_secrets), not only --redact ones: a
 * secret is never worth keeping, and each shape here is one that ordinary
 * report text does not take (a hash or a commit is not matched; long random
 * runs, which hashes resemble, are --redact's job: see match_random in
 * redact_patterns.c). Names, paths and addresses are not secrets: they are
 * --redact's too. */
#include <ctype.h>
#include <math.h>
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

/* w[0..n) has no lower-case letter. */
static bool upper_word(const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (islower((unsigned char)w[i]))
            return false;
    return true;
}

/* A name whose value is a password however short it is ("hunter2"): one
 * of whose words is PASSWORD, PASSWD or PASSPHRASE (any case, alone or in a
 * compound: MY_PASSWORD, "password", dbPassword), or ends in PASSWORD in
 * capitals, the way some programs name their variable without a
 * separator (libpq's PGPASSWORD, REDISPASSWORD); or PASS or PWD written
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
            word_is(w, len, "passphrase") ||
            (len > 8 && strncmp(w + len - 8, "PASSWORD", 8) == 0 && upper_word(w, len)))
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

/* A JSON number under a field named `name` that is a secret: any number
 * under a password's name (a PIN, "password": 12345678), and one of 8 or
 * more integer digits under another secret field ("hf_token": 86753091...),
 * the rule text gets from aitk_redact_match_assignment. A count under a
 * name ending in a secret word ("per_token": 2) is shorter, and stays. */
bool aitk_redact_secret_number(const char *name, size_t n, double value)
{
    if (password_name(name, n))
        return true;
    return aitk_redact_secret_field(name, n) && value == floor(value) &&
           fabs(value) >= 1e7;
}

/* A value a machine made, as tokens and keys are: letters and digits
 * together (base64's '/' and '+' allowed, an AWS secret has them), no dots
 * or spaces, not a path. What follows "tokens_per_second:", "max_tokens:"
 * or "missing_key:" in a report is a number or a dotted name
 * ("model.diffusion_model.input_blocks"), and is kept. */
bool aitk_redact_machine_made(const char *v, size_t n)
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

static size_t digit_run(const char *v)
{
    size_t n = 0;
    while (isdigit((unsigned char)v[n]))
        n++;
    return n;
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

/* A password's bare value at p[at]: as value_length, but over spaces to the
 * end of the line, since a passphrase is words ("PASSWORD=correct horse
 * battery staple" in a .env file, where python-dotenv takes the whole line,
 * or in YAML). It stops before the next NAME= (DB_PASS=x MYSQL_PWD=y), and
 * spaces at its end stay. */
static size_t passphrase_length(const char *p, size_t at)
{
    size_t v = 0, end = 0;
    while (p[at + v] && p[at + v] != '\n' && !strchr("\"',;&", p[at + v])) {
        if (p[at + v] == ' ' || p[at + v] == '\t') {
            size_t w = v;
            while (p[at + w] == ' ' || p[at + w] == '\t')
                w++;
            size_t name = 0;
            while (aitk_redact_is_word(p[at + w + name]))
                name++;
            if (name && p[at + w + name] == '=')
                break;
            v = w;
            continue;
        }
        end = ++v;
    }
    return end;
}

/* After a name at p[0..n): its closing quote (and a subscript's ']':
 * os.environ["HF_TOKEN"] = "..."), spaces, one of `seps` (' ' among them:
 * a run of spaces alone will do), spaces, an opening quote. Where the
 * value starts, or 0; *quote gets the opening quote. */
static size_t value_start(const char *p, size_t n, const char *seps, char *quote)
{
    size_t at = n;
    if (p[at] == '"' || p[at] == '\'') { /* "password": the name's closing quote */
        at++;
        if (p[at] == ']')
            at++;
    }
    size_t spaces = at;
    while (p[at] == ' ')
        at++;
    if (p[at] && p[at] != ' ' && strchr(seps, p[at]))
        at++;
    else if (!(strchr(seps, ' ') && at > spaces))
        return 0;
    while (p[at] == ' ')
        at++;
    *quote = p[at] == '"' || p[at] == '\'' ? p[at] : 0;
    return at + (*quote != 0);
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
    char quote;
    size_t at = value_start(p, n, "=:", &quote);
    if (!at)
        return 0;
    size_t v = min == 1 && !quote ? passphrase_length(p, at) : value_length(p, at, quote);
    /* '[': already a placeholder; '(': the tool's own "(set; value not shown)". */
    if (v < min || p[at] == '[' || p[at] == '(')
        return 0;
    /* After a token or key name: only a value that looks machine-made, or
     * a long run of digits after a name whose last word says it is a
     * secret (HF_TOKEN=8675309..., "api_key": 12345678...): a count is
     * shorter, and its name is not a secret's (max_tokens). */
    if (min > 1 && !aitk_redact_machine_made(p + at, v)) {
        /* JSON's number runs to its closing brace, which stays. */
        const size_t d = digit_run(p + at);
        if (d < min || isalnum((unsigned char)p[at + d]) || !aitk_redact_secret_field(p, n))
            return 0;
        v = d;
    }
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

/* A value that names a secret rather than holding it, or holds none: a
 * placeholder ("[secret]", "<your token>"), a variable ($HF_TOKEN,
 * %HF_TOKEN%), the next flag, the tool's own "(set; value not shown)". */
static bool stands_for_a_value(char c)
{
    return !c || strchr("[<$%(-{", c);
}

/* A command-line flag that takes a secret: --token X, --api-key=X,
 * --hf_token "X" (aitk_redact_secret_field names which). The value goes
 * whatever it looks like: the flag says what it is. */
static size_t match_flag(const char *p, size_t *keep)
{
    if (strncmp(p, "--", 2) != 0)
        return 0;
    size_t n = 2;
    while (aitk_redact_is_name_char(p[n]))
        n++;
    char quote;
    size_t at = aitk_redact_secret_field(p + 2, n - 2) ? value_start(p, n, "= ", &quote) : 0;
    if (!at || stands_for_a_value(p[at]))
        return 0;
    *keep = at;
    return at + value_length(p, at, quote);
}

/* The headers whose whole value is the credential, to the end of the line
 * or of the quoted text ("Cookie: a=1; b=2"), any case. */
static bool whole_line_header(const char *name, size_t n)
{
    static const char *const names[] = {"authorization", "proxy-authorization", "cookie",
                                        "set-cookie"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == n && strncasecmp(name, names[i], n) == 0)
            return true;
    return false;
}

/* An HTTP header that carries a credential: "Authorization: <scheme> X"
 * (any scheme: Bearer, Basic, token, Digest...), "Cookie: ...",
 * "x-api-key: X", "X-Auth-Token: X", "Private-Token: X". The scheme
 * stays, so a reader sees which kind was sent. A header's name has a '-'
 * or is one of whole_line_header's; other "name: value" text is an
 * assignment (aitk_redact_match_assignment), held to its stricter rule. */
static size_t match_header(const char *p, size_t *keep)
{
    size_t n = 0;
    while (aitk_redact_is_name_char(p[n]))
        n++;
    bool line = whole_line_header(p, n);
    if (!line && (!memchr(p, '-', n) || !aitk_redact_secret_field(p, n)))
        return 0;
    char quote;
    size_t at = value_start(p, n, ":", &quote);
    if (!at || stands_for_a_value(p[at]))
        return 0;
    if (!line) {
        *keep = at;
        return at + value_length(p, at, quote);
    }
    /* A cookie header runs to the end of the line ("a=1; b=2"); an
     * Authorization header's credentials never hold a ';' (token68, or
     * AWS's and Digest's comma-separated parameters), so prose after one
     * stays. */
    bool authorization = aitk_redact_ci_contains(p, n, "authorization");
    char stop[6] = "\n\"'`;";
    if (quote)
        stop[0] = quote, stop[1] = '\n', stop[2] = ';', stop[3] = '\0';
    if (!authorization)
        stop[strlen(stop) - 1] = '\0';
    size_t end = at + strcspn(p + at, stop);
    /* "Authorization: <scheme> <credential>"; one word alone is the
     * credential. */
    size_t scheme = strcspn(p + at, " \n\"'`");
    if (p[at + scheme] != ' ' || !authorization)
        scheme = 0;
    while (scheme && at + scheme < end && p[at + scheme] == ' ')
        scheme++;
    if (at + scheme >= end || p[at + scheme] == '[')
        return 0;
    *keep = at + scheme;
    return end;
}

/* One whitespace-separated word of p at *at (skipping whitespace first, new
 * lines too); advances *at. */
static size_t netrc_word(const char *p, size_t *at, size_t *start)
{
    while (isspace((unsigned char)p[*at]))
        (*at)++;
    *start = *at;
    while (p[*at] && !isspace((unsigned char)p[*at]))
        (*at)++;
    return *at - *start;
}

/* A .netrc entry, on one line or several: "machine HOST login USER
 * password SECRET" or "default login USER password SECRET". Its words
 * come in pairs (login, account, port, password and their values), which
 * keeps prose with "machine" or "default" in it out. */
static size_t match_netrc(const char *p, size_t *keep)
{
    static const char *const keys[] = {"login", "account", "port", "password"};
    size_t at = 0, start, len = netrc_word(p, &at, &start);
    bool machine = word_is(p, len, "machine");
    if (!machine && !word_is(p, len, "default"))
        return 0;
    if (machine && !netrc_word(p, &at, &start))
        return 0;
    for (int pair = 0; pair < 4; pair++) {
        len = netrc_word(p, &at, &start);
        size_t k = 0;
        while (k < sizeof keys / sizeof *keys && !word_is(p + start, len, keys[k]))
            k++;
        if (k == sizeof keys / sizeof *keys || !(len = netrc_word(p, &at, &start)))
            return 0;
        if (k == 3 && p[start] != '[') {
            *keep = start;
            return start + len;
        }
    }
    return 0;
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

/* "Bearer <token>" (any case) in free text: the word stays, the credential
 * goes. 8+ characters, so that prose ("bearer of bad news") is left alone;
 * after "Authorization:" match_header takes any credential. */
size_t aitk_redact_match_bearer(const char *p, size_t *keep)
{
    if (strncasecmp(p, "bearer ", 7) != 0)
        return 0;
    size_t t = 7;
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
 * KEY-----", or an armoured PGP one ("-----BEGIN PGP PRIVATE KEY
 * BLOCK-----"), through its END line (or to the end of a text cut short). The
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
    bool block = label >= 17 && strncmp(head_end - 17, "PRIVATE KEY BLOCK", 17) == 0;
    if (label < 11 + 11 || (strncmp(head_end - 11, "PRIVATE KEY", 11) != 0 && !block) ||
        memchr(p, '\n', label))
        return 0;
    *keep = label + 5;
    /* Already hidden: a key cut short would otherwise run on over the
     * placeholder and the text after it. */
    if (strncmp(p + *keep, "[secret", 7) == 0)
        return 0;
    const char *end = strstr(head_end + 5, "-----END ");
    if (!end)
        return strlen(p);
    const char *close = strstr(end + 9, "-----");
    return close ? (size_t)(close + 5 - p) : strlen(p);
}

size_t aitk_redact_match_secret(const char *in, size_t i, bool random, unsigned flags,
                                size_t *keep)
{
    const char *p = in + i;
    const char prev = i ? in[i - 1] : '\0';
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
        n = match_header(p, keep);
    if (!n)
        n = match_flag(p, keep);
    if (!n)
        n = aitk_redact_match_tool_password(in, i, keep);
    if (!n)
        n = match_netrc(p, keep);
    if (!n)
        n = aitk_redact_match_bearer(p, keep);
    if (!n)
        n = aitk_redact_match_assignment(p, prev, keep);
    /* A header or name with nothing after it ("X-Auth-Token:" at the end
     * of a line) hides nothing: taken, it would put a placeholder where no
     * secret was. */
    return n > *keep ? n : 0;
}
