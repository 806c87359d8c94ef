/* torch's own preload of the nvidia-* wheels' libraries (torch_preload.h). */
#include "validate/probes/torch_preload.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#ifndef _WIN32
#include <glob.h>
#endif

#include "common/alloc.h"
#include "common/fileio.h"
#include "reports/fields.h"

#ifndef _WIN32
/* torch/__init__.py is about 100 KB; a file far larger is not torch's. */
#define INIT_PY_MAX (4u << 20)
#define PATTERN_END ".so.*[0-9]"
#define MAX_ENTRIES 64

typedef struct preload_entry {
    char folder[64];   /* nvidia/<folder>/lib */
    char pattern[96];  /* libcudart.so.*[0-9] */
    bool optional;     /* required=False on its line: never raises */
} preload_entry;

/* A folder or pattern taken from the source is used in a glob under a
 * site folder: nothing that could leave it. */
static bool safe_word(const char *s, size_t n, bool pattern)
{
    if (n == 0 || (n == 2 && s[0] == '.' && s[1] == '.'))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || (pattern && strchr(".*[]", c));
        if (!ok)
            return false;
    }
    return true;
}

/* The string literal that ends just before `end` (its closing quote at
 * end[-1]), through whitespace and one ':' or ',': the folder of a
 * `"cublas": "libcublas.so.*[0-9]"` or `("cublas", "libcublas.so.*[0-9]")`
 * pair. Returns its length, 0 when there is none. */
static size_t folder_before(const char *text, const char *open_quote, const char **start)
{
    const char *p = open_quote;
    while (p > text && (p[-1] == ' ' || p[-1] == '\t'))
        p--;
    if (p == text || (p[-1] != ':' && p[-1] != ','))
        return 0;
    p--;
    while (p > text && (p[-1] == ' ' || p[-1] == '\t'))
        p--;
    if (p == text || (p[-1] != '"' && p[-1] != '\''))
        return 0;
    const char q = p[-1], *close = p - 1;
    const char *o = close;
    while (o > text && o[-1] != q && o[-1] != '\n')
        o--;
    if (o == text || o[-1] != q)
        return 0;
    *start = o;
    return (size_t)(close - o);
}

/* Every (folder, pattern) pair of the source, in its order. */
static size_t parse_entries(const char *text, preload_entry *e, size_t max)
{
    size_t count = 0;
    const size_t end_len = strlen(PATTERN_END);
    for (const char *p = text; count < max && (p = strstr(p, PATTERN_END)) != NULL;
         p += end_len) {
        const char q = p[end_len];
        if (q != '"' && q != '\'')
            continue;
        const char *o = p;
        while (o > text && o[-1] != q && o[-1] != '\n')
            o--;
        if (o == text || o[-1] != q)
            continue;
        const size_t plen = (size_t)(p + end_len - o);
        const char *fstart = NULL;
        const size_t flen = folder_before(text, o - 1, &fstart);
        if (!flen || !safe_word(o, plen, true) || !safe_word(fstart, flen, false) ||
            plen >= sizeof e->pattern || flen >= sizeof e->folder)
            continue;
        preload_entry *x = &e[count++];
        memcpy(x->pattern, o, plen);
        x->pattern[plen] = '\0';
        memcpy(x->folder, fstart, flen);
        x->folder[flen] = '\0';
        const char *eol = strchr(p, '\n');
        const char *opt = strstr(p, "required=False");
        x->optional = opt && (!eol || opt < eol);
    }
    return count;
}

/* How `import torch` goes past libtorch_global_deps.so. */
typedef enum preload_path {
    PRELOAD_NONE,       /* nothing preloaded: it loads, or fails for a library not listed */
    PRELOAD_AFTER_FAIL, /* it failed on a listed library: every one listed, each required */
    PRELOAD_BEST_EFFORT /* it loaded libcudart: each listed one found, none required */
} preload_path;

/* Which path torch takes. ld.so's error names the first library it could
 * not find, and torch preloads after a failure only when one of its
 * patterns' stems ("libcudart") is in that error. Releases whose source
 * calls _preload_cuda_deps(required=False) also preload after success,
 * when libcudart is among what libtorch_global_deps.so loaded. */
