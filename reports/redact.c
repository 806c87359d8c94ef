/* Redaction over the report tree: learn private values, then rewrite text.
 *
 * Two passes. The first learns values that only their place gives away (a
 * field named hostname, serial or HF_TOKEN; the user name inside a home
 * path); the second rewrites every string and key, replacing those learnt
 * values wherever they stand as whole tokens (match_learnt says what that
 * means for host and user names), plus whatever the patterns recognise on
 * their own (UUIDs, MACs, IPs, known token prefixes, long random-looking
 * runs). One table maps value -> placeholder for both, which is what makes
 * the replacement consistent across the whole report. Structural fields
 * (check ids, categories, statuses, host.os) are left as they are. */
#include "reports/redact.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "reports/redact_patterns.h"

typedef struct entry {
    aitk_redact_kind kind;
    char *value;
    size_t len;
    char *placeholder;
    bool technical; /* a host or user name that is a technical word */
} entry;

struct aitk_redactor {
    entry *items;
    size_t count, cap;
    size_t counters[AITK_REDACT_KIND_COUNT];
    /* During apply: the report's host.os and profile, left as they are. */
    const cJSON *spare[2];
};

static const char *const kind_names[] = {
#define AITK_X_NAME(name, text) text,
    AITK_REDACT_KIND_LIST(AITK_X_NAME)
#undef AITK_X_NAME
};

aitk_status aitk_redactor_new(aitk_redactor **out)
{
    *out = aitk_calloc(1, sizeof **out);
    return *out ? AITK_OK : AITK_E_NOMEM;
}

void aitk_redactor_free(aitk_redactor *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        aitk_free(r->items[i].value);
        aitk_free(r->items[i].placeholder);
    }
    aitk_free(r->items);
    aitk_free(r);
}

size_t aitk_redactor_count(const aitk_redactor *r, aitk_redact_kind kind)
{
    return (unsigned)kind < AITK_REDACT_KIND_COUNT ? r->counters[kind] : 0;
}

/* Host and user names compare without case (DNS and most logins do). */
static entry *find(aitk_redactor *r, const char *v, size_t n)
{
    for (size_t i = 0; i < r->count; i++) {
        entry *e = &r->items[i];
        if (e->len != n)
            continue;
        bool fold = e->kind == AITK_REDACT_HOST || e->kind == AITK_REDACT_USER;
        if (fold ? strncasecmp(e->value, v, n) == 0 : memcmp(e->value, v, n) == 0)
            return e;
    }
    return NULL;
}

/* The placeholder for v[0..n), creating it the first time. */
static aitk_status placeholder(aitk_redactor *r, aitk_redact_kind kind, const char *v, size_t n,
                               const char **out)
{
    entry *e = find(r, v, n);
    if (e) {
        *out = e->placeholder;
        return AITK_OK;
    }
    entry *items = aitk_grow(r->items, sizeof *items, r->count, &r->cap, 16);
    if (!items)
        return AITK_E_NOMEM;
    r->items = items;
    aitk_str ph = AITK_STR_INIT;
    aitk_str_appendf(&ph, "[%s-%zu]", kind_names[kind], r->counters[kind] + 1);
    char *value = aitk_strndup(v, n);
    char *text = aitk_str_steal(&ph);
    if (!value || !text) {
        aitk_free(value);
        aitk_free(text);
        return AITK_E_NOMEM;
    }
    bool name = kind == AITK_REDACT_HOST || kind == AITK_REDACT_USER;
    r->items[r->count++] =
        (entry){kind, value, n, text, name && aitk_redact_technical_word(value, n)};
    r->counters[kind]++;
    *out = text;
    return AITK_OK;
}

