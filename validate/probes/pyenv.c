/* Static Python environment reader (Linux layout lib/pythonX.Y/site-packages,
 * Windows layout Lib/site-packages, and the dist-packages of Debian's and
 * Ubuntu's own Python). The search order of site folders mirrors Python's
 * site.py: PYTHONPATH; in a venv its own site-packages, the user site and
 * the base installation where the venv lets them through; in an
 * installation the user site, then its own site folders. */
#define _GNU_SOURCE
#include "validate/probes/pyenv.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/str.h"
#include "reports/fields.h"
#include "validate/probes/gpu_util.h"
#include "validate/probes/vcs_url.h"

#define SMALL_FILE (256 * 1024)

/* Distribution names that matter, normalised (PEP 503, '_' form). nvidia-*
 * packages are matched by prefix. */
static const char *const wanted[] = {
    "torch", "torchvision", "torchaudio", "diffusers", "transformers", "peft", "accelerate",
    "optimum_quanto", "torchao", "bitsandbytes", "xformers", "flash_attn", "triton", "numpy",
    "safetensors", "huggingface_hub", "lycoris_lora", "prodigyopt", "timm", NULL,
};

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Lower-case, '-' and '.' to '_' (PEP 503 normalisation, underscore form). */
static void normalise(char *s)
{
    for (; *s; s++) {
        *s = (char)tolower((unsigned char)*s);
        if (*s == '-' || *s == '.')
            *s = '_';
    }
}

int aitk_pyver_major_minor(const char *version, int *major, int *minor)
{
    char *end = NULL;
    long a = strtol(version, &end, 10);
    if (end == version || *end != '.')
        return 0;
    const char *m = end + 1;
    long b = strtol(m, &end, 10);
    if (end == m || a < 0 || b < 0 || a > 1000 || b > 1000)
        return 0;
    *major = (int)a;
    *minor = (int)b;
    return 1;
}

/* key = value lines (pyvenv.cfg). */
static void read_cfg(const char *path, cJSON *cfg)
{
    char *text = NULL;
    size_t len = 0;
    if (aitk_file_read(path, SMALL_FILE, &text, &len, NULL))
        return;
    for (char *line = text; line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *eq = strchr(line, '=');
        if (eq) {
            char *k = line, *v = eq + 1;
            *eq = '\0';
            while (*k == ' ' || *k == '\t')
                k++;
            for (char *e = eq - 1; e >= k && isspace((unsigned char)*e); e--)
                *e = '\0';
            while (*v == ' ' || *v == '\t')
                v++;
            v[strcspn(v, "\r")] = '\0';
            for (size_t n = strlen(v); n > 0 && isspace((unsigned char)v[n - 1]); n--)
                v[n - 1] = '\0';
            if (*k && !cJSON_GetObjectItemCaseSensitive(cfg, k))
                cJSON_AddStringToObject(cfg, k, v);
        }
        line = next;
    }
    aitk_free(text);
}

/* "Name: x" / "Version: y" headers of METADATA or PKG-INFO (RFC 822 style). */
static void read_metadata(const char *path, aitk_str *name, aitk_str *version)
{
    char *text = NULL;
    size_t len = 0;
    if (aitk_file_read(path, 4 * SMALL_FILE, &text, &len, NULL))
        return;
    for (char *line = text; line && *line && *line != '\n';) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        line[strcspn(line, "\r")] = '\0';
        if (strncmp(line, "Name:", 5) == 0 && !name->len)
            aitk_str_append(name, line + 5 + strspn(line + 5, " \t"));
        else if (strncmp(line, "Version:", 8) == 0 && !version->len)
            aitk_str_append(version, line + 8 + strspn(line + 8, " \t"));
        line = next;
    }
    aitk_free(text);
}

static int wanted_name(const char *norm)
{
    if (strncmp(norm, "nvidia_", 7) == 0)
        return 1;
    for (const char *const *w = wanted; *w; w++)
        if (strcmp(*w, norm) == 0)
            return 1;
    return 0;
}

/* Where pip installed a distribution from, when not from an index: its
 * direct_url.json (PEP 610; pip writes none for an index's package). Read
 * into {source: vcs|archive|dir, url, vcs, commit_id, requested_revision,
 * editable, subdirectory} as far as the file has them, the URL without
 * credentials; NULL when there is none. */
