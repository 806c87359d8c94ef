/* deps.* checks (deps.h). Each failure names the missing link, the chain
 * to it, where the loader looked and the remedy, like `aitk-validate deps`.
 *
 * Which torch: the one in the Python environment the python.* checks chose
 * (so --python and --aitk-dir reach here too); without one, $VIRTUAL_ENV,
 * $CONDA_PREFIX, the user site and the system Python's packages (on Windows,
 * also the per-user python.org installs). */
#include "validate/probes/deps.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#ifndef _WIN32
#include <glob.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#ifndef _WIN32
#include <unistd.h>
#endif

#include "common/alloc.h"
#include "common/libload.h"
#include "common/fileio.h"
#include "common/stop.h"
#include "validate/libdeps/remedies.h"
#include "validate/libdeps/render.h"
#include "validate/probes/deps_dangling.h"
#include "validate/probes/pyenv.h"
#include "validate/probes/torch_preload.h"
#include "validate/libdeps/tree.h"

#define LOAD_TIMEOUT_MS 120000

#ifndef _WIN32
/* lib*.so.N: the soname level, so each library is examined once (not via
 * its lib*.so and lib*.so.N.M.K aliases too). */
static bool soname_file(const char *n)
{
    const char *so = strstr(n, ".so.");
    if (strncmp(n, "lib", 3) != 0 || !so || !so[4])
        return false;
    for (const char *p = so + 4; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* lib*.so with no lib*.so.N beside it: torch's own libraries
 * (libtorch_cuda.so, libc10.so) carry no version suffix. */
static bool plain_so(const char *n, const aitk_strlist *names)
{
    size_t len = strlen(n);
    if (strncmp(n, "lib", 3) != 0 || len < 4 || strcmp(n + len - 3, ".so") != 0)
        return false;
    for (size_t i = 0; i < names->count; i++)
        if (strncmp(names->items[i], n, len) == 0 && names->items[i][len] == '.' &&
            soname_file(names->items[i]))
            return false;
    return true;
}
#endif

/* What this platform's loader loads: *.dll on Windows, lib*.so* elsewhere. */
static bool native_library_name(const char *n)
{
#ifdef _WIN32
    size_t len = strlen(n);
    return len > 4 && strcasecmp(n + len - 4, ".dll") == 0; /* Windows names ignore case */
#else
    return strncmp(n, "lib", 3) == 0 && strstr(n, ".so") != NULL;
#endif
}

/* What the libraries of one folder add up to. */
typedef struct dir_tally {
    aitk_str observed, remedy, sources, dangling_names;
    /* What the process loads by path before the folder's libraries (torch's
     * preload), and why it would not when it tries and cannot. */
    const aitk_strlist *preloaded;
    const char *preload_failure;
    size_t bad, unreadable, skipped, not_library, python_ext, inside_needer, dangling;
    /* Libraries with trouble under a library opened at run time
     * (opened.yaml): import works, the first call needing it fails. */
    size_t run_time;
    size_t driver_only; /* of `bad`: those whose every problem is a driver library not found */
} dir_tally;

/* One library of the folder between the static walk and the loader: its
 * record, its static problems, and the folder's libraries it names in
 * DT_NEEDED (its direct links, as written). */
typedef struct folder_lib {
    cJSON *o;
    size_t problems;
    bool analyzed, dangling;
    aitk_strlist needs;
} folder_lib;

static const char *base_name(const char *path)
{
    const char *s = aitk_path_last_separator(path);
    return s ? s + 1 : path;
}

/* Whether every problem of the tree is one of the NVIDIA driver's own
 * libraries that was not found: missing on a machine with no driver, which
 * gpu.nvml and gpu.cuda_driver tell first. */
static bool only_driver_missing(const aitk_dep_tree *tree, const aitk_remedies *rem)
{
    for (size_t k = 0; k < tree->count; k++) {
        const aitk_dep_node *n = &tree->nodes[k];
        if (n->repeat || !aitk_dep_state_is_problem(n->state) || aitk_dep_tree_deferred(tree, k))
            continue;
        if (n->state != AITK_DEP_NOT_FOUND || !aitk_remedies_of_driver(rem, base_name(n->name)))
            return false;
    }
    return !aitk_dep_tree_load_problem(tree);
}

/* The next library of the folder, from `from` on, that names libs[i] as a
 * direct link, or AITK_DEP_NONE. */
static size_t needer_of(const aitk_strlist *libs, const folder_lib *fl, size_t i, size_t from)
{
    const char *name = base_name(libs->items[i]);
    for (size_t j = from; j < libs->count; j++)
        for (size_t k = 0; j != i && k < fl[j].needs.count; k++)
            if (strcmp(fl[j].needs.items[k], name) == 0)
                return j;
    return AITK_DEP_NONE;
}

/* The loader's verdict on one library, in a process that first loads
 * what the folder's users load before it (t->preloaded). */
static aitk_status load_probe(const char *path, const dir_tally *t, aitk_libload *r,
                              aitk_str *err)
{
    if (!t->preloaded || !t->preloaded->count)
        return aitk_libload_probe(path, NULL, LOAD_TIMEOUT_MS, r, err);
    return aitk_libload_probe_after(path, (const char *const *)t->preloaded->items,
                                    t->preloaded->count, LOAD_TIMEOUT_MS, r, err);
}

/* A library refused alone for an undefined symbol may take that symbol
 * from its needer's other links: torch 2.11's and 2.15's libtorch_nvshmem.so
 * uses c10::cuda's allocator from libc10_cuda.so, which it does not list,
 * and is only ever loaded as a link of libtorch_cuda.so, which lists both
 * (glibc searches the dlopen'd object's whole dependency list for each
 * symbol, elf/dl-lookup.c). It is broken only when that needer does not
 * load either; the needer's own refusal is then its own finding. Loaded
 * alone through Python's ctypes the same file gives the same error, and
 * libtorch_cuda.so loads: the oracle this follows. */
static aitk_status load_inside_needer(const char *needer, const dir_tally *t, cJSON *o,
                                      bool *ok)
{
    aitk_libload r;
    aitk_str err = AITK_STR_INIT;
    *ok = false;
    aitk_status st = load_probe(needer, t, &r, &err);
    aitk_str_free(&err);
    if (st) /* a stop request: the caller's verdict is not known either */
        return st == AITK_E_NOMEM || st == AITK_E_INTERRUPTED ? st : AITK_OK;
    if (r.loaded) {
        *ok = true;
        cJSON_AddStringToObject(o, "loaded_inside", needer);
    }
    aitk_libload_free(&r);
    return AITK_OK;
}

/* Beyond --quick the real loader confirms (it runs constructors, which is
 * what the standard level allows), in a process of its own per library
 * (common/libload.h): loaded here, one folder's libraries would be bound
 * by the next folder's under the same soname. Its own words go beside the
 * static diagnosis, and a refusal the static view missed fails; a refusal
 * for Python's C-API symbols only is an extension module's nature, and one
 * for a symbol a needer's other links give is not a breakage either. */
static aitk_status load_confirm(const aitk_strlist *libs, const folder_lib *fl, size_t i,
                                dir_tally *t)
{
    const char *path = libs->items[i];
    const size_t problems = fl[i].problems;
    cJSON *o = fl[i].o;
    aitk_libload r;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = load_probe(path, t, &r, &err);
    if (st == AITK_E_NOMEM || st) {
        if (st != AITK_E_NOMEM)
            cJSON_AddStringToObject(o, "load_skipped", aitk_str_cstr(&err));
        aitk_str_free(&err);
        return st == AITK_E_NOMEM ? st : AITK_OK;
    }
    cJSON_AddStringToObject(o, "load", r.loaded ? "loaded" : aitk_str_cstr(&r.error));
    bool inside = false;
    if (!r.loaded && !r.python_ext && !problems &&
        strstr(aitk_str_cstr(&r.error), "undefined symbol: "))
        for (size_t n = needer_of(libs, fl, i, 0); !st && !inside && n != AITK_DEP_NONE;
             n = needer_of(libs, fl, i, n + 1))
            st = load_inside_needer(libs->items[n], t, o, &inside);
    if (st == AITK_E_INTERRUPTED) {
        /* Refused alone, not asked inside its needer: no verdict, and none
         * reported as a broken library. */
        st = cJSON_AddStringToObject(o, "load_skipped", aitk_stop_words()) ? AITK_OK
                                                                            : AITK_E_NOMEM;
    } else if (r.python_ext) {
        t->python_ext++;
        cJSON_AddBoolToObject(o, "python_extension", 1);
    } else if (inside) {
        t->inside_needer++;
    } else if (!r.loaded) {
        if (!problems)
            t->bad++;
        aitk_str_appendf(&t->observed, "%sloader: %s", t->observed.len ? "; " : "",
                         aitk_str_cstr(&r.error));
    }
    aitk_libload_free(&r);
    aitk_str_free(&err);
    return st;
}

/* A remedy written for any CUDA variant ("--index-url .../cu<NNN>") names
 * the variant when the selected environment's torch tells it (cu124). */
static void name_variant(const cJSON *env, aitk_str *remedy)
{
    const cJSON *sel = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(env, "python"),
                                         "environments"), 0);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(sel, "torch"), "variant");
    const char *at = remedy->len ? strstr(aitk_str_cstr(remedy), "cu<NNN>") : NULL;
    if (!at || !cJSON_IsString(v) || strncmp(v->valuestring, "cu", 2) != 0)
        return;
    aitk_str out = AITK_STR_INIT;
    for (const char *p = aitk_str_cstr(remedy); (at = strstr(p, "cu<NNN>")) != NULL; p = at + 7) {
        aitk_str_appendn(&out, p, (size_t)(at - p));
        aitk_str_append(&out, v->valuestring);
        if (!strstr(at + 7, "cu<NNN>"))
            aitk_str_append(&out, at + 7);
    }
    if (!aitk_str_status(&out)) {
        aitk_str_clear(remedy);
        aitk_str_append(remedy, aitk_str_cstr(&out));
    }
    aitk_str_free(&out);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static aitk_status list_libs(const char *dir, aitk_strlist *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return AITK_E_NOTFOUND;
    aitk_strlist names = {0};
    aitk_status st = AITK_OK;
    for (struct dirent *e; !st && (e = readdir(d));)
        if (native_library_name(e->d_name))
            st = aitk_strlist_add(&names, e->d_name);
    closedir(d);
    for (size_t i = 0; !st && i < names.count; i++) {
        const char *n = names.items[i];
#ifndef _WIN32
        if (!soname_file(n) && !plain_so(n, &names))
            continue;
#endif
        aitk_str p = AITK_STR_INIT;
        aitk_str_appendf(&p, "%s/%s", dir, n);
        st = aitk_str_status(&p) ? AITK_E_NOMEM : aitk_strlist_add(out, p.ptr);
        aitk_str_free(&p);
    }
    aitk_strlist_free(&names);
    if (out->count)
        qsort(out->items, out->count, sizeof *out->items, cmp_str);
    return st;
}