static aitk_status which_path(const char *torch_lib, const preload_entry *e, size_t n,
                              bool best_effort_after_success, preload_path *out)
{
    *out = PRELOAD_NONE;
    bool yes = false, failed = false, cudart = false;
    aitk_str path = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_path_join(&path, torch_lib, "libtorch_global_deps.so");
    aitk_deps_opts opts = {0};
    aitk_deps *d = NULL;
    aitk_dep_tree tree = {0};
    aitk_status st = aitk_str_status(&path);
    if (!st)
        st = aitk_deps_new(&opts, &d, &err);
    aitk_status ast = st ? st : aitk_deps_analyze(d, path.ptr, &tree, &err);
    if (ast == AITK_E_NOMEM)
        st = ast;
    for (size_t i = 1; !ast && i < tree.count; i++) {
        const aitk_dep_node *node = &tree.nodes[i];
        cudart |= node->path && strncmp(node->name, "libcudart.so", 12) == 0;
        /* What a library opens at run time is not part of its load. */
        if (failed || node->repeat || node->state != AITK_DEP_NOT_FOUND ||
            aitk_dep_tree_opened(&tree, i))
            continue;
        failed = true; /* the first failure is the one the error names */
        for (size_t k = 0; k < n && !yes; k++) {
            char stem[sizeof e->pattern];
            snprintf(stem, sizeof stem, "%.*s", (int)strcspn(e[k].pattern, "."), e[k].pattern);
            yes = stem[0] && strstr(node->name, stem) != NULL;
        }
    }
    if (!ast && !failed && !aitk_dep_tree_problems(&tree) && cudart && best_effort_after_success)
        *out = PRELOAD_BEST_EFFORT;
    else if (!ast && yes)
        *out = PRELOAD_AFTER_FAIL;
    if (!ast)
        aitk_dep_tree_free(&tree);
    aitk_deps_free(d);
    aitk_str_free(&path);
    aitk_str_free(&err);
    return st;
}

/* The first match of `pattern` below <site>/nvidia/<folder>/lib, sorted
 * (torch takes glob's first). */
static aitk_status glob_first(const char *site, const char *folder, const char *pattern,
                              aitk_str *out)
{
    aitk_str pat = AITK_STR_INIT;
    aitk_str_appendf(&pat, "%s/nvidia/%s/lib/%s", site, folder, pattern);
    if (aitk_str_status(&pat))
        return AITK_E_NOMEM;
    glob_t g;
    aitk_status st = AITK_OK;
    if (glob(pat.ptr, 0, NULL, &g) == 0) {
        if (g.gl_pathc)
            st = aitk_str_append(out, g.gl_pathv[0]);
        globfree(&g);
    }
    aitk_str_free(&pat);
    return st;
}

/* Where torch finds one library: the first site folder holding it under
 * nvidia/<folder>/lib, or (releases that build for CUDA 13, whose wheels
 * share one folder) nvidia/cu<major>/lib. */
static aitk_status find_one(const cJSON *sites, const preload_entry *e, const char *cu_folder,
                            aitk_str *out)
{
    const cJSON *site;
    aitk_status st = AITK_OK;
    cJSON_ArrayForEach(site, sites)
    {
        const char *dir = aitk_field_str(site, "path");
        if (!*dir)
            continue;
        st = glob_first(dir, e->folder, e->pattern, out);
        if (!st && !out->len && cu_folder)
            st = glob_first(dir, cu_folder, e->pattern, out);
        if (st || out->len)
            break;
    }
    return st;
}

static bool listed(const aitk_strlist *l, const char *path)
{
    const char *base = aitk_path_last_separator(path);
    base = base ? base + 1 : path;
    for (size_t i = 0; i < l->count; i++) {
        const char *b = aitk_path_last_separator(l->items[i]);
        if (strcmp(b ? b + 1 : l->items[i], base) == 0)
            return true;
    }
    return false;
}

/* The preloaded libraries and what each brings in with it (libcublas.so.12
 * its libcublasLt.so.12, through its own RUNPATH): every object loaded then
 * is one a later link can bind to. Each is walked as loaded after the ones
 * before it. One that would not load (a link not found) makes torch's
 * ctypes.CDLL raise, and import fail: nothing is added, `why_not` says so. */
