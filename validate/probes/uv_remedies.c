/* pip remedies said as uv's (uv_remedies.h). */
#include "validate/probes/uv_remedies.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

#include <sys/stat.h>

#include "common/alloc.h"
#include "reports/fields.h"

/* Whether `p` (inside `text`) starts a word: the start, or after a space,
 * a quote, a backtick, a bracket or a colon. */
static bool word_start(const char *text, const char *p)
{
    return p == text || strchr(" \t\n(`'\":;", p[-1]) != NULL;
}

/* The environment in the shells' common form: quoted when it holds a
 * space (double quotes work in sh, cmd.exe and PowerShell alike). */
static void append_env(aitk_str *out, const char *env)
{
    if (strpbrk(env, " \t&;()'"))
        aitk_str_appendf(out, "\"%s\"", env);
    else
        aitk_str_append(out, env);
}

aitk_status aitk_uv_remedy_text(const char *remedy, const char *env, aitk_str *out)
{
    static const char *const forms[] = {"python -m pip ", "pip "};
    static const char *const verbs[] = {"install", "uninstall"};
    bool changed = false;
    for (const char *p = remedy; *p;) {
        size_t skip = 0, verb = 0;
        for (size_t f = 0; !skip && f < 2; f++) {
            const size_t n = strlen(forms[f]);
            if (strncmp(p, forms[f], n) != 0 || !word_start(remedy, p))
                continue;
            /* "uv pip install" already is uv's. */
            if (f == 1 && p - remedy >= 3 && strncmp(p - 3, "uv ", 3) == 0)
                continue;
            for (size_t v = 0; !skip && v < 2; v++) {
                const size_t vn = strlen(verbs[v]);
                if (strncmp(p + n, verbs[v], vn) == 0 && strchr(" `'\")", p[n + vn]) && p[n + vn]) {
                    skip = n + vn;
                    verb = v;
                }
            }
        }
        if (!skip) {
            aitk_str_appendc(out, *p++);
            continue;
        }
        aitk_str_appendf(out, "uv pip %s --python ", verbs[verb]);
        append_env(out, env);
        p += skip;
        changed = true;
    }
    if (!changed)
        aitk_str_clear(out);
    return aitk_str_status(out);
}

/* Whether `python -m pip` finds pip: a pip package in one of the folders
 * the environment imports from (its own, or a base one it sees). */
static bool has_pip(const cJSON *sel)
{
    const cJSON *site;
    cJSON_ArrayForEach(site, cJSON_GetObjectItemCaseSensitive(sel, "site_packages"))
    {
        aitk_str init = AITK_STR_INIT;
        aitk_str_appendf(&init, "%s/pip/__init__.py", aitk_field_str(site, "path"));
        struct stat sb;
        const bool found = !aitk_str_status(&init) && stat(init.ptr, &sb) == 0;
        aitk_str_free(&init);
        if (found)
            return true;
    }
    return false;
}

/* The selected environment's folder when uv made it and it has no pip. */
static const char *uv_without_pip(const cJSON *env)
{
    const cJSON *sel = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(env, "python"),
                                         "environments"),
        0);
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(sel, "pyvenv_cfg");
    if (!*aitk_field_str(cfg, "uv") || has_pip(sel))
        return NULL;
    const char *prefix = aitk_field_str(sel, "prefix");
    return *prefix ? prefix : NULL;
}

aitk_status aitk_uv_remedies(aitk_run_ctx *ctx)
{
    const char *env = uv_without_pip(ctx->env);
    aitk_status st = AITK_OK;
    for (size_t i = 0; env && !st && i < ctx->checks.count; i++) {
        aitk_check *c = &ctx->checks.items[i];
        if (!c->remedy || !strstr(c->remedy, "pip "))
            continue;
        aitk_str text = AITK_STR_INIT;
        st = aitk_uv_remedy_text(c->remedy, env, &text);
        if (!st && text.len) {
            aitk_str_append(&text, " (This environment was made by uv and has no pip: these "
                                   "are uv's commands.)");
            char *copy = aitk_str_status(&text) ? NULL : aitk_strdup(text.ptr);
            if (!copy) {
                st = AITK_E_NOMEM;
            } else {
                aitk_free((char *)c->remedy);
                c->remedy = copy;
            }
        }
        aitk_str_free(&text);
    }
    return st;
}