/* One library of the folder: its record under `arr` and what it adds to
 * the tally. Only running out of memory ends the walk. */
static aitk_status examine_library(aitk_deps *d, const aitk_remedies *rem, const char *path,
                                   cJSON *arr, dir_tally *t, folder_lib *fl, aitk_str *err)
{
    aitk_dep_tree tree;
    aitk_str_clear(err);
    if (aitk_dangling_link(path, err)) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", path);
        cJSON_AddStringToObject(o, "dangling_link", aitk_str_cstr(err));
        cJSON_AddItemToArray(arr, o);
        fl->o = o;
        fl->dangling = true;
        t->dangling++;
        aitk_str_appendf(&t->dangling_names, "%s%s -> %s", t->dangling_names.len ? ", " : "",
                         base_name(path), aitk_str_cstr(err));
        return aitk_str_status(&t->dangling_names) ? AITK_E_NOMEM : AITK_OK;
    }
    aitk_status ast = aitk_deps_analyze(d, path, &tree, err);
    if (ast == AITK_E_NOMEM)
        return ast;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddItemToArray(arr, o);
    fl->o = o;
    if (ast == AITK_E_UNSUPPORTED && tree.not_library != AITK_DEP_OTHER_NONE) {
        /* a linker script or an archive named like a library: libdeps'
         * one rule (aitk_deps_not_library_is_problem), as for `deps` */
        t->skipped++;
        cJSON_AddStringToObject(o, "skipped", aitk_str_cstr(err));
        return AITK_OK;
    }
    if (ast) {
        t->unreadable++;
        cJSON_AddStringToObject(o, "error", aitk_str_cstr(err));
        aitk_str_appendf(&t->observed, "%s%s", t->observed.len ? "; " : "", aitk_str_cstr(err));
        return AITK_OK;
    }
    size_t p = aitk_dep_tree_problems(&tree);
    cJSON_AddNumberToObject(o, "links", (double)(tree.count - 1));
    cJSON_AddNumberToObject(o, "problems", (double)p);
    if (tree.not_library) /* named like a library, and none: empty, a Git LFS pointer */
        cJSON_AddStringToObject(o, "not_library", aitk_dep_other_name(tree.not_library));
    aitk_status st = AITK_OK;
    if (p) {
        if (tree.not_library)
            t->not_library++;
        else
            t->bad++;
        if (!tree.not_library && only_driver_missing(&tree, rem))
            t->driver_only++;
        st = aitk_deps_describe_problems(&tree, rem, &t->observed, &t->remedy, &t->sources);
    }
    size_t at_run_time = 0;
    if (!st)
        st = aitk_deps_describe_run_time_problems(&tree, rem, &t->observed, &t->remedy,
                                                  &t->sources, &at_run_time);
    if (at_run_time) {
        cJSON_AddNumberToObject(o, "problems_at_run_time", (double)at_run_time);
        t->run_time++;
    }
    fl->analyzed = true;
    fl->problems = p;
    for (size_t k = 1; !st && k < tree.count; k++)
        if (tree.nodes[k].parent == 0 && tree.nodes[k].name && !tree.nodes[k].opened)
            st = aitk_strlist_add(&fl->needs, tree.nodes[k].name);
    aitk_dep_tree_free(&tree);
    return st;
}

