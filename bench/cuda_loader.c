/* The CUDA plugin loader (see cuda_loader.h): plain C, no CUDA header; it
 * only dlopens, through common/dynload.h. */
#include "bench/cuda_loader.h"

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

bool aitk_cuda_plugin_built(void)
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

aitk_status aitk_cuda_plugin_candidates(aitk_str *out)
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

aitk_status aitk_cuda_plugin_open(const char *path, const aitk_cuda_plugin **api, aitk_str *err)
{
    *api = NULL;
    aitk_dl *dl = NULL;
    /* Resolve everything now: a cuBLASLt too old for the plugin shows up as
     * a missing symbol here rather than as a crash on first use. */
    aitk_status st = aitk_dl_open(path, AITK_DL_NOW, &dl, err);
    if (st)
        return st;
    void *sym = NULL;
    st = aitk_dl_sym(dl, AITK_CUDA_PLUGIN_ENTRY, &sym, err);
    if (st) {
        aitk_str_appendf(err, " (%s is not an aitk-validate CUDA plugin, or a damaged one)", path);
        aitk_dl_close(dl);
        return AITK_E_DLSYM;
    }
    aitk_cuda_plugin_get_fn get;
    /* Object pointer to function pointer: how dlsym results are used (POSIX). */
    memcpy(&get, &sym, sizeof get);
    const aitk_cuda_plugin *p = get(AITK_CUDA_PLUGIN_ABI);
    if (!p || p->abi_version != AITK_CUDA_PLUGIN_ABI) {
        if (p)
            aitk_str_appendf(err, "%s implements plugin ABI %d; this aitk-validate needs ABI %d",
                             path, p->abi_version, AITK_CUDA_PLUGIN_ABI);
        else
            aitk_str_appendf(err, "%s does not offer plugin ABI %d", path, AITK_CUDA_PLUGIN_ABI);
        aitk_str_append(err, " (the plugin and the executable come from different builds: "
                             "rebuild or reinstall both)");
        aitk_dl_close(dl);
        return AITK_E_UNSUPPORTED;
    }
    if (!p->probe || !p->gemm_bench || !p->gemm_run || !p->memcpy_bench ||
        !p->attention_bench || !p->attention_run || !p->close) {
        aitk_str_appendf(err, "%s: the plugin's function table is incomplete", path);
        aitk_dl_close(dl);
        return AITK_E_DLSYM;
    }
    aitk_dl_keep(dl); /* the runtime's constructors allocate; see aitk_dl_keep */
    *api = p;
    return AITK_OK;
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

static aitk_cuda_load loaded;
static bool tried;

const aitk_cuda_load *aitk_cuda_plugin_load(void)
{
    if (tried)
        return &loaded;
    tried = true;
    loaded.built = aitk_cuda_plugin_built();
    if (!loaded.built) {
        loaded.status = AITK_E_NOTFOUND;
        aitk_str_append(&loaded.error, "this build has no CUDA plugin (no CUDA toolkit at "
                                       "build time)");
        return &loaded;
    }
    aitk_str list = AITK_STR_INIT;
    aitk_status st = aitk_cuda_plugin_candidates(&list);
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
            st = aitk_cuda_plugin_open(p, &loaded.api, &loaded.error);
        }
        p = nl ? nl + 1 : NULL;
    }
    if (!st && !found) {
        /* Rebuild the list for the message: the search cut it into pieces. */
        aitk_str_clear(&list);
        aitk_cuda_plugin_candidates(&list);
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
