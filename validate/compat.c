/* Loading compat.yaml and choosing a profile. */
#include "validate/compat.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/data.h"

#define COMPAT_FILE "validate/compat.yaml"

static aitk_status validate_severity(const aitk_yaml_doc *doc, const aitk_yaml_node *rule,
                                     aitk_str *err)
{
    const aitk_yaml_node *sev = aitk_yaml_get(rule, "severity");
    const char *text = NULL;
    if (!sev)
        return AITK_OK;
    aitk_status st = aitk_yaml_string(doc, sev, &text, err);
    if (!st && strcmp(text, "warn") != 0 && strcmp(text, "fail") != 0) {
        aitk_yaml_errorf(err, doc, sev, "severity must be 'warn' or 'fail', found '%s'", text);
        st = AITK_E_PARSE;
    }
    return st;
}

/* ---- what each rule's value must be ----
 *
 * Structure alone is not enough: a probe reads `min_glibc: banana` as
 * version 0 (so every glibc passes) and a `model_cache_free_gb` it cannot
 * read as "no rule" (a false SKIP). So every rule the probes read has a kind,
 * checked here when the file loads, and a rule no probe reads is refused:
 * a misspelt key would otherwise turn its check into a SKIP without a word. */

typedef enum rule_kind {
    KIND_VERSION,     /* numbers and dots, at least major.minor: 2.17, 570.26, 580.65.06 */
    KIND_MAJOR_MINOR, /* exactly major.minor: Python 3.10, CUDA 11.8 */
    KIND_WIN_BUILD,   /* a Windows build number */
    KIND_GB,          /* a positive number of GB */
    KIND_TORCH_BUILD, /* a torch version with its local label: 2.13.0+cu130 */
    KIND_PY_RANGE,    /* lowest-highest Python: 3.9-3.13 */
    KIND_ARCH_LIST,   /* compute capabilities x 10, then optionally +PTX */
    KIND_COMPANIONS,  /* {torchvision: version, torchaudio: version} */
    KIND_TEXT,        /* any non-empty text (env_flags: set, not-macos or a value) */
} rule_kind;

/* What a value of each kind must be, for the message: before and after the
 * rule's example. */
static const struct {
    const char *before, *after;
} kind_what[] = {
    [KIND_VERSION] = {"a version like ", " (numbers and dots)"},
    [KIND_MAJOR_MINOR] = {"a major.minor version like ", ""},
    [KIND_WIN_BUILD] = {"a Windows build number like ", " (1 to 99999)"},
    [KIND_GB] = {"a number of GB like ", ", above 0 and at most 100000"},
    [KIND_TORCH_BUILD] = {"a torch version like ", ""},
    [KIND_PY_RANGE] = {"a Python range like ", " (lowest first)"},
    [KIND_ARCH_LIST] = {"compute capabilities x 10 like '", "', separated by spaces"},
    [KIND_COMPANIONS] = {"a map like ", ""},
    [KIND_TEXT] = {"text like ", ""},
};

/* 100 TB: orders of magnitude above any GPU's memory or any model download,
 * so a bigger figure is a slip (an exponent, a row of zeros), not a need. */
#define GB_MAX 100000.0
/* Windows 10 started at build 10240; builds are five digits (26100 in 2024). */
#define WIN_BUILD_MAX 99999L

typedef struct rule_def {
    const char *section, *key; /* key NULL: every key of the section */
    rule_kind kind;
    const char *example;
} rule_def;

/* Profile rules: the keys the probes look up (validate/probes). */
static const rule_def profile_rules[] = {
    {"host", "min_glibc", KIND_VERSION, "2.17"},
    {"host", "min_windows_build", KIND_WIN_BUILD, "19042"},
    {"host", "model_cache_free_gb", KIND_GB, "34"},
    {"python", "min_version", KIND_MAJOR_MINOR, "3.10"},
    {"python", "max_version", KIND_MAJOR_MINOR, "3.12"},
    {"python", "companions_required", KIND_TEXT, "torchaudio"},
    {"cuda", "torch_pin", KIND_TORCH_BUILD, "2.13.0+cu130"},
    {"cuda", "min_torch_cuda", KIND_MAJOR_MINOR, "11.8"},
    {"workload_vram_gb", NULL, KIND_GB, "24"},
};