/* A dangling link is broken when something needs it: a library of the
 * folder lists it, torch's Python extension (torch/_C) lists it, or torch
 * opens it by name (deps.yaml). Such a link fails with the reason; the
 * others are leftovers nothing opens. */
static aitk_status judge_dangling(aitk_deps *d, const char *dir, const aitk_strlist *libs,
                                  const folder_lib *fl, dir_tally *t)
{
    if (!t->dangling)
        return AITK_OK;
    aitk_strlist ext = {0};
    aitk_str why = AITK_STR_INIT, load_error = AITK_STR_INIT;
    aitk_yaml_doc *data = NULL;
    aitk_status st = aitk_dangling_data_load(&data, &load_error);
    st = st == AITK_E_NOMEM ? st : aitk_dangling_extension_needs(d, dir, &ext);
    for (size_t i = 0; !st && i < libs->count; i++) {
        if (!fl[i].dangling)
            continue;
        const char *name = base_name(libs->items[i]);
        size_t needer = needer_of(libs, fl, i, 0);
        bool by_ext = false;
        for (size_t k = 0; k < ext.count; k++)
            by_ext |= strcmp(ext.items[k], name) == 0;
        aitk_str_clear(&why);
        if (needer != AITK_DEP_NONE)
            aitk_str_appendf(&why, "%s lists it as a link", base_name(libs->items[needer]));
        else if (by_ext)
            aitk_str_append(&why, "torch's Python extension (torch/_C) lists it as a link");
        else if (!aitk_dangling_opened_by_name(data, aitk_str_cstr(&load_error), name, &why))
            continue;
        t->bad++;
        aitk_str_appendf(&t->observed, "%s%s -> %s: the link's target does not exist, and %s",
                         t->observed.len ? "; " : "", name,
                         cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fl[i].o,
                                                                               "dangling_link")),
                         aitk_str_cstr(&why));
        st = aitk_str_status(&t->observed);
    }
    aitk_strlist_free(&ext);
    aitk_str_free(&why);
    aitk_str_free(&load_error);
    aitk_yaml_free(data);
    return st;
}

