/* libyaml event stream -> aitk_yaml_node tree, with positions for every node. */
#include "common/yaml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "common/alloc.h"
#include "common/fileio.h"

/* Deeper nesting than any real config; stops stack exhaustion on hostile input. */
#define YAML_MAX_DEPTH 64
#define YAML_MAX_FILE (16u << 20)

typedef struct builder {
    yaml_parser_t parser;
    const char *name;
    aitk_str *err;
    const char *text; /* the input, for positions of reader errors */
    size_t len;
} builder;

/* A reader error (bad UTF-8, a control character) carries a byte offset,
 * not a mark: count lines and characters up to it. */
static yaml_mark_t mark_at_offset(const builder *b, size_t offset)
{
    yaml_mark_t m = {0};
    for (size_t i = 0; i < offset && i < b->len; i++) {
        unsigned char c = (unsigned char)b->text[i];
        if (c == '\n') {
            m.line++;
            m.column = 0;
        } else if ((c & 0xC0) != 0x80) { /* not a UTF-8 continuation byte */
            m.column++;
        }
    }
    return m;
}

static void node_free(aitk_yaml_node *n)
{
    if (!n)
        return;
    aitk_free(n->text);
    for (size_t i = 0; n->items && i < n->count; i++)
        node_free(n->items[i]);
    for (size_t i = 0; n->pairs && i < n->count; i++) {
        node_free(n->pairs[i].key);
        node_free(n->pairs[i].value);
    }
    aitk_free(n->items);
    aitk_free(n->pairs);
    aitk_free(n);
}

static aitk_status parser_error(builder *b)
{
    const yaml_parser_t *p = &b->parser;
    if (p->error == YAML_MEMORY_ERROR)
        return AITK_E_NOMEM;
    /* libyaml marks are 0-based; people count from 1. */
    size_t offset = p->problem_offset;
    /* "invalid trailing UTF-8 octet" points past the character's first
     * byte; the person's view is the character: step back to its start. */
    if (p->error == YAML_READER_ERROR && p->problem && strstr(p->problem, "trailing")) {
        const unsigned char *t = (const unsigned char *)b->text;
        if (offset > b->len)
            offset = b->len;
        while (offset > 0 && (t[offset - 1] & 0xC0) == 0x80) /* continuation bytes */
            offset--;
        if (offset > 0 && (t[offset - 1] & 0xC0) == 0xC0) /* the lead byte */
            offset--;
    }
    yaml_mark_t reader_mark = mark_at_offset(b, offset);
    const yaml_mark_t *m = p->error == YAML_READER_ERROR ? &reader_mark
                           : p->problem_mark.line || p->problem_mark.column || !p->context
                               ? &p->problem_mark
                               : &p->context_mark;
    if (b->err) {
        aitk_str_appendf(b->err, "%s:%zu:%zu: %s", b->name, m->line + 1, m->column + 1,
                         p->problem ? p->problem : "invalid YAML");
        if (p->context)
            aitk_str_appendf(b->err, " (%s at line %zu, column %zu)", p->context,
                             p->context_mark.line + 1, p->context_mark.column + 1);
    }
    return AITK_E_PARSE;
}

static aitk_status next_event(builder *b, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&b->parser, ev))
        return parser_error(b);
    return AITK_OK;
}

static aitk_yaml_node *node_new(aitk_yaml_kind kind, const yaml_mark_t *m)
{
    aitk_yaml_node *n = aitk_calloc(1, sizeof *n);
    if (n) {
        n->kind = kind;
        n->line = (int)m->line + 1;
        n->col = (int)m->column + 1;
    }
    return n;
}

static aitk_status build_node(builder *b, yaml_event_t *ev, int depth, aitk_yaml_node **out);

/* Reads the next event and builds the node it starts, one level below
 * `depth`; *ended instead when that event is `end`, the close of the
 * sequence or mapping being built (YAML_NO_EVENT: a node must follow). */
static aitk_status next_node(builder *b, yaml_event_type_t end, int depth, aitk_yaml_node **out,
                             bool *ended)
{
    *out = NULL;
    *ended = false;
    yaml_event_t ev;
    aitk_status st = next_event(b, &ev);
    if (st)
        return st;
    if (end != YAML_NO_EVENT && ev.type == end)
        *ended = true;
    else
        st = build_node(b, &ev, depth + 1, out);
    yaml_event_delete(&ev);
    return st;
}

