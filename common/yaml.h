/* YAML documents as a small tree with source positions (libyaml underneath).
 *
 * Every data file of the project (compat matrix, GPU database, model specs,
 * remedies) and the user's ai-toolkit configs come through here, so every
 * error can name the place: "compat.yaml:12:5: expected a number, found 'x'".
 * Scalars stay text until a typed getter reads them; the getters do the
 * checking. Anchors/aliases are refused (none of our inputs need them and they
 * allow "billion laughs" inputs). */
#ifndef AITK_COMMON_YAML_H
#define AITK_COMMON_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"

typedef enum aitk_yaml_kind {
    AITK_YAML_SCALAR,
    AITK_YAML_SEQ,
    AITK_YAML_MAP,
} aitk_yaml_kind;

typedef struct aitk_yaml_node aitk_yaml_node;

typedef struct aitk_yaml_pair {
    aitk_yaml_node *key;   /* always a scalar */
    aitk_yaml_node *value;
} aitk_yaml_pair;

struct aitk_yaml_node {
    aitk_yaml_kind kind;
    int line, col;          /* 1-based position of the node's first character */
    char *text;             /* SCALAR: its text */
    bool quoted;            /* SCALAR: written in quotes (so "16" is a string) */
    size_t count;           /* SEQ: items; MAP: pairs */
    aitk_yaml_node **items; /* SEQ */
    aitk_yaml_pair *pairs;  /* MAP, in file order */
};

typedef struct aitk_yaml_doc {
    char *name;             /* the file name used in messages */
    aitk_yaml_node *root;   /* NULL for an empty document */
} aitk_yaml_doc;

/* Parses the first document of `text`. On a syntax error returns
 * AITK_E_PARSE and appends "name:line:column: problem" to err. */
aitk_status aitk_yaml_parse(const char *name, const char *text, size_t len, aitk_yaml_doc **out,
                            aitk_str *err);
aitk_status aitk_yaml_load_file(const char *path, aitk_yaml_doc **out, aitk_str *err);
void aitk_yaml_free(aitk_yaml_doc *doc);

/* Map lookup; NULL when `map` is not a map or has no such key. */
aitk_yaml_node *aitk_yaml_get(const aitk_yaml_node *map, const char *key);
/* The data files write a figure plainly (`12`) or with where it comes from
 * (`{value: 12, source: "..."}`): the value's node either way; NULL for a
 * map without `value` (or a NULL n). */
const aitk_yaml_node *aitk_yaml_figure(const aitk_yaml_node *n);
/* The text of map[key] written either way (plain, or a figure's value);
 * "" when the key is absent or not a scalar. */
const char *aitk_yaml_text(const aitk_yaml_node *map, const char *key);
/* True for YAML's null: an unquoted scalar that is empty, ~, null, Null or
 * NULL (the YAML 1.2 core schema; JSON's null too). A configuration key set
 * to null is read as absent, as Python's kwargs.get(key, default) does not:
 * callers that follow ai-toolkit use it where its code treats None as off. */
bool aitk_yaml_is_null(const aitk_yaml_node *node);
/* A key that must be there: its value in *out, or AITK_E_PARSE with
 * "name:line:col: missing 'key'" (the map's position). */
aitk_status aitk_yaml_need(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                           const aitk_yaml_node **out, aitk_str *err);
/* aitk_yaml_need + aitk_yaml_string. */
aitk_status aitk_yaml_need_string(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                  const char *key, const char **out, aitk_str *err);

/* Appends "name:line:col: <message>" for `node` (or "name: <message>"). */
AITK_PRINTF(4, 5)
void aitk_yaml_errorf(aitk_str *err, const aitk_yaml_doc *doc, const aitk_yaml_node *node,
                      const char *fmt, ...);

/* Typed reads. Each returns AITK_E_PARSE with a positioned message when the
 * node is missing or has the wrong type/shape. */
aitk_status aitk_yaml_double(const aitk_yaml_doc *doc, const aitk_yaml_node *node, double *out,
                             aitk_str *err);
aitk_status aitk_yaml_long(const aitk_yaml_doc *doc, const aitk_yaml_node *node, long *out,
                           aitk_str *err);
aitk_status aitk_yaml_bool(const aitk_yaml_doc *doc, const aitk_yaml_node *node, bool *out,
                           aitk_str *err);
/* Borrowed text of a scalar (owned by the document). */
aitk_status aitk_yaml_string(const aitk_yaml_doc *doc, const aitk_yaml_node *node,
                             const char **out, aitk_str *err);
/* A list of 1 to `most` scalars into out[0..] (borrowed text; out has room
 * for most + 1 and stays NULL-terminated): "KEY: expected 1 to N module
 * names, found M" when the count is wrong. */
aitk_status aitk_yaml_names(const aitk_yaml_doc *doc, const aitk_yaml_node *node,
                            const char *key, const char **out, size_t most, aitk_str *err);
/* Checks node kind; positioned message naming what was expected. */
aitk_status aitk_yaml_expect(const aitk_yaml_doc *doc, const aitk_yaml_node *node,
                             aitk_yaml_kind kind, const char *what, aitk_str *err);

/* Reports the first key of `map` not in `known` (NULL-terminated) as
 * "name:line:col: unknown key 'x' in <where> (known: a, b, c)". */
aitk_status aitk_yaml_check_keys(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                 const char *const *known, const char *where, aitk_str *err);

#endif
