/* What the keys of an ai-toolkit config that the reader does not turn into
 * the prediction do to time and memory (models/aitk_config_keys.yaml), and
 * the warnings that say so: the few that matter are not buried under the
 * many that do not. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "common/data.h"
#include "common/log.h"
#include "models/aitk_config_internal.h"

bool aitk_config_in_list(const char *key, const char *const *list)
{
    for (; list && *list; list++)
        if (strcmp(key, *list) == 0)
            return true;
    return false;
}

aitk_status aitk_config_load_tables(aitk_config_reader *r)
{
    aitk_status st = aitk_data_load_yaml("models/aitk_models.yaml", &r->ids, r->err);
    if (!st)
        st = aitk_data_check_schema(r->ids, 1, r->err);
    if (!st)
        st = aitk_data_load_yaml("models/aitk_config_keys.yaml", &r->keys, r->err);
    if (!st)
        st = aitk_data_check_schema(r->keys, 1, r->err);
    return st;
}

void aitk_config_free_tables(aitk_config_reader *r)
{
    aitk_yaml_free(r->ids);
    aitk_yaml_free(r->keys);
    r->ids = r->keys = NULL;
}

static bool seq_has(const aitk_yaml_node *seq, const char *text)
{
    for (size_t i = 0; seq && seq->kind == AITK_YAML_SEQ && i < seq->count; i++)
        if (seq->items[i]->kind == AITK_YAML_SCALAR && strcmp(seq->items[i]->text, text) == 0)
            return true;
    return false;
}

static void add_line(aitk_config_reader *r, aitk_str *list, size_t *n, const char *path,
                     const aitk_yaml_node *key, const char *why)
{
    aitk_str_appendf(list, "  %s (%s:%d:%d)%s%s\n", path, r->doc->name, key->line, key->col,
                     why ? ": " : "", why ? why : "");
    (*n)++;
}

void aitk_config_note_cost(aitk_config_reader *r, const aitk_yaml_node *key, const char *path,
                           const char *why)
{
    aitk_train_config *c = r->cfg;
    add_line(r, &c->not_modelled, &c->n_not_modelled, path, key, why);
    aitk_str_appendf(&c->ignored, "%s (%s:%d:%d)\n", path, r->doc->name, key->line, key->col);
    c->n_ignored++;
}

/* False for a key set to its "off" value (false, 0, an empty list or map,
 * null): `layer_offloading: false` costs nothing. */
static bool is_set(const aitk_yaml_node *v)
{
    if (!v)
        return false;
    if (v->kind != AITK_YAML_SCALAR)
        return v->count > 0;
    if (v->quoted)
        return *v->text != '\0';
    static const char *const off[] = {"false", "False", "FALSE", "0", "0.0", "~", "null", "",
                                      NULL};
    return !aitk_config_in_list(v->text, off);
}

void aitk_config_note_keys(aitk_config_reader *r, const aitk_yaml_node *map, const char *section,
                           const char *where, const char *const *used)
{
    const aitk_yaml_node *s = aitk_yaml_get(aitk_yaml_get(r->keys->root, "sections"), section);
    const aitk_yaml_node *none = aitk_yaml_get(s, "no_effect");
    const aitk_yaml_node *cost = aitk_yaml_get(s, "not_modelled");
    aitk_train_config *c = r->cfg;
    for (size_t i = 0; map && map->kind == AITK_YAML_MAP && i < map->count; i++) {
        const aitk_yaml_node *k = map->pairs[i].key;
        if (aitk_config_in_list(k->text, used))
            continue;
        aitk_str path = AITK_STR_INIT;
        aitk_str_appendf(&path, "%s%s", where, k->text);
        const aitk_yaml_node *why = aitk_yaml_get(cost, k->text);
        if (why && is_set(map->pairs[i].value)) {
            aitk_config_note_cost(r, k, aitk_str_cstr(&path),
                                  why->kind == AITK_YAML_SCALAR ? why->text : NULL);
        } else if (why || seq_has(none, k->text)) {
            add_line(r, &c->no_effect, &c->n_no_effect, aitk_str_cstr(&path), k, NULL);
        } else {
            add_line(r, &c->unknown, &c->n_unknown, aitk_str_cstr(&path), k, NULL);
            aitk_str_appendf(&c->ignored, "%s (%s:%d:%d)\n", aitk_str_cstr(&path), r->doc->name,
                             k->line, k->col);
            c->n_ignored++;
        }
        aitk_str_free(&path);
    }
}

