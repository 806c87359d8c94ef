/* The project's data files (YAML with sources), compiled into the binary.
 *
 * Embedding means the tool works from any folder and --quick reads no file it
 * was not asked to. AITK_DATA_DIR=<repo-like folder> makes it read the files
 * from disk instead, so a person can try an edited matrix without a rebuild. */
#ifndef AITK_COMMON_DATA_H
#define AITK_COMMON_DATA_H

#include <stddef.h>

#include "common/status.h"
#include "common/str.h"
#include "common/yaml.h"

typedef struct aitk_embedded_file {
    const char *name; /* repository-relative: "validate/compat.yaml" */
    const unsigned char *data;
    size_t len;
} aitk_embedded_file;

/* Generated at build time (cmake/embed.cmake). */
extern const aitk_embedded_file aitk_embedded_files[];
extern const size_t aitk_embedded_file_count;

/* Parses data file `name`; messages name it as "validate/compat.yaml:L:C". */
aitk_status aitk_data_load_yaml(const char *name, aitk_yaml_doc **out, aitk_str *err);

/* The version of a data file's format, its top-level `schema:`. A file
 * written for another version (or with none) would be misread without a
 * word, so anything but `schema: <supported>` is AITK_E_PARSE with
 * "name:line:col: schema 2 is not supported (this build reads schema 1)",
 * or "no 'schema'" at the top level when the key is missing. */
aitk_status aitk_data_check_schema(const aitk_yaml_doc *doc, long supported, aitk_str *err);

/* aitk_data_load_yaml, then aitk_data_check_schema: *out only on success
 * (the document is freed on failure). */
aitk_status aitk_data_load_schema(const char *name, long supported, aitk_yaml_doc **out,
                                  aitk_str *err);

/* Each entry `keys` of the map `section` (NULL: the top level) has a
 * non-empty `field` and `source`: a check must not name an empty fix or an
 * unsourced rule. AITK_E_PARSE with "name: section.key needs a field and a
 * source" for the first that does not. */
aitk_status aitk_data_need_sourced(const aitk_yaml_doc *doc, const char *section,
                                   const char *const *keys, size_t n, const char *field,
                                   aitk_str *err);

#endif