static aitk_status build_seq(builder *b, aitk_yaml_node *n, int depth)
{
    size_t cap = 0;
    for (;;) {
        aitk_yaml_node *child;
        bool ended;
        aitk_status st = next_node(b, YAML_SEQUENCE_END_EVENT, depth, &child, &ended);
        if (st || ended)
            return st;
        aitk_yaml_node **items = aitk_grow(n->items, sizeof *items, n->count, &cap, 4);
        if (!items) {
            node_free(child);
            return AITK_E_NOMEM;
        }
        n->items = items;
        n->items[n->count++] = child;
    }
}

/* The keys of a mapping under construction, for the duplicate check. A
 * linear scan per key made a mapping of n keys cost n^2/2 comparisons (150k
 * keys under one mapping of a 2.7 MB config: 149 s). Small mappings, nearly
 * all of them, keep the scan; from KEYSET_MIN keys on, an open-addressing
 * table of pair indices (linear probing, at most half full) makes each check
 * O(1) on average. It lives only while the mapping is built; lookups in the
 * finished tree (aitk_yaml_get) stay linear, and callers make a fixed number
 * of them per mapping. */
#define KEYSET_MIN 16

typedef struct keyset {
    size_t *slots; /* index into pairs + 1; 0: empty */
    size_t cap;    /* a power of two, or 0 while the scan is used */
} keyset;

static size_t key_hash(const char *s)
{
    uint64_t h = 14695981039346656037u; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211u;
    }
    return (size_t)(h ^ (h >> 32));
}

/* The pair whose key is `text`, or NULL. */
static const aitk_yaml_pair *keyset_find(const keyset *ks, const aitk_yaml_node *map,
                                         const char *text)
{
    if (!ks->slots) {
        for (size_t i = 0; i < map->count; i++)
            if (strcmp(map->pairs[i].key->text, text) == 0)
                return &map->pairs[i];
        return NULL;
    }
    for (size_t i = key_hash(text) & (ks->cap - 1); ks->slots[i]; i = (i + 1) & (ks->cap - 1)) {
        const aitk_yaml_pair *p = &map->pairs[ks->slots[i] - 1];
        if (strcmp(p->key->text, text) == 0)
            return p;
    }
    return NULL;
}

static void keyset_put(keyset *ks, const aitk_yaml_node *map, size_t index)
{
    size_t i = key_hash(map->pairs[index].key->text) & (ks->cap - 1);
    while (ks->slots[i])
        i = (i + 1) & (ks->cap - 1);
    ks->slots[i] = index + 1;
}

/* Called after pairs[map->count - 1] was added: builds the table once the
 * mapping reaches KEYSET_MIN keys, and doubles it when it would be more than
 * half full. */
static aitk_status keyset_added(keyset *ks, const aitk_yaml_node *map)
{
    if (!ks->slots && map->count < KEYSET_MIN)
        return AITK_OK;
    if (ks->slots && map->count * 2 <= ks->cap) {
        keyset_put(ks, map, map->count - 1);
        return AITK_OK;
    }
    size_t cap = ks->cap ? ks->cap : KEYSET_MIN;
    while (map->count * 2 > cap) {
        if (cap > SIZE_MAX / 2 / sizeof *ks->slots)
            return AITK_E_NOMEM;
        cap *= 2;
    }
    size_t *slots = aitk_calloc(cap, sizeof *slots);
    if (!slots)
        return AITK_E_NOMEM;
    aitk_free(ks->slots);
    ks->slots = slots;
    ks->cap = cap;
    for (size_t i = 0; i < map->count; i++)
        keyset_put(ks, map, i);
    return AITK_OK;
}

