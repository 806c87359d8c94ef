#include "validate/probes/hub_access.h"

#include <cjson/cJSON.h>
#include <string.h>
#include <strings.h>

#include "common/str.h"
#include "common/alloc.h"
#include "common/data.h"
#include "common/fileio.h"
#include "models/aitk_config.h"
#include "reports/fields.h"
#include "validate/probes/host.h"
#include "validate/probes/hub_token.h"
#include "validate/probes/pyreqs.h"
#include "validate/probes/python.h"

#define DATA_FILE "validate/probes/hub.yaml"
#define MAX_INDEX (16 * 1024 * 1024)

/* Every shard a *.safetensors.index.json names (its weight_map's values)
 * exists beside it; the first that does not goes to `missing`. */
static bool shards_present(const char *folder, const char *index, aitk_str *missing)
{
    aitk_str path = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_path_join(&path, folder, index);
    char *text = NULL;
    size_t len = 0;
    bool ok = false;
    if (aitk_file_read(aitk_str_cstr(&path), MAX_INDEX, &text, &len, &err) == AITK_OK) {
        cJSON *doc = cJSON_ParseWithLength(text, len);
        const cJSON *map = cJSON_GetObjectItemCaseSensitive(doc, "weight_map"), *w;
        ok = cJSON_IsObject(map);
        cJSON_ArrayForEach(w, map)
        {
            aitk_str shard = AITK_STR_INIT;
            aitk_path_join(&shard, folder, cJSON_IsString(w) ? w->valuestring : "");
            if (ok && !(cJSON_IsString(w) && aitk_path_exists(aitk_str_cstr(&shard)))) {
                ok = false;
                aitk_str_appendf(missing, "%s%s", missing->len ? ", " : "",
                                 aitk_str_cstr(&shard));
            }
            aitk_str_free(&shard);
        }
        cJSON_Delete(doc);
    }
    if (!ok && !missing->len)
        aitk_str_appendf(missing, "%s (unreadable)", aitk_str_cstr(&path));
    aitk_free(text);
    aitk_str_free(&path);
    aitk_str_free(&err);
    return ok;
}

/* One component's folder in the snapshot: its weights, whole. */
static bool component_cached(const char *snapshot, const char *component, aitk_str *missing)
{
    aitk_str folder = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_path_join(&folder, snapshot, component);
    char **names = NULL;
    size_t count = 0;
    bool weights = false, whole = true;
    if (aitk_dir_names(aitk_str_cstr(&folder), &names, &count, &err) == AITK_OK) {
        for (size_t i = 0; i < count; i++) {
            aitk_str file = AITK_STR_INIT;
            aitk_path_join(&file, aitk_str_cstr(&folder), names[i]);
            if (aitk_text_ends_with(names[i], ".safetensors.index.json"))
                whole &= shards_present(aitk_str_cstr(&folder), names[i], missing);
            else if (aitk_text_ends_with(names[i], ".safetensors"))
                weights |= aitk_path_exists(aitk_str_cstr(&file));
            aitk_str_free(&file);
        }
        aitk_dir_names_free(names, count);
    }
    if (!weights && whole)
        aitk_str_appendf(missing, "%s%s (no weights)", missing->len ? ", " : "",
                         aitk_str_cstr(&folder));
    aitk_str_free(&folder);
    aitk_str_free(&err);
    return weights && whole;
}

bool aitk_hub_cached(const char *cache_dir, const char *repo, const char *components,
                     aitk_str *snapshot, aitk_str *missing)
{
    /* huggingface_hub's layout: models--{org}--{name}/refs/main holds the
     * commit, snapshots/{commit}/ the files (file_download.py,
     * repo_folder_name and _cache_commit_hash_for_specific_revision). */
    aitk_str folder = AITK_STR_INIT, ref = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_str_append(&folder, "models--");
    for (const char *c = repo; *c; c++)
        aitk_str_appendf(&folder, *c == '/' ? "--" : "%c", *c);
    aitk_str_clear(snapshot);
    aitk_path_join(&ref, cache_dir, aitk_str_cstr(&folder));
    aitk_str_append(&ref, "/refs/main");
    char *commit = NULL;
    size_t len = 0;
    bool cached = false;
    if (aitk_file_read(aitk_str_cstr(&ref), 4096, &commit, &len, &err) == AITK_OK && len) {
        commit[strcspn(commit, " \r\n")] = '\0';
        aitk_path_join(snapshot, cache_dir, aitk_str_cstr(&folder));
        aitk_str_appendf(snapshot, "/snapshots/%s", commit);
        cached = *commit != '\0';
        for (const char *c = components; cached && *c;) {
            const size_t n = strcspn(c, " ");
            aitk_str one = AITK_STR_INIT;
            aitk_str_appendf(&one, "%.*s", (int)n, c);
            cached = component_cached(aitk_str_cstr(snapshot), aitk_str_cstr(&one), missing);
            aitk_str_free(&one);
            c += n + (c[n] == ' ');
        }
    } else {
        aitk_str_appendf(missing, "%s (not downloaded)", aitk_str_cstr(&ref));
    }
    aitk_free(commit);
    aitk_str_free(&folder);
    aitk_str_free(&ref);
    aitk_str_free(&err);
    return cached;
}