/* Tables: every row of a table has one kind. */
typedef enum row_key {
    KEY_ANY,
    KEY_MAJOR_MINOR, /* the probes look rows up by "%d.%d" of a version */
    KEY_TORCH_RANGE, /* "2.1-2.5/cu121": torch major.minor[-major.minor]/variant */
} row_key;

typedef struct table_def {
    const char *name;
    rule_kind kind;
    const char *example;
    row_key key;
} table_def;

static const table_def tables_known[] = {
    {"driver_min_linux", KIND_VERSION, "570.26", KEY_MAJOR_MINOR},
    {"driver_min_windows", KIND_VERSION, "570.65", KEY_MAJOR_MINOR},
    {"torch_arch", KIND_ARCH_LIST, "75 80 86 90 +PTX", KEY_TORCH_RANGE},
    {"torch_python", KIND_PY_RANGE, "3.9-3.13", KEY_MAJOR_MINOR},
    {"torch_companions", KIND_COMPANIONS, "{torchvision: \"0.22.0\", torchaudio: \"2.7.0\"}",
     KEY_ANY},
    {"env_flags", KIND_TEXT, "set", KEY_ANY},
};

/* Digits, at most 9 of them (so that strtoul cannot overflow): the length
 * read, or 0 when `s` does not start with one. */
static size_t number_len(const char *s)
{
    size_t n = strspn(s, "0123456789");
    return n <= 9 ? n : 0;
}

/* Numbers joined by dots, at least `min_parts` and at most `max_parts` of
 * them; the length read, or 0. */
static size_t dotted_len(const char *s, int min_parts, int max_parts)
{
    const char *p = s;
    int parts = 0;
    for (;;) {
        size_t n = number_len(p);
        if (!n)
            return 0;
        p += n;
        parts++;
        if (*p != '.' || parts == max_parts)
            break;
        p++;
    }
    return parts >= min_parts ? (size_t)(p - s) : 0;
}

/* The whole of `s` is a version of `min_parts`..`max_parts` numbers. */
static bool is_dotted(const char *s, int min_parts, int max_parts)
{
    size_t n = dotted_len(s, min_parts, max_parts);
    return n && s[n] == '\0';
}

/* major * 1000 + minor of a text that starts with major.minor. */
static long major_minor(const char *s)
{
    char *end = NULL;
    long a = strtol(s, &end, 10);
    return a * 1000 + strtol(end + 1, NULL, 10);
}

/* A major.minor as the probes spell a lookup key ("%d.%d"): no leading
 * zeros, so "12.08" or "012.8" cannot sit in a table where none finds it. */
static bool is_lookup_key(const char *s)
{
    if (!is_dotted(s, 2, 2))
        return false;
    const char *minor = strchr(s, '.') + 1;
    return !(s[0] == '0' && s[1] != '.') && !(minor[0] == '0' && minor[1] != '\0');
}

/* "2.7/cu128" or "2.1-2.5/cu121" (lowest first), as the arch check reads
 * a torch_arch key: a row it cannot read would never be found. */
static bool is_torch_range(const char *s)
{
    size_t n = dotted_len(s, 2, 2);
    if (!n)
        return false;
    const char *p = s + n;
    if (*p == '-') {
        size_t m = dotted_len(p + 1, 2, 2);
        if (!m || major_minor(s) > major_minor(p + 1))
            return false;
        p += 1 + m;
    }
    return *p == '/' && p[1] &&
           strspn(p + 1, "abcdefghijklmnopqrstuvwxyz0123456789") == strlen(p + 1);
}