static bool identifies_nobody(aitk_redact_kind kind, const char *v)
{
    /* Public, Default, All Users, Shared: the folders of C:\\Users and
     * /Users that belong to no one. */
    static const char *const common[] = {"root",   "localhost", "localhost.localdomain",
                                         "unknown", "none",     "null",
                                         "(none)",  "n/a",      "[n/a]",
                                         "public",  "default",  "default user",
                                         "all users", "shared"};
    size_t n = strlen(v);
    if (n < 2 || v[0] == '[')
        return true;
    for (size_t i = 0; i < sizeof common / sizeof *common; i++)
        if (aitk_redact_ci_equal(v, common[i]))
            return true;
    /* "Not Supported", "N/A": a serial or secret field that holds no value. */
    if ((kind == AITK_REDACT_SERIAL || kind == AITK_REDACT_SECRET || kind == AITK_REDACT_UUID) &&
        (n < 4 || strchr(v, ' ')))
        return true;
    return false;
}

aitk_status aitk_redactor_add(aitk_redactor *r, aitk_redact_kind kind, const char *value)
{
    if (!value || (unsigned)kind >= AITK_REDACT_KIND_COUNT)
        return AITK_E_INVAL;
    if (identifies_nobody(kind, value))
        return AITK_OK;
    const char *ph;
    aitk_status st = placeholder(r, kind, value, strlen(value), &ph);
    /* "gpu7.cluster.example.org" also appears as plain "gpu7", and
     * "7gpu.lab.example.org" as "7gpu"; an address's first number is no
     * name. */
    const char *dot = kind == AITK_REDACT_HOST ? strchr(value, '.') : NULL;
    bool letter = false;
    for (const char *c = value; dot && c < dot; c++)
        letter |= isalpha((unsigned char)*c) != 0;
    if (!st && dot && dot - value >= 2 && letter)
        st = placeholder(r, kind, value, (size_t)(dot - value), &ph);
    /* SSSD and AD logins, "jdoe@corp.example.com" (homes /home/%u@%d): the
     * local part alone names the same person in prompts and folders. */
    const char *at = kind == AITK_REDACT_USER ? strchr(value, '@') : NULL;
    if (!st && at && at - value >= 2) {
        char *local = aitk_strndup(value, (size_t)(at - value));
        st = local ? aitk_redactor_add(r, kind, local) : AITK_E_NOMEM;
        aitk_free(local);
    }
    return st;
}

/* The longest learnt value at in[i] that stands there as that value.
 * Host and user names follow the rule of redact_names.c: bounded by what
 * does not continue their edge (jdoe2, hf_jdoe), and a technical word
 * ("cuda", "python") only as a home folder or as the whole of a field that
 * holds a name (host.hostname; see key_flags), so that
 * /usr/local/cuda, "nvidia-smi" and "Python environment" keep their
 * meaning. Other learnt values (serials, UUIDs, secrets from a field's
 * name) need a whole token: a word boundary on both sides. */
static const entry *match_learnt(const aitk_redactor *r, const char *in, size_t i, unsigned flags)
{
    const char *p = in + i;
    bool names = !(flags & AITK_REDACT_TEXT_NO_NAMES);
    const entry *best = NULL;
    for (size_t k = 0; k < r->count; k++) {
        const entry *e = &r->items[k];
        /* An empty value would match everywhere, and the rewrite would
         * never move on. */
        if ((best && e->len <= best->len) || e->len == 0)
            continue;
        bool name = e->kind == AITK_REDACT_HOST || e->kind == AITK_REDACT_USER;
        if (name && !names)
            continue;
        int cmp = name ? strncasecmp(p, e->value, e->len) : strncmp(p, e->value, e->len);
        if (cmp != 0)
            continue;
        if (!name) {
            if ((i > 0 && aitk_redact_is_word(in[i - 1])) || aitk_redact_is_word(p[e->len]))
                continue;
        } else if (e->technical) {
            bool whole_field =
                (flags & AITK_REDACT_TEXT_NAME_FIELD) && i == 0 && p[e->len] == '\0';
            bool home = aitk_redact_home_component(in, i) &&
                        !aitk_redact_is_name_char(p[e->len]) && p[e->len] != '.';
            if (!whole_field && !home)
                continue;
        } else if (!aitk_redact_name_bounded(in, i, e->value, e->len)) {
            continue;
        }
        best = e;
    }
    return best;
}