/* Whether the comma list `models` (NULL: every workload) names one of the
 * sequence `of`. */
static bool runs_one_of(const char *models, const aitk_yaml_node *of)
{
    for (size_t i = 0; of && of->kind == AITK_YAML_SEQ && i < of->count; i++) {
        const char *id = of->items[i]->kind == AITK_YAML_SCALAR ? of->items[i]->text : "";
        if (!models)
            return true;
        for (const char *m = models; *m;) {
            const size_t n = strcspn(m, ",");
            if (n == strlen(id) && strncmp(m, id, n) == 0)
                return true;
            m += n + (m[n] == ',');
        }
    }
    return false;
}

/* The gated repository the job downloads: the --config's name_or_path when
 * it is one (a local path or another repository: none), else the one the
 * reference workloads run (--model) download. */
static const aitk_yaml_node *gated_repo(const aitk_run_ctx *ctx, const aitk_yaml_node *gated)
{
    for (size_t i = 0; gated && gated->kind == AITK_YAML_SEQ && i < gated->count; i++) {
        const aitk_yaml_node *g = gated->items[i];
        const char *repo = aitk_yaml_text(g, "repo");
        if (ctx->train_config) {
            const char *name = ctx->train_config->name_or_path;
            if (name && strcasecmp(name, repo) == 0)
                return g;
        } else if (runs_one_of(ctx->models, aitk_yaml_get(g, "models"))) {
            return g;
        }
    }
    return NULL;
}

typedef struct verdict {
    aitk_str obs, msg, fix, src;
} verdict;

/* Where the job's files or token are, and what that means. */
static aitk_check_status judge(const aitk_yaml_node *data, const char *repo, bool cached,
                               const aitk_str *snapshot, const aitk_str *missing,
                               const aitk_hub_token *tok, verdict *v)
{
    if (tok->found.len)
        aitk_str_appendf(&v->obs, "token: %s", aitk_str_cstr(&tok->found));
    else
        aitk_str_appendf(&v->obs, "no token (looked in: %s)", aitk_str_cstr(&tok->looked));
    if (tok->unread.len)
        aitk_str_appendf(&v->obs, "; not read: %s", aitk_str_cstr(&tok->unread));
    if (cached)
        aitk_str_appendf(&v->obs, "; %s in the model cache (%s)", repo, aitk_str_cstr(snapshot));
    else
        aitk_str_appendf(&v->obs, "; %s not in the model cache: %s", repo,
                         aitk_str_cstr(missing));
    if (tok->found.len) {
        aitk_str_appendf(&v->msg, "%s is gated: a token is set, which the Hub accepts only if "
                                  "its account accepted the license at "
                                  "https://huggingface.co/%s (not checked here: nothing is sent "
                                  "over the network)", repo, repo);
        return AITK_CHECK_PASS;
    }
    if (cached) {
        aitk_str_appendf(&v->msg, "%s is gated and no token is set, but the job's files are in "
                                  "the cache, which huggingface_hub falls back to when the Hub "
                                  "refuses a download (file_download.py): the job loads", repo);
        return AITK_CHECK_PASS;
    }
    aitk_str_appendf(&v->msg, "%s is gated: the job downloads it at start-up and, without the "
                              "token of an account that accepted its license, stops with '401 "
                              "Client Error ... Cannot access gated repo'", repo);
    /* hub.yaml writes the repository as {repo}. */
    const char *fix = aitk_yaml_text(aitk_yaml_get(data, "remedy"), "value"), *at;
    while ((at = strstr(fix, "{repo}"))) {
        aitk_str_appendf(&v->fix, "%.*s%s", (int)(at - fix), fix, repo);
        fix = at + 6;
    }
    aitk_str_append(&v->fix, fix);
    return AITK_CHECK_WARN;
}

