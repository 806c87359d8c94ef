/* Renderings of `predict` results: a table per workload, the largest memory
 * terms of a plan that does not fit (so the reader sees why), and with
 * --explain the whole memory plan and the work of one step. */
#include "models/predict.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "models/gpu_table.h"

#define GIB 1073741824.0

double aitk_predict_minutes_per_1000(const aitk_prediction *p)
{
    return (p->step_s * 1000.0 + p->sample_s_per_1000) / 60.0;
}

static bool any_sampling(const aitk_predict_result *r)
{
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].pred.sample_s_per_1000 > 0)
            return true;
    return false;
}

static void describe_workload(FILE *out, const aitk_predict_result *r)
{
    const aitk_workload *w = &r->workload;
    fprintf(out, "%s — %s%s%s\n", w->spec->id, r->title ? r->title : w->spec->title,
            r->config_path ? ", LoRA job from " : "", r->config_path ? r->config_path : "");
    if (r->title && strcmp(r->title, w->spec->title))
        fprintf(out, "  (predicted with the %s description)\n", w->spec->title);
    fprintf(out, "  %s base weights", aitk_workload_base_storage_name(w));
    if (aitk_workload_base_qtype_inert(w))
        fprintf(out, " (qtype %s quantizes nothing: ai-toolkit's uint backend refuses 8 bits, "
                     "toolkit/util/uintx_quant.py)", w->base_qtype);
    fprintf(out, ", LoRA rank %ld (alpha %g), batch %ld", w->rank, w->alpha, w->batch);
    if (w->accumulation > 1)
        fprintf(out, " x %ld accumulation", w->accumulation);
    fprintf(out, ", %s", w->n_resolutions > 1 ? "resolutions" : "resolution");
    for (size_t i = 0; i < w->n_resolutions; i++)
        fprintf(out, "%s%ld", i ? "/" : " ", w->resolutions[i]);
    fprintf(out, " px, %s%s, %s, text encoders %s%s\n",
            w->checkpointing ? "gradient checkpointing" : "no checkpointing",
            w->fp16 ? ", computed in fp16" : "", w->optimizer,
            w->cache_text ? (w->te_resident ? "cached, kept on the GPU by the trainer"
                                            : "cached")
                          : "loaded as ",
            w->cache_text ? "" : aitk_workload_te_storage_name(w));
    static const char *const fp8_what[] = {"optimum-quanto qfloat8", "a plain float8 cast",
                                           "torchao fp8 compute on bf16 weights"};
    fprintf(out, "  trainer %s: prompts of %ld text tokens", w->trainer ? w->trainer : "ai-toolkit",
            aitk_workload_text_tokens(w));
    if (w->base_dtype == AITK_WEIGHT_FP8)
        fprintf(out, ", fp8 base as %s", fp8_what[w->fp8_path]);
    if (w->autocast)
        fputs(", forward under autocast", out);
    /* The shapes of models/cost.h aitk_attention_mask, in words. */
    static const char *const mask_what[AITK_MASK_COUNT] = {
        "",
        "a (batch, 1, 1, tokens) padding mask",
        "a (batch, 1, tokens, tokens) mask made in each block",
        "a (batch, heads, tokens, tokens) mask",
        "a (batch, heads, tokens, tokens) mask kept for the step",
    };
    const aitk_attention_mask mask = aitk_workload_attention_mask(w);
    if (mask != AITK_MASK_NONE)
        fprintf(out, ", every attention call given %s (PyTorch's memory-efficient kernel; the "
                "mask converted each call)", mask_what[mask]);
    fputs(" (models/trainers.yaml)\n", out);
    if (w->os == AITK_OS_WINDOWS && !w->step_graph)
        fputs("  PyTorch on Windows: every attention call runs the memory-efficient kernel, as "
              "its Windows wheels have no flash attention (pytorch/pytorch issue #125070)\n",
              out);
    if (w->not_modelled)
        fprintf(out, "  not modelled: %s\n", w->not_modelled);
    if (w->lora_only && *w->lora_only) {
        fputs("  LoRA only on Linears whose name has:", out);
        for (const char *const *l = w->lora_only; *l; l++)
            fprintf(out, "%s %s", l == w->lora_only ? "" : ",", *l);
        fputc('\n', out);
    }
    if (w->base_dtype == AITK_WEIGHT_FP32)
        fputs("  fp32 base: memory counted at 4 bytes a weight; time at the bf16 matmul rate "
              "(fp32 compute is not modelled: slower)\n", out);
    if (w->ema)
        fputs("  EMA: a copy of the LoRA is kept beside it (in the optimizer state term)\n", out);
    if (w->preservation)
        fputs("  diff_output_preservation: each step also predicts the class prompt with the "
              "LoRA (graph kept for the backward) and without it\n", out);
    if (w->sample_every > 0 && w->n_sample_groups > 0) {
        fputs("  sampling:", out);
        for (size_t i = 0; i < w->n_sample_groups; i++) {
            const aitk_sample_group *g = &w->sample_groups[i];
            fprintf(out, "%s %ld image(s) of %ld steps at about %ld px", i ? "," : "", g->images,
                    g->steps, g->resolution);
        }
        fprintf(out, " (%d pass%s a step) every %ld steps, in min/1000\n", w->sample_passes,
                w->sample_passes > 1 ? "es" : "", w->sample_every);
    }
    if (w->val_loss_every > 0 && w->val_loss_items > 0)
        fprintf(out, "  validation loss: %ld image(s) at about %ld px, each one pass of %ld "
                     "sigma(s), every %ld steps, in s/step\n",
                w->val_loss_items, w->val_loss_resolution, w->val_loss_sigmas,
                w->val_loss_every);
}