static bool scalar_ok(rule_kind kind, const char *t)
{
    switch (kind) {
    case KIND_VERSION:
        return is_dotted(t, 2, 4);
    case KIND_MAJOR_MINOR:
        return is_dotted(t, 2, 2);
    case KIND_WIN_BUILD: {
        size_t n = number_len(t);
        long v = n ? strtol(t, NULL, 10) : 0;
        return n && t[n] == '\0' && v >= 1 && v <= WIN_BUILD_MAX;
    }
    case KIND_GB: {
        char *end = NULL;
        errno = 0;
        double v = strtod(t, &end);
        return end != t && *end == '\0' && errno != ERANGE && isfinite(v) && v > 0 &&
               v <= GB_MAX;
    }
    case KIND_TORCH_BUILD: {
        /* 2.13.0, or 2.13.0+cu130 (pip's local label: letters, digits, dots). */
        size_t n = dotted_len(t, 2, 4);
        if (!n)
            return false;
        if (t[n] == '\0')
            return true;
        const char *label = t + n + 1;
        return t[n] == '+' && *label &&
               strspn(label, "abcdefghijklmnopqrstuvwxyz0123456789.") == strlen(label);
    }
    case KIND_PY_RANGE: {
        size_t n = dotted_len(t, 2, 2);
        if (!n || t[n] != '-' || !is_dotted(t + n + 1, 2, 2))
            return false;
        return major_minor(t) <= major_minor(t + n + 1);
    }
    case KIND_ARCH_LIST: {
        /* What the header of compat.yaml promises aitk_rules_arch_supports:
         * "50 60 ... 120", the newest optionally followed by +PTX. */
        int archs = 0;
        bool ptx = false;
        for (const char *p = t; *p;) {
            p += strspn(p, " ");
            if (!*p)
                break;
            size_t n = strcspn(p, " ");
            if (ptx)
                return false; /* +PTX comes last */
            if (n == 4 && strncmp(p, "+PTX", 4) == 0) {
                ptx = true;
            } else {
                size_t d = number_len(p);
                long v = d == n ? strtol(p, NULL, 10) : 0;
                if (d != n || v < 10 || v > 999)
                    return false;
                archs++;
            }
            p += n;
        }
        return archs > 0;
    }
    case KIND_COMPANIONS:
        return false; /* a map, never a scalar */
    case KIND_TEXT:
        return *t != '\0';
    }
    return false;
}

static aitk_status bad_value(const aitk_yaml_doc *doc, const aitk_yaml_node *v, const char *key,
                             rule_kind kind, const char *example, aitk_str *err)
{
    aitk_yaml_errorf(err, doc, v, "%s must be ", key);
    if (err) {
        aitk_str_appendf(err, "%s%s%s", kind_what[kind].before, example, kind_what[kind].after);
        if (v->kind == AITK_YAML_SCALAR)
            aitk_str_appendf(err, ", found '%s'", v->text);
        else
            aitk_str_appendf(err, ", found a %s", v->kind == AITK_YAML_SEQ ? "list" : "mapping");
    }
    return AITK_E_PARSE;
}

/* {torchvision: "0.22.0", torchaudio: "2.7.0"}: either or both, each a version. */
static aitk_status check_companions(const aitk_yaml_doc *doc, const aitk_yaml_node *v,
                                    const char *key, const char *example, aitk_str *err)
{
    static const char *const names[] = {"torchvision", "torchaudio", NULL};
    if (v->kind != AITK_YAML_MAP || v->count == 0)
        return bad_value(doc, v, key, KIND_COMPANIONS, example, err);
    aitk_status st = aitk_yaml_check_keys(doc, v, names, "torch companions", err);
    for (size_t i = 0; !st && i < v->count; i++) {
        const aitk_yaml_node *c = v->pairs[i].value;
        if (c->kind != AITK_YAML_SCALAR || !scalar_ok(KIND_VERSION, c->text))
            st = bad_value(doc, c, v->pairs[i].key->text, KIND_VERSION, "0.22.0", err);
    }
    return st;
}