/* The check's message: how many libraries, and what became of them. */
static void summarize(aitk_str *msg, const char *dir, size_t examined, const dir_tally *t)
{
    aitk_str_appendf(msg, "%zu librar%s in %s examined statically", examined,
                     examined == 1 ? "y" : "ies", dir);
    if (t->bad || t->unreadable)
        aitk_str_appendf(msg, "; %zu with a broken dependency, %zu unreadable", t->bad,
                         t->unreadable);
    if (t->not_library)
        aitk_str_appendf(msg, "; %zu named like a library but not one (empty, text, a "
                              "Git LFS pointer)", t->not_library);
    if (t->run_time)
        aitk_str_appendf(msg, "; %zu with a broken library among those opened at run time "
                              "(the first call needing it fails, not the import)",
                         t->run_time);
    if (t->skipped)
        aitk_str_appendf(msg, "; %zu skipped, not shared libraries (linker scripts, "
                              "archives)", t->skipped);
    if (t->preload_failure && (t->bad || t->unreadable))
        aitk_str_appendf(msg, "; %s", t->preload_failure);
    if (t->python_ext)
        aitk_str_appendf(msg, "; %zu Python extension module%s (Python's own symbols "
                              "come from the interpreter that imports it: not loadable "
                              "alone, not broken)", t->python_ext, t->python_ext == 1 ? "" : "s");
    if (t->inside_needer)
        aitk_str_appendf(msg, "; %zu loaded only as a link of another library here, whose "
                              "other links give it symbols it does not list (not loadable "
                              "alone, and loads inside that library: not broken)",
                         t->inside_needer);
    /* Said as harmless only when nothing failed (judge_dangling fails a
     * needed one) and there were libraries to judge. */
    if (t->dangling)
        aitk_str_appendf(msg, "; %zu dangling link%s, whose target does not exist (%s)%s",
                         t->dangling, t->dangling == 1 ? "" : "s",
                         aitk_str_cstr(&t->dangling_names),
                         t->bad || !examined ? ""
                         : t->dangling == 1
                             ? ": no library's links lead there, so the loader never opens it "
                               "(a package's leftover, not a broken library)"
                             : ": no library's links lead there, so the loader never opens them "
                               "(a package's leftovers, not broken libraries)");
}