/* Indices of the memory terms, largest first. */
static void sort_terms(const aitk_memory_plan *m, int idx[AITK_PLAN_TERMS])
{
    for (int i = 0; i < AITK_PLAN_TERMS; i++)
        idx[i] = i;
    for (int i = 1; i < AITK_PLAN_TERMS; i++)
        for (int j = i; j > 0 && m->bytes[idx[j]] > m->bytes[idx[j - 1]]; j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
}

/* "fits_with": the change that makes the job fit, or null when none tried does. */
static void add_fit_hint(cJSON *g, const aitk_fit_hint *h)
{
    if (!h->found) {
        cJSON_AddNullToObject(g, "fits_with");
        return;
    }
    cJSON *f = cJSON_AddObjectToObject(g, "fits_with");
    if (!f)
        return; /* the tree stays whole; printing it then fails as out of memory */
    cJSON_AddStringToObject(f, "change", h->change);
    cJSON_AddNumberToObject(f, "peak_bytes", aitk_memory_plan_peak(&h->pred.memory));
    cJSON_AddNumberToObject(f, "step_seconds", h->pred.step_s);
}

bool aitk_predict_host_bound(const aitk_prediction *q)
{
    return q->fits && q->t_host > 0 && q->t_host > q->t_gemm + q->t_attention + q->t_memory;
}

bool aitk_predict_tight(const aitk_prediction *q, const aitk_time_range *peak_error)
{
    return q->fits && peak_error && peak_error->n > 0 && peak_error->hi > 1 &&
           q->needed_bytes * peak_error->hi > q->usable_bytes;
}

/* A job that does not fit, or only just, may not stop on Windows: NVIDIA's
 * driver (536.40 and later) by default moves allocations that no longer fit
 * into system memory and goes on, over PCIe (NVIDIA support answer 5490,
 * "System Memory Fallback for Stable Diffusion"). Such a run is slow rather
 * than failed, which is what reports of 16 GB cards taking hours show. */
static bool may_spill_on_windows(const aitk_prediction *q, const aitk_time_range *peak_error)
{
    return !q->fits || aitk_predict_tight(q, peak_error);
}

/* "fit": what the fit was judged against and by how much it fits (margin
 * >= 0) or misses, in bytes and percent of the usable memory; whether a fit
 * is tight (see aitk_predict_tight). */
static void add_fit(cJSON *g, const aitk_predict_row *row, const aitk_time_range *peak_error)
{
    const aitk_prediction *q = &row->pred;
    cJSON *f = cJSON_AddObjectToObject(g, "fit");
    if (!f)
        return; /* the tree stays whole; printing it then fails as out of memory */
    cJSON_AddNumberToObject(f, "total_memory_bytes", q->total_memory_bytes);
    cJSON_AddStringToObject(f, "total_memory_kind", aitk_gpu_total_memory_kind(row->gpu));
    cJSON_AddStringToObject(f, "total_memory_source",
                            row->gpu->total_memory_source ? row->gpu->total_memory_source
                                                          : "nominal: vram_gb read as GiB");
    cJSON_AddNumberToObject(f, "usable_bytes", q->usable_bytes);
    cJSON_AddNumberToObject(f, "needed_bytes", q->needed_bytes);
    cJSON_AddNumberToObject(f, "margin_bytes", q->margin_bytes);
    cJSON_AddNumberToObject(f, "margin_percent", aitk_prediction_margin_percent(q));
    if (peak_error && peak_error->n > 0)
        cJSON_AddBoolToObject(f, "tight", aitk_predict_tight(q, peak_error));
    cJSON_AddBoolToObject(f, "may_spill_on_windows", may_spill_on_windows(q, peak_error));
    aitk_str text = AITK_STR_INIT;
    if (aitk_prediction_fit_text(q, &text) == AITK_OK)
        cJSON_AddStringToObject(f, "text", aitk_str_cstr(&text));
    aitk_str_free(&text);
}

/* The GPU column's width and the matmul marks of the rows shown. */
static aitk_gpu_table gpu_table(const aitk_predict_result *r)
{
    aitk_gpu_table t = AITK_GPU_TABLE_INIT;
    for (size_t i = 0; i < r->n_rows; i++)
        aitk_gpu_table_add(&t, r->rows[i].gpu);
    return t;
}

/* The efficiencies behind the times, so a reader of --explain can redo them. */
static void explain_efficiencies(FILE *out, const aitk_predict_result *r,
                                 const aitk_cost_params *p)
{
    const double values[AITK_EFF_COUNT] = {p->eff_gemm, p->eff_attn_fwd, p->eff_attn_bwd,
                                           p->eff_bandwidth};
    fputs(r->workload.fp16
              ? "\n  Efficiencies (GEMM and attention: of each GPU's matmul rate in fp16, the\n"
                "  bf16 one unless the GPU lists its own; bandwidth: of its datasheet\n"
                "  bandwidth):\n   "
              : "\n  Efficiencies (GEMM and attention: of each GPU's bf16 matmul rate; bandwidth: of\n"
                "  its datasheet bandwidth):\n   ",
          out);
    for (int i = 0; i < AITK_EFF_COUNT; i++) {
        /* A measured attention share may have gone to its GPU's compute
         * capability (attention_by_cc), not the defaults: shown as measured. */
        const aitk_eff_calibration *c = r->calibration ? &r->calibration->eff[i] : NULL;
        fprintf(out, "%s %s %.3f (%s)", i ? "," : "", aitk_eff_names[i],
                c && c->measured ? c->value : values[i], c && c->measured ? "measured" : "default");
    }
    if (p->n_attn_by_cc) {
        fputs("\n    attention by compute capability (forward/backward; others "
              "the defaults above):", out);
        for (size_t i = 0; i < p->n_attn_by_cc; i++)
            fprintf(out, "%s %s %.2f/%.2f", i ? "," : "", p->attn_by_cc[i].cc,
                    p->attn_by_cc[i].fwd, p->attn_by_cc[i].bwd);
    }
    if (!aitk_workload_flash_attention(&r->workload)) {
        /* The job's calls are masked or on Windows: the kernel they run,
         * over flash's. */
        fprintf(out, "\n    %s, the memory-efficient kernel over flash attention "
                     "(forward/backward): %.2f/%.2f",
                aitk_workload_attention_mask(&r->workload) != AITK_MASK_NONE
                    ? "masked calls"
                    : "calls on Windows",
                p->masked_fwd, p->masked_bwd);
        for (size_t i = 0; i < p->n_masked_by_cc; i++)
            fprintf(out, ", %s %.2f/%.2f", p->masked_by_cc[i].cc, p->masked_by_cc[i].fwd,
                    p->masked_by_cc[i].bwd);
    }
    fprintf(out, "\n    overhead %.3f s/step; memory-bound kernels over a device copy: elementwise "
                 "chains %.2f, plain elementwise %.2f (defaults)\n",
            p->step_overhead_s, p->elt_chain_vs_copy, p->elt_plain_vs_copy);
    if (r->step_scale)
        fprintf(out, "  Step scale %.3f (measured, %s) multiplies every time below\n",
                r->step_scale->scale, r->calibration->report_path);
}

/* The trainer's validation stage, a second peak outside the step. */
static void explain_validation(FILE *out, const aitk_workload *w, const aitk_memory_plan *m)
{
    if (!(m->validation_total > 0))
        return;
    fprintf(out, "  Validation (trainer %s: a %ld px generation between steps), its own peak:\n",
            w->trainer ? w->trainer : "default", w->validation_resolution);
    fprintf(out, "    %-44s %8.2f GiB\n", "what stays from training (no LoRA gradients)",
            m->validation_kept / GIB);
    char name[64];
    snprintf(name, sizeof name, "text encoders loaded again (%s)",
             aitk_weight_dtype_name(w->validation_te_dtype));
    fprintf(out, "    %-44s %8.2f GiB\n", name, m->validation_text / GIB);
    fprintf(out, "    %-44s %8.2f GiB\n", "one block's forward, VAE kept for decoding",
            m->validation_forward / GIB);
    const double context = m->bytes[AITK_PLAN_CUDA_CONTEXT];
    fprintf(out, "    %-44s %8.2f GiB\n", "fragmentation allowance",
            (m->validation_total - context - m->validation_kept - m->validation_text -
             m->validation_forward) / GIB);
    fprintf(out, "    %-44s %8.2f GiB\n", "CUDA context", context / GIB);
    fprintf(out, "    %-44s %8.2f GiB%s\n", "validation peak", m->validation_total / GIB,
            m->validation_total > m->total ? " (the larger: it decides the fit)" : "");
}

static void explain(FILE *out, const aitk_predict_result *r, const aitk_cost_params *params)
{
    if (r->n_rows == 0)
        return;
    const aitk_prediction *p = &r->rows[0].pred;
    long largest = 0;
    for (size_t i = 0; i < r->workload.n_resolutions; i++)
        if (r->workload.resolutions[i] > largest)
            largest = r->workload.resolutions[i];
    fprintf(out, "\n  Memory plan at %ld px (same on every GPU):\n", largest);
    for (int i = 0; i < AITK_PLAN_TERMS; i++)
        fprintf(out, "    %-44s %8.2f GiB\n", aitk_plan_term_names[i], p->memory.bytes[i] / GIB);
    fprintf(out, "    %-44s %8.2f GiB\n", "peak", p->memory.total / GIB);
    explain_validation(out, &r->workload, &p->memory);
    fprintf(out, "  LoRA parameters: %.1f M\n", p->work.lora_params / 1e6);
    fprintf(out, "\n  Work of one optimizer step at %ld px:\n", largest);
    double total = 0;
    for (int i = 0; i < AITK_WORK_FLOP_TERMS; i++) {
        fprintf(out, "    %-52s %10.3e FLOP\n", aitk_work_flop_names[i], p->work.flops[i]);
        total += p->work.flops[i];
    }
    fprintf(out, "    %-52s %10.3e FLOP\n", "total", total);
    for (int i = 0; i < AITK_BYTES_TERMS; i++)
        fprintf(out, "    %-52s %10.3e B\n", aitk_work_byte_names[i], p->work.bytes[i]);
    explain_efficiencies(out, r, params);
    const aitk_gpu_table t = gpu_table(r);
    /* host: eager PyTorch's time to launch the step's kernels; the step
     * takes the larger of it and GEMM + attn + memory, then other. */
    fprintf(out, "\n  Time of one step at %ld px, seconds%s:\n    %-*s %9s %7s %7s %7s %7s %7s\n",
            largest, r->step_scale ? " (step scale included)" : "", t.name_width, "GPU",
            "matmul TF", "GEMM", "attn", "memory", "host", "other");
    for (size_t i = 0; i < r->n_rows; i++) {
        const aitk_prediction *q = &r->rows[i].pred;
        const aitk_gpu_spec *g = r->rows[i].gpu;
        /* The rate the job's matmuls were counted at: fp16's on a card
         * that lists its own, for a job in fp16. */
        fprintf(out, "    %-*s %8.1f%c %7.2f %7.2f %7.2f %7.2f %7.2f\n", t.name_width, g->name,
                aitk_gpu_matmul_tflops(g, r->workload.fp16), aitk_gpu_matmul_mark(g), q->t_gemm,
                q->t_attention, q->t_memory, q->t_host, q->t_overhead);
    }
    aitk_str legend = AITK_STR_INIT;
    /* Out of memory, the legend is left out; the table above stands. */
    if (aitk_gpu_table_legend(&t, "  ", "matmul TF", &legend) == AITK_OK)
        fputs(aitk_str_cstr(&legend), out);
    aitk_str_free(&legend);
    if (r->workload.fp16)
        fputs("  for this job, computed in fp16: the fp16 TFLOP/s where the GPU lists its own (no "
              "bf16 tensor cores), the bf16 ones elsewhere\n",
              out);
}

/* What the margin column measures, with the figures behind it: the one
 * GPU's own, or for several the rule alone. */
static void fit_legend(FILE *out, const aitk_predict_result *r, const aitk_cost_params *p)
{
    fprintf(out, "  margin: usable memory less the peak's allocations, %% of usable; usable = "
                 "torch's total_memory less the CUDA context (%.2f GiB) and the allocator's "
                 "reserve (%.0f MiB)", p->cuda_context_gib, p->allocator_reserve_mib);
    if (r->n_rows == 1) {
        const aitk_gpu_spec *g = r->rows[0].gpu;
        fprintf(out, "; %s: %.2f GiB (%s), %.2f GiB usable", g->name,
                r->rows[0].pred.total_memory_bytes / GIB, aitk_gpu_total_memory_kind(g),
                r->rows[0].pred.usable_bytes / GIB);
    }
    fputc('\n', out);
}

/* One line under the table when a row does not fit or is tight: what the
 * Windows driver does with such a job instead of failing, and how to get
 * the failure back. */
static void spill_note(FILE *out, const aitk_predict_result *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_rows; i++)
        n += may_spill_on_windows(&r->rows[i].pred, r->peak_error);
    if (!n)
        return;
    fprintf(out, "  on Windows, a job marked NO or tight may not stop: NVIDIA's driver (536.40 "
                 "and later) by default moves what does not fit into system memory and goes "
                 "on over PCIe, many times slower than the s/step shown; to get the "
                 "out-of-memory error instead, set 'CUDA - Sysmem Fallback Policy' to 'Prefer "
                 "No Sysmem Fallback' for python.exe (NVIDIA Control Panel, driver 546.01 and "
                 "later; nvidia.custhelp.com/app/answers/detail/a_id/5490)\n");
}