const char *aitk_config_resolve_optimizer(const aitk_config_reader *r, const char *name)
{
    const aitk_yaml_node *rules = aitk_yaml_get(r->keys->root, "optimizer_prefixes");
    for (size_t i = 0; rules && rules->kind == AITK_YAML_SEQ && i < rules->count; i++) {
        const aitk_yaml_node *pre = aitk_yaml_get(rules->items[i], "prefix");
        const aitk_yaml_node *is = aitk_yaml_get(rules->items[i], "is");
        if (pre && is && pre->kind == AITK_YAML_SCALAR && is->kind == AITK_YAML_SCALAR &&
            strncasecmp(name, pre->text, strlen(pre->text)) == 0)
            return is->text;
    }
    return name;
}

aitk_status aitk_config_check_optimizer(const aitk_train_config *cfg,
                                        const aitk_cost_params *params, const char *path,
                                        aitk_str *err)
{
    if (aitk_cost_find_optimizer(params, cfg->optimizer))
        return AITK_OK;
    if (cfg->optimizer_at)
        aitk_yaml_errorf(err, cfg->doc, cfg->optimizer_at,
                         "optimizer '%s' is not one the memory model knows (known:",
                         cfg->optimizer);
    else
        aitk_str_appendf(err, "%s: optimizer '%s' is not one the memory model knows (known:",
                         path, cfg->optimizer);
    for (size_t i = 0; i < params->n_optimizers; i++)
        aitk_str_appendf(err, "%s %s", i ? "," : "", params->optimizers[i].name);
    aitk_str_append(err, ")");
    aitk_config_printable(err);
    return AITK_E_PARSE;
}

/* Config text in a message is shown, not obeyed: an ESC in a key or value
 * of the file must not reach the terminal raw (aitk_str_append_printable). */
aitk_status aitk_config_printable(aitk_str *s)
{
    if (!s || !s->len)
        return AITK_OK;
    aitk_str shown = AITK_STR_INIT;
    aitk_status st = aitk_str_append_printable(&shown, aitk_str_cstr(s), true);
    if (!st) {
        aitk_str_clear(s);
        st = aitk_str_append(s, aitk_str_cstr(&shown));
    }
    aitk_str_free(&shown);
    return st;
}

/* The heading, then one line per key: every stderr line stays one line. */
static void log_list(aitk_log_level level, const char *path, size_t n, const char *what,
                     const aitk_str *list)
{
    aitk_str line = AITK_STR_INIT;
    aitk_str_appendf(&line, "%s: %zu key(s) %s:", path, n, what);
    aitk_log(level, "%s", aitk_str_cstr(&line)); /* aitk_log escapes control characters */
    for (const char *p = aitk_str_cstr(list); *p;) {
        size_t len = strcspn(p, "\n");
        aitk_str_clear(&line);
        aitk_str_appendn(&line, p, len);
        if (len)
            aitk_log(level, "%s", aitk_str_cstr(&line));
        p += len + (p[len] == '\n');
    }
    aitk_str_free(&line);
}

void aitk_config_warn_ignored(const aitk_train_config *cfg, const char *path)
{
    if (cfg->n_not_modelled)
        log_list(AITK_LOG_WARN, path, cfg->n_not_modelled,
                 "change time or memory but are not in the prediction", &cfg->not_modelled);
    if (cfg->n_unknown)
        log_list(AITK_LOG_WARN, path, cfg->n_unknown, "unknown to this reader, not used (a typo?)",
                 &cfg->unknown);
}

void aitk_config_list_no_effect(const aitk_train_config *cfg, const char *path)
{
    if (cfg->n_no_effect)
        log_list(AITK_LOG_INFO, path, cfg->n_no_effect, "play no part in time or memory",
                 &cfg->no_effect);
}