/* A value's replacement: its placeholder with a redactor, "[secret]" in
 * the scrub (which has none). */
static aitk_status put_placeholder(aitk_redactor *r, aitk_redact_kind kind, const char *v,
                                   size_t n, aitk_str *out)
{
    const char *ph = "[secret]";
    aitk_status st = r ? placeholder(r, kind, v, n, &ph) : AITK_OK;
    if (!st)
        aitk_str_append(out, ph);
    return st;
}

/* A secret's replacement; one the scrub (or an earlier redaction) left,
 * "[secret]" or "[secret-2]", stays as it is rather than being learnt as a
 * value, which would give every scrubbed secret the same number. */
static aitk_status put_secret(aitk_redactor *r, const char *v, size_t n, aitk_str *out)
{
    if (n >= 8 && strncmp(v, "[secret", 7) == 0 && v[n - 1] == ']') {
        aitk_str_appendn(out, v, n);
        return AITK_OK;
    }
    return put_placeholder(r, AITK_REDACT_SECRET, v, n, out);
}

/* The userinfo at in[i] (aitk_redact_match_userinfo): the password always
 * goes, and a user name that is the credential; a login name too with a
 * redactor. *used: how much of `in` was written. */
static aitk_status userinfo(aitk_redactor *r, const char *in, size_t i, aitk_str *out,
                            size_t *used)
{
    aitk_url_credentials c;
    *used = 0;
    if (!aitk_redact_match_userinfo(in, i, &c))
        return AITK_OK;
    const char *p = in + i;
    aitk_status st = AITK_OK;
    aitk_str_appendn(out, p, c.user_at);
    if (c.user_secret)
        st = put_secret(r, p + c.user_at, c.user_len, out);
    else if (r && c.user_len)
        st = put_placeholder(r, AITK_REDACT_USER, p + c.user_at, c.user_len, out);
    else
        aitk_str_appendn(out, p + c.user_at, c.user_len);
    if (c.colon)
        aitk_str_appendc(out, ':');
    if (!st && c.password_len)
        st = put_secret(r, p + c.password_at, c.password_len, out);
    aitk_str_appendc(out, '@');
    *used = c.end;
    return st;
}

/* One pass over a text. With a redactor (--redact): learnt values, then the
 * patterns, each value to its placeholder. Without one (the scrub every
 * report gets): secret shapes only (no long random runs), each to
 * "[secret]". *changed: something was replaced. */
static aitk_status redact_text(aitk_redactor *r, const char *in, unsigned flags, aitk_str *out,
                               bool *changed)
{
    size_t i = 0;
    while (in[i]) {
        const char *p = in + i;
        size_t n = 0, keep = 0;
        aitk_status st = AITK_OK;
        if ((st = userinfo(r, in, i, out, &n)))
            return st;
        if (n) {
            i += n;
            *changed = true;
            continue;
        }
        char prev = i ? in[i - 1] : '\0';
        bool boundary = i == 0 || !aitk_redact_is_word(prev);
        bool b64_start = i == 0 || !(isalnum((unsigned char)in[i - 1]) || in[i - 1] == '+' ||
                                     in[i - 1] == '/' || in[i - 1] == '_');
        /* The patterns first, where a word starts: a learnt name must not
         * cut a UUID or a token in two (user "ace" in GPU-3ace1f...). */
        if (boundary) {
            aitk_redact_kind kind = AITK_REDACT_SECRET;
            if (!r)
                n = aitk_redact_match_secret(in, i, false, 0, &keep);
            else if ((n = aitk_redact_match_uuid(p)))
                kind = AITK_REDACT_UUID;
            else if (prev != '.' && (n = aitk_redact_match_mac(p))) /* not in 1.2024.0101.1234 */
                kind = AITK_REDACT_MAC;
            else if (!(flags & AITK_REDACT_TEXT_NO_IP) && !aitk_redact_version_context(in, i) &&
                     ((n = aitk_redact_match_ipv4(p)) || (n = aitk_redact_match_ipv6(p))))
                kind = AITK_REDACT_IP;
            else if ((n = aitk_redact_match_secret(in, i, b64_start, flags, &keep)))
                kind = AITK_REDACT_SECRET;
            if (n) {
                aitk_str_appendn(out, p, keep);
                st = kind == AITK_REDACT_SECRET ? put_secret(r, p + keep, n - keep, out)
                                                : put_placeholder(r, kind, p + keep, n - keep, out);
                if (st)
                    return st;
                i += n;
                *changed = true;
                continue;
            }
        }
        const entry *e = r ? match_learnt(r, in, i, flags) : NULL;
        if (e) {
            aitk_str_append(out, e->placeholder);
            i += e->len;
            *changed = true;
            continue;
        }
        aitk_str_appendc(out, in[i]);
        i++;
    }
    return aitk_str_status(out);
}

