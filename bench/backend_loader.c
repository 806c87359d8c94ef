/* The CUDA backend plugin loader (see backend_loader.h): plain C, no CUDA
 * header; it only dlopens, through common/dynload.h. */
#include "bench/backend_loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dynload.h"
#include "common/selfpath.h"

#ifdef _WIN32
#include <windows.h>
#elif defined(__linux__)
#include <unistd.h>
#endif

#ifndef AITK_CUDA_PLUGIN_FILE
#ifdef _WIN32
#define AITK_CUDA_PLUGIN_FILE "aitk_cuda.dll"
#else
#define AITK_CUDA_PLUGIN_FILE "libaitk_cuda.so"
#endif
#endif

bool aitk_backend_plugin_built(void)
{
#ifdef AITK_HAVE_CUDA_PLUGIN
    return true;
#else
    return false;
#endif
}

/* The folder of the running executable, or "" when the platform cannot tell. */
static aitk_status exe_dir(aitk_str *out)
{
    aitk_str self = AITK_STR_INIT, ignored = AITK_STR_INIT;
    aitk_status st = aitk_self_path(&self, &ignored);
    aitk_str_free(&ignored);
    if (st == AITK_E_NOMEM)
        return st;
    char *path = self.ptr;
    char *slash = path ? strrchr(path, '/') : NULL;
#ifdef _WIN32
    char *bslash = path ? strrchr(path, '\\') : NULL;
    if (bslash && (!slash || bslash > slash))
        slash = bslash;
#endif
    if (!st && slash)
        st = aitk_str_appendn(out, path, (size_t)(slash - path));
    else
        st = AITK_OK; /* unknown: no candidates beside the program */
    aitk_str_free(&self);
    return st;
}

aitk_status aitk_backend_plugin_candidates(aitk_str *out)
{
    const char *env = getenv("AITK_CUDA_PLUGIN");
    if (env && *env)
        return aitk_str_append(out, env);
    aitk_str dir = AITK_STR_INIT;
    aitk_status st = exe_dir(&dir);
    if (!st && dir.len)
        st = aitk_str_appendf(out, "%s/%s\n%s/../lib/aitk-validate/%s", dir.ptr,
                              AITK_CUDA_PLUGIN_FILE, dir.ptr, AITK_CUDA_PLUGIN_FILE);
#ifdef AITK_CUDA_PLUGIN_BUILD_PATH
    if (!st)
        st = aitk_str_appendf(out, "%s%s", out->len ? "\n" : "", AITK_CUDA_PLUGIN_BUILD_PATH);
#endif
    aitk_str_free(&dir);
    return st;
}

/* The descriptor member that is not set, or NULL when all are: a plugin
 * built against another kernels/backend.h can leave one zeroed, and calling
 * through it would crash the validator instead of reporting the plugin. */
static const char *missing_descriptor_member(const aitk_backend *b)
{
    if (!b->name)
        return "name";
    if (!b->build)
        return "build";
    if (!b->probe)
        return "probe";
    if (!b->open)
        return "open";
    if (!b->ops)
        return "ops";
    if (!b->synchronize)
        return "synchronize";
    if (!b->mem_info)
        return "mem_info";
    if (!b->workspace_bytes)
        return "workspace_bytes";
    if (!b->last_error)
        return "last_error";
    if (!b->paths)
        return "paths";
    if (!b->close)
        return "close";
    /* collectives is optional (NULL: none), but when present it is whole. */
    if (b->collectives && !b->collectives->peers)
        return "collectives.peers";
    if (b->collectives && !b->collectives->time)
        return "collectives.time";
    if (b->collectives && !b->collectives->close)
        return "collectives.close";
    return NULL;
}

/* The version check, worded for the person who installed the two halves:
 * the usual cause is a plugin left over from another build. */
static aitk_status check_abi(const char *path, const aitk_backend *b, aitk_str *err)
{
    if (b && b->abi_version == AITK_BACKEND_ABI)
        return AITK_OK;
    if (b)
        aitk_str_appendf(err, "%s implements plugin ABI %d; this aitk-validate needs ABI %d",
                         path, b->abi_version, AITK_BACKEND_ABI);
    else
        aitk_str_appendf(err, "%s does not offer plugin ABI %d", path, AITK_BACKEND_ABI);
    aitk_str_append(err, " (the plugin and the executable come from different builds: "
                         "rebuild or reinstall both)");
    return AITK_E_UNSUPPORTED;
}

/* Every descriptor member set, and an operation table that passes
 * aitk_ops_check: the one missing is named. */