static cJSON *read_direct_url(const char *meta_dir)
{
    aitk_str path = AITK_STR_INIT;
    aitk_path_join(&path, meta_dir, "direct_url.json");
    char *text = NULL;
    size_t len = 0;
    const bool read = aitk_file_read(aitk_str_cstr(&path), SMALL_FILE, &text, &len, NULL) == 0;
    aitk_str_free(&path);
    cJSON *doc = read ? cJSON_ParseWithLength(text, len) : NULL;
    aitk_free(text);
    const char *url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "url"));
    const cJSON *vcs = cJSON_GetObjectItemCaseSensitive(doc, "vcs_info");
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(doc, "dir_info");
    const char *source = cJSON_IsObject(vcs)   ? "vcs"
                         : cJSON_IsObject(dir) ? "dir"
                         : cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "archive_info"))
                             ? "archive"
                             : NULL;
    /* One of the three kinds, with a URL: else no record pip could make. */
    cJSON *out = url && *url && source ? cJSON_CreateObject() : NULL;
    if (out) {
        cJSON_AddStringToObject(out, "source", source);
        aitk_str bare = AITK_STR_INIT;
        aitk_url_without_credentials(url, strlen(url), &bare);
        cJSON_AddStringToObject(out, "url", aitk_str_cstr(&bare));
        aitk_str_free(&bare);
        static const char *const vcs_fields[] = {"vcs", "commit_id", "requested_revision"};
        for (size_t i = 0; i < sizeof vcs_fields / sizeof *vcs_fields; i++) {
            const char *v =
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(vcs, vcs_fields[i]));
            if (v)
                cJSON_AddStringToObject(out, vcs_fields[i], v);
        }
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dir, "editable")))
            cJSON_AddTrueToObject(out, "editable");
        const char *subdir =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "subdirectory"));
        if (subdir)
            cJSON_AddStringToObject(out, "subdirectory", subdir);
    }
    cJSON_Delete(doc);
    return out;
}

/* Records one install of a package; a second install of the same name is kept
 * under "copies" (the first one found is the one Python imports). */
static void record_package(cJSON *packages, const char *name, const char *version,
                           const char *site, const char *meta_dir)
{
    cJSON *install = cJSON_CreateObject();
    if (!install)
        return;
    cJSON_AddStringToObject(install, "version", version);
    cJSON_AddStringToObject(install, "site", site);
    cJSON_AddStringToObject(install, "metadata", meta_dir);
    cJSON *direct = read_direct_url(meta_dir);
    if (direct && !cJSON_AddItemToObject(install, "direct_url", direct)) {
        cJSON_Delete(direct);
        direct = NULL;
    }
    cJSON *pkg = cJSON_GetObjectItemCaseSensitive(packages, name);
    if (!pkg) {
        pkg = cJSON_AddObjectToObject(packages, name);
        if (!pkg) {
            cJSON_Delete(install);
            return;
        }
        cJSON_AddStringToObject(pkg, "version", version);
        cJSON_AddStringToObject(pkg, "site", site);
        if (direct)
            cJSON_AddItemToObject(pkg, "direct_url", cJSON_Duplicate(direct, true));
        cJSON_AddArrayToObject(pkg, "installs");
    }
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(pkg, "installs"), install);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in folder `dir` that `keep` accepts, sorted: reports must not
 * depend on directory order, and site.py reads .pth files by name. *n gets
 * how many; the caller frees each and the array (NULL when none). */
static char **sorted_names(const char *dir, bool (*keep)(const char *name), size_t *n)
{
    char **names = NULL;
    size_t cap = 0;
    *n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!keep(e->d_name))
            continue;
        char **p = aitk_grow(names, sizeof *p, *n, &cap, 64);
        if (!p)
            break;
        names = p;
        if ((names[*n] = aitk_strdup(e->d_name)) != NULL)
            (*n)++;
    }
    if (d)
        closedir(d);
    if (*n)
        qsort(names, *n, sizeof *names, by_name);
    return names;
}

static bool metadata_dir(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (strcmp(dot, ".dist-info") == 0 || strcmp(dot, ".egg-info") == 0);
}

void aitk_pyenv_scan_site(const char *site, bool all, cJSON *packages)
{
    size_t n;
    char **names = sorted_names(site, metadata_dir, &n);
    for (size_t i = 0; i < n; i++) {
        /* "name-version.dist-info": the name ends at the first '-' (wheel rule);
         * "name.egg-info" has no version: it ends at the suffix. */
        const size_t stem = (size_t)(strrchr(names[i], '.') - names[i]);
        const size_t name_end = strcspn(names[i], "-");
        char *norm = aitk_strndup(names[i], name_end < stem ? name_end : stem);
        if (norm)
            normalise(norm);
        if (norm && (all || wanted_name(norm))) {
            aitk_str dir = AITK_STR_INIT, meta = AITK_STR_INIT, name = AITK_STR_INIT,
                     ver = AITK_STR_INIT;
            aitk_path_join(&dir, site, names[i]);
            aitk_path_join(&meta, aitk_str_cstr(&dir),
                           strstr(names[i], ".dist-info") ? "METADATA" : "PKG-INFO");
            read_metadata(aitk_str_cstr(&meta), &name, &ver);
            const char *dash = strchr(names[i], '-');
            if (!ver.len && dash) { /* no readable METADATA: the folder name still tells */
                const char *end = strrchr(names[i], '.');
                size_t upto = end > dash ? (size_t)(end - dash - 1) : 0;
                size_t word = strcspn(dash + 1, "-");
                aitk_str_appendn(&ver, dash + 1, word < upto ? word : upto);
            }
            char *key = aitk_strdup(name.len ? aitk_str_cstr(&name) : norm);
            if (key) {
                normalise(key);
                for (char *p = key; *p; p++)
                    if (*p == '_')
                        *p = '-';
                record_package(packages, key, aitk_str_cstr(&ver), site, aitk_str_cstr(&dir));
            }
            aitk_free(key);
            aitk_str_free(&dir);
            aitk_str_free(&meta);
            aitk_str_free(&name);
            aitk_str_free(&ver);
        }
        aitk_free(norm);
        aitk_free(names[i]);
    }
    aitk_free(names);
}

