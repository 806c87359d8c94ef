/* opened.yaml: validated once at load (unknown keys, missing fields, wrong
 * types all name file:line:column), then looked up by the opener's name. */
#include "validate/libdeps/opened.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/data.h"
#include "common/yaml.h"

#define OPENED_FILE "validate/libdeps/opened.yaml"

typedef struct opener_entry {
    const char *library, *when_missing;
    const aitk_yaml_node *opens, *graph_jit_only; /* sequences of names */
} opener_entry;

struct aitk_opened {
    aitk_yaml_doc *doc;
    opener_entry *openers;
    size_t count;
};

static aitk_status read_names(const aitk_yaml_doc *doc, const aitk_yaml_node *m, const char *key,
                              const aitk_yaml_node **out, aitk_str *err)
{
    *out = aitk_yaml_get(m, key);
    if (!*out) {
        aitk_yaml_errorf(err, doc, m, "opener without '%s'", key);
        return AITK_E_PARSE;
    }
    aitk_status st = aitk_yaml_expect(doc, *out, AITK_YAML_SEQ, "a list of library names", err);
    for (size_t i = 0; !st && i < (*out)->count; i++) {
        const char *name;
        st = aitk_yaml_string(doc, (*out)->items[i], &name, err);
    }
    return st;
}

static aitk_status read_opener(const aitk_yaml_doc *doc, const aitk_yaml_node *m, opener_entry *o,
                               aitk_str *err)
{
    static const char *const keys[] = {"library", "opens", "graph_jit_only", "when_missing",
                                       "source", NULL};
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "an opener (a map)", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, m, keys, "an opener", err);
    const char **slots[] = {&o->library, &o->when_missing, NULL};
    const char *names[] = {"library", "when_missing", "source"};
    for (size_t i = 0; !st && i < 3; i++) {
        const aitk_yaml_node *v = aitk_yaml_get(m, names[i]);
        const char *text = NULL;
        if (!v) {
            aitk_yaml_errorf(err, doc, m, "opener without '%s'", names[i]);
            return AITK_E_PARSE;
        }
        st = aitk_yaml_string(doc, v, slots[i] ? slots[i] : &text, err);
    }
    if (!st)
        st = read_names(doc, m, "opens", &o->opens, err);
    if (!st)
        st = read_names(doc, m, "graph_jit_only", &o->graph_jit_only, err);
    return st;
}

aitk_status aitk_opened_load(aitk_opened **out, aitk_str *err)
{
    *out = NULL;
    aitk_opened *o = aitk_calloc(1, sizeof *o);
    if (!o)
        return AITK_E_NOMEM;
    aitk_status st = aitk_data_load_schema(OPENED_FILE, 1, &o->doc, err);
    const aitk_yaml_node *list = NULL;
    if (!st) {
        list = aitk_yaml_get(o->doc->root, "openers");
        if (!list) {
            aitk_yaml_errorf(err, o->doc, o->doc->root, "no 'openers' list");
            st = AITK_E_PARSE;
        }
    }
    if (!st)
        st = aitk_yaml_expect(o->doc, list, AITK_YAML_SEQ, "a list of openers", err);
    if (!st && list->count && !(o->openers = aitk_calloc(list->count, sizeof *o->openers)))
        st = AITK_E_NOMEM;
    for (size_t i = 0; !st && i < list->count; i++) {
        st = read_opener(o->doc, list->items[i], &o->openers[i], err);
        o->count += !st;
    }
    if (st) {
        aitk_opened_free(o);
        return st;
    }
    *out = o;
    return AITK_OK;
}

void aitk_opened_free(aitk_opened *o)
{
    if (!o)
        return;
    aitk_yaml_free(o->doc);
    aitk_free(o->openers);
    aitk_free(o);
}

size_t aitk_opened_by(const aitk_opened *o, const char *opener, bool graph_jit_only,
                      const char **names, size_t max, const char **when_missing)
{
    *when_missing = NULL;
    for (size_t i = 0; o && i < o->count; i++) {
        if (strcmp(o->openers[i].library, opener) != 0)
            continue;
        const aitk_yaml_node *list = graph_jit_only ? o->openers[i].graph_jit_only
                                                    : o->openers[i].opens;
        size_t n = 0;
        for (size_t k = 0; k < list->count && n < max; k++)
            names[n++] = list->items[k]->text;
        *when_missing = o->openers[i].when_missing;
        return n;
    }
    return 0;
}

bool aitk_opened_graph_jit_only(void)
{
    const char *v = getenv("CUDNN_LIB_CONFIG");
    return v && strcmp(v, "GRAPH_JIT_ONLY") == 0;
}