static aitk_status check_value(const aitk_yaml_doc *doc, const aitk_yaml_node *rule,
                               const char *key, rule_kind kind, const char *example,
                               aitk_str *err)
{
    const aitk_yaml_node *v = aitk_yaml_get(rule, "value");
    if (kind == KIND_COMPANIONS)
        return check_companions(doc, v, key, example, err);
    if (v->kind != AITK_YAML_SCALAR || !scalar_ok(kind, v->text))
        return bad_value(doc, v, key, kind, example, err);
    /* The probes read numbers with aitk_yaml_double/long: the value must
     * read through them here too, or the check would be skipped as if the
     * profile set no value (they take a quoted "34" for text). */
    double gb = 0;
    long build = 0;
    if ((kind == KIND_GB && aitk_yaml_double(doc, v, &gb, NULL)) ||
        (kind == KIND_WIN_BUILD && aitk_yaml_long(doc, v, &build, NULL))) {
        aitk_yaml_errorf(err, doc, v, "%s must be a number without quotes, found \"%s\"", key,
                         v->text);
        return AITK_E_PARSE;
    }
    return AITK_OK;
}

/* The shape every rule shares: {value, source, note?, severity?}. */
static aitk_status check_rule_shape(const aitk_yaml_doc *doc, const aitk_yaml_node *rule,
                                    const char *name, aitk_str *err)
{
    static const char *const rule_keys[] = {"value", "source", "note", "severity", NULL};
    aitk_status st = aitk_yaml_expect(doc, rule, AITK_YAML_MAP, "a rule {value, source}", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, rule, rule_keys, "a rule", err);
    if (!st)
        st = validate_severity(doc, rule, err);
    if (!st && !aitk_yaml_get(rule, "value")) {
        aitk_yaml_errorf(err, doc, rule, "rule '%s' has no value", name);
        st = AITK_E_PARSE;
    }
    if (!st && !aitk_yaml_get(rule, "source")) {
        aitk_yaml_errorf(err, doc, rule, "rule '%s' has no source", name);
        st = AITK_E_PARSE;
    }
    const aitk_yaml_node *note = aitk_yaml_get(rule, "note");
    if (!st)
        st = aitk_yaml_expect(doc, aitk_yaml_get(rule, "source"), AITK_YAML_SCALAR, "source", err);
    if (!st && note)
        st = aitk_yaml_expect(doc, note, AITK_YAML_SCALAR, "note", err);
    return st;
}

/* Appends " (known: a, b)" for the keys of `defs` in `section` (NULL: the sections). */
static void list_known(aitk_str *err, const char *section)
{
    if (!err)
        return;
    aitk_str_append(err, " (known:");
    const char *prev = NULL;
    int first = 1;
    for (size_t i = 0; i < sizeof profile_rules / sizeof *profile_rules; i++) {
        const rule_def *d = &profile_rules[i];
        const char *name = section ? d->key : d->section;
        if ((section && strcmp(d->section, section) != 0) || (prev && strcmp(prev, name) == 0))
            continue;
        aitk_str_appendf(err, "%s %s", first ? "" : ",", name);
        first = 0;
        prev = name;
    }
    if (!section)
        aitk_str_append(err, ", title, source");
    aitk_str_append(err, ")");
}