/* <package>/version.py: `__version__ = '2.7.0+cu128'`, `cuda = '12.8'` (or
 * with a type annotation, or None), `git_version = '...'`. torch, torchvision
 * and torchaudio all write one at build time. */
static void read_version_py(const char *site, const char *package, cJSON *torch)
{
    aitk_str dir = AITK_STR_INIT, path = AITK_STR_INIT;
    aitk_path_join(&dir, site, package);
    aitk_path_join(&path, aitk_str_cstr(&dir), "version.py");
    aitk_str_free(&dir);
    char *text = NULL;
    size_t len = 0;
    if (aitk_file_read(aitk_str_cstr(&path), SMALL_FILE, &text, &len, NULL) == AITK_OK) {
        cJSON_AddStringToObject(torch, "version_py", aitk_str_cstr(&path));
        static const struct { const char *var, *key; } vars[] = {
            {"__version__", "version"}, {"cuda", "cuda"}, {"git_version", "git_version"},
            {"hip", "hip"}, {"debug", "debug"},
        };
        for (char *line = text; line && *line;) {
            char *next = strchr(line, '\n');
            if (next)
                *next++ = '\0';
            for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
                size_t n = strlen(vars[i].var);
                if (strncmp(line, vars[i].var, n) != 0 || (line[n] != ' ' && line[n] != ':' &&
                                                           line[n] != '='))
                    continue;
                char *eq = strchr(line + n, '=');
                if (!eq)
                    continue;
                char *v = eq + 1 + strspn(eq + 1, " \t");
                if (*v == '\'' || *v == '"') {
                    char *end = strchr(v + 1, *v);
                    if (end)
                        cJSON_AddStringToObject(torch, vars[i].key,
                                                (*end = '\0', v + 1));
                } else if (strncmp(v, "None", 4) == 0) {
                    cJSON_AddNullToObject(torch, vars[i].key);
                } else if (strncmp(v, "True", 4) == 0 || strncmp(v, "False", 5) == 0) {
                    cJSON_AddBoolToObject(torch, vars[i].key, *v == 'T');
                }
            }
            line = next;
        }
        aitk_free(text);
    }
    aitk_str_free(&path);
}

/* The local version label: "+cu128", "+cpu", "+rocm6.2"; derived from the
 * CUDA version when the wheel has none (PyPI's default Linux wheels). */
static void torch_variant(cJSON *torch)
{
    const char *v = aitk_field_str(torch, "version");
    const char *plus = strchr(v, '+');
    aitk_str var = AITK_STR_INIT;
    if (plus) {
        aitk_str_append(&var, plus + 1);
    } else {
        int ma, mi;
        const char *cuda = aitk_field_str(torch, "cuda");
        if (aitk_pyver_major_minor(cuda, &ma, &mi))
            aitk_str_appendf(&var, "cu%d%d", ma, mi);
        else if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(torch, "cuda")))
            aitk_str_append(&var, "cpu");
    }
    if (var.len)
        cJSON_AddStringToObject(torch, "variant", aitk_str_cstr(&var));
    aitk_str_free(&var);
}

/* PyPI's torchvision and torchaudio wheels carry no local label in their
 * metadata ("0.20.1") while the build wrote it into version.py
 * ("0.20.1+cu124"): the label that says which CUDA variant they are is
 * kept as "local_version". */
static void companion_labels(cJSON *packages)
{
    static const char *const names[] = {"torchvision", "torchaudio"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        cJSON *pkg = cJSON_GetObjectItemCaseSensitive(packages, names[i]);
        const char *v = aitk_field_str(pkg, "version");
        if (!pkg || strchr(v, '+'))
            continue;
        cJSON *py = cJSON_CreateObject();
        if (!py)
            return;
        read_version_py(aitk_field_str(pkg, "site"), names[i], py);
        const char *full = aitk_field_str(py, "version");
        size_t n = strlen(v);
        if (n && strncmp(full, v, n) == 0 && full[n] == '+')
            cJSON_AddStringToObject(pkg, "local_version", full);
        cJSON_Delete(py);
    }
}

/* lib/python3.X folder of a prefix, or "": the one of the given version
 * where there is one, else the newest (3.12 over 3.9); of one version the
 * plain build's over a free-threaded build's python3.13t. */
