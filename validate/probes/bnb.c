/* python.bitsandbytes (bnb.h). The selection rules and remedies are in
 * bnb.yaml with their sources; this file only applies them to the files of
 * the environment the python provider selected. */
#include "validate/probes/bnb.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/data.h"
#include "common/fileio.h"
#include "models/aitk_config.h"
#include "reports/fields.h"
#include "validate/probes/bnb_load.h"
#include "validate/probes/host.h"
#include "validate/probes/python.h"

#define DATA_FILE "validate/probes/bnb.yaml"
/* Said when torch did not import, whichever run found it. */
#define NO_TORCH " (not loaded: import torch fails, see python.import_torch)"
#define PREFIX "libbitsandbytes_cuda"
#ifdef _WIN32
#define SUFFIX ".dll"
#define SEP "\\"
#else
#define SUFFIX ".so"
#define SEP "/"
#endif

/* The digits of "libbitsandbytes_cuda<digits><SUFFIX>", or NULL for any
 * other name (the CPU, ROCm and XPU builds, 0.43's _nocublaslt ones). */
static const char *build_digits(const char *name, char *buf, size_t size)
{
    size_t p = strlen(PREFIX), n = strlen(name), s = strlen(SUFFIX);
    if (n <= p + s || strncmp(name, PREFIX, p) != 0 || strcmp(name + n - s, SUFFIX) != 0 ||
        n - p - s >= size)
        return NULL;
    memcpy(buf, name + p, n - p - s);
    buf[n - p - s] = '\0';
    return strspn(buf, "0123456789") == strlen(buf) ? buf : NULL;
}

/* bitsandbytes' reading of a build's digits: the CUDA major is always
 * two digits ("118" is 11.8, "132" is 13.2, "1210" would be 12.10), as its
 * _split_cuda_version. false for fewer than three digits. */
static bool build_version(const char *digits, int *major, int *minor)
{
    if (strlen(digits) < 3)
        return false;
    *major = (digits[0] - '0') * 10 + (digits[1] - '0');
    *minor = atoi(digits + 2);
    return true;
}

aitk_bnb_choice aitk_bnb_pick(const char *version, const char *torch_cuda, const char *override,
                              char *const *names, size_t count, const char *since_exact,
                              const char *since_nearest, aitk_str *out, bool *nearest)
{
    *nearest = false;
    int major = 0, minor = 0;
    if (aitk_version_compare(version, since_exact) < 0 ||
        sscanf(torch_cuda, "%d.%d", &major, &minor) != 2)
        return AITK_BNB_NOT_JUDGED;
    /* Before 0.50.0 an empty override counts as unset; from it, any value
     * but digits is refused and no CUDA library loads. */
    const bool from_nearest = aitk_version_compare(version, since_nearest) >= 0;
    if (override && !*override && !from_nearest)
        override = NULL;
    if (override && from_nearest && (!*override || strspn(override, "0123456789") != strlen(override)))
        return AITK_BNB_BAD_OVERRIDE;
    char want[32];
    snprintf(want, sizeof want, "%d%d", major, minor);
    aitk_str_clear(out);
    aitk_str_appendf(out, PREFIX "%s" SUFFIX, override ? override : want);
    bool exact = false;
    /* The builds of torch's major just below and just above its minor. */
    int below = -1, above = -1;
    const char *below_name = NULL, *above_name = NULL;
    for (size_t i = 0; i < count; i++) {
        char buf[16];
        const char *d = build_digits(names[i], buf, sizeof buf);
        int b_major, b_minor;
        if (!d || !build_version(d, &b_major, &b_minor))
            continue;
        exact |= strcmp(names[i], aitk_str_cstr(out)) == 0;
        if (b_major != major)
            continue;
        if (b_minor < minor && b_minor > below) {
            below = b_minor;
            below_name = names[i];
        }
        if (b_minor > minor && (above < 0 || b_minor < above)) {
            above = b_minor;
            above_name = names[i];
        }
    }
    if (exact)
        return AITK_BNB_FOUND;
    if (override || !from_nearest || (!below_name && !above_name))
        return AITK_BNB_ABSENT;
    aitk_str_clear(out);
    aitk_str_append(out, below_name ? below_name : above_name);
    *nearest = true;
    return AITK_BNB_FOUND;
}