static aitk_status validate_profile(const aitk_yaml_doc *doc, const aitk_yaml_node *profile,
                                    aitk_str *err)
{
    for (size_t s = 0; s < profile->count; s++) {
        const char *sname = profile->pairs[s].key->text;
        const aitk_yaml_node *section = profile->pairs[s].value;
        if (strcmp(sname, "title") == 0 || strcmp(sname, "source") == 0) {
            aitk_status st = aitk_yaml_expect(doc, section, AITK_YAML_SCALAR, sname, err);
            if (st)
                return st;
            continue;
        }
        bool known_section = false;
        for (size_t i = 0; i < sizeof profile_rules / sizeof *profile_rules; i++)
            known_section = known_section || strcmp(profile_rules[i].section, sname) == 0;
        if (!known_section) {
            aitk_yaml_errorf(err, doc, profile->pairs[s].key,
                             "unknown section '%s' in a profile", sname);
            list_known(err, NULL);
            return AITK_E_PARSE;
        }
        aitk_status st = aitk_yaml_expect(doc, section, AITK_YAML_MAP, "a section of rules", err);
        for (size_t r = 0; !st && r < section->count; r++) {
            const char *rname = section->pairs[r].key->text;
            const rule_def *def = NULL;
            for (size_t i = 0; !def && i < sizeof profile_rules / sizeof *profile_rules; i++)
                if (strcmp(profile_rules[i].section, sname) == 0 &&
                    (!profile_rules[i].key || strcmp(profile_rules[i].key, rname) == 0))
                    def = &profile_rules[i];
            if (!def) {
                aitk_yaml_errorf(err, doc, section->pairs[r].key,
                                 "unknown rule '%s' in section '%s'", rname, sname);
                list_known(err, sname);
                return AITK_E_PARSE;
            }
            st = check_rule_shape(doc, section->pairs[r].value, rname, err);
            if (!st)
                st = check_value(doc, section->pairs[r].value, rname, def->kind, def->example,
                                 err);
        }
        if (st)
            return st;
    }
    return AITK_OK;
}

static aitk_status validate_tables(const aitk_yaml_doc *doc, const aitk_yaml_node *tables,
                                   aitk_str *err)
{
    for (size_t t = 0; t < tables->count; t++) {
        const char *tname = tables->pairs[t].key->text;
        const aitk_yaml_node *table = tables->pairs[t].value;
        const table_def *def = NULL;
        for (size_t i = 0; !def && i < sizeof tables_known / sizeof *tables_known; i++)
            if (strcmp(tables_known[i].name, tname) == 0)
                def = &tables_known[i];
        if (!def) {
            aitk_yaml_errorf(err, doc, tables->pairs[t].key, "unknown table '%s' (known:",
                             tname);
            for (size_t i = 0; err && i < sizeof tables_known / sizeof *tables_known; i++)
                aitk_str_appendf(err, "%s %s", i ? "," : "", tables_known[i].name);
            if (err)
                aitk_str_append(err, ")");
            return AITK_E_PARSE;
        }
        aitk_status st = aitk_yaml_expect(doc, table, AITK_YAML_MAP, "a table", err);
        for (size_t r = 0; !st && r < table->count; r++) {
            const aitk_yaml_node *k = table->pairs[r].key;
            /* The probes look these rows up as "%d.%d" of a version they
             * saw: "12.08" or "12" would never be found. */
            if (def->key == KEY_MAJOR_MINOR && !is_lookup_key(k->text)) {
                aitk_yaml_errorf(err, doc, k, "a row of %s must be keyed by a major.minor "
                                              "version like 12.8, found '%s'", tname, k->text);
                return AITK_E_PARSE;
            }
            if (def->key == KEY_TORCH_RANGE && !is_torch_range(k->text)) {
                aitk_yaml_errorf(err, doc, k, "a row of %s must be keyed by torch versions and "
                                              "a variant like 2.1-2.5/cu121 or 2.7/cu128, found "
                                              "'%s'", tname, k->text);
                return AITK_E_PARSE;
            }
            st = check_rule_shape(doc, table->pairs[r].value, k->text, err);
            if (!st)
                st = check_value(doc, table->pairs[r].value, k->text, def->kind, def->example,
                                 err);
        }
        if (st)
            return st;
    }
    return AITK_OK;
}

