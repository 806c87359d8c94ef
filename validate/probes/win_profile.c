/* windows.user_profile: a user folder whose name is not plain ASCII
 * (C:\Users\Jörg, C:\Users\张伟). Common, and it breaks tools that still
 * use the legacy ("ANSI") code page: a name outside that code page cannot
 * even be spelled by them, and the Hugging Face cache, pip's cache and a
 * venv made in the user folder all carry it. Read as UTF-16 from the
 * process environment and judged against the system's code page from the
 * registry (this program's own code page is UTF-8 by its manifest, so
 * GetACP() would not tell). */
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "common/alloc.h"
#include "common/wide.h"
#include "reports/fields.h"
#include "validate/probes/gpu_util.h"
#include "validate/probes/win_checks.h"
#include "validate/probes/win_sys.h"
#include "validate/probes/windows.h"

static bool ascii_only(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return false;
    return true;
}

/* Whether every character of `w` has a spelling in code page `cp`. */
static bool representable(const wchar_t *w, UINT cp)
{
    if (cp == CP_UTF8)
        return true;
    BOOL lossy = FALSE;
    int n = WideCharToMultiByte(cp, WC_NO_BEST_FIT_CHARS, w, -1, NULL, 0, NULL, &lossy);
    return n > 0 && !lossy;
}

aitk_status aitk_win_user_profile_check(aitk_run_ctx *ctx, const aitk_yaml_doc *data, cJSON *rec)
{
    aitk_str profile = AITK_STR_INIT, acp_text = AITK_STR_INIT, obs = AITK_STR_INIT,
             msg = AITK_STR_INIT;
    bool have = aitk_win_env(L"USERPROFILE", &profile);
    UINT acp = 0;
    if (aitk_win_reg_string(AITK_WIN_REG_64, L"SYSTEM\\CurrentControlSet\\Control\\Nls\\CodePage",
                            L"ACP", &acp_text))
        acp = (UINT)strtoul(aitk_str_cstr(&acp_text), NULL, 10);
    cJSON *o = cJSON_AddObjectToObject(rec, "user_profile");
    aitk_check c = {.id = "windows.user_profile", .category = "windows",
                    .title = aitk_windows_check_title("windows.user_profile"),
                    .expected = "an ASCII-only path for the user folder, or the model cache "
                                "moved out of it",
                    .source = aitk_windows_data_source(data, "user_profile", NULL)};
    aitk_status st = AITK_OK;
    if (!have) {
        c.status = AITK_CHECK_SKIP;
        c.message = "USERPROFILE is not set";
    } else {
        bool ascii = ascii_only(aitk_str_cstr(&profile));
        wchar_t *w = aitk_wide(aitk_str_cstr(&profile));
        bool in_cp = acp && w && representable(w, acp);
        aitk_free(w);
        const char *cache = aitk_field_str(
            cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(ctx->env, "host"), "disk"),
                "model_cache"),
            "path");
        bool cache_ascii = ascii_only(cache);
        cJSON_AddStringToObject(o, "path", aitk_str_cstr(&profile));
        cJSON_AddBoolToObject(o, "ascii", ascii);
        if (acp) {
            cJSON_AddNumberToObject(o, "ansi_code_page", acp);
            cJSON_AddBoolToObject(o, "in_ansi_code_page", in_cp);
        }
        aitk_str_appendf(&obs, "%s (%s", aitk_str_cstr(&profile),
                         ascii ? "ASCII only" : "has non-ASCII characters");
        if (!ascii && acp)
            aitk_str_appendf(&obs, "; %s the system code page %u", in_cp ? "all in" : "some not in",
                             acp);
        aitk_str_appendf(&obs, "); model cache: %s", *cache ? cache : "unknown");
        if (ascii) {
            c.status = AITK_CHECK_PASS;
            c.message = "the user folder's path is plain ASCII";
        } else if (cache_ascii && *cache) {
            c.status = AITK_CHECK_PASS;
            c.message = "the user folder's name is not plain ASCII, but the model cache is "
                        "outside it; keep the venv and ai-toolkit outside it too";
        } else {
            c.status = AITK_CHECK_WARN;
            aitk_str_append(&msg, "the user folder's name is not plain ASCII, and the model "
                                  "cache, pip's cache and a venv made there carry it: ");
            aitk_str_append(&msg, in_cp ? "tools that use the legacy code page or assume ASCII "
                                          "paths (compilers that build CUDA extensions, some "
                                          "installers) can fail on it"
                                        : "its characters are not in the system's legacy code "
                                          "page, so programs that use it cannot open these "
                                          "paths at all");
            c.message = aitk_str_cstr(&msg);
            c.remedy = "Keep ai-toolkit, its venv and the model cache in a folder with an "
                       "ASCII-only path: e.g. C:\\ai\\ai-toolkit, with setx HF_HOME C:\\ai\\hf-cache; "
                       "and set PYTHONUTF8=1 so Python reads and writes files as UTF-8.";
        }
    }
    c.observed = aitk_str_cstr(&obs);
    st = aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&profile);
    aitk_str_free(&acp_text);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    return st;
}