static aitk_status add_dir_check(aitk_run_ctx *ctx, aitk_check *c, const char *dir,
                                 size_t count, dir_tally *t)
{
    aitk_str msg = AITK_STR_INIT;
    const size_t examined = count - t->skipped - t->dangling;
    summarize(&msg, dir, examined, t);
    name_variant(ctx->env, &t->remedy);
    /* A folder of nothing but dangling links holds no library at all. */
    c->status = t->bad || t->unreadable || t->not_library || (t->dangling && !examined)
                    ? AITK_CHECK_FAIL
                : t->run_time                             ? AITK_CHECK_WARN
                : examined                                ? AITK_CHECK_PASS
                                                          : AITK_CHECK_SKIP;
    c->observed = t->observed.len ? t->observed.ptr
                  : examined      ? "all dependencies resolved"
                  : t->dangling   ? "every library here is a dangling link"
                                  : "";
    c->message = aitk_str_cstr(&msg);
    /* Nothing wrong here but the driver's absence, told by the gpu checks. */
    if (c->status == AITK_CHECK_FAIL && t->bad && t->driver_only == t->bad && !t->unreadable &&
        !t->not_library && !t->dangling && !t->run_time)
        c->follows = "gpu.cuda_driver";
    c->remedy = t->remedy.len ? t->remedy.ptr
                : c->status == AITK_CHECK_FAIL
                    ? "Run `aitk-validate deps --all` on the failing library to see the "
                      "whole tree, then install the package that ships the missing library."
                    : "";
    c->source = t->sources.len ? t->sources.ptr
#ifdef _WIN32
                               : "the Windows DLL search order torch uses (LoadLibraryExW with "
                                 "LOAD_LIBRARY_SEARCH_DEFAULT_DIRS); pytorch/pytorch torch/__init__.py, _load_dll_libraries";
#else
                               : "glibc ld.so search order (elf/dl-load.c; the ld.so(8) manual page)";
#endif
    aitk_status st = aitk_str_status(&msg) ? AITK_E_NOMEM : aitk_checklist_add(&ctx->checks, c);
    aitk_str_free(&msg);
    return st;
}