static aitk_status with_their_links(const aitk_strlist *pre, bool best_effort,
                                    aitk_strlist *out, aitk_str *why_not)
{
    bool stopped = false;
    aitk_status st = AITK_OK;
    aitk_str err = AITK_STR_INIT;
    aitk_strlist loaded = {0};
    for (size_t k = 0; !st && !why_not->len && !stopped && k < pre->count; k++) {
        aitk_deps_opts opts = {.preloaded = loaded, .preloaded_by = AITK_TORCH_PRELOADED_BY};
        aitk_deps *d = NULL;
        aitk_dep_tree tree = {0};
        st = aitk_deps_new(&opts, &d, &err);
        aitk_status ast = st ? st : aitk_deps_analyze(d, pre->items[k], &tree, &err);
        if (ast == AITK_E_NOMEM)
            st = ast;
        else if ((ast || aitk_dep_tree_problems(&tree)) && best_effort)
            stopped = true; /* its OSError ends the preloading, quietly */
        else if (ast || aitk_dep_tree_problems(&tree))
            st = aitk_str_appendf(why_not, "torch/__init__.py loads %s by path and the "
                                           "loader would refuse it (`aitk-validate deps %s`)",
                                  pre->items[k], pre->items[k]);
        /* What a library opens at run time is not loaded with it. */
        for (size_t i = 0; !st && !why_not->len && !stopped && i < tree.count; i++) {
            const aitk_dep_node *n = &tree.nodes[i];
            if (n->path && !n->repeat && !aitk_dep_tree_opened(&tree, i) &&
                !listed(&loaded, n->path))
                st = aitk_strlist_add(&loaded, n->path);
        }
        if (!ast)
            aitk_dep_tree_free(&tree);
        aitk_deps_free(d);
    }
    for (size_t k = 0; !st && !why_not->len && k < loaded.count; k++)
        st = aitk_strlist_add(out, loaded.items[k]);
    aitk_strlist_free(&loaded);
    aitk_str_free(&err);
    return st;
}

aitk_status aitk_torch_preloads(const char *torch_lib, const cJSON *python_env,
                                aitk_strlist *out, aitk_str *why_not)
{
    aitk_str init = AITK_STR_INIT;
    const char *sep = aitk_path_last_separator(torch_lib);
    if (!sep)
        return AITK_OK;
    aitk_str_appendn(&init, torch_lib, (size_t)(sep - torch_lib));
    aitk_str_append(&init, "/__init__.py");
    char *text = NULL;
    size_t len = 0;
    if (aitk_str_status(&init)) {
        aitk_str_free(&init);
        return AITK_E_NOMEM;
    }
    aitk_status rst = aitk_file_read(init.ptr, INIT_PY_MAX, &text, &len, NULL);
    aitk_str_free(&init);
    if (rst == AITK_E_NOMEM)
        return rst;
    if (rst)
        return AITK_OK;
    preload_entry *e = aitk_calloc(MAX_ENTRIES, sizeof *e);
    if (!e) {
        aitk_free(text);
        return AITK_E_NOMEM;
    }
    const size_t n = parse_entries(text, e, MAX_ENTRIES);
    /* Releases for CUDA 13 also look in nvidia/cu<major>/lib
     * (_get_cuda_dep_paths); older ones have no such line. */
    char cu_folder[16] = "";
    const char *cuda = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(python_env, "torch"), "cuda"));
    if (strstr(text, "f\"cu{") && cuda && cuda[0] >= '1' && cuda[0] <= '9')
        snprintf(cu_folder, sizeof cu_folder, "cu%.*s", (int)strcspn(cuda, "."), cuda);
    const bool after_success = strstr(text, "_preload_cuda_deps(required=False)") != NULL;
    aitk_free(text);
    preload_path path = PRELOAD_NONE;
    aitk_status st = n ? which_path(torch_lib, e, n, after_success, &path) : AITK_OK;
    const bool best_effort = path == PRELOAD_BEST_EFFORT;
    const cJSON *sites = cJSON_GetObjectItemCaseSensitive(python_env, "site_packages");
    aitk_strlist found = {0};
    aitk_str one = AITK_STR_INIT;
    for (size_t k = 0; !st && path != PRELOAD_NONE && k < n; k++) {
        aitk_str_clear(&one);
        st = find_one(sites, &e[k], cu_folder[0] ? cu_folder : NULL, &one);
        if (!st && one.len)
            st = aitk_strlist_add(&found, one.ptr);
        else if (!st && !best_effort && !e[k].optional && !why_not->len)
            st = aitk_str_appendf(why_not,
                                  "torch/__init__.py would load %s from nvidia/%s/lib of a "
                                  "sys.path folder and finds it in none, so it raises "
                                  "ValueError",
                                  e[k].pattern, e[k].folder);
    }
    if (!st && !why_not->len)
        st = with_their_links(&found, best_effort, out, why_not);
    aitk_strlist_free(&found);
    aitk_str_free(&one);
    aitk_free(e);
    return st;
}
#else
aitk_status aitk_torch_preloads(const char *torch_lib, const cJSON *python_env,
                                aitk_strlist *out, aitk_str *why_not)
{
    /* Windows: torch adds its folders with os.add_dll_directory instead
     * (resolve_windows.c models that). */
    (void)torch_lib;
    (void)python_env;
    (void)out;
    (void)why_not;
    return AITK_OK;
}
#endif