static void find_lib_python(const char *prefix, const char *want, aitk_str *out)
{
    aitk_str lib = AITK_STR_INIT;
    aitk_path_join(&lib, prefix, "lib");
    DIR *d = opendir(aitk_str_cstr(&lib));
    char best[64] = "";
    long best_rank = -1;
    int want_ma = -1, want_mi = -1;
    if (want)
        aitk_pyver_major_minor(want, &want_ma, &want_mi);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        int ma, mi;
        char *end = NULL;
        if (strncmp(e->d_name, "python", 6) != 0 || strlen(e->d_name) >= sizeof best ||
            !aitk_pyver_major_minor(e->d_name + 6, &ma, &mi))
            continue;
        strtol(strchr(e->d_name + 6, '.') + 1, &end, 10);
        if (*end && strcmp(end, "t") != 0)
            continue;
        long rank = (ma == want_ma && mi == want_mi ? 100000000L : 0) + ma * 10000L + mi * 10L +
                    (*end ? 0 : 1);
        if (rank > best_rank) {
            strcpy(best, e->d_name);
            best_rank = rank;
        }
    }
    if (d)
        closedir(d);
    if (*best)
        aitk_path_join(out, aitk_str_cstr(&lib), best);
    aitk_str_free(&lib);
}

/* Debian and Ubuntu ship a site.py of their own: an installation's packages
 * live in <prefix>/local/lib/pythonX.Y/dist-packages (pip) and
 * <prefix>/lib/python3/dist-packages (apt), and its site-packages is read
 * only inside a venv (Debian's python3.11 package, /usr/lib/python3.11/
 * site.py, getsitepackages). That site.py says so by naming dist-packages. */
static int debian_site_py(const char *prefix, const char *version)
{
    aitk_str lp = AITK_STR_INIT, p = AITK_STR_INIT;
    find_lib_python(prefix, version, &lp);
    int debian = 0;
    if (lp.len) {
        aitk_path_join(&p, aitk_str_cstr(&lp), "site.py");
        char *text = NULL;
        size_t len = 0;
        if (aitk_file_read(aitk_str_cstr(&p), SMALL_FILE, &text, &len, NULL) == AITK_OK) {
            debian = strstr(text, "dist-packages") != NULL;
            aitk_free(text);
        }
    }
    aitk_str_free(&lp);
    aitk_str_free(&p);
    return debian;
}

/* Whether two names lead to one folder: "x\.", "x/Lib/site-packages" and
 * "x\Lib\site-packages" are one entry of sys.path for site.py, which
 * compares them made absolute and case-folded (makepath), and reading the
 * folder twice would count each package in it twice. */
static bool same_folder(const char *a, const char *b)
{
    aitk_file_id ia, ib;
    return strcmp(a, b) == 0 || (aitk_file_identity(a, &ia) == 0 &&
                                 aitk_file_identity(b, &ib) == 0 && ia.volume == ib.volume &&
                                 ia.index == ib.index);
}