/* Every library of `libs` through one resolver, then the check; `pre`:
 * what the process loads before them (torch_preload.h), or NULL. */
static aitk_status check_libraries(aitk_run_ctx *ctx, aitk_check *c, const char *dir,
                                   const aitk_strlist *libs, cJSON *sec,
                                   const aitk_strlist *pre, const char *pre_failure)
{
    aitk_deps_opts opts = {0};
    if (pre && pre->count) {
        opts.preloaded = *pre;
        opts.preloaded_by = AITK_TORCH_PRELOADED_BY;
    }
    aitk_str win_root = AITK_STR_INIT, err = AITK_STR_INIT;
    /* Running on Windows: resolve against this system's own folders. */
    if (aitk_deps_native_windows_root(&win_root) == AITK_OK)
        opts.windows_root = win_root.ptr;
    aitk_deps *d = NULL;
    aitk_remedies *rem = NULL;
    aitk_status st = AITK_OK;
    if (aitk_remedies_load(&rem, &err) == AITK_E_NOMEM)
        st = AITK_E_NOMEM;
    if (!st)
        st = aitk_deps_new(&opts, &d, &err);
    cJSON *arr = cJSON_AddArrayToObject(sec, "libraries");
    dir_tally t = {.observed = AITK_STR_INIT, .remedy = AITK_STR_INIT, .sources = AITK_STR_INIT,
                   .dangling_names = AITK_STR_INIT, .preloaded = pre,
                   .preload_failure = pre_failure && *pre_failure ? pre_failure : NULL};
    folder_lib *fl = libs->count ? aitk_calloc(libs->count, sizeof *fl) : NULL;
    if (libs->count && !fl && !st)
        st = AITK_E_NOMEM;
    /* Every library's static walk first, so the loader's pass knows which
     * library of the folder links which. */
    for (size_t i = 0; !st && i < libs->count; i++)
        st = examine_library(d, rem, libs->items[i], arr, &t, &fl[i], &err);
    if (!st)
        st = judge_dangling(d, dir, libs, fl, &t);
    for (size_t i = 0; !st && ctx->level >= AITK_LEVEL_STANDARD && i < libs->count; i++) {
        if (!fl[i].analyzed)
            continue;
        st = load_confirm(libs, fl, i, &t);
    }
    if (!st)
        st = add_dir_check(ctx, c, dir, libs->count, &t);
    for (size_t i = 0; fl && i < libs->count; i++)
        aitk_strlist_free(&fl[i].needs);
    aitk_free(fl);
    aitk_deps_free(d);
    aitk_remedies_free(rem);
    aitk_str_free(&win_root);
    aitk_str_free(&t.observed);
    aitk_str_free(&t.remedy);
    aitk_str_free(&t.sources);
    aitk_str_free(&t.dangling_names);
    aitk_str_free(&err);
    return st;
}

static aitk_status check_dir(aitk_run_ctx *ctx, const char *id, const char *title,
                             const char *dir, cJSON *env, const aitk_strlist *pre,
                             const char *pre_failure)
{
    aitk_strlist libs = {0};
    aitk_status st = list_libs(dir, &libs);
    aitk_check c = {.id = id, .category = "deps", .title = title,
                    .expected = "every dependency resolvable by the loader"};
    cJSON *sec = cJSON_AddObjectToObject(env, strrchr(id, '.') + 1);
    cJSON_AddStringToObject(sec, "dir", dir);
    if (st == AITK_E_NOTFOUND || (!st && libs.count == 0)) {
        c.status = AITK_CHECK_SKIP;
        c.observed = "";
        c.message = "no libraries found there";
        c.source = "";
        st = aitk_checklist_add(&ctx->checks, &c);
    } else if (!st) {
        st = check_libraries(ctx, &c, dir, &libs, sec, pre, pre_failure);
    }
    aitk_strlist_free(&libs);
    return st;
}

aitk_status aitk_deps_check_dir(aitk_run_ctx *ctx, const char *id, const char *title,
                                const char *dir, cJSON *env)
{
    return check_dir(ctx, id, title, dir, env, NULL, NULL);
}