aitk_status aitk_redactor_text(aitk_redactor *r, const char *in, aitk_str *out)
{
    bool changed = false;
    return redact_text(r, in ? in : "", 0, out, &changed);
}

/* Fields that hold a host or a user name (the host's own record, a
 * variable such as USER or HOSTNAME). */
static const char *const host_keys[] = {"hostname", "host_name", "nodename", "node_name",
                                        "fqdn", "computername"};
static const char *const user_keys[] = {"user", "username", "user_name", "login", "logname",
                                        "owner"};

static bool key_in(const char *key, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (aitk_redact_ci_equal(key, keys[i]))
            return true;
    return false;
}

static unsigned key_flags(const char *key)
{
    unsigned f = 0;
    if (!key)
        return 0;
    size_t n = strlen(key);
    if (key_in(key, host_keys, sizeof host_keys / sizeof *host_keys) ||
        key_in(key, user_keys, sizeof user_keys / sizeof *user_keys))
        f |= AITK_REDACT_TEXT_NAME_FIELD;
    if (aitk_redact_ci_contains(key, n, "version") || aitk_redact_ci_contains(key, n, "driver"))
        f |= AITK_REDACT_TEXT_NO_IP;
    if (aitk_redact_ci_contains(key, n, "commit") || aitk_redact_ci_contains(key, n, "sha") ||
        aitk_redact_ci_contains(key, n, "hash") || aitk_redact_ci_contains(key, n, "checksum") ||
        aitk_redact_ci_contains(key, n, "build_id"))
        f |= AITK_REDACT_TEXT_NO_HEX;
    return f;
}

static aitk_status learn_user(aitk_redactor *r, const char *v, size_t n)
{
    char *name = aitk_strndup(v, n);
    if (!name)
        return AITK_E_NOMEM;
    aitk_status st = aitk_redactor_add(r, AITK_REDACT_USER, name);
    aitk_free(name);
    return st;
}

/* Every user name in s that is a home folder: the component after a folder
 * named home, homes, home2, Users at any depth (aitk_redact_home_component:
 * /home/jdoe, /nfs/homes/erin, C:\USERS\carol). A Windows or macOS
 * profile may have spaces ("C:\Users\John Smith\"): under a Users folder
 * the name runs to the next separator (or the end of the text) when it is
 * words and single spaces; its first word is learnt as well, in case the
 * spaces were prose after a path that ended there. */
static aitk_status learn_home_users(aitk_redactor *r, const char *s)
{
    for (size_t i = 0; s[i]; i++) {
        if (i == 0 || (s[i - 1] != '/' && s[i - 1] != '\\') || !aitk_redact_home_component(s, i))
            continue;
        const char *u = s + i;
        size_t n = strcspn(u, "/\\ \t\r\n\"':;,");
        aitk_status st = n ? learn_user(r, u, n) : AITK_OK;
        if (st)
            return st;
        size_t parent = i - 1;
        while (parent > 0 && s[parent - 1] != '/' && s[parent - 1] != '\\')
            parent--;
        if (u[n] != ' ' || strncasecmp(s + parent, "users", 5) != 0)
            continue;
        size_t m = strcspn(u, "/\\\t\r\n\"'`");
        bool words = u[m - 1] != ' ';
        for (size_t k = 0; k < m && words; k++)
            words = aitk_redact_is_name_char(u[k]) || u[k] == '.' ||
                    (u[k] == ' ' && u[k + 1] != ' ');
        if (words && (st = learn_user(r, u, m)))
            return st;
    }
    return AITK_OK;
}

