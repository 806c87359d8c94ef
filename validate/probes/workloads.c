/* Until the CPU backend (issue 6) and the runner (issue 7) exist, each
 * selected workload is reported as skipped with the reason: a report must
 * never imply a workload ran when it did not. */
#include "validate/probes/workloads.h"

#include <string.h>

#include "common/str.h"

const char *const aitk_reference_models[] = {"flux1-dev", "chroma", "omnigen2", NULL};

static int selected(const char *list, const char *model)
{
    if (!list)
        return 1;
    size_t n = strlen(model);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, model, n) == 0)
            return 1;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

aitk_status aitk_workload_checks(aitk_run_ctx *ctx)
{
    for (const char *const *m = aitk_reference_models; *m; m++) {
        if (!selected(ctx->models, *m))
            continue;
        aitk_str id = AITK_STR_INIT, title = AITK_STR_INIT, msg = AITK_STR_INIT;
        aitk_str_appendf(&id, "workload.%s", *m);
        aitk_str_appendf(&title, "Reference %s LoRA training workload", *m);
        aitk_str_appendf(&msg,
                         "not run: this build has no training backend yet (the CPU reference "
                         "step and the GPU plugin are still being built)%s",
                         ctx->cpu_only ? "; --cpu was given" : "");
        aitk_check c = {.id = aitk_str_cstr(&id), .category = "workload",
                        .title = aitk_str_cstr(&title), .status = AITK_CHECK_SKIP,
                        .message = aitk_str_cstr(&msg)};
        aitk_status st = aitk_checklist_add(&ctx->checks, &c);
        aitk_str_free(&id);
        aitk_str_free(&title);
        aitk_str_free(&msg);
        if (st)
            return st;
    }
    return AITK_OK;
}