#ifdef _WIN32
static bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* <parent>\Python3*\Lib\site-packages\torch\lib (per-user python.org
 * installs) or <parent>\Python3*\site-packages\torch\lib (the user site,
 * %APPDATA%\Python\Python3XX). */
static aitk_status find_in_pythons(const char *parent, const char *below, aitk_str *out)
{
    DIR *d = parent ? opendir(parent) : NULL;
    if (!d)
        return AITK_E_NOTFOUND;
    aitk_status st = AITK_E_NOTFOUND;
    for (struct dirent *e; st == AITK_E_NOTFOUND && (e = readdir(d));) {
        if (strncmp(e->d_name, "Python3", 7) != 0)
            continue;
        aitk_str p = AITK_STR_INIT;
        aitk_str_appendf(&p, "%s\\%s\\%s", parent, e->d_name, below);
        if (aitk_str_status(&p))
            st = AITK_E_NOMEM;
        else if (is_dir(p.ptr))
            st = aitk_str_append(out, p.ptr);
        aitk_str_free(&p);
    }
    closedir(d);
    return st;
}

/* The first torch\lib folder of the active environment, if any: a venv or
 * conda env (<prefix>\Lib\site-packages), the user site, then per-user
 * python.org installs. */
static aitk_status find_torch(aitk_str *out)
{
    const char *prefixes[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX")};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        if (!prefixes[i] || !*prefixes[i])
            continue;
        aitk_str p = AITK_STR_INIT;
        aitk_str_appendf(&p, "%s\\Lib\\site-packages\\torch\\lib", prefixes[i]);
        if (aitk_str_status(&p))
            return AITK_E_NOMEM;
        if (is_dir(p.ptr)) {
            aitk_status st = aitk_str_append(out, p.ptr);
            aitk_str_free(&p);
            return st;
        }
        aitk_str_free(&p);
    }
    aitk_str parent = AITK_STR_INIT;
    aitk_status st = AITK_E_NOTFOUND;
    /* The user site, unless PYTHONNOUSERSITE turns it off (site.py). */
    if (getenv("APPDATA") && !aitk_pyenv_var("PYTHONNOUSERSITE")) {
        aitk_str_appendf(&parent, "%s\\Python", getenv("APPDATA"));
        st = find_in_pythons(parent.ptr, "site-packages\\torch\\lib", out);
    }
    if (st == AITK_E_NOTFOUND && getenv("LOCALAPPDATA")) {
        aitk_str_clear(&parent);
        aitk_str_appendf(&parent, "%s\\Programs\\Python", getenv("LOCALAPPDATA"));
        st = find_in_pythons(parent.ptr, "Lib\\site-packages\\torch\\lib", out);
    }
    aitk_str_free(&parent);
    return st;
}

static const char *torch_places =
    "no torch install found in %VIRTUAL_ENV%, %CONDA_PREFIX%, the user site "
    "(%APPDATA%\\Python) or per-user Python installs (%LOCALAPPDATA%\\Programs\\Python)";

/* The CUDA toolkit's DLLs: %CUDA_PATH%\bin, as the installer sets it. */
static const char *default_cuda_dir(aitk_str *buf)
{
    const char *cp = getenv("CUDA_PATH");
    if (!cp || !*cp)
        return "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA";
    aitk_str_appendf(buf, "%s\\bin", cp);
    return aitk_str_cstr(buf);
}
#else
/* The first torch/lib folder of the active environment, if any. */
static aitk_status find_torch(aitk_str *out)
{
    /* The user site (site.py): $PYTHONUSERBASE, else ~/.local; none at all
     * under PYTHONNOUSERSITE, where Python imports nothing from it. */
    const char *home = getenv("HOME");
    const bool user_site = !aitk_pyenv_var("PYTHONNOUSERSITE");
    const char *user_base = aitk_pyenv_var("PYTHONUSERBASE");
    const char *prefixes[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX"),
                              user_site ? (user_base ? user_base : home) : NULL, "/usr/local",
                              "/usr"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        if (!prefixes[i] || !*prefixes[i])
            continue;
        aitk_str pat = AITK_STR_INIT;
        aitk_str_appendf(&pat, "%s%s/lib/python3*/*-packages/torch/lib", prefixes[i],
                         i == 2 && !user_base ? "/.local" : "");
        if (aitk_str_status(&pat))
            return AITK_E_NOMEM;
        glob_t g;
        int rc = glob(pat.ptr, GLOB_NOSORT, NULL, &g);
        aitk_str_free(&pat);
        if (rc == 0 && g.gl_pathc > 0) {
            aitk_str_append(out, g.gl_pathv[0]);
            globfree(&g);
            return aitk_str_status(out);
        }
        if (rc == 0)
            globfree(&g);
    }
    return AITK_E_NOTFOUND;
}