/* The home folder a path gives away by what sits in it: the folder that
 * holds a .cache, .local, .config, .pyenv or .conda (the folders Python,
 * pip, pyenv, conda and the Hugging Face cache keep in a user's home) is
 * one, wherever homes live: /home1/<group>/<user>, /scratch/u/<user>,
 * /root. Its last component is learnt as a user name, as the live run
 * learns $USER. */
static aitk_status learn_dot_folder_users(aitk_redactor *r, const char *s)
{
    static const char *const dot[] = {".cache", ".local", ".config", ".pyenv", ".conda"};
    for (size_t i = 0; s[i]; i++) {
        if (i == 0 || (s[i - 1] != '/' && s[i - 1] != '\\') || s[i] != '.')
            continue;
        size_t n = strcspn(s + i, "/\\ \t\r\n\"':;,");
        bool known = false;
        for (size_t k = 0; k < sizeof dot / sizeof *dot && !known; k++)
            known = strlen(dot[k]) == n && strncmp(s + i, dot[k], n) == 0;
        size_t end = i - 1, start = end;
        while (start > 0 && !strchr("/\\ \t\r\n\"'`:;,=()[]<>~", s[start - 1]))
            start--;
        /* A path's folder, after a separator ("/x/.cache", "C:\\x\\.cache");
         * not "~/.cache", which names no one. */
        if (!known || start == end || start == 0 || (s[start - 1] != '/' && s[start - 1] != '\\'))
            continue;
        aitk_status st = learn_user(r, s + start, end - start);
        if (st)
            return st;
    }
    return AITK_OK;
}

static aitk_status learn_from_key(aitk_redactor *r, const char *key, const char *v)
{
    if (!key)
        return AITK_OK;
    size_t n = strlen(key);
    if (key_in(key, host_keys, sizeof host_keys / sizeof *host_keys))
        return aitk_redactor_add(r, AITK_REDACT_HOST, v);
    if (key_in(key, user_keys, sizeof user_keys / sizeof *user_keys))
        return aitk_redactor_add(r, AITK_REDACT_USER, v);
    if (aitk_redact_ci_contains(key, n, "serial"))
        return aitk_redactor_add(r, AITK_REDACT_SERIAL, v);
    /* NVML's "GPU-<uuid>": the prefix is public, and keeping it out of the
     * learnt value gives "GPU-[uuid-1]" everywhere, as the pattern does. */
    if (aitk_redact_ci_contains(key, n, "uuid"))
        return aitk_redactor_add(r, AITK_REDACT_UUID,
                                 strncmp(v, "GPU-", 4) == 0 || strncmp(v, "MIG-", 4) == 0 ? v + 4
                                                                                          : v);
    if (aitk_redact_secret_name(key, n) && strlen(v) >= 8)
        return aitk_redactor_add(r, AITK_REDACT_SECRET, v);
    return AITK_OK;
}

static aitk_status learn(aitk_redactor *r, const cJSON *node, const char *key)
{
    aitk_status st = AITK_OK;
    if (cJSON_IsString(node) && node->valuestring) {
        st = learn_from_key(r, key, node->valuestring);
        if (!st)
            st = learn_home_users(r, node->valuestring);
        if (!st)
            st = learn_dot_folder_users(r, node->valuestring);
        return st;
    }
    if (cJSON_IsObject(node)) {
        /* {"name": "HF_TOKEN", "value": "..."}: the name gives the value away. */
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(node, "name");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(node, "value");
        if (cJSON_IsString(name) && cJSON_IsString(value))
            st = learn_from_key(r, name->valuestring, value->valuestring);
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, node)
    {
        if (st)
            break;
        if (c->string && (st = learn_home_users(r, c->string)))
            break;
        st = learn(r, c, cJSON_IsObject(node) ? c->string : key);
    }
    return st;
}