/* One line under the table when a row's step is shorter than an eager
 * step's host time (aitk_predict_host_bound), naming how many. */
static void host_note(FILE *out, const aitk_predict_result *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_rows; i++)
        n += aitk_predict_host_bound(&r->rows[i].pred);
    if (!n)
        return;
    fprintf(out, "  host-bound:");
    for (size_t i = 0, k = 0; i < r->n_rows; i++)
        if (aitk_predict_host_bound(&r->rows[i].pred))
            fprintf(out, "%s %s", k++ ? "," : "", r->rows[i].gpu->name);
    const aitk_prediction *q = &r->rows[0].pred;
    fprintf(out, " (%zu of %zu) the GPU would finish the step's work in less time than "
                 "eager PyTorch takes to launch its %.0f kernels (%.2f s at %.1f us each, "
                 "as on an H200 VM's host): the time shown is the host's; a faster CPU "
                 "shortens it, a slower one lengthens it (models/cost.yaml "
                 "host_seconds_per_kernel)\n",
            n, r->n_rows, q->kernels, q->t_host, q->t_host / q->kernels * 1e6);
}

void aitk_predict_print_text(FILE *out, const aitk_predict_result *r, const aitk_cost_params *p,
                             bool explain_it)
{
    describe_workload(out, r);
    const aitk_model_targets *t = &r->spec->targets;
    fprintf(out, "  documented target: %.0f GB VRAM, %s, %.0f min per 1000 steps (%s)\n",
            t->min_vram_gb, t->recommended_gpu, t->minutes_per_1000, t->source);
    const int w = gpu_table(r).name_width;
    const bool sampling = any_sampling(r);
    const bool ranged = r->range && r->range->n > 0;
    fprintf(out, "  %-*s %7s %9s %5s %17s %8s %9s %9s%s%s\n", w, "GPU", "VRAM", "peak", "fits",
            "margin", "s/step", "min/1000", "USD/1000", ranged ? "  s/step range" : "",
            sampling ? "  sampling min/1000" : "");
    for (size_t i = 0; i < r->n_rows; i++) {
        const aitk_predict_row *row = &r->rows[i];
        const aitk_prediction *q = &row->pred;
        const double minutes = aitk_predict_minutes_per_1000(q);
        fprintf(out, "  %-*s %3.0f GiB %5.1f GiB %5s %+6.1f GiB %+5.1f%% %8.2f %9.1f ", w,
                row->gpu->name, row->gpu->vram_gb, aitk_memory_plan_peak(&q->memory) / GIB,
                q->fits ? "yes" : "NO",
                q->margin_bytes / GIB, aitk_prediction_margin_percent(q), q->step_s, minutes);
        if (row->price_per_hour >= 0)
            fprintf(out, "%9.2f", minutes / 60.0 * row->price_per_hour);
        else
            fprintf(out, "%9s", "-");
        if (ranged)
            fprintf(out, "  %5.2f-%.2f", q->step_s * r->range->lo, q->step_s * r->range->hi);
        if (sampling)
            fprintf(out, "  %18.1f", q->sample_s_per_1000 / 60.0);
        fputc('\n', out);
        if (row->has_fp16)
            fprintf(out, "      no bf16 tensor cores: bf16 matmuls run at %.1f TFLOP/s here, fp16 "
                         "at %.1f; in fp16 (--dtype fp16, ai-toolkit train.dtype: fp16) %.2f "
                         "s/step\n",
                    row->gpu->matmul_bf16_tflops, row->gpu->matmul_fp16_tflops,
                    row->fp16.step_s);
        if (aitk_predict_tight(q, r->peak_error))
            fprintf(out, "      tight: needs %.1f of %.1f GiB usable; measured peaks have come to "
                         "up to %.2fx the model's (predict --reported), so it may not fit\n",
                    q->needed_bytes / GIB, q->usable_bytes / GIB, r->peak_error->hi);
        if (!q->fits) {
            int idx[AITK_PLAN_TERMS];
            sort_terms(&q->memory, idx);
            aitk_str said = AITK_STR_INIT;
            aitk_prediction_fit_text(q, &said);
            const aitk_memory_plan *m = &q->memory;
            if (m->validation_total > m->total) {
                /* The training step would fit; the trainer's validation
                 * stage, with the text encoders loaded again, does not. */
                fprintf(out, "      %s at the trainer's validation: text encoders loaded again "
                             "%.1f GiB on %.1f GiB kept from training (the step alone: peak "
                             "%.1f GiB)\n",
                        aitk_str_cstr(&said), m->validation_text / GIB,
                        m->validation_kept / GIB, m->total / GIB);
            } else {
                fprintf(out, "      %s; largest terms:", aitk_str_cstr(&said));
                for (int k = 0; k < 3; k++)
                    fprintf(out, "%s %s %.1f GiB", k ? "," : "", aitk_plan_term_names[idx[k]],
                            m->bytes[idx[k]] / GIB);
                fputc('\n', out);
            }
            aitk_str_free(&said);
            if (row->hint.found)
                fprintf(out, "      fits with %s: peak %.1f GiB, %.2f s/step\n", row->hint.change,
                        aitk_memory_plan_peak(&row->hint.pred.memory) / GIB, row->hint.pred.step_s);
            else
                fprintf(out, "      does not fit with any change tried (%s)\n",
                        aitk_fit_tries_text);
        }
    }
    fit_legend(out, r, p);
    spill_note(out, r);
    host_note(out, r);
    if (r->step_scale)
        fprintf(out, "  step times x %.3f: %s measured %.3g s/step on %s where the model with "
                     "these efficiencies predicts %.3g s (%s)\n",
                r->step_scale->scale, r->spec->id, r->step_scale->measured_s,
                r->calibration->gpu->name, r->step_scale->predicted_s,
                r->calibration->report_path);
    if (explain_it)
        explain(out, r, p);
    fputc('\n', out);
}

