/* Loading compat.yaml and choosing a profile. */
#include "validate/compat.h"

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

/* `profile` is a profile or the tables section: both are maps of sections,
 * each a map of rules. */
static aitk_status validate_rules(const aitk_yaml_doc *doc, const aitk_yaml_node *profile,
                                  aitk_str *err)
{
    static const char *const rule_keys[] = {"value", "source", "note", "severity", NULL};
    for (size_t s = 0; s < profile->count; s++) {
        const aitk_yaml_node *section = profile->pairs[s].value;
        if (section->kind != AITK_YAML_MAP)
            continue; /* title, source: plain values */
        for (size_t r = 0; r < section->count; r++) {
            const aitk_yaml_node *rule = section->pairs[r].value;
            aitk_status st = aitk_yaml_expect(doc, rule, AITK_YAML_MAP, "a rule {value, source}", err);
            if (!st)
                st = aitk_yaml_check_keys(doc, rule, rule_keys, "a rule", err);
            if (!st)
                st = validate_severity(doc, rule, err);
            if (!st && !aitk_yaml_get(rule, "value")) {
                aitk_yaml_errorf(err, doc, rule, "rule '%s' has no value",
                                 section->pairs[r].key->text);
                st = AITK_E_PARSE;
            }
            if (!st && !aitk_yaml_get(rule, "source")) {
                aitk_yaml_errorf(err, doc, rule, "rule '%s' has no source",
                                 section->pairs[r].key->text);
                st = AITK_E_PARSE;
            }
            if (st)
                return st;
        }
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
        for (size_t i = 0; !st && i < tables->count; i++)
            st = aitk_yaml_expect(doc, tables->pairs[i].value, AITK_YAML_MAP, "a table", err);
        if (!st)
            st = validate_rules(doc, tables, err);
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
            st = validate_rules(doc, profiles->pairs[i].value, err);
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