static aitk_status build_map_keys(builder *b, aitk_yaml_node *n, int depth, keyset *ks)
{
    size_t cap = 0;
    for (;;) {
        aitk_yaml_node *key;
        bool ended;
        aitk_status st = next_node(b, YAML_MAPPING_END_EVENT, depth, &key, &ended);
        if (st || ended)
            return st;
        if (key->kind != AITK_YAML_SCALAR) {
            if (b->err)
                aitk_str_appendf(b->err, "%s:%d:%d: a mapping key must be a plain value",
                                 b->name, key->line, key->col);
            node_free(key);
            return AITK_E_PARSE;
        }
        const aitk_yaml_pair *first = keyset_find(ks, n, key->text);
        if (first) {
            if (b->err)
                aitk_str_appendf(b->err, "%s:%d:%d: duplicate key '%s' (first at line %d)",
                                 b->name, key->line, key->col, key->text, first->key->line);
            node_free(key);
            return AITK_E_PARSE;
        }
        aitk_yaml_node *value;
        st = next_node(b, YAML_NO_EVENT, depth, &value, &ended);
        if (!st) {
            void *pairs = aitk_grow(n->pairs, sizeof *n->pairs, n->count, &cap, 4);
            if (pairs)
                n->pairs = pairs;
            else
                st = AITK_E_NOMEM;
        }
        if (st) {
            node_free(key);
            node_free(value);
            return st;
        }
        n->pairs[n->count].key = key;
        n->pairs[n->count].value = value;
        n->count++;
        /* The pair is the map's now (node_free frees it on an error). */
        if ((st = keyset_added(ks, n)))
            return st;
    }
}

static aitk_status build_map(builder *b, aitk_yaml_node *n, int depth)
{
    keyset ks = {0};
    aitk_status st = build_map_keys(b, n, depth, &ks);
    aitk_free(ks.slots);
    return st;
}

static aitk_status build_node(builder *b, yaml_event_t *ev, int depth, aitk_yaml_node **out)
{
    *out = NULL;
    if (depth > YAML_MAX_DEPTH) {
        if (b->err)
            aitk_str_appendf(b->err, "%s:%zu:%zu: nested deeper than %d levels", b->name,
                             ev->start_mark.line + 1, ev->start_mark.column + 1, YAML_MAX_DEPTH);
        return AITK_E_PARSE;
    }
    aitk_yaml_node *n = NULL;
    aitk_status st = AITK_OK;
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        if (!(n = node_new(AITK_YAML_SCALAR, &ev->start_mark)))
            return AITK_E_NOMEM;
        n->text = aitk_strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
        if (!n->text) {
            node_free(n);
            return AITK_E_NOMEM;
        }
        n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        break;
    case YAML_SEQUENCE_START_EVENT:
        if (!(n = node_new(AITK_YAML_SEQ, &ev->start_mark)))
            return AITK_E_NOMEM;
        st = build_seq(b, n, depth);
        break;
    case YAML_MAPPING_START_EVENT:
        if (!(n = node_new(AITK_YAML_MAP, &ev->start_mark)))
            return AITK_E_NOMEM;
        st = build_map(b, n, depth);
        break;
    case YAML_ALIAS_EVENT:
        if (b->err)
            aitk_str_appendf(b->err, "%s:%zu:%zu: YAML aliases (*name) are not supported here",
                             b->name, ev->start_mark.line + 1, ev->start_mark.column + 1);
        return AITK_E_PARSE;
    default:
        if (b->err)
            aitk_str_appendf(b->err, "%s:%zu:%zu: unexpected YAML event", b->name,
                             ev->start_mark.line + 1, ev->start_mark.column + 1);
        return AITK_E_PARSE;
    }
    if (st) {
        node_free(n);
        return st;
    }
    *out = n;
    return AITK_OK;
}

aitk_status aitk_yaml_parse(const char *name, const char *text, size_t len, aitk_yaml_doc **out,
                            aitk_str *err)
{
    *out = NULL;
    aitk_yaml_doc *doc = aitk_calloc(1, sizeof *doc);
    if (!doc || !(doc->name = aitk_strdup(name))) {
        aitk_free(doc);
        return AITK_E_NOMEM;
    }
    builder b = {.name = name, .err = err, .text = text, .len = len};
    if (!yaml_parser_initialize(&b.parser)) {
        aitk_yaml_free(doc);
        return AITK_E_NOMEM;
    }
    yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
    aitk_status st = AITK_OK;
    /* STREAM-START, then DOCUMENT-START or STREAM-END (empty input). */
    yaml_event_t ev;
    int phase = 0;
    while (!st) {
        if ((st = next_event(&b, &ev)))
            break;
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        if (t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            break; /* first document only */
        }
        if (phase++ == 0)
            st = build_node(&b, &ev, 0, &doc->root);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&b.parser);
    if (st) {
        aitk_yaml_free(doc);
        return st;
    }
    *out = doc;
    return AITK_OK;
}

aitk_status aitk_yaml_load_file(const char *path, aitk_yaml_doc **out, aitk_str *err)
{
    char *data = NULL;
    size_t len = 0;
    *out = NULL;
    aitk_status st = aitk_file_read(path, YAML_MAX_FILE, &data, &len, err);
    if (st)
        return st;
    st = aitk_yaml_parse(path, data, len, out, err);
    aitk_free(data);
    return st;
}