static void add_site(cJSON *sites, const char *dir, const char *why)
{
    if (!is_dir(dir))
        return;
    const cJSON *s;
    cJSON_ArrayForEach(s, sites)
    {
        if (same_folder(aitk_field_str(s, "path"), dir))
            return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", dir);
    cJSON_AddStringToObject(o, "kind", why);
    cJSON_AddItemToArray(sites, o);
}

/* "/x", "\\server\x", "C:\x": a path os.path.join keeps as it is. */
static bool absolute_path(const char *p)
{
    return p[0] == '/' || p[0] == '\\' || (isalpha((unsigned char)p[0]) && p[1] == ':');
}

/* The path lines of one .pth file of `site`, as site.py's addpackage reads
 * them: "#" lines skipped, "import" lines (code site.py runs, never run
 * here) skipped, the others taken relative to the site folder, each added
 * when it exists. */
static void add_pth_file_paths(cJSON *sites, const char *site, const char *name)
{
    aitk_str path = AITK_STR_INIT, why = AITK_STR_INIT;
    char *text = NULL;
    size_t len = 0;
    aitk_path_join(&path, site, name);
    if (aitk_file_read(aitk_str_cstr(&path), SMALL_FILE, &text, &len, NULL) == AITK_OK) {
        aitk_str_appendf(&why, "path line of %s", aitk_str_cstr(&path));
        for (char *line = text, *next; line && *line; line = next) {
            size_t n = strcspn(line, "\n");
            next = line[n] ? line + n + 1 : NULL;
            line[n] = '\0';
            while (n && isspace((unsigned char)line[n - 1]))
                line[--n] = '\0'; /* site.py's rstrip() */
            if (!*line || *line == '#' || strncmp(line, "import ", 7) == 0 ||
                strncmp(line, "import\t", 7) == 0)
                continue;
            aitk_str dir = AITK_STR_INIT;
            if (absolute_path(line))
                aitk_str_append(&dir, line);
            else
                aitk_path_join(&dir, site, line);
            add_site(sites, aitk_str_cstr(&dir), aitk_str_cstr(&why));
            aitk_str_free(&dir);
        }
    }
    aitk_free(text);
    aitk_str_free(&path);
    aitk_str_free(&why);
}

/* "x.pth", not a hidden ".x.pth" (site.py skips those). */
static bool pth_file(const char *name)
{
    const size_t len = strlen(name);
    return name[0] != '.' && len > 4 && strcmp(name + len - 4, ".pth") == 0;
}

/* A site folder as site.py's addsitedir adds it: the folder, then the path
 * lines of its .pth files, by name (a torch shared on a cluster, `conda
 * develop`, a src-layout editable install). */
static void add_site_dir(cJSON *sites, const char *dir, const char *why)
{
    if (!is_dir(dir))
        return;
    add_site(sites, dir, why);
    size_t n;
    char **names = sorted_names(dir, pth_file, &n);
    for (size_t i = 0; i < n; i++) {
        add_pth_file_paths(sites, dir, names[i]);
        aitk_free(names[i]);
    }
    aitk_free(names);
}

/* The site folders of one prefix, in the order site.py reads them. in_venv:
 * Python runs in a venv (this prefix is the venv or its base); debian: its
 * site.py is Debian's (debian_site_py). */
static void add_prefix_sites(cJSON *sites, const char *prefix, const char *version, int in_venv,
                             int debian, const char *why)
{
    aitk_str lp = AITK_STR_INIT, sp = AITK_STR_INIT;
    find_lib_python(prefix, version, &lp);
    if (lp.len && (!debian || in_venv)) {
        aitk_path_join(&sp, aitk_str_cstr(&lp), "site-packages");
        add_site_dir(sites, aitk_str_cstr(&sp), why);
        aitk_str_clear(&sp);
    }
    int ma, mi;
    if (debian && aitk_pyver_major_minor(version, &ma, &mi)) {
        aitk_str_appendf(&sp, "%s/local/lib/python%d.%d/dist-packages", prefix, ma, mi);
        add_site_dir(sites, aitk_str_cstr(&sp), why);
        aitk_str_clear(&sp);
        aitk_str_appendf(&sp, "%s/lib/python3/dist-packages", prefix);
        add_site_dir(sites, aitk_str_cstr(&sp), why);
        aitk_str_clear(&sp);
        aitk_str_appendf(&sp, "%s/lib/python%d.%d/dist-packages", prefix, ma, mi);
        add_site_dir(sites, aitk_str_cstr(&sp), why);
        aitk_str_clear(&sp);
    }
    aitk_path_join(&sp, prefix, "Lib/site-packages");
    add_site_dir(sites, aitk_str_cstr(&sp), why);
    aitk_str_free(&lp);
    aitk_str_free(&sp);
}

/* "3.11" from a folder name: the installation's patchlevel.h has the rest
 * ("3.11.9"), which replaces it when it agrees. */
static void patchlevel_version(const char *prefix, int ma, int mi, aitk_str *ver)
{
    aitk_str p = AITK_STR_INIT;
    aitk_str_appendf(&p, "%s/include/python%d.%d/patchlevel.h", prefix, ma, mi);
    char *text = NULL;
    size_t len = 0;
    if (aitk_file_read(aitk_str_cstr(&p), SMALL_FILE, &text, &len, NULL) == AITK_OK) {
        const char *d = strstr(text, "#define PY_VERSION");
        const char *q = d ? strchr(d, '"') : NULL;
        const char *e = q ? strchr(q + 1, '"') : NULL;
        if (e && e - q - 1 < 32 && strncmp(q + 1, aitk_str_cstr(ver), ver->len) == 0) {
            aitk_str_clear(ver);
            aitk_str_appendn(ver, q + 1, (size_t)(e - q - 1));
        }
        aitk_free(text);
    }
    aitk_str_free(&p);
}

/* "3.11" from a Windows installation's python311.dll beside python.exe
 * (python3.dll, the stable ABI's, has no minor and is passed over). */
static void dll_version(const char *prefix, aitk_str *ver)
{
    DIR *d = opendir(prefix);
    struct dirent *e;
    while (d && !ver->len && (e = readdir(d)) != NULL) {
        unsigned minor = 0;
        char tail[8] = "";
        if (strncasecmp(e->d_name, "python3", 7) == 0 &&
            sscanf(e->d_name + 7, "%3u%7s", &minor, tail) == 2 && strcasecmp(tail, ".dll") == 0 &&
            e->d_name[7] >= '0' && e->d_name[7] <= '9')
            aitk_str_appendf(ver, "3.%u", minor);
    }
    if (d)
        closedir(d);
}

/* The version: pyvenv.cfg (venv: version, uv: version_info), else the
 * lib/pythonX.Y folder name completed from patchlevel.h, else (Windows)
 * the name of python3XY.dll. */
static void python_version(const char *prefix, const cJSON *cfg, aitk_str *ver)
{
    const char *v = aitk_field_str(cfg, "version_info");
    if (!*v)
        v = aitk_field_str(cfg, "version");
    if (*v) {
        aitk_str_append(ver, v);
    } else {
        aitk_str lp = AITK_STR_INIT;
        find_lib_python(prefix, NULL, &lp);
        const char *slash = strrchr(aitk_str_cstr(&lp), '/');
        if (slash)
            aitk_str_append(ver, slash + 7);
        else
            dll_version(prefix, ver);
        aitk_str_free(&lp);
    }
    int ma, mi;
    size_t dots = 0;
    for (const char *c = aitk_str_cstr(ver); *c; c++)
        dots += *c == '.';
    if (dots == 1 && aitk_pyver_major_minor(aitk_str_cstr(ver), &ma, &mi))
        patchlevel_version(prefix, ma, mi, ver);
}

#ifdef _WIN32
#define PATH_LIST_SEP ';'
#else
#define PATH_LIST_SEP ':'
#endif

static void add_pythonpath_sites(cJSON *sites)
{
    const char *pp = getenv("PYTHONPATH");
    const char seps[] = {PATH_LIST_SEP, '\0'};
    for (const char *s = pp; s && *s;) {
        size_t n = strcspn(s, seps);
        char *dir = aitk_strndup(s, n);
        if (dir && *dir)
            add_site(sites, dir, "PYTHONPATH");
        aitk_free(dir);
        s += n;
        if (*s == PATH_LIST_SEP)
            s++;
    }
}

/* CPython takes an empty variable as unset (PYTHONNOUSERSITE through its
 * config, PYTHONUSERBASE in site.py). */
const char *aitk_pyenv_var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* The user site (site.py's getusersitepackages): PYTHONUSERBASE, else
 * ~/.local on Linux and %APPDATA%\Python on Windows, where pip puts
 * packages with --user, or by itself when the installation's own folder is
 * not writable ("Defaulting to user installation"). */
static void add_user_site(cJSON *sites, const char *version)
{
    int ma, mi;
    if (!aitk_pyver_major_minor(version, &ma, &mi) || aitk_pyenv_var("PYTHONNOUSERSITE"))
        return;
    aitk_str user = AITK_STR_INIT;
    const char *base = aitk_pyenv_var("PYTHONUSERBASE");
#ifdef _WIN32
    const char *appdata = getenv("APPDATA");
    if (base)
        aitk_str_appendf(&user, "%s\\Python%d%d\\site-packages", base, ma, mi);
    else if (appdata)
        aitk_str_appendf(&user, "%s\\Python\\Python%d%d\\site-packages", appdata, ma, mi);
#else
    const char *home = getenv("HOME");
    if (base)
        aitk_str_appendf(&user, "%s/lib/python%d.%d/site-packages", base, ma, mi);
    else if (home)
        aitk_str_appendf(&user, "%s/.local/lib/python%d.%d/site-packages", home, ma, mi);
#endif
    if (user.len)
        add_site_dir(sites, aitk_str_cstr(&user), "user site");
    aitk_str_free(&user);
}

/* A venv's base prefix from pyvenv.cfg's home, the base interpreter's
 * folder: its parent on Linux (<prefix>/bin), the prefix itself on Windows
 * (python.exe sits at the top). Caller frees; NULL when there is none. */
static char *venv_base_prefix(const cJSON *cfg)
{
    const char *home = aitk_field_str(cfg, "home");
    if (!*home)
        return NULL;
    char *base = aitk_strdup(home);
#ifndef _WIN32
    char *slash = base ? strrchr(base, '/') : NULL;
    if (!slash || slash == base) {
        aitk_free(base);
        return NULL;
    }
    *slash = '\0';
#endif
    return base;
}

#ifdef _WIN32
/* One line of a ._pth file as getpath.py reads it (CPython
 * Modules/getpath.py, "SET pythonpath FROM _PTH FILE"): what comes before
 * a '#', stripped of white space at both ends. */
static char *pth_line_text(char *line)
{
    line[strcspn(line, "#")] = '\0';
    while (isspace((unsigned char)*line))
        line++;
    for (size_t n = strlen(line); n && isspace((unsigned char)line[n - 1]);)
        line[--n] = '\0';
    return line;
}

/* The text of the ._pth file beside python.exe (python._pth, or
 * python3XY._pth beside the DLL), NULL when there is none. */
static char *read_pth_file(const char *prefix)
{
    DIR *d = opendir(prefix);
    struct dirent *e;
    char *text = NULL;
    while (d && !text && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strncasecmp(e->d_name, "python", 6) == 0 &&
            strcasecmp(e->d_name + n - 5, "._pth") == 0) {
            aitk_str p = AITK_STR_INIT;
            aitk_path_join(&p, prefix, e->d_name);
            size_t len = 0;
            if (aitk_file_read(aitk_str_cstr(&p), SMALL_FILE, &text, &len, NULL) != AITK_OK)
                text = NULL;
            aitk_str_free(&p);
        }
    }
    if (d)
        closedir(d);
    return text;
}
#endif

/* A ._pth file (Windows' embeddable Python, as in ComfyUI's portable
 * build and AI-Toolkit-Easy-Install) replaces the search path: its lines,
 * relative to its folder, are the path, and Python runs isolated, without
 * PYTHONPATH or the user site (Python documentation, "Using Python on
 * Windows", "Finding modules"). Its line "import site" still runs site.py,
 * whose getsitepackages() on Windows adds the prefix (the ._pth file's
 * folder) and its Lib\site-packages, where get-pip.py and pip put
 * packages: ComfyUI's python_embeded has only that line to find torch
 * (comfyanonymous/ComfyUI .github/workflows/windows_release_package.yml
 * appends it to the embeddable zip's python3XY._pth). 1 when a ._pth file
 * was found; its folders are then the sites. */
static int add_pth_sites(cJSON *sites, const char *prefix)
{
#ifdef _WIN32
    char *text = read_pth_file(prefix);
    if (!text)
        return 0;
    bool site_import = false;
    for (char *line = text, *next; line && *line; line = next) {
        size_t n = strcspn(line, "\r\n");
        next = line[n] ? line + n + 1 : NULL;
        line[n] = '\0';
        const char *path = pth_line_text(line);
        if (strcmp(path, "import site") == 0)
            site_import = true;
        if (!*path || strncmp(path, "import ", 7) == 0)
            continue;
        aitk_str dir = AITK_STR_INIT;
        if (path[0] && path[1] == ':')
            aitk_str_append(&dir, path);
        else
            aitk_path_join(&dir, prefix, path);
        add_site(sites, aitk_str_cstr(&dir), "._pth file");
        aitk_str_free(&dir);
    }
    aitk_free(text);
    if (site_import) {
        aitk_str sp = AITK_STR_INIT;
        aitk_path_join(&sp, prefix, "Lib/site-packages");
        add_site_dir(sites, prefix, "environment");
        add_site_dir(sites, aitk_str_cstr(&sp), "environment");
        aitk_str_free(&sp);
    }
    return 1;
#else
    (void)sites;
    (void)prefix;
    return 0;
#endif
}

/* Where this environment's imports come from, in site.py's order. */
static void add_search_sites(cJSON *sites, const char *prefix, const cJSON *cfg,
                             const aitk_str *ver)
{
    const char *version = aitk_str_cstr(ver);
    if (!cfg && add_pth_sites(sites, prefix))
        return;
    add_pythonpath_sites(sites);
    if (!cfg) {
        /* An installation: the user site first, then its own folders. */
        add_user_site(sites, version);
        add_prefix_sites(sites, prefix, version, 0, debian_site_py(prefix, version),
                         "environment");
        return;
    }
    /* A venv: its own site-packages, then what include-system-site-packages
     * lets through (with it false, site.py turns the user site off too).
     * site.py lower-cases the value: "True" counts as "true". */
    char *base = venv_base_prefix(cfg);
    int debian = base && debian_site_py(base, version);
    add_prefix_sites(sites, prefix, version, 1, debian, "environment");
    if (strcasecmp(aitk_field_str(cfg, "include-system-site-packages"), "true") == 0) {
        add_user_site(sites, version);
        if (base)
            add_prefix_sites(sites, base, version, 1, debian, "base installation");
    }
    aitk_free(base);
}

/* The CPython a wheel's extension modules were built for, from the Tag
 * lines of its dist-info/WHEEL ("Tag: cp311-cp311-win_amd64", PEP 425):
 * "3.11" when every tag names one CPython ABI, else "" (abi3, none: any
 * version loads them). A Python of another version passes the modules by,
 * since it imports only extension files tagged with its own version
 * (CPython Python/dynload_win.c: ".cp312-win_amd64.pyd" and ".pyd";
 * Python/dynload_shlib.c: ".cpython-312-x86_64-linux-gnu.so"). */
static void wheel_python(const char *meta_dir, aitk_str *out)
{
    aitk_str path = AITK_STR_INIT;
    aitk_path_join(&path, meta_dir, "WHEEL");
    char *text = NULL;
    size_t len = 0;
    unsigned first = 0;
    bool one = aitk_file_read(aitk_str_cstr(&path), SMALL_FILE, &text, &len, NULL) == AITK_OK;
    for (char *line = one ? text : NULL, *next; line && *line && one; line = next) {
        size_t n = strcspn(line, "\n");
        next = line[n] ? line + n + 1 : NULL;
        line[n] = '\0';
        unsigned py = 0, abi = 0;
        char sep = 0;
        if (strncmp(line, "Tag:", 4) != 0)
            continue;
        one = sscanf(line + 4, " cp%3u-cp%3u%c", &py, &abi, &sep) == 3 && py == abi &&
              py >= 30 && (sep == '-' || sep == 't') && (!first || first == py);
        first = py;
    }
    if (one && first) /* cp39 is 3.9, cp311 3.11 */
        aitk_str_appendf(out, "%u.%u", first < 100 ? first / 10 : first / 100,
                         first < 100 ? first % 10 : first % 100);
    aitk_free(text);
    aitk_str_free(&path);
}

/* The packages of every site, then torch's own record. */
static void read_packages(cJSON *env, const cJSON *sites)
{
    cJSON *packages = cJSON_AddObjectToObject(env, "packages");
    const cJSON *site;
    cJSON_ArrayForEach(site, sites)
    {
        if (strncmp(aitk_field_str(site, "kind"), "path line of ", 13) != 0) {
            aitk_pyenv_scan_site(aitk_field_str(site, "path"), false, packages);
            continue;
        }
        /* A folder a .pth file adds holds what is not installed otherwise;
         * a package already found is not counted twice from it: an
         * editable install's source folder keeps an egg-info beside the
         * dist-info pip wrote, one install and not a shadowing copy. */
        cJSON *more = cJSON_CreateObject();
        aitk_pyenv_scan_site(aitk_field_str(site, "path"), false, more);
        for (cJSON *pkg = more ? more->child : NULL, *next; pkg; pkg = next) {
            next = pkg->next;
            if (!cJSON_GetObjectItemCaseSensitive(packages, pkg->string))
                cJSON_AddItemToObject(packages, pkg->string,
                                      cJSON_DetachItemViaPointer(more, pkg));
        }
        cJSON_Delete(more);
    }
    const cJSON *torch_pkg = cJSON_GetObjectItemCaseSensitive(packages, "torch");
    if (torch_pkg) {
        cJSON *torch = cJSON_AddObjectToObject(env, "torch");
        read_version_py(aitk_field_str(torch_pkg, "site"), "torch", torch);
        if (!cJSON_GetObjectItemCaseSensitive(torch, "version"))
            cJSON_AddStringToObject(torch, "version", aitk_field_str(torch_pkg, "version"));
        torch_variant(torch);
        aitk_str built_for = AITK_STR_INIT;
        const cJSON *imported =
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(torch_pkg, "installs"), 0);
        wheel_python(aitk_field_str(imported, "metadata"), &built_for);
        if (built_for.len)
            cJSON_AddStringToObject(torch, "wheel_python", aitk_str_cstr(&built_for));
        aitk_str_free(&built_for);
    }
    companion_labels(packages);
}