aitk_status aitk_compat_load(const char *profile, aitk_compat **out, aitk_str *err)
{
    *out = NULL;
    aitk_yaml_doc *doc = NULL;
    aitk_status st = aitk_data_load_yaml(COMPAT_FILE, &doc, err);
    if (st)
        return st;
    static const char *const top_keys[] = {"schema", "default_profile", "tables", "profiles", NULL};
    const aitk_yaml_node *profiles = aitk_yaml_get(doc->root, "profiles");
    const aitk_yaml_node *tables = aitk_yaml_get(doc->root, "tables");
    st = aitk_data_check_schema(doc, 1, err);
    if (!st)
        st = aitk_yaml_check_keys(doc, doc->root, top_keys, "the top level", err);
    if (!st)
        st = aitk_yaml_expect(doc, profiles, AITK_YAML_MAP, "'profiles'", err);
    if (!st && tables) {
        st = aitk_yaml_expect(doc, tables, AITK_YAML_MAP, "'tables'", err);
        if (!st)
            st = validate_tables(doc, tables, err);
    }
    const char *name = profile;
    if (!st && !name)
        st = aitk_yaml_string(doc, aitk_yaml_get(doc->root, "default_profile"), &name, err);
    const aitk_yaml_node *chosen = st ? NULL : aitk_yaml_get(profiles, name);
    if (!st && !chosen) {
        aitk_str_appendf(err, "unknown profile '%s' (known:", name);
        for (size_t i = 0; i < profiles->count; i++)
            aitk_str_appendf(err, "%s %s", i ? "," : "", profiles->pairs[i].key->text);
        aitk_str_append(err, ")");
        st = AITK_E_INVAL;
    }
    if (!st)
        st = aitk_yaml_expect(doc, chosen, AITK_YAML_MAP, "a profile", err);
    /* Every profile is checked, not just the chosen one: a broken matrix
     * should fail in CI, not on the day someone picks that profile. */
    for (size_t i = 0; !st && i < profiles->count; i++) {
        st = aitk_yaml_expect(doc, profiles->pairs[i].value, AITK_YAML_MAP, "a profile", err);
        if (!st)
            st = validate_profile(doc, profiles->pairs[i].value, err);
    }
    if (st) {
        aitk_yaml_free(doc);
        return st;
    }
    aitk_compat *c = aitk_calloc(1, sizeof *c);
    if (!c) {
        aitk_yaml_free(doc);
        return AITK_E_NOMEM;
    }
    c->doc = doc;
    c->profile = chosen;
    c->tables = tables;
    for (size_t i = 0; i < profiles->count; i++)
        if (profiles->pairs[i].value == chosen)
            c->profile_name = profiles->pairs[i].key->text;
    *out = c;
    return AITK_OK;
}

void aitk_compat_free(aitk_compat *c)
{
    if (!c)
        return;
    aitk_yaml_free(c->doc);
    aitk_free(c);
}

const aitk_yaml_node *aitk_compat_rule(const aitk_compat *c, const char *section, const char *key)
{
    return aitk_yaml_get(aitk_yaml_get(c->profile, section), key);
}

const char *aitk_compat_rule_source(const aitk_yaml_node *rule)
{
    const aitk_yaml_node *s = aitk_yaml_get(rule, "source");
    return s && s->kind == AITK_YAML_SCALAR ? s->text : "";
}

const aitk_yaml_node *aitk_compat_table(const aitk_compat *c, const char *table)
{
    return aitk_yaml_get(c->tables, table);
}

const aitk_yaml_node *aitk_compat_table_row(const aitk_compat *c, const char *table,
                                            const char *key)
{
    return aitk_yaml_get(aitk_compat_table(c, table), key);
}

const char *aitk_compat_rule_text(const aitk_yaml_node *rule)
{
    const aitk_yaml_node *v = aitk_yaml_get(rule, "value");
    return v && v->kind == AITK_YAML_SCALAR ? v->text : NULL;
}

aitk_check_status aitk_compat_rule_severity(const aitk_yaml_node *rule)
{
    const aitk_yaml_node *s = aitk_yaml_get(rule, "severity");
    return s && s->kind == AITK_YAML_SCALAR && strcmp(s->text, "warn") == 0 ? AITK_CHECK_WARN
                                                                            : AITK_CHECK_FAIL;
}