static aitk_status load_data(aitk_yaml_doc **out, aitk_str *err)
{
    static const char *const rules[] = {"exact", "nearest"}, *const optimizers[] = {"optimizers"};
    static const char *const remedies[] = {"missing", "other_major", "bad_override",
                                           "does_not_load"};
    aitk_yaml_doc *doc = NULL;
    aitk_status st = aitk_data_load_schema(DATA_FILE, 1, &doc, err);
    if (!st)
        st = aitk_data_need_sourced(doc, NULL, rules, 2, "since", err);
    if (!st)
        st = aitk_data_need_sourced(doc, NULL, optimizers, 1, "value", err);
    if (!st)
        st = aitk_data_need_sourced(doc, "remedy", remedies, 4, "value", err);
    if (st) {
        aitk_yaml_free(doc);
        return st;
    }
    *out = doc;
    return AITK_OK;
}

/* Whether the job's optimizer calls bitsandbytes: --config's (ai-toolkit's
 * default, adamw, when it names none), else the example configs'
 * adamw8bit. `which` gets its name. */
static bool optimizer_uses_bnb(const aitk_run_ctx *ctx, const char *list, const char **which)
{
    const char *opt = !ctx->train_config             ? "adamw8bit"
                      : ctx->train_config->optimizer ? ctx->train_config->optimizer
                                                     : "adamw";
    *which = opt;
    char low[64];
    size_t n = strlen(opt);
    if (n == 0 || n >= sizeof low)
        return false;
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)tolower((unsigned char)opt[i]);
    for (const char *p = list; (p = strstr(p, low)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

typedef struct verdict {
    aitk_check_status status;
    aitk_str obs, msg;
    const char *remedy_key; /* bnb.yaml remedy, or NULL */
    bool nearest;           /* passed by the nearest-build rule */
    aitk_str pick;          /* the build it loads, when that file is there */
} verdict;

/* Why no CUDA library loads. Either way bitsandbytes imports (the error is
 * logged, and a stand-in library raises at the first native call). */
static void say_no_library(verdict *v, aitk_bnb_choice found, const char *version,
                           const char *cuda, const char *override, const char *pick)
{
    if (found == AITK_BNB_BAD_OVERRIDE)
        aitk_str_appendf(&v->msg, "bitsandbytes %s refuses a BNB_CUDA_VERSION that is not "
                                  "digits, so it loads no CUDA library",
                         version);
    else if (override)
        aitk_str_appendf(&v->msg, "bitsandbytes has no build BNB_CUDA_VERSION=%s names (%s is "
                                  "not in its folder)",
                         override, pick);
    else
        aitk_str_appendf(&v->msg, "bitsandbytes has no build for CUDA %s (%s is not in its "
                                  "folder)",
                         cuda, pick);
    if (found != AITK_BNB_BAD_OVERRIDE)
        aitk_str_appendf(&v->obs, "; no %s", pick);
    aitk_str_append(&v->msg, ": it imports, but its 8-bit optimizers fail at the first training "
                             "step");
}

/* The judgement, once the version, torch's CUDA and the builds are known. */
static aitk_status judge(const aitk_run_ctx *ctx, const aitk_yaml_node *top, const char *version,
                         const char *cuda, char *const *names, size_t count, verdict *v)
{
    const char *override = getenv("BNB_CUDA_VERSION");
    aitk_str pick = AITK_STR_INIT;
    bool nearest = false;
    aitk_bnb_choice found = aitk_bnb_pick(version, cuda, override, names, count,
                              aitk_yaml_text(aitk_yaml_get(top, "exact"), "since"),
                              aitk_yaml_text(aitk_yaml_get(top, "nearest"), "since"), &pick,
                              &nearest);
    aitk_str_appendf(&v->obs, "bitsandbytes %s, torch built with CUDA %s", version, cuda);
    if (override)
        aitk_str_appendf(&v->obs, ", BNB_CUDA_VERSION=\"%s\"", override);
    if (found == AITK_BNB_NOT_JUDGED) {
        v->status = AITK_CHECK_SKIP;
        aitk_str_appendf(&v->msg, "bitsandbytes before %s finds a CUDA runtime on its own "
                                  "(bitsandbytes/cuda_setup): its choice is not judged here",
                         aitk_yaml_text(aitk_yaml_get(top, "exact"), "since"));
    } else if (found == AITK_BNB_ABSENT || found == AITK_BNB_BAD_OVERRIDE) {
        const char *opt = NULL;
        bool used = optimizer_uses_bnb(ctx, aitk_yaml_text(aitk_yaml_get(top, "optimizers"),
                                                           "value"), &opt);
        v->status = used ? AITK_CHECK_FAIL : AITK_CHECK_WARN;
        v->remedy_key = found == AITK_BNB_BAD_OVERRIDE ? "bad_override" : "missing";
        say_no_library(v, found, version, cuda, override, aitk_str_cstr(&pick));
        aitk_str_appendf(&v->msg, "; this job's optimizer, %s, is %sone of them", opt,
                         used ? "" : "not ");
    } else {
        int torch_major = atoi(cuda), build_major = 0, build_minor = 0;
        char buf[16];
        const char *d = build_digits(aitk_str_cstr(&pick), buf, sizeof buf);
        if (!d || !build_version(d, &build_major, &build_minor))
            build_major = -1;
        aitk_str_appendf(&v->obs, "; picks %s", aitk_str_cstr(&pick));
        aitk_str_append(&v->pick, aitk_str_cstr(&pick));
        if (build_major != torch_major) {
            v->status = AITK_CHECK_WARN;
            v->remedy_key = "other_major";
            aitk_str_appendf(&v->msg, "BNB_CUDA_VERSION makes bitsandbytes load a CUDA %d build "
                                      "beside torch's CUDA %d libraries: it needs CUDA %d's "
                                      "runtime libraries on the loader's path",
                             build_major, torch_major, build_major);
        } else {
            v->status = AITK_CHECK_PASS;
            v->nearest = nearest;
            if (nearest)
                aitk_str_appendf(&v->msg, "no build for CUDA %s: bitsandbytes (%s and later) "
                                          "loads its nearest build of CUDA %d, with a warning",
                                 cuda, aitk_yaml_text(aitk_yaml_get(top, "nearest"), "since"),
                                 torch_major);
            else if (override)
                aitk_str_appendf(&v->msg, "BNB_CUDA_VERSION=%s names %s, a build of torch's "
                                          "CUDA major",
                                 override, aitk_str_cstr(&pick));
            else
                aitk_str_appendf(&v->msg, "bitsandbytes has its build for CUDA %s", cuda);
        }
    }
    aitk_str_free(&pick);
    return aitk_str_status(&v->obs) ? aitk_str_status(&v->obs) : aitk_str_status(&v->msg);
}

/* Beyond --quick: whether the build it picks loads beside torch
 * (bnb_load.h). A refusal fails the job's 8-bit optimizers as surely as a
 * missing file, whatever the file's name promised. */
static aitk_status confirm_load(const aitk_run_ctx *ctx, const aitk_yaml_node *top,
                                const char *interpreter, const char *dir, verdict *v)
{
    aitk_str path = AITK_STR_INIT, words = AITK_STR_INIT;
    aitk_bnb_load r = AITK_BNB_LOAD_UNKNOWN;
    aitk_str_appendf(&path, "%s" SEP "%s", dir, aitk_str_cstr(&v->pick));
    aitk_status st = aitk_str_status(&path);
    if (!st)
        st = aitk_bnb_load_beside_torch(interpreter, aitk_str_cstr(&path), &r, &words);
    if (st)
        goto done;
    if (r == AITK_BNB_LOAD_OK) {
        aitk_str_append(&v->obs, ", which loads beside torch");
        if (v->status == AITK_CHECK_WARN)
            aitk_str_append(&v->msg, "; it loads here, so those libraries are found");
    } else if (r == AITK_BNB_LOAD_REFUSED) {
        const char *opt = NULL;
        const bool used = optimizer_uses_bnb(
            ctx, aitk_yaml_text(aitk_yaml_get(top, "optimizers"), "value"), &opt);
        aitk_str_appendf(&v->obs, ", which does not load beside torch: %s",
                         aitk_str_cstr(&words));
        aitk_str_clear(&v->msg);
        aitk_str_appendf(&v->msg, "bitsandbytes' %s is there, but does not load after "
                                  "import torch (%s): bitsandbytes imports, but its 8-bit "
                                  "optimizers fail at the first training step; this job's "
                                  "optimizer, %s, is %sone of them",
                         aitk_str_cstr(&v->pick), aitk_str_cstr(&words), opt,
                         used ? "" : "not ");
        v->status = used ? AITK_CHECK_FAIL : AITK_CHECK_WARN;
        v->remedy_key = "does_not_load";
        v->nearest = false;
    } else if (r == AITK_BNB_LOAD_NO_TORCH) {
        aitk_str_append(&v->obs, NO_TORCH);
    } else {
        aitk_str_appendf(&v->obs, " (not loaded: %s)", aitk_str_cstr(&words));
    }
    st = aitk_str_status(&v->obs) ? aitk_str_status(&v->obs) : aitk_str_status(&v->msg);
done:
    aitk_str_free(&path);
    aitk_str_free(&words);
    return st;
}

/* Whether python.import_torch's interpreter imported torch; true when it
 * did not run (a record without its answer), so the load decides. */
static bool torch_imported(const cJSON *env)
{
    const cJSON *deep = cJSON_GetObjectItemCaseSensitive(aitk_python_selected(env), "deep");
    if (!deep)
        return true;
    return !*aitk_field_str(deep, "error") && *aitk_field_str(deep, "torch");
}

/* What the selected environment holds: bitsandbytes' version and folder,
 * torch's CUDA. Returns the reason to skip when one of them is absent. */
static const char *environment(const cJSON *env, const char **version, const char **cuda,
                               const char **interpreter, aitk_str *dir)
{
    const cJSON *sel = aitk_python_selected(env);
    if (!sel || *aitk_field_str(sel, "error"))
        return "no Python environment to read (python.env says why)";
    *interpreter = aitk_field_str(sel, "interpreter");
    const cJSON *bnb = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(sel, "packages"), "bitsandbytes");
    const cJSON *torch = cJSON_GetObjectItemCaseSensitive(sel, "torch");
    *version = aitk_field_str(bnb, "version");
    *cuda = aitk_field_str(torch, "cuda");
    if (!bnb || !**version)
        return "bitsandbytes is not installed (python.requirements says whether the job needs it)";
    if (!torch || !**cuda)
        return "torch has no CUDA build here, so bitsandbytes loads no CUDA library";
    aitk_str_appendf(dir, "%s" SEP "bitsandbytes", aitk_field_str(bnb, "site"));
    return NULL;
}

aitk_status aitk_bnb_checks(aitk_run_ctx *ctx)
{
    aitk_check c = {.id = "python.bitsandbytes", .category = "python",
                    .title = "bitsandbytes' CUDA library",
                    .expected = "a bitsandbytes build for the CUDA torch is built with",
                    .remedy = "", .source = ""};
    aitk_yaml_doc *data = NULL;
    aitk_str err = AITK_STR_INIT, dir = AITK_STR_INIT;
    verdict v = {.obs = AITK_STR_INIT, .msg = AITK_STR_INIT, .pick = AITK_STR_INIT};
    char **names = NULL;
    size_t count = 0;
    const char *version = "", *cuda = "", *interpreter = "";
    /* The data is read only when there is something to judge. */
    const char *skip = environment(ctx->env, &version, &cuda, &interpreter, &dir);
    aitk_status st = skip ? AITK_OK : load_data(&data, &err);
    if (st) {
        /* The file is compiled in: only a broken build or AITK_DATA_DIR gets here. */
        c.status = AITK_CHECK_FAIL;
        c.observed = aitk_str_cstr(&err);
        c.message = "the bitsandbytes check cannot run without its data";
        c.remedy = "Rebuild aitk-validate, or unset AITK_DATA_DIR if it points at an edited copy.";
        st = st == AITK_E_NOMEM ? st : AITK_OK;
    } else if (skip) {
        c.status = AITK_CHECK_SKIP;
        c.observed = "";
        c.message = skip;
        c.expected = "";
    } else {
        /* An unreadable folder holds no build: the verdict names the file. */
        aitk_dir_names(aitk_str_cstr(&dir), &names, &count, NULL);
        st = judge(ctx, data->root, version, cuda, names, count, &v);
        /* Loading is for the deeper levels (--quick loads nothing), and
         * needs the environment's interpreter to import torch first; when
         * python.import_torch saw that import fail, a second try would only
         * wait as long again. */
        if (!st && v.pick.len && *interpreter && ctx->level >= AITK_LEVEL_STANDARD) {
            if (torch_imported(ctx->env))
                st = confirm_load(ctx, data->root, interpreter, aitk_str_cstr(&dir), &v);
            else
                aitk_str_append(&v.obs, NO_TORCH);
        }
        c.status = v.status;
        c.observed = aitk_str_cstr(&v.obs);
        c.message = aitk_str_cstr(&v.msg);
        const aitk_yaml_node *rule =
            aitk_yaml_get(data->root, v.nearest ? "nearest" : "exact");
        c.source = aitk_yaml_text(rule, "source");
        if (v.remedy_key) {
            const aitk_yaml_node *r = aitk_yaml_get(aitk_yaml_get(data->root, "remedy"),
                                                    v.remedy_key);
            c.remedy = aitk_yaml_text(r, "value");
            c.source = aitk_yaml_text(r, "source");
        }
    }
    if (!st)
        st = aitk_checklist_add(&ctx->checks, &c);
    aitk_dir_names_free(names, count);
    aitk_str_free(&v.obs);
    aitk_str_free(&v.msg);
    aitk_str_free(&v.pick);
    aitk_str_free(&dir);
    aitk_str_free(&err);
    aitk_yaml_free(data);
    return st;
}