/* ---- JSON ---- */

static cJSON *terms_json(const char *const *names, const double *values, int n)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < n; i++)
        cJSON_AddNumberToObject(o, names[i], values[i]);
    return o;
}

/* The job as predicted ("workload"), with the trainer's settings. */
static void add_workload_json(cJSON *o, const aitk_workload *w)
{
    cJSON *wj = cJSON_AddObjectToObject(o, "workload");
    if (!wj)
        return;
    cJSON *res = cJSON_AddArrayToObject(wj, "resolutions");
    for (size_t i = 0; res && i < w->n_resolutions; i++)
        cJSON_AddItemToArray(res, cJSON_CreateNumber((double)w->resolutions[i]));
    cJSON_AddNumberToObject(wj, "batch", (double)w->batch);
    cJSON_AddNumberToObject(wj, "gradient_accumulation", (double)w->accumulation);
    cJSON_AddNumberToObject(wj, "rank", (double)w->rank);
    cJSON_AddNumberToObject(wj, "alpha", (double)w->alpha);
    cJSON_AddStringToObject(wj, "base_dtype", aitk_weight_dtype_name(w->base_dtype));
    cJSON_AddStringToObject(wj, "text_encoder_dtype", aitk_weight_dtype_name(w->te_dtype));
    cJSON_AddStringToObject(wj, "optimizer", w->optimizer);
    cJSON_AddStringToObject(wj, "trainer", w->trainer ? w->trainer : "ai-toolkit");
    if (w->not_modelled)
        cJSON_AddStringToObject(wj, "not_modelled", w->not_modelled);
    cJSON_AddStringToObject(wj, "attention_mask",
                            aitk_attention_mask_name(aitk_workload_attention_mask(w)));
    cJSON_AddStringToObject(wj, "os", aitk_host_os_name(w->os));
    cJSON_AddNumberToObject(wj, "text_tokens", (double)aitk_workload_text_tokens(w));
    cJSON_AddStringToObject(wj, "fp8_path", aitk_fp8_path_name(w->fp8_path));
    cJSON_AddBoolToObject(wj, "gradient_checkpointing", w->checkpointing);
    cJSON_AddStringToObject(wj, "precision", w->fp16 ? "fp16" : "bf16");
    cJSON_AddBoolToObject(wj, "autocast", w->autocast);
    cJSON_AddBoolToObject(wj, "cache_latents", w->cache_latents);
    cJSON_AddBoolToObject(wj, "cache_text_embeddings", w->cache_text);
    cJSON_AddNumberToObject(wj, "lora_bytes_per_param", w->lora_bytes);
}

