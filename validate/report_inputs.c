/* Report paths from the command line, folders expanded (see report_inputs.h). */
#include "validate/report_inputs.h"

#include <stdbool.h>
#include <string.h>

#include "common/str.h"
#include "common/alloc.h"
#include "common/fileio.h"

void aitk_report_inputs_free(aitk_report_inputs *l)
{
    aitk_dir_names_free(l->paths, l->count);
    aitk_free(l->in_folder);
    l->paths = NULL;
    l->in_folder = NULL;
    l->count = l->cap = 0;
}

static aitk_status add(aitk_report_inputs *l, const char *path, bool in_folder, aitk_str *err)
{
    if (l->count >= l->max) {
        aitk_str_appendf(err, "%s: more than %zu reports (at %s); name fewer", l->cmd, l->max,
                         path);
        return AITK_E_RANGE;
    }
    if (l->count == l->cap) {
        size_t cap = l->cap;
        char **paths = aitk_grow(l->paths, sizeof *paths, l->count, &cap, 64);
        if (!paths)
            return AITK_E_NOMEM;
        l->paths = paths;
        bool *flags = aitk_realloc(l->in_folder, cap * sizeof *flags);
        if (!flags)
            return AITK_E_NOMEM;
        l->in_folder = flags;
        l->cap = cap;
    }
    if (!(l->paths[l->count] = aitk_strdup(path)))
        return AITK_E_NOMEM;
    l->in_folder[l->count++] = in_folder;
    return AITK_OK;
}

aitk_status aitk_report_inputs_add(aitk_report_inputs *l, const char *path, aitk_str *err)
{
    return add(l, path, false, err);
}

/* Whether file `ids[i]` is one of ids[0..i). */
static bool seen_before(size_t i, const aitk_file_id *ids, const bool *has_id)
{
    for (size_t j = 0; j < i; j++)
        if (has_id[j] && has_id[i] && ids[j].volume == ids[i].volume &&
            ids[j].index == ids[i].index)
            return true;
    return false;
}

void aitk_report_inputs_unique(aitk_report_inputs *l)
{
    aitk_file_id *ids = aitk_calloc(l->count ? l->count : 1, sizeof *ids);
    bool *has_id = aitk_calloc(l->count ? l->count : 1, sizeof *has_id);
    if (ids && has_id) {
        size_t kept = 0;
        for (size_t i = 0; i < l->count; i++) {
            has_id[i] = aitk_file_identity(l->paths[i], &ids[i]) == 0;
            if (seen_before(i, ids, has_id)) {
                aitk_free(l->paths[i]);
                continue;
            }
            l->paths[kept] = l->paths[i];
            l->in_folder[kept++] = l->in_folder[i];
        }
        l->count = kept;
    }
    /* Out of memory, nothing is dropped: a report read twice is a smaller
     * harm than one not read. */
    aitk_free(ids);
    aitk_free(has_id);
}

aitk_status aitk_report_inputs_expand(aitk_report_inputs *l, const char *dir, aitk_str *err)
{
    char **names = NULL;
    size_t n = 0, before = l->count;
    aitk_status st = aitk_dir_names(dir, &names, &n, err);
    aitk_str path = AITK_STR_INIT, inner = AITK_STR_INIT;
    for (size_t i = 0; !st && i < n; i++) {
        aitk_str_clear(&path);
        aitk_str_clear(&inner);
        st = aitk_path_join(&path, dir, names[i]);
        if (st)
            break;
        if (aitk_is_dir(path.ptr)) {
            /* A folder without a report (logs, a cache) is not an error. */
            aitk_file_id id;
            st = aitk_path_join(&inner, path.ptr, "report.json");
            if (!st && !aitk_is_dir(inner.ptr) && aitk_file_identity(inner.ptr, &id) == 0)
                st = add(l, inner.ptr, true, err);
        } else if (aitk_text_ends_with(names[i], ".json") && aitk_is_special_file(path.ptr)) {
            /* A named pipe among the reports would be read as empty at best:
             * said, as any other file there that is no report. */
            aitk_str_appendf(err, "%s: not a regular file (a named pipe, socket or device), "
                                  "so no report", path.ptr);
            st = AITK_E_PARSE;
        } else if (aitk_text_ends_with(names[i], ".json")) {
            st = add(l, path.ptr, true, err);
        }
    }
    if (!st && l->count == before) {
        aitk_str_appendf(err, "%s: no reports in this folder (*.json, or */report.json)", dir);
        st = AITK_E_NOTFOUND;
    }
    aitk_str_free(&path);
    aitk_str_free(&inner);
    aitk_dir_names_free(names, n);
    return st;
}
