/* remedies.yaml: validated once at load (unknown keys, missing fields,
 * wrong types all name file:line:column), then matched by file name. */
#include "validate/libdeps/remedies.h"

#include <string.h>

#include "common/alloc.h"
#include "common/data.h"
#include "common/yaml.h"

#define REMEDIES_FILE "validate/libdeps/remedies.yaml"

typedef struct rule {
    const aitk_yaml_node *match; /* sequence of patterns */
    aitk_remedy_when when;
    aitk_remedy remedy;
} rule;

struct aitk_remedies {
    aitk_yaml_doc *doc;
    rule *rules;
    size_t count;
};

static char fold(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

bool aitk_remedies_glob(const char *p, const char *s)
{
    /* Iterative with one backtrack point: linear for the patterns we hold. */
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*p == '*') {
            star = p++;
            resume = s;
        } else if (*p && (*p == '?' || fold(*p) == fold(*s))) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

static aitk_status read_rule(const aitk_yaml_doc *doc, const aitk_yaml_node *m, rule *r,
                             aitk_str *err)
{
    static const char *const keys[] = {"match",  "when", "comes_from", "symptom",
                                       "fix",    "source", "of_driver",  NULL};
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a remedy (a map)", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, m, keys, "a remedy", err);
    if (st)
        return st;
    r->match = aitk_yaml_get(m, "match");
    if (!r->match) {
        aitk_yaml_errorf(err, doc, m, "remedy without 'match'");
        return AITK_E_PARSE;
    }
    if ((st = aitk_yaml_expect(doc, r->match, AITK_YAML_SEQ, "a list of patterns", err)))
        return st;
    for (size_t i = 0; i < r->match->count; i++) {
        const char *pat;
        if ((st = aitk_yaml_string(doc, r->match->items[i], &pat, err)))
            return st;
    }
    const aitk_yaml_node *when = aitk_yaml_get(m, "when");
    if (when) {
        const char *w;
        if ((st = aitk_yaml_string(doc, when, &w, err)))
            return st;
        /* In aitk_remedy_when's order. */
        static const char *const kinds[] = {"missing",     "duplicate",   "wrong_arch",
                                            "truncated",   "old_version", "not_library",
                                            "refused",     "corrupt",     "other_release"};
        size_t k = 0;
        while (k < sizeof kinds / sizeof *kinds && strcmp(w, kinds[k]) != 0)
            k++;
        if (k == sizeof kinds / sizeof *kinds) {
            aitk_yaml_errorf(err, doc, when, "'when' must be missing, duplicate, wrong_arch, "
                                             "truncated, old_version, not_library, refused, "
                                             "corrupt or other_release, found '%s'",
                             w);
            return AITK_E_PARSE;
        }
        r->when = (aitk_remedy_when)k;
    }
    const char **slots[] = {&r->remedy.comes_from, &r->remedy.symptom, &r->remedy.fix,
                            &r->remedy.source};
    const char *names[] = {"comes_from", "symptom", "fix", "source"};
    for (size_t i = 0; i < 4; i++) {
        const aitk_yaml_node *v = aitk_yaml_get(m, names[i]);
        if (!v) {
            aitk_yaml_errorf(err, doc, m, "remedy without '%s'", names[i]);
            return AITK_E_PARSE;
        }
        if ((st = aitk_yaml_string(doc, v, slots[i], err)))
            return st;
    }
    const aitk_yaml_node *of_driver = aitk_yaml_get(m, "of_driver");
    if (of_driver && (st = aitk_yaml_bool(doc, of_driver, &r->remedy.of_driver, err)))
        return st;
    return AITK_OK;
}

aitk_status aitk_remedies_load(aitk_remedies **out, aitk_str *err)
{
    *out = NULL;
    aitk_remedies *r = aitk_calloc(1, sizeof *r);
    if (!r)
        return AITK_E_NOMEM;
    aitk_status st = aitk_data_load_yaml(REMEDIES_FILE, &r->doc, err);
    if (!st)
        st = aitk_data_check_schema(r->doc, 1, err);
    const aitk_yaml_node *list = NULL;
    if (!st) {
        list = r->doc->root ? aitk_yaml_get(r->doc->root, "remedies") : NULL;
        if (!list) {
            aitk_yaml_errorf(err, r->doc, r->doc->root, "no 'remedies' list");
            st = AITK_E_PARSE;
        }
    }
    if (!st)
        st = aitk_yaml_expect(r->doc, list, AITK_YAML_SEQ, "a list of remedies", err);
    if (!st && list->count && !(r->rules = aitk_calloc(list->count, sizeof *r->rules)))
        st = AITK_E_NOMEM;
    for (size_t i = 0; !st && i < list->count; i++) {
        st = read_rule(r->doc, list->items[i], &r->rules[i], err);
        r->count += !st;
    }
    if (st) {
        aitk_remedies_free(r);
        return st;
    }
    *out = r;
    return AITK_OK;
}

const aitk_remedy *aitk_remedies_find_kind(const aitk_remedies *r, const char *name,
                                           aitk_remedy_when kind)
{
    if (!r)
        return NULL;
    for (size_t i = 0; i < r->count; i++) {
        aitk_remedy_when w = r->rules[i].when;
        bool problem = kind != AITK_REMEDY_DUPLICATE;
        if (w != kind && !(w == AITK_REMEDY_MISSING && problem))
            continue;
        for (size_t k = 0; k < r->rules[i].match->count; k++)
            if (aitk_remedies_glob(r->rules[i].match->items[k]->text, name))
                return &r->rules[i].remedy;
    }
    return NULL;
}

const aitk_remedy *aitk_remedies_find(const aitk_remedies *r, const char *name, bool duplicate)
{
    return aitk_remedies_find_kind(r, name, duplicate ? AITK_REMEDY_DUPLICATE : AITK_REMEDY_MISSING);
}

bool aitk_remedies_of_driver(const aitk_remedies *r, const char *name)
{
    const aitk_remedy *rem = aitk_remedies_find_kind(r, name, AITK_REMEDY_MISSING);
    return rem && rem->of_driver;
}

void aitk_remedies_free(aitk_remedies *r)
{
    if (!r)
        return;
    aitk_yaml_free(r->doc);
    aitk_free(r->rules);
    aitk_free(r);
}