void aitk_yaml_free(aitk_yaml_doc *doc)
{
    if (!doc)
        return;
    node_free(doc->root);
    aitk_free(doc->name);
    aitk_free(doc);
}

aitk_yaml_node *aitk_yaml_get(const aitk_yaml_node *map, const char *key)
{
    if (!map || map->kind != AITK_YAML_MAP)
        return NULL;
    for (size_t i = 0; i < map->count; i++)
        if (strcmp(map->pairs[i].key->text, key) == 0)
            return map->pairs[i].value;
    return NULL;
}

const aitk_yaml_node *aitk_yaml_figure(const aitk_yaml_node *n)
{
    return n && n->kind == AITK_YAML_MAP ? aitk_yaml_get(n, "value") : n;
}

const char *aitk_yaml_text(const aitk_yaml_node *map, const char *key)
{
    const aitk_yaml_node *n = aitk_yaml_figure(aitk_yaml_get(map, key));
    return n && n->kind == AITK_YAML_SCALAR ? n->text : "";
}

bool aitk_yaml_is_null(const aitk_yaml_node *node)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    if (!node || node->kind != AITK_YAML_SCALAR || node->quoted)
        return false;
    for (size_t i = 0; i < sizeof nulls / sizeof *nulls; i++)
        if (strcmp(node->text, nulls[i]) == 0)
            return true;
    return false;
}

void aitk_yaml_errorf(aitk_str *err, const aitk_yaml_doc *doc, const aitk_yaml_node *node,
                      const char *fmt, ...)
{
    if (!err)
        return;
    const char *name = doc && doc->name ? doc->name : "<yaml>";
    if (node)
        aitk_str_appendf(err, "%s:%d:%d: ", name, node->line, node->col);
    else
        aitk_str_appendf(err, "%s: ", name);
    va_list ap;
    va_start(ap, fmt);
    aitk_str_vappendf(err, fmt, ap);
    va_end(ap);
}

static const char *kind_name(aitk_yaml_kind k)
{
    return k == AITK_YAML_MAP ? "a mapping" : k == AITK_YAML_SEQ ? "a list" : "a value";
}

aitk_status aitk_yaml_expect(const aitk_yaml_doc *doc, const aitk_yaml_node *node,
                             aitk_yaml_kind kind, const char *what, aitk_str *err)
{
    if (!node) {
        aitk_yaml_errorf(err, doc, NULL, "missing %s", what);
        return AITK_E_PARSE;
    }
    if (node->kind != kind) {
        aitk_yaml_errorf(err, doc, node, "%s must be %s, found %s", what, kind_name(kind),
                         kind_name(node->kind));
        return AITK_E_PARSE;
    }
    return AITK_OK;
}

static aitk_status need_scalar(const aitk_yaml_doc *doc, const aitk_yaml_node *node,
                               const char *want, aitk_str *err)
{
    if (!node) {
        aitk_yaml_errorf(err, doc, NULL, "missing %s", want);
        return AITK_E_PARSE;
    }
    if (node->kind != AITK_YAML_SCALAR) {
        aitk_yaml_errorf(err, doc, node, "expected %s, found %s", want, kind_name(node->kind));
        return AITK_E_PARSE;
    }
    return AITK_OK;
}

/* A quoted scalar is a string, as PyYAML (and so ai-toolkit) reads it:
 * `quantize: "false"` is a non-empty string there, which Python takes as
 * true. Reading it as false would predict a job that is not the one run. */
static aitk_status need_typed_scalar(const aitk_yaml_doc *doc, const aitk_yaml_node *node,
                                     const char *want, aitk_str *err)
{
    aitk_status st = need_scalar(doc, node, want, err);
    if (!st && node->quoted) {
        aitk_yaml_errorf(err, doc, node, "expected %s, found the quoted string \"%s\" (YAML "
                                         "reads quotes as text: remove them)", want, node->text);
        st = AITK_E_PARSE;
    }
    return st;
}

aitk_status aitk_yaml_double(const aitk_yaml_doc *doc, const aitk_yaml_node *node, double *out,
                             aitk_str *err)
{
    aitk_status st = need_typed_scalar(doc, node, "a number", err);
    if (st)
        return st;
    char *end = NULL;
    errno = 0;
    double v = strtod(node->text, &end);
    if (end == node->text || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        aitk_yaml_errorf(err, doc, node, "expected a number, found '%s'", node->text);
        return AITK_E_PARSE;
    }
    *out = v;
    return AITK_OK;
}