/* The time and cost figures of one GPU row. */
static void add_row_times_json(cJSON *g, const aitk_predict_result *r,
                               const aitk_predict_row *row)
{
    const aitk_prediction *q = &row->pred;
    cJSON_AddNumberToObject(g, "step_seconds", q->step_s);
    if (r->range && r->range->n > 0) {
        cJSON *sr = cJSON_AddObjectToObject(g, "step_seconds_range");
        cJSON_AddNumberToObject(sr, "low", q->step_s * r->range->lo);
        cJSON_AddNumberToObject(sr, "high", q->step_s * r->range->hi);
        cJSON_AddNumberToObject(sr, "reported_runs", (double)r->range->n);
    }
    cJSON_AddNumberToObject(g, "minutes_per_1000_steps", aitk_predict_minutes_per_1000(q));
    cJSON_AddNumberToObject(g, "sampling_minutes_per_1000_steps", q->sample_s_per_1000 / 60.0);
    /* Inside step_seconds: the loop runs it between steps. */
    cJSON_AddNumberToObject(g, "validation_loss_seconds_per_step", q->val_loss_s);
    /* The rate GEMM and attention time were counted against, and whether
     * people measured it or it is the default share of the datasheet. */
    cJSON_AddNumberToObject(g, "matmul_bf16_tflops", row->gpu->matmul_bf16_tflops);
    cJSON_AddStringToObject(g, "matmul_kind", aitk_gpu_matmul_kind(row->gpu));
    cJSON_AddStringToObject(g, "matmul_source", aitk_gpu_matmul_source(row->gpu));
    /* A card whose fp16 rate is its own (no bf16 tensor cores): that rate,
     * which a job in fp16 is counted against, and for a bf16 job the step
     * it would take in fp16. */
    if (row->gpu->matmul_fp16_tflops > 0) {
        cJSON_AddNumberToObject(g, "matmul_fp16_tflops", row->gpu->matmul_fp16_tflops);
        cJSON_AddStringToObject(g, "matmul_fp16_source", row->gpu->matmul_fp16_source);
    }
    if (row->has_fp16)
        cJSON_AddNumberToObject(g, "step_seconds_in_fp16", row->fp16.step_s);
    if (row->price_per_hour >= 0) {
        cJSON_AddNumberToObject(g, "price_per_hour_usd", row->price_per_hour);
        cJSON_AddNumberToObject(g, "usd_per_1000_steps",
                                aitk_predict_minutes_per_1000(q) / 60.0 * row->price_per_hour);
    }
    cJSON *tm = cJSON_AddObjectToObject(g, "seconds_at_largest_resolution");
    if (tm) {
        cJSON_AddNumberToObject(tm, "gemm", q->t_gemm);
        cJSON_AddNumberToObject(tm, "attention", q->t_attention);
        cJSON_AddNumberToObject(tm, "memory", q->t_memory);
        cJSON_AddNumberToObject(tm, "other", q->t_overhead);
        cJSON_AddNumberToObject(tm, "host", q->t_host);
    }
    cJSON_AddNumberToObject(g, "kernels_per_step", q->kernels);
    /* The attention rate behind tm's attention: shares of matmul_bf16_tflops
     * by the GPU's compute capability (cost.yaml attention_by_cc). */
    cJSON *as = cJSON_AddObjectToObject(g, "attention_shares");
    if (as) {
        cJSON_AddNumberToObject(as, "fwd", q->attn_fwd_share);
        cJSON_AddNumberToObject(as, "bwd", q->attn_bwd_share);
    }
}