/* Fields whose values the tool writes from its own vocabulary: check ids
 * and categories, statuses and verdicts, units, backends, the documents a
 * rule cites (source). Nothing private is ever in them, and they are
 * structure: the schema pins the id pattern, compare and trend match on ids
 * and names, and a host called "gpu" must not turn check gpu.nvml into
 * "[host-1].nvml". (The report's host.os object, the OS's own description,
 * is spared whole for the same reason by aitk_redactor_apply; an "os"
 * elsewhere is text like any.) */
static bool structural_field(const char *key)
{
    static const char *const keys[] = {"id",     "category",       "status", "verdict",
                                       "level",  "unit",           "source", "backend",
                                       "follows", "schema_version", "explains"};
    if (!key)
        return false;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

/* Object keys name fields, environment variables and packages: learnt host
 * and user names are not replaced in one that looks like a name (a host
 * called "gpu" must not rename environment.gpu), though the patterns still
 * apply. A key that is not name-shaped (a path, say) is text like any
 * value. */
static unsigned key_text_flags(const char *key)
{
    for (const char *c = key; *c; c++)
        if (!aitk_redact_is_name_char(*c) && *c != '.')
            return 0;
    return AITK_REDACT_TEXT_NO_NAMES;
}

/* A value that hides nothing: the tool's own marker for a secret it did
 * not copy, or a secret's placeholder. */
static bool nothing_to_hide(const char *v)
{
    size_t n = strlen(v);
    return n == 0 || strcmp(v, "(set; value not shown)") == 0 ||
           (strncmp(v, "[secret", 7) == 0 && v[n - 1] == ']');
}

/* One string value under `key`. A field named like a secret
 * (aitk_redact_secret_field: DB_PASSWORD, api_key, auth) loses the whole
 * of it: a password has no shape to find ("hunter2", "two words"). Any
 * other keeps what the patterns do not take. */
static aitk_status rewrite_value(aitk_redactor *r, const char *key, const char *v, aitk_str *out,
                                 bool *changed)
{
    if (key && aitk_redact_secret_field(key, strlen(key))) {
        if (nothing_to_hide(v))
            return AITK_OK;
        *changed = true;
        aitk_status st = put_secret(r, v, strlen(v), out);
        return st ? st : aitk_str_status(out);
    }
    return redact_text(r, v, r ? key_flags(key) : 0, out, changed);
}

/* An object key is text like any value: a key can be a URL with a
 * password in it, or a token (a saved mapping of tokens to owners). */
static aitk_status rewrite_key(aitk_redactor *r, cJSON *c, aitk_str *text)
{
    bool changed = false;
    aitk_str_clear(text);
    aitk_status st = redact_text(r, c->string, key_text_flags(c->string), text, &changed);
    if (st || !changed)
        return st;
    char *k = cJSON_malloc(text->len + 1);
    if (!k)
        return AITK_E_NOMEM;
    memcpy(k, aitk_str_cstr(text), text->len + 1);
    cJSON_free(c->string);
    c->string = k;
    return AITK_OK;
}

/* The key that says what c holds: its own, or in {"name": "HF_TOKEN",
 * "value": "..."} the name's when that names a secret. An array's items
 * take their array's key. */
static const char *key_of(const cJSON *node, const cJSON *c, const char *key)
{
    if (!cJSON_IsObject(node))
        return key;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(node, "name");
    if (c->string && strcmp(c->string, "value") == 0 && cJSON_IsString(name) &&
        aitk_redact_secret_field(name->valuestring, strlen(name->valuestring)))
        return name->valuestring;
    return c->string;
}

/* A secret written as a JSON number ("password": 12345678) becomes its
 * placeholder, a string: the digits, as cJSON prints them, are what a
 * placeholder of the same secret in text is keyed on. The node's key and
 * flags stay. */
static aitk_status number_to_secret(aitk_redactor *r, cJSON *node)
{
    char digits[64];
    snprintf(digits, sizeof digits, "%.17g", node->valuedouble);
    aitk_str text = AITK_STR_INIT;
    aitk_status st = put_secret(r, digits, strlen(digits), &text);
    if (!st)
        st = aitk_str_status(&text);
    char *v = st ? NULL : cJSON_malloc(text.len + 1);
    if (!st && !v)
        st = AITK_E_NOMEM;
    if (!st) {
        memcpy(v, aitk_str_cstr(&text), text.len + 1);
        node->type = (node->type & ~0xFF) | cJSON_String;
        node->valuestring = v;
        node->valueint = 0;
        node->valuedouble = 0;
    }
    aitk_str_free(&text);
    return st;
}

/* Rewrites node and everything under it, keys too. With a redactor
 * (--redact): structural fields and the spared objects stay; without one
 * (the scrub every report gets) secrets go from every string. */
static aitk_status rewrite(aitk_redactor *r, cJSON *node, const char *key)
{
    aitk_str text = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    if (r && (node == r->spare[0] || node == r->spare[1]))
        return AITK_OK;
    if (cJSON_IsString(node) && node->valuestring) {
        if (r && structural_field(key))
            return AITK_OK;
        bool changed = false;
        st = rewrite_value(r, key, node->valuestring, &text, &changed);
        if (!st && changed &&
            !cJSON_SetValuestring(node, aitk_str_cstr(&text)))
            st = AITK_E_NOMEM;
        aitk_str_free(&text);
        return st;
    }
    if (cJSON_IsNumber(node))
        return key && aitk_redact_secret_number(key, strlen(key), node->valuedouble)
                   ? number_to_secret(r, node)
                   : AITK_OK;
    cJSON *c;
    cJSON_ArrayForEach(c, node)
    {
        if (c->string && !(c->type & cJSON_StringIsConst) && (st = rewrite_key(r, c, &text)))
            break;
        if ((st = rewrite(r, c, key_of(node, c, key))))
            break;
    }
    aitk_str_free(&text);
    return st;
}

aitk_status aitk_redactor_apply(aitk_redactor *r, cJSON *tree)
{
    if (!tree)
        return AITK_E_INVAL;
    aitk_status st = learn(r, tree, NULL);
    const cJSON *os = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(tree, "host"), "os");
    /* The compatibility profile is a name from compat.yaml, which a user
     * called "ai" must not turn into "[user-1]-toolkit-current". */
    const cJSON *profile = cJSON_GetObjectItemCaseSensitive(tree, "profile");
    r->spare[0] = cJSON_IsObject(os) ? os : NULL;
    r->spare[1] = cJSON_IsString(profile) ? profile : NULL;
    if (!st)
        st = rewrite(r, tree, NULL);
    r->spare[0] = r->spare[1] = NULL;
    return st;
}

aitk_status aitk_redact_report(cJSON *report, const char *user, const char *host)
{
    aitk_redactor *r;
    aitk_status st = aitk_redactor_new(&r);
    if (st)
        return st;
    if (user)
        st = aitk_redactor_add(r, AITK_REDACT_USER, user);
    if (!st && host)
        st = aitk_redactor_add(r, AITK_REDACT_HOST, host);
    if (!st)
        st = aitk_redactor_apply(r, report);
    if (!st) {
        cJSON_DeleteItemFromObjectCaseSensitive(report, "redacted");
        if (!cJSON_AddBoolToObject(report, "redacted", 1))
            st = AITK_E_NOMEM;
    }
    aitk_redactor_free(r);
    return st;
}

aitk_status aitk_scrub_secrets(cJSON *tree)
{
    return tree ? rewrite(NULL, tree, NULL) : AITK_OK;
}