static aitk_status check_access(aitk_run_ctx *ctx, const aitk_yaml_doc *data,
                                const aitk_yaml_node *g)
{
    const char *repo = aitk_yaml_text(g, "repo");
    aitk_str cache = AITK_STR_INIT, snapshot = AITK_STR_INIT, missing = AITK_STR_INIT;
    const char *why = "";
    const bool cached =
        aitk_host_model_cache_dir(&cache, &why) == AITK_OK &&
        aitk_hub_cached(aitk_str_cstr(&cache), repo,
                        aitk_yaml_text(aitk_yaml_get(data->root, "components"), "value"),
                        &snapshot, &missing);
    if (!cached && !missing.len)
        aitk_str_appendf(&missing, "no cache folder (%s)", why);
    const cJSON *sel = aitk_python_selected(ctx->env);
    const char *python = sel ? aitk_field_str(sel, "interpreter") : NULL;
    aitk_hub_token tok;
    aitk_status st = aitk_hub_token_find(aitk_pyreqs_checkout(ctx->aitk_dir), python, &tok);
    verdict v = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    aitk_str_appendf(&v.src, "%s; %s", aitk_yaml_text(g, "source"),
                     aitk_yaml_text(aitk_yaml_get(data->root, "components"), "source"));
    aitk_check c = {.id = "hub.access", .category = "hub",
                    .title = "Hugging Face access to the job's gated model",
                    .expected = "a token where the job reads one, or the model in the cache"};
    c.status = judge(data->root, repo, cached, &snapshot, &missing, &tok, &v);
    c.observed = aitk_str_cstr(&v.obs);
    c.message = aitk_str_cstr(&v.msg);
    c.remedy = aitk_str_cstr(&v.fix);
    c.source = aitk_str_cstr(&v.src);
    if (st != AITK_E_NOMEM)
        st = aitk_checklist_add(&ctx->checks, &c);
    aitk_hub_token_free(&tok);
    aitk_str *all[] = {&cache, &snapshot, &missing, &v.obs, &v.msg, &v.fix, &v.src};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        aitk_str_free(all[i]);
    return st;
}

aitk_status aitk_hub_checks(aitk_run_ctx *ctx)
{
    aitk_yaml_doc *data = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_data_load_schema(DATA_FILE, 1, &data, &err);
    static const char *const sourced[] = {"components", "remedy"};
    if (!st)
        st = aitk_data_need_sourced(data, NULL, sourced, 2, "value", &err);
    if (st) {
        /* The file is compiled in: only a broken build or AITK_DATA_DIR gets here. */
        aitk_check c = {.id = "hub.access", .category = "hub",
                        .title = "Hugging Face access to the job's gated model",
                        .status = AITK_CHECK_FAIL, .observed = aitk_str_cstr(&err),
                        .expected = "", .message = "the check cannot run without its data",
                        .remedy = "Rebuild aitk-validate, or unset AITK_DATA_DIR if it points at "
                                  "an edited copy.", .source = ""};
        st = st == AITK_E_NOMEM ? st : aitk_checklist_add(&ctx->checks, &c);
        aitk_str_free(&err);
        aitk_yaml_free(data);
        return st;
    }
    const aitk_yaml_node *g = gated_repo(ctx, aitk_yaml_get(data->root, "gated"));
    if (g) {
        st = check_access(ctx, data, g);
    } else {
        aitk_str msg = AITK_STR_INIT;
        const char *name = ctx->train_config ? ctx->train_config->name_or_path : NULL;
        if (ctx->train_config)
            aitk_str_appendf(&msg, "the config's model.name_or_path (%s) is not one of the gated "
                                   "repositories listed (a local path, or another repository)",
                             name ? name : "not given");
        else
            aitk_str_append(&msg, "no workload run here downloads a gated repository");
        aitk_check c = {.id = "hub.access", .category = "hub",
                        .title = "Hugging Face access to the job's gated model",
                        .status = AITK_CHECK_SKIP, .message = aitk_str_cstr(&msg),
                        .source = DATA_FILE};
        st = aitk_str_status(&msg) ? aitk_str_status(&msg) : aitk_checklist_add(&ctx->checks, &c);
        aitk_str_free(&msg);
    }
    aitk_yaml_free(data);
    aitk_str_free(&err);
    return st;
}