static aitk_status add_row_json(cJSON *gpus, const aitk_predict_result *r,
                                const aitk_predict_row *row)
{
    const aitk_prediction *q = &row->pred;
    cJSON *g = cJSON_CreateObject();
    if (!g || !cJSON_AddItemToArray(gpus, g)) {
        cJSON_Delete(g);
        return AITK_E_NOMEM;
    }
    cJSON_AddStringToObject(g, "gpu", row->gpu->name);
    cJSON_AddNumberToObject(g, "vram_bytes", q->vram_bytes);
    cJSON_AddNumberToObject(g, "peak_bytes", aitk_memory_plan_peak(&q->memory));
    if (q->memory.validation_total > 0)
        cJSON_AddNumberToObject(g, "validation_peak_bytes", q->memory.validation_total);
    cJSON_AddBoolToObject(g, "fits", q->fits);
    add_fit(g, row, r->peak_error);
    if (q->kernels > 0)
        cJSON_AddBoolToObject(g, "host_bound", aitk_predict_host_bound(q));
    if (!q->fits)
        add_fit_hint(g, &row->hint);
    add_row_times_json(g, r, row);
    return AITK_OK;
}

/* What does not depend on the GPU: the memory plan and the work of a step. */
static void add_plan_json(cJSON *o, const aitk_prediction *q)
{
    cJSON_AddItemToObject(o, "memory_plan_bytes",
                          terms_json(aitk_plan_term_names, q->memory.bytes, AITK_PLAN_TERMS));
    cJSON_AddItemToObject(o, "flops_per_step",
                          terms_json(aitk_work_flop_names, q->work.flops, AITK_WORK_FLOP_TERMS));
    cJSON_AddItemToObject(o, "bytes_per_step",
                          terms_json(aitk_work_byte_names, q->work.bytes, AITK_BYTES_TERMS));
    cJSON_AddNumberToObject(o, "lora_params", q->work.lora_params);
}