aitk_status aitk_yaml_long(const aitk_yaml_doc *doc, const aitk_yaml_node *node, long *out,
                           aitk_str *err)
{
    aitk_status st = need_typed_scalar(doc, node, "an integer", err);
    if (st)
        return st;
    char *end = NULL;
    errno = 0;
    long v = strtol(node->text, &end, 10);
    if (end == node->text || *end != '\0' || errno == ERANGE) {
        aitk_yaml_errorf(err, doc, node, "expected an integer, found '%s'", node->text);
        return AITK_E_PARSE;
    }
    *out = v;
    return AITK_OK;
}

aitk_status aitk_yaml_bool(const aitk_yaml_doc *doc, const aitk_yaml_node *node, bool *out,
                           aitk_str *err)
{
    aitk_status st = need_typed_scalar(doc, node, "true or false", err);
    if (st)
        return st;
    /* YAML 1.1 spellings, as PyYAML (and so ai-toolkit) reads them. */
    static const char *const yes[] = {"true", "yes", "on", NULL};
    static const char *const no[] = {"false", "no", "off", NULL};
    for (int i = 0; yes[i]; i++) {
        if (strcasecmp(node->text, yes[i]) == 0) {
            *out = true;
            return AITK_OK;
        }
        if (strcasecmp(node->text, no[i]) == 0) {
            *out = false;
            return AITK_OK;
        }
    }
    aitk_yaml_errorf(err, doc, node, "expected true or false, found '%s'", node->text);
    return AITK_E_PARSE;
}

aitk_status aitk_yaml_string(const aitk_yaml_doc *doc, const aitk_yaml_node *node,
                             const char **out, aitk_str *err)
{
    aitk_status st = need_scalar(doc, node, "a text value", err);
    if (st)
        return st;
    *out = node->text;
    return AITK_OK;
}

aitk_status aitk_yaml_names(const aitk_yaml_doc *doc, const aitk_yaml_node *node,
                            const char *key, const char **out, size_t most, aitk_str *err)
{
    aitk_status st = aitk_yaml_expect(doc, node, AITK_YAML_SEQ, "a list of module names", err);
    if (!st && (node->count == 0 || node->count > most)) {
        aitk_yaml_errorf(err, doc, node, "%s: expected 1 to %zu module names, found %zu", key,
                         most, node->count);
        st = AITK_E_RANGE;
    }
    for (size_t i = 0; !st && i < node->count; i++)
        st = aitk_yaml_string(doc, node->items[i], &out[i], err);
    return st;
}

aitk_status aitk_yaml_check_keys(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                 const char *const *known, const char *where, aitk_str *err)
{
    aitk_status st = aitk_yaml_expect(doc, map, AITK_YAML_MAP, where, err);
    if (st)
        return st;
    for (size_t i = 0; i < map->count; i++) {
        const char *k = map->pairs[i].key->text;
        int found = 0;
        for (const char *const *kn = known; *kn && !found; kn++)
            found = strcmp(*kn, k) == 0;
        if (!found) {
            aitk_yaml_errorf(err, doc, map->pairs[i].key, "unknown key '%s' in %s (known:", k,
                             where);
            /* err may be NULL, as for every aitk_yaml_* reader: only the
             * status is wanted then. */
            for (const char *const *kn = known; err && *kn; kn++)
                aitk_str_appendf(err, "%s %s", kn == known ? "" : ",", *kn);
            if (err)
                aitk_str_append(err, ")");
            return AITK_E_PARSE;
        }
    }
    return AITK_OK;
}

aitk_status aitk_yaml_need(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                           const aitk_yaml_node **out, aitk_str *err)
{
    *out = aitk_yaml_get(map, key);
    if (*out)
        return AITK_OK;
    aitk_yaml_errorf(err, doc, map, "missing '%s'", key);
    return AITK_E_PARSE;
}

aitk_status aitk_yaml_need_string(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                  const char *key, const char **out, aitk_str *err)
{
    const aitk_yaml_node *n = NULL;
    aitk_status st = aitk_yaml_need(doc, map, key, &n, err);
    return st ? st : aitk_yaml_string(doc, n, out, err);
}