/* The system that wrote a pyvenv.cfg path no Python of this one writes,
 * NULL for this system's own: "C:\..." or "\\server\..." read on Linux
 * (a Windows venv seen through /mnt/c under WSL), "/usr/bin" read on
 * Windows (a Linux venv seen through \\wsl$). Such a venv runs only
 * there (Python documentation, venv, "How venvs work": not movable). */
static const char *other_system_of(const char *path)
{
#ifdef _WIN32
    return path[0] == '/' ? "Linux or macOS" : NULL;
#else
    const bool drive = isalpha((unsigned char)path[0]) && path[1] == ':' &&
                       (path[2] == '\\' || path[2] == '/');
    return drive || strncmp(path, "\\\\", 2) == 0 ? "Windows" : NULL;
#endif
}

/* A venv has no Python of its own: bin/python3 is a link to the
 * interpreter pyvenv.cfg's home holds (or, made with --copies, a copy that
 * still reads that installation's standard library). When home, or the
 * executable pyvenv.cfg names, is gone (that Python uninstalled, renamed
 * or moved) nothing starts in the venv: "No such file or directory".
 * Recorded as "base_missing" {key, path}: the pyvenv.cfg line that names
 * what is gone; with "made_on" when that path is another system's: the
 * venv was made there, and nothing of it is missing. */