aitk_status aitk_predict_add_json(cJSON *arr, const aitk_predict_result *r)
{
    const aitk_workload *w = &r->workload;
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return AITK_E_NOMEM;
    }
    /* Adds that fail leave the tree whole; the caller's cJSON_Print reports it. */
    cJSON_AddStringToObject(o, "model", w->spec->id);
    cJSON_AddStringToObject(o, "title", r->title ? r->title : w->spec->title);
    if (r->config_path) {
        cJSON_AddStringToObject(o, "job", "LoRA");
        cJSON_AddStringToObject(o, "config", r->config_path);
    }
    add_workload_json(o, w);
    cJSON *ss = r->step_scale ? cJSON_AddObjectToObject(o, "step_scale") : NULL;
    if (ss) {
        cJSON_AddNumberToObject(ss, "value", r->step_scale->scale);
        cJSON_AddStringToObject(ss, "source", "measured step_time_s.median / predicted step on "
                                              "the measured GPU; see calibration.step_scales");
    }
    cJSON *tg = cJSON_AddObjectToObject(o, "documented_target");
    if (tg) {
        cJSON_AddNumberToObject(tg, "min_vram_gb", r->spec->targets.min_vram_gb);
        cJSON_AddStringToObject(tg, "recommended_gpu", r->spec->targets.recommended_gpu);
        cJSON_AddNumberToObject(tg, "minutes_per_1000_steps", r->spec->targets.minutes_per_1000);
        cJSON_AddStringToObject(tg, "source", r->spec->targets.source);
    }
    cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
    for (size_t i = 0; gpus && i < r->n_rows; i++) {
        aitk_status st = add_row_json(gpus, r, &r->rows[i]);
        if (st)
            return st;
    }
    if (r->n_rows > 0) /* GPU-independent, so given once per workload */
        add_plan_json(o, &r->rows[0].pred);
    return AITK_OK;
}

/* "efficiencies": the values used (numbers, as before calibration existed)
 * and "sources": for each, where its value comes from. */
static cJSON *efficiency_sources(const aitk_cost_params *p, const aitk_calibration *c)
{
    cJSON *o = cJSON_CreateObject();
    aitk_str text = AITK_STR_INIT;
    for (int i = 0; o && i < AITK_EFF_COUNT; i++) {
        const aitk_eff_calibration *e = c ? &c->eff[i] : NULL;
        aitk_str_clear(&text);
        if (!(e && e->measured))
            aitk_str_appendf(&text, "models/cost.yaml default%s", c ? " (not in the report)" : "");
        else
            aitk_str_appendf(&text, "measured: median of %zu %s entr%s on %s, %s (default %.3g)",
                             e->n_entries, aitk_str_cstr(&e->entries),
                             e->n_entries == 1 ? "y" : "ies", c->device_name, c->report_path,
                             e->default_value);
        if (e && e->measured && (i == AITK_EFF_ATTN_FWD || i == AITK_EFF_ATTN_BWD) &&
            aitk_cost_attention_entry(p, c->gpu))
            aitk_str_appendf(&text, "; it replaced attention_by_cc %s's, the other capabilities "
                                    "and this default keep theirs", c->gpu->cc);
        cJSON_AddStringToObject(o, aitk_eff_names[i], aitk_str_cstr(&text));
    }
    cJSON_AddStringToObject(o, "step_overhead_s", "models/cost.yaml default");
    cJSON_AddStringToObject(o, "elementwise_chain_vs_copy", "models/cost.yaml default");
    cJSON_AddStringToObject(o, "plain_elementwise_vs_copy", "models/cost.yaml default");
    aitk_str_free(&text);
    return o;
}

