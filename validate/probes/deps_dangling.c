/* Dangling links in a library folder (deps_dangling.h). */
#include "validate/probes/deps_dangling.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#ifndef _WIN32
#include <unistd.h>
#endif

#include "common/data.h"
#include "common/fileio.h"

#define DATA_FILE "validate/probes/deps.yaml"

bool aitk_dangling_link(const char *path, aitk_str *target)
{
#ifdef _WIN32
    (void)path;
    (void)target;
    return false;
#else
    struct stat ls, s;
    if (lstat(path, &ls) != 0 || !S_ISLNK(ls.st_mode) || stat(path, &s) == 0 || errno != ENOENT)
        return false;
    char buf[4096];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    aitk_str_clear(target);
    aitk_str_append(target, buf);
    return true;
#endif
}

aitk_status aitk_dangling_extension_needs(aitk_deps *d, const char *lib_dir, aitk_strlist *out)
{
    aitk_str torch_dir = AITK_STR_INIT, path = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *sep = aitk_path_last_separator(lib_dir);
    char **names = NULL;
    size_t count = 0;
    aitk_status st = AITK_OK;
    if (sep && aitk_str_appendn(&torch_dir, lib_dir, (size_t)(sep - lib_dir)) == AITK_OK)
        aitk_dir_names(aitk_str_cstr(&torch_dir), &names, &count, NULL);
    for (size_t i = 0; !st && i < count; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(names[i], "_C", 2) != 0 || n < 5 || strcmp(names[i] + n - 3, ".so") != 0)
            continue;
        aitk_str_clear(&path);
        aitk_str_appendf(&path, "%s/%s", aitk_str_cstr(&torch_dir), names[i]);
        aitk_dep_tree tree;
        aitk_status ast = aitk_deps_analyze(d, aitk_str_cstr(&path), &tree, &err);
        if (ast == AITK_E_NOMEM)
            st = ast;
        if (ast)
            continue;
        for (size_t k = 1; !st && k < tree.count; k++)
            if (tree.nodes[k].parent == 0 && tree.nodes[k].name && !tree.nodes[k].opened)
                st = aitk_strlist_add(out, tree.nodes[k].name);
        aitk_dep_tree_free(&tree);
    }
    aitk_dir_names_free(names, count);
    aitk_str_free(&torch_dir);
    aitk_str_free(&path);
    aitk_str_free(&err);
    return st;
}

aitk_status aitk_dangling_data_load(aitk_yaml_doc **out, aitk_str *err)
{
    return aitk_data_load_schema(DATA_FILE, 1, out, err);
}

bool aitk_dangling_opened_by_name(const aitk_yaml_doc *data, const char *load_error,
                                  const char *name, aitk_str *why)
{
    if (!data) {
        aitk_str_appendf(why, "the list of libraries torch opens by name could not be read (%s)",
                         load_error);
        return true;
    }
    const aitk_yaml_node *list = aitk_yaml_get(data->root, "opened_by_name");
    for (size_t i = 0; list && list->kind == AITK_YAML_SEQ && i < list->count; i++) {
        const aitk_yaml_node *e = list->items[i];
        if (strcmp(aitk_yaml_text(e, "name"), name) == 0) {
            aitk_str_appendf(why, "torch opens it by name (%s)", aitk_yaml_text(e, "source"));
            return true;
        }
    }
    return false;
}
