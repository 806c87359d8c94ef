/* The config was read (and refused with file:line:column) before any
 * probing, in main.c; this provider only reports what it holds, so the
 * report says which job its workloads stand for. */
#include "validate/probes/train_config.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "models/aitk_config.h"

static aitk_status record(cJSON *env, const aitk_train_config *t)
{
    cJSON *c = cJSON_AddObjectToObject(env, "config");
    cJSON *res = c ? cJSON_AddArrayToObject(c, "resolutions") : NULL;
    if (!res || !cJSON_AddStringToObject(c, "model", t->model_id) ||
        (t->name_or_path && !cJSON_AddStringToObject(c, "name_or_path", t->name_or_path)) ||
        !cJSON_AddNumberToObject(c, "rank", (double)t->rank) ||
        !cJSON_AddNumberToObject(c, "alpha", t->alpha) ||
        !cJSON_AddNumberToObject(c, "batch", (double)t->batch) ||
        !cJSON_AddNumberToObject(c, "gradient_accumulation", (double)t->accumulation) ||
        !cJSON_AddNumberToObject(c, "steps", (double)t->steps) ||
        !cJSON_AddBoolToObject(c, "gradient_checkpointing", t->checkpointing) ||
        !cJSON_AddStringToObject(c, "dtype", t->dtype ? t->dtype : "") ||
        !cJSON_AddStringToObject(c, "optimizer", t->optimizer ? t->optimizer : "") ||
        !cJSON_AddBoolToObject(c, "quantize", t->quantize) ||
        !cJSON_AddBoolToObject(c, "low_vram", t->low_vram) ||
        !cJSON_AddStringToObject(c, "ignored_keys", aitk_str_cstr(&t->ignored)))
        return AITK_E_NOMEM;
    for (size_t i = 0; i < t->n_resolutions; i++)
        if (!cJSON_AddItemToArray(res, cJSON_CreateNumber((double)t->resolutions[i])))
            return AITK_E_NOMEM;
    return AITK_OK;
}

aitk_status aitk_train_config_checks(aitk_run_ctx *ctx)
{
    const aitk_train_config *t = ctx->train_config;
    if (!t)
        return AITK_OK;
    aitk_status st = record(ctx->env, t);
    if (st)
        return st;
    aitk_str obs = AITK_STR_INIT, msg = AITK_STR_INIT;
    /* The base's storage as `predict --config` counts it; train.dtype is the
     * precision the LoRA trains in (ai-toolkit's default fp32). */
    /* A packed uint base is named by its qtype, which then is not repeated. */
    const bool packed = aitk_config_base_packed_bits(t) > 0;
    const bool say_qtype = t->quantize && !packed;
    aitk_str_appendf(&obs, "%s, LoRA rank %ld alpha %g in %s, batch %ld, %s, %s base%s%s%s, "
                           "checkpointing %s",
                     t->model_id, t->rank, t->alpha, t->dtype ? t->dtype : "fp32", t->batch,
                     t->optimizer ? t->optimizer : "adamw",
                     packed ? t->qtype_name : aitk_weight_dtype_name(aitk_config_base_storage(t)),
                     say_qtype ? " (" : "", say_qtype ? t->qtype : "", say_qtype ? ")" : "",
                     t->checkpointing ? "on" : "off");
    if (t->n_ignored) {
        /* Keys that cost time or memory but are not modelled, and keys this
         * reader does not know: one line, "; "-separated. */
        aitk_str_appendf(&msg, "%zu key(s) of the config are not in the prediction (their cost "
                               "is not modelled, or the key is unknown): ", t->n_ignored);
        const char *p = aitk_str_cstr(&t->ignored);
        for (int first = 1; *p; first = 0) {
            size_t len = strcspn(p, "\n");
            if (!first && len)
                aitk_str_append(&msg, "; ");
            aitk_str_appendn(&msg, p, len);
            p += len + (p[len] == '\n');
        }
    }
    else
        aitk_str_append(&msg, "every key of the config was understood");
    aitk_check c = {.id = "config.file", .category = "config",
                    .title = "ai-toolkit training config (--config)",
                    .status = AITK_CHECK_PASS, .observed = aitk_str_cstr(&obs),
                    .message = aitk_str_cstr(&msg)};
    st = aitk_str_status(&obs) || aitk_str_status(&msg) ? AITK_E_NOMEM
                                                        : aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    return st;
}