static void note_missing_base(const cJSON *cfg, cJSON *env)
{
    const char *home = aitk_field_str(cfg, "home");
    const char *exe = aitk_field_str(cfg, "executable");
    const char *key = *home && !is_dir(home)  ? "home"
                      : *exe && !is_file(exe) ? "executable"
                                              : NULL;
    cJSON *gone = key ? cJSON_AddObjectToObject(env, "base_missing") : NULL;
    if (gone) {
        const char *path = aitk_field_str(cfg, key), *made_on = other_system_of(path);
        cJSON_AddStringToObject(gone, "key", key);
        cJSON_AddStringToObject(gone, "path", path);
        if (made_on)
            cJSON_AddStringToObject(gone, "made_on", made_on);
    }
}

aitk_status aitk_pyenv_read(const char *prefix, const char *interpreter, cJSON *env)
{
    aitk_str p = AITK_STR_INIT, ver = AITK_STR_INIT;
    cJSON_AddStringToObject(env, "prefix", prefix);
    if (interpreter)
        cJSON_AddStringToObject(env, "interpreter", interpreter);
    aitk_path_join(&p, prefix, "pyvenv.cfg");
    cJSON *cfg = NULL;
    if (is_file(aitk_str_cstr(&p))) {
        cfg = cJSON_AddObjectToObject(env, "pyvenv_cfg");
        read_cfg(aitk_str_cstr(&p), cfg);
        note_missing_base(cfg, env);
    }
    cJSON_AddBoolToObject(env, "venv", cfg != NULL);
    python_version(prefix, cfg, &ver);
    if (ver.len)
        cJSON_AddStringToObject(env, "python_version", aitk_str_cstr(&ver));
    cJSON *sites = cJSON_AddArrayToObject(env, "site_packages");
    add_search_sites(sites, prefix, cfg, &ver);
    read_packages(env, sites);
    aitk_str_free(&p);
    aitk_str_free(&ver);
    return AITK_OK;
}
