/* opened.yaml: validated once at load (unknown keys, missing fields, wrong
 * types, a GRAPH_JIT_ONLY name that `opens` lacks: each names
 * file:line:column), then looked up by the opener's name. */
#include "validate/libdeps/opened.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/data.h"
#include "common/fileio.h"
#include "common/yaml.h"

#define OPENED_FILE "validate/libdeps/opened.yaml"

typedef struct name_list {
    const char **names; /* borrowed from the document */
    size_t count;
} name_list;

typedef struct opener_entry {
    const char *library, *when_missing;
    name_list opens, graph_jit_only;
} opener_entry;

struct aitk_opened {
    aitk_yaml_doc *doc;
    opener_entry *openers;
    size_t count;
};

static aitk_status read_names(const aitk_yaml_doc *doc, const aitk_yaml_node *m, const char *key,
                              name_list *out, aitk_str *err)
{
    const aitk_yaml_node *seq = NULL;
    aitk_status st = aitk_yaml_need(doc, m, key, &seq, err);
    if (!st)
        st = aitk_yaml_expect(doc, seq, AITK_YAML_SEQ, "a list of library names", err);
    if (!st && seq->count && !(out->names = aitk_calloc(seq->count, sizeof *out->names)))
        st = AITK_E_NOMEM;
    for (size_t i = 0; !st && i < seq->count; i++) {
        st = aitk_yaml_string(doc, seq->items[i], &out->names[i], err);
        out->count += !st;
    }
    return st;
}

static bool listed(const name_list *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->names[i], name) == 0)
            return true;
    return false;
}

static aitk_status read_opener(const aitk_yaml_doc *doc, const aitk_yaml_node *m, opener_entry *o,
                               aitk_str *err)
{
    static const char *const keys[] = {"library", "opens", "graph_jit_only", "when_missing",
                                       "source", NULL};
    const char *source = NULL;
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "an opener (a map)", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, m, keys, "an opener", err);
    if (!st)
        st = aitk_yaml_need_string(doc, m, "library", &o->library, err);
    if (!st)
        st = aitk_yaml_need_string(doc, m, "when_missing", &o->when_missing, err);
    if (!st)
        st = aitk_yaml_need_string(doc, m, "source", &source, err);
    if (!st)
        st = read_names(doc, m, "opens", &o->opens, err);
    if (!st)
        st = read_names(doc, m, "graph_jit_only", &o->graph_jit_only, err);
    /* cuDNN's slimmed configuration needs a subset of the full one: a name
     * only there would be a typo the walk never follows by default. */
    for (size_t i = 0; !st && i < o->graph_jit_only.count; i++)
        if (!listed(&o->opens, o->graph_jit_only.names[i])) {
            aitk_yaml_errorf(err, doc, aitk_yaml_get(m, "graph_jit_only")->items[i],
                             "'%s' is in graph_jit_only but not in opens",
                             o->graph_jit_only.names[i]);
            st = AITK_E_PARSE;
        }
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
    if (!st)
        st = aitk_yaml_need(o->doc, o->doc->root, "openers", &list, err);
    if (!st)
        st = aitk_yaml_expect(o->doc, list, AITK_YAML_SEQ, "a list of openers", err);
    if (!st && list->count && !(o->openers = aitk_calloc(list->count, sizeof *o->openers)))
        st = AITK_E_NOMEM;
    /* count follows the entries read so far, so free releases each one's
     * lists even when a later entry is malformed. */
    for (size_t i = 0; !st && i < list->count; i++) {
        o->count++;
        st = read_opener(o->doc, list->items[i], &o->openers[i], err);
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
    for (size_t i = 0; i < o->count; i++) {
        aitk_free(o->openers[i].opens.names);
        aitk_free(o->openers[i].graph_jit_only.names);
    }
    aitk_yaml_free(o->doc);
    aitk_free(o->openers);
    aitk_free(o);
}

size_t aitk_opened_by(const aitk_opened *o, const char *opener, bool fold_case,
                      bool graph_jit_only, const char *const **names, const char **when_missing)
{
    *names = NULL;
    *when_missing = NULL;
    for (size_t i = 0; o && i < o->count; i++) {
        const opener_entry *e = &o->openers[i];
        if ((fold_case ? strcasecmp(e->library, opener) : strcmp(e->library, opener)) != 0)
            continue;
        const name_list *l = graph_jit_only ? &e->graph_jit_only : &e->opens;
        *names = l->names;
        *when_missing = e->when_missing;
        return l->count;
    }
    return 0;
}

bool aitk_opened_graph_jit_only(void)
{
    const char *v = getenv("CUDNN_LIB_CONFIG");
    return v && strcmp(v, "GRAPH_JIT_ONLY") == 0;
}

/* The name without its file-name tail: cuDNN writes an engine library as
 * "libcudnn_heuristic.so" in one release and with ".so.9" in another, and
 * Windows' names as UTF-16 text. */
static size_t stem_length(const char *name)
{
    const char *so = strstr(name, ".so");
    size_t n = strlen(name);
    if (so)
        return (size_t)(so - name);
    if (n > 4 && strcasecmp(name + n - 4, ".dll") == 0)
        return n - 4;
    return n;
}

static bool holds(const unsigned char *buf, size_t len, const unsigned char *needle, size_t n)
{
    for (size_t i = 0; n && i + n <= len; i++) {
        const unsigned char *hit = memchr(buf + i, needle[0], len - n - i + 1);
        if (!hit)
            return false;
        i = (size_t)(hit - buf);
        if (memcmp(hit, needle, n) == 0)
            return true;
    }
    return false;
}

bool aitk_opened_named_in(const char *opener_path, const char *name)
{
    /* The stem as bytes and as UTF-16LE; each read keeps the last bytes
     * of the one before, so a name across two reads is still seen. */
    unsigned char ascii[128], wide[256];
    const size_t n = stem_length(name);
    if (n == 0 || n > sizeof ascii)
        return true; /* nothing to look for: follow it, as before */
    for (size_t i = 0; i < n; i++) {
        ascii[i] = (unsigned char)name[i];
        wide[2 * i] = (unsigned char)name[i];
        wide[2 * i + 1] = 0;
    }
    int fd = aitk_open_read(opener_path);
    if (fd < 0)
        return true; /* unreadable: the walk reports the opener itself */
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = aitk_malloc(CHUNK + sizeof wide);
    bool found = buf == NULL;
    size_t kept = 0;
    while (!found) {
        ssize_t got = read(fd, buf + kept, CHUNK);
        if (got <= 0)
            break;
        size_t len = kept + (size_t)got;
        found = holds(buf, len, ascii, n) || holds(buf, len, wide, 2 * n);
        kept = len < 2 * n ? len : 2 * n;
        memmove(buf, buf + len - kept, kept);
    }
    close(fd);
    aitk_free(buf);
    return found;
}