static cJSON *calibration_json(const aitk_calibration *c)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "report", c->report_path);
    cJSON_AddStringToObject(o, "device", c->device_name);
    cJSON_AddStringToObject(o, "gpu", c->gpu->name);
    cJSON_AddStringToObject(o, "device_choice", aitk_str_cstr(&c->device_choice));
    cJSON *m = cJSON_AddArrayToObject(o, "measured");
    cJSON *d = cJSON_AddArrayToObject(o, "defaults");
    for (int i = 0; i < AITK_EFF_COUNT; i++)
        cJSON_AddItemToArray(c->eff[i].measured ? m : d, cJSON_CreateString(aitk_eff_names[i]));
    cJSON *scales = cJSON_AddArrayToObject(o, "step_scales");
    for (size_t i = 0; scales && i < c->n_scales; i++) {
        const aitk_step_scale *s = &c->scales[i];
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToArray(scales, e)) {
            cJSON_Delete(e);
            break;
        }
        cJSON_AddStringToObject(e, "model", s->model);
        cJSON_AddNumberToObject(e, "scale", s->scale);
        cJSON_AddNumberToObject(e, "measured_step_s", s->measured_s);
        cJSON_AddNumberToObject(e, "predicted_step_s", s->predicted_s);
        cJSON_AddStringToObject(e, "configuration", aitk_str_cstr(&s->configuration));
    }
    if (c->ignored.len)
        cJSON_AddStringToObject(o, "ignored", aitk_str_cstr(&c->ignored));
    cJSON_AddStringToObject(o, "assumption", AITK_CALIBRATION_ASSUMPTION);
    return o;
}

aitk_status aitk_predict_add_params_json(cJSON *doc, const aitk_cost_params *p,
                                         const aitk_calibration *c)
{
    cJSON *e = cJSON_AddObjectToObject(doc, "efficiencies");
    if (!e)
        return AITK_E_NOMEM;
    cJSON_AddNumberToObject(e, "gemm", p->eff_gemm);
    cJSON_AddNumberToObject(e, "attention_fwd", p->eff_attn_fwd);
    cJSON_AddNumberToObject(e, "attention_bwd", p->eff_attn_bwd);
    cJSON *by_cc = cJSON_AddObjectToObject(e, "attention_by_cc");
    for (size_t i = 0; by_cc && i < p->n_attn_by_cc; i++) {
        cJSON *a = cJSON_AddObjectToObject(by_cc, p->attn_by_cc[i].cc);
        cJSON_AddNumberToObject(a, "fwd", p->attn_by_cc[i].fwd);
        cJSON_AddNumberToObject(a, "bwd", p->attn_by_cc[i].bwd);
    }
    cJSON_AddNumberToObject(e, "bandwidth", p->eff_bandwidth);
    cJSON_AddNumberToObject(e, "step_overhead_s", p->step_overhead_s);
    cJSON_AddNumberToObject(e, "elementwise_chain_vs_copy", p->elt_chain_vs_copy);
    cJSON_AddNumberToObject(e, "plain_elementwise_vs_copy", p->elt_plain_vs_copy);
    if (c) {
        aitk_str text = AITK_STR_INIT;
        aitk_str_appendf(&text, "calibrated with %s (measured on %s)", c->report_path,
                         c->device_name);
        cJSON_AddStringToObject(e, "source", aitk_str_cstr(&text));
        aitk_str_free(&text);
    } else {
        cJSON_AddStringToObject(e, "source", "models/cost.yaml defaults (not calibrated)");
    }
    cJSON_AddItemToObject(e, "sources", efficiency_sources(p, c));
    if (c)
        cJSON_AddItemToObject(doc, "calibration", calibration_json(c));
    return AITK_OK;
}

/* ---- --calibrate, as text ---- */

void aitk_calibration_print_text(FILE *out, const aitk_calibration *c)
{
    fprintf(out, "Calibrated with %s: %s (%s in models/gpus.yaml; %s)\n", c->report_path,
            c->device_name, c->gpu->name, aitk_str_cstr(&c->device_choice));
    for (int i = 0; i < AITK_EFF_COUNT; i++) {
        const aitk_eff_calibration *e = &c->eff[i];
        if (e->measured)
            fprintf(out, "  %s %.2f measured (was %.2f default) from %zu %s entr%s on %s, %s\n",
                    aitk_eff_names[i], e->value, e->default_value, e->n_entries,
                    aitk_str_cstr(&e->entries), e->n_entries == 1 ? "y" : "ies", c->device_name,
                    c->report_path);
        else
            fprintf(out, "  %s %.2f default (models/cost.yaml): not measured in %s\n",
                    aitk_eff_names[i], e->value, c->report_path);
    }
    for (size_t i = 0; i < c->n_scales; i++) {
        const aitk_step_scale *s = &c->scales[i];
        fprintf(out, "  step scale %s %.3f: measured %.3g s/step (median) on %s, predicted %.3g s "
                     "with the efficiencies above; configuration: %s\n",
                s->model, s->scale, s->measured_s, c->device_name, s->predicted_s,
                aitk_str_cstr(&s->configuration));
    }
    if (c->n_scales == 0)
        fprintf(out, "  step scale: none (no completed cuda workload of a known model in %s)\n",
                c->report_path);
    if (c->ignored.len)
        fprintf(out, "  ignored: %s\n", aitk_str_cstr(&c->ignored));
    fprintf(out, "  Assumption: %s\n\n", AITK_CALIBRATION_ASSUMPTION);
}