static aitk_status check_members(const char *path, const aitk_backend *b, aitk_str *err)
{
    const char *missing = missing_descriptor_member(b);
    if (missing) {
        aitk_str_appendf(err, "%s: the backend descriptor has no %s (the plugin was built "
                              "from other sources than this aitk-validate: rebuild or "
                              "reinstall both)", path, missing);
        return AITK_E_DLSYM;
    }
    if (aitk_ops_check(b->ops, &missing) != AITK_OK) {
        aitk_str_appendf(err, "%s: the backend's operation table has no %s (the plugin was "
                              "built from other sources than this aitk-validate: rebuild or "
                              "reinstall both)", path, missing ? missing : "(unnamed member)");
        return AITK_E_DLSYM;
    }
    return AITK_OK;
}

/* Why the entry point is missing: a plugin of the first ABI (entry
 * "aitk_cuda_plugin_get") is a leftover of an older build, which deserves
 * a clearer word than "not a plugin". */
static void explain_missing_entry(aitk_dl *dl, const char *path, aitk_str *err)
{
    void *old = NULL;
    aitk_str ignored = AITK_STR_INIT;
    if (aitk_dl_sym(dl, "aitk_cuda_plugin_get", &old, &ignored) == AITK_OK)
        aitk_str_appendf(err, " (%s is a CUDA plugin of the older ABI 1, entry "
                              "aitk_cuda_plugin_get, from another build: rebuild or reinstall "
                              "both)", path);
    else
        aitk_str_appendf(err, " (%s is not an aitk-validate CUDA plugin, or a damaged one)",
                         path);
    aitk_str_free(&ignored);
}

aitk_status aitk_backend_plugin_open(const char *path, const aitk_backend **backend,
                                     aitk_str *err)
{
    *backend = NULL;
    aitk_dl *dl = NULL;
    /* Resolve everything now: a cuBLASLt too old for the plugin shows up as
     * a missing symbol here rather than as a crash on first use. */
    aitk_status st = aitk_dl_open(path, AITK_DL_NOW, &dl, err);
    if (st)
        return st;
    void *sym = NULL;
    st = aitk_dl_sym(dl, AITK_BACKEND_PLUGIN_ENTRY, &sym, err);
    /* Once mapped, a refused plugin stays mapped too: its CUDA runtime's
     * constructors have already allocated, and unmapping it would strand
     * that memory (see aitk_dl_keep). */
    if (st) {
        explain_missing_entry(dl, path, err);
        aitk_dl_keep(dl);
        return AITK_E_DLSYM;
    }
    aitk_backend_plugin_get_fn get;
    /* Object pointer to function pointer: how dlsym results are used (POSIX). */
    memcpy(&get, &sym, sizeof get);
    const aitk_backend *b = get(AITK_BACKEND_ABI);
    st = check_abi(path, b, err);
    if (!st)
        st = check_members(path, b, err);
    aitk_dl_keep(dl);
    if (st)
        return st;
    *backend = b;
    return AITK_OK;
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

static aitk_backend_load_result loaded;
static bool tried;

const aitk_backend_load_result *aitk_backend_load(void)
{
    if (tried)
        return &loaded;
    tried = true;
    loaded.built = aitk_backend_plugin_built();
    if (!loaded.built) {
        loaded.status = AITK_E_NOTFOUND;
        aitk_str_append(&loaded.error, "this build has no CUDA plugin (no CUDA toolkit at "
                                       "build time)");
        return &loaded;
    }
    aitk_str list = AITK_STR_INIT;
    aitk_status st = aitk_backend_plugin_candidates(&list);
    const char *env = getenv("AITK_CUDA_PLUGIN");
    bool found = false;
    for (char *p = list.ptr; !st && p && *p && !found;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        /* An explicit path is opened as given, so the loader's own text says
         * why it is unusable (missing included). */
        if ((env && *env) || file_exists(p)) {
            found = true;
            aitk_str_append(&loaded.path, p);
            st = aitk_backend_plugin_open(p, &loaded.backend, &loaded.error);
        }
        p = nl ? nl + 1 : NULL;
    }
    if (!st && !found) {
        /* Rebuild the list for the message: the search cut it into pieces. */
        aitk_str_clear(&list);
        aitk_backend_plugin_candidates(&list);
        for (char *c = list.ptr; c && *c; c++)
            if (*c == '\n')
                *c = ';';
        aitk_str_appendf(&loaded.error, "no CUDA plugin (%s) was found; looked at: %s",
                         AITK_CUDA_PLUGIN_FILE, aitk_str_cstr(&list));
        aitk_str_append(&loaded.path, aitk_str_cstr(&list));
        st = AITK_E_NOTFOUND;
    }
    loaded.status = st;
    aitk_str_free(&list);
    return &loaded;
}
