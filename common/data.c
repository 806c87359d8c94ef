/* Finds a data file: AITK_DATA_DIR on disk first when set, else the embedded copy. */
#include "common/data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

aitk_status aitk_data_load_yaml(const char *name, aitk_yaml_doc **out, aitk_str *err)
{
    const char *dir = getenv("AITK_DATA_DIR");
    if (dir && *dir) {
        aitk_str path = AITK_STR_INIT;
        aitk_status st = aitk_path_join(&path, dir, name);
        if (!st)
            st = aitk_yaml_load_file(aitk_str_cstr(&path), out, err);
        aitk_str_free(&path);
        return st;
    }
    for (size_t i = 0; i < aitk_embedded_file_count; i++)
        if (strcmp(aitk_embedded_files[i].name, name) == 0)
            return aitk_yaml_parse(name, (const char *)aitk_embedded_files[i].data,
                                   aitk_embedded_files[i].len, out, err);
    if (err)
        aitk_str_appendf(err, "%s: no such data file in this build", name);
    return AITK_E_NOTFOUND;
}

aitk_status aitk_data_check_schema(const aitk_yaml_doc *doc, long supported, aitk_str *err)
{
    aitk_status st = aitk_yaml_expect(doc, doc->root, AITK_YAML_MAP, "the top level", err);
    if (st)
        return st;
    const aitk_yaml_node *n = aitk_yaml_get(doc->root, "schema");
    if (!n) {
        aitk_yaml_errorf(err, doc, doc->root, "no 'schema' (this build reads schema %ld)",
                         supported);
        return AITK_E_PARSE;
    }
    if (n->kind != AITK_YAML_SCALAR) {
        aitk_yaml_errorf(err, doc, n, "schema must be a number, found a %s (this build reads "
                                      "schema %ld)",
                         n->kind == AITK_YAML_SEQ ? "list" : "mapping", supported);
        return AITK_E_PARSE;
    }
    /* The exact spelling the files are written with: a quoted "1" is text, as
     * everywhere else in the data files, and 1.0 or 01 no file ever had. */
    char want[24];
    snprintf(want, sizeof want, "%ld", supported);
    if (n->quoted || strcmp(n->text, want) != 0) {
        aitk_yaml_errorf(err, doc, n, "schema %s%s%s is not supported (this build reads schema "
                                      "%ld)",
                         n->quoted ? "\"" : "", n->text, n->quoted ? "\"" : "", supported);
        return AITK_E_PARSE;
    }
    return AITK_OK;
}

aitk_status aitk_data_load_schema(const char *name, long supported, aitk_yaml_doc **out,
                                  aitk_str *err)
{
    aitk_yaml_doc *doc = NULL;
    aitk_status st = aitk_data_load_yaml(name, &doc, err);
    if (!st)
        st = aitk_data_check_schema(doc, supported, err);
    if (st) {
        aitk_yaml_free(doc);
        return st;
    }
    *out = doc;
    return AITK_OK;
}

aitk_status aitk_data_need_sourced(const aitk_yaml_doc *doc, const char *section,
                                   const char *const *keys, size_t n, const char *field,
                                   aitk_str *err)
{
    const aitk_yaml_node *map = section ? aitk_yaml_get(doc->root, section) : doc->root;
    for (size_t i = 0; i < n; i++) {
        const aitk_yaml_node *e = aitk_yaml_get(map, keys[i]);
        if (!*aitk_yaml_text(e, field) || !*aitk_yaml_text(e, "source")) {
            aitk_str_appendf(err, "%s: %s%s%s needs a %s and a source", doc->name,
                             section ? section : "", section ? "." : "", keys[i], field);
            return AITK_E_PARSE;
        }
    }
    return AITK_OK;
}