static const char *torch_places =
    "no torch install found in $VIRTUAL_ENV, $CONDA_PREFIX, the user site (~/.local or "
    "$PYTHONUSERBASE, unless PYTHONNOUSERSITE is set), /usr/local or /usr";

static const char *default_cuda_dir(aitk_str *buf)
{
    (void)buf;
    return "/usr/local/cuda/lib64";
}
#endif

/* torch/lib of the Python environment the python.* checks chose (--python,
 * an active venv or conda env, ./.venv, ./venv, --aitk-dir's, python3 on PATH):
 * the install ai-toolkit will load, found the same way for every check. The
 * python provider runs before this one (validate/registry.c). */
static const cJSON *selected_env(const cJSON *env)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(env, "python"), "environments"),
                              0);
}

static aitk_status torch_of_selected_env(const cJSON *env, aitk_str *out)
{
    const cJSON *torch = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(selected_env(env), "packages"), "torch");
    const cJSON *site = cJSON_GetObjectItemCaseSensitive(torch, "site");
    if (!cJSON_IsString(site) || !*site->valuestring)
        return AITK_E_NOTFOUND;
    aitk_str lib = AITK_STR_INIT;
    aitk_path_join(&lib, site->valuestring, "torch/lib");
    if (aitk_str_status(&lib))
        return AITK_E_NOMEM;
    struct stat sb;
    aitk_status st = stat(lib.ptr, &sb) == 0 && S_ISDIR(sb.st_mode)
                         ? aitk_str_append(out, lib.ptr)
                         : AITK_E_NOTFOUND;
    aitk_str_free(&lib);
    return st;
}

aitk_status aitk_deps_checks(aitk_run_ctx *ctx)
{
    cJSON *env = cJSON_AddObjectToObject(ctx->env, "deps");
    if (!env)
        return AITK_E_NOMEM;
    const char *cuda = getenv("AITK_CUDA_LIB_DIR"); /* tests and unusual installs */
    aitk_str cuda_buf = AITK_STR_INIT;
    aitk_status st = aitk_deps_check_dir(ctx, "deps.cuda", "CUDA libraries: dependency tree",
                                         cuda && *cuda ? cuda : default_cuda_dir(&cuda_buf), env);
    aitk_str_free(&cuda_buf);
    if (st)
        return st;
    aitk_str torch = AITK_STR_INIT, pre_failure = AITK_STR_INIT;
    aitk_strlist pre = {0};
    st = torch_of_selected_env(ctx->env, &torch);
    /* torch's own repair when it sits apart from the nvidia-* wheels:
     * known only with the environment's sys.path, so only for its torch. */
    if (!st)
        st = aitk_torch_preloads(torch.ptr, selected_env(ctx->env), &pre, &pre_failure);
    if (st == AITK_E_NOTFOUND)
        st = find_torch(&torch);
    if (st == AITK_E_NOTFOUND) {
        aitk_check c = {.id = "deps.torch", .category = "deps",
                        .title = "torch libraries: dependency tree", .status = AITK_CHECK_SKIP,
                        .observed = "", .expected = "",
                        .message = torch_places,
                        .source = ""};
        st = aitk_checklist_add(&ctx->checks, &c);
    } else if (!st) {
        st = check_dir(ctx, "deps.torch", "torch libraries: dependency tree", torch.ptr, env,
                       &pre, aitk_str_cstr(&pre_failure));
    }
    aitk_str_free(&torch);
    aitk_str_free(&pre_failure);
    aitk_strlist_free(&pre);
    return st;
}
