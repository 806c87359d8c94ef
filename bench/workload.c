/* A reference workload from model id to report entry (see workload.h).
 *
 * The training-step graph (models/step.h) builds one model for the largest
 * bucket, before timing starts, and switches it to the bucket of each step:
 * the runner cycles the buckets in order (ai-toolkit picks a bucket per
 * batch; a fixed cycle repeats), so the mean step time over whole cycles
 * and the buckets' mean FLOPs describe the job, and the peak is the largest
 * bucket's, which is what one model cycling through buckets needs. */
#include "bench/workload.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/runner.h"
#include "common/alloc.h"
#include "models/aitk_config.h"
#include "models/spec.h"

#include "bench/workload_gemm_in_step.h"
#include "bench/workload_step.h"
#include "bench/workload_kernels.h"
#include "kernels/backend.h"
#include "models/gpudb.h"
#include "models/trainers.h"

aitk_status aitk_bench_workload_skipped(const char *model_id, const char *backend,
                                        const char *reason, cJSON **entry)
{
    cJSON *w = cJSON_CreateObject();
    if (!w || !cJSON_AddStringToObject(w, "name", model_id) ||
        !cJSON_AddStringToObject(w, "status", "skipped") ||
        (backend && !cJSON_AddStringToObject(w, "backend", backend)) ||
        !cJSON_AddStringToObject(w, "message", reason)) {
        cJSON_Delete(w);
        *entry = NULL;
        return AITK_E_NOMEM;
    }
    *entry = w;
    return AITK_OK;
}

static aitk_status failed_entry(const char *model_id, const char *backend, const char *why,
                                cJSON **entry)
{
    aitk_status st = aitk_bench_workload_skipped(model_id, backend, why, entry);
    if (!st)
        cJSON_ReplaceItemInObjectCaseSensitive(*entry, "status", cJSON_CreateString("failed"));
    return st;
}

/* FLOPs per step of each bucket by the cost model, without the text
 * encoders (the step graph trains on cached conditioning). `given`: the
 * caller's cost.yaml, or NULL to load it here. */
static aitk_status cost_flops(const aitk_model_spec *spec, const long *res, size_t n,
                              const aitk_cost_params *given, double *flops, aitk_str *err)
{
    aitk_cost_params *loaded = NULL;
    aitk_status st = given ? AITK_OK : aitk_cost_params_load(&loaded, err);
    if (st)
        return st;
    const aitk_cost_params *p = given ? given : loaded;
    aitk_workload w;
    aitk_workload_defaults(&w, spec);
    for (size_t b = 0; b < n && !st; b++) {
        aitk_step_work work;
        w.resolutions[0] = res[b];
        if ((st = aitk_cost_work(&w, p, res[b], &work)))
            break;
        flops[b] = 0;
        for (int k = 0; k < AITK_WORK_FLOP_TERMS; k++)
            if (k != AITK_WORK_CONDITIONING)
                flops[b] += work.flops[k];
    }
    aitk_cost_params_free(loaded);
    return st;
}


static aitk_status add_configuration(cJSON *w, const aitk_bench_plan *plan, bool tiny)
{
    cJSON *c = cJSON_AddObjectToObject(w, "configuration");
    cJSON *r = c ? cJSON_AddArrayToObject(c, "resolutions") : NULL;
    if (!r || !cJSON_AddStringToObject(c, "size", tiny ? "tiny" : "full") ||
        !cJSON_AddNumberToObject(c, "batch", (double)plan->batch) ||
        !cJSON_AddNumberToObject(c, "time_limit_s", plan->time_limit_s))
        return AITK_E_NOMEM;
    for (size_t b = 0; b < plan->n_buckets; b++)
        if (!cJSON_AddItemToArray(r, cJSON_CreateNumber((double)plan->resolutions[b])))
            return AITK_E_NOMEM;
    if (tiny && !cJSON_AddStringToObject(c, "note", "the model's tiny_dims (same architecture "
                                         "at CPU-test size) so that --full finishes in minutes "
                                         "on a few cores; CPU figures, not GPU predictions"))
        return AITK_E_NOMEM;
    return AITK_OK;
}

/* With --config the step follows the user's LoRA, batch, optimizer and
 * precision choices, but not their resolutions: full-size buckets on a CPU
 * would take hours. Said where a reader of the report looks. */
static aitk_status add_config_note(cJSON *w)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(w, "configuration");
    return c && cJSON_AddStringToObject(c, "from_config",
                                        "rank, alpha, batch, optimizer, base precision and "
                                        "checkpointing from --config; resolutions are the CPU "
                                        "backend's small buckets, not the config's")
               ? AITK_OK
               : AITK_E_NOMEM;
}

/* The cost model's memory plan next to the measured peak, so every run
 * checks the memory model (DESIGN: prediction error on every run). */
static aitk_status add_prediction(cJSON *w, double peak, double planned)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(w, "memory");
    if (!m || !isfinite(planned) || !(planned > 0))
        return AITK_OK;
    if (!cJSON_AddNumberToObject(m, "predicted_bytes", planned))
        return AITK_E_NOMEM;
    if (isfinite(peak) &&
        !cJSON_AddNumberToObject(m, "prediction_error_pct", 100.0 * (peak - planned) / planned))
        return AITK_E_NOMEM;
    return AITK_OK;
}

/* Losses of the run (warm-up included, in step order): first and last, the
 * first and last tenth of steps, whether it fell, and at most 200 points of
 * the curve for the HTML report, each the mean of its window of steps.
 * Every step draws the t and noise of the first (fixed_noise), so only the
 * LoRA changes and a step that trains makes the loss fall. With several
 * buckets the curve alternates (aitk_bench_steps_loss_summary: the tenths
 * and the fall are judged per bucket). */
static aitk_status add_loss(cJSON *w, const aitk_bench_steps *steps, size_t n_buckets)
{
    size_t n = 0;
    const double *loss = aitk_bench_steps_losses(steps, &n);
    if (n == 0)
        return AITK_OK;
    aitk_bench_loss_summary tenths;
    aitk_bench_steps_loss_summary(steps, &tenths);
    cJSON *l = cJSON_AddObjectToObject(w, "loss");
    cJSON *curve = l ? cJSON_AddArrayToObject(l, "curve") : NULL;
    if (!curve || !cJSON_AddNumberToObject(l, "first", loss[0]) ||
        !cJSON_AddNumberToObject(l, "last", loss[n - 1]) ||
        !cJSON_AddNumberToObject(l, "first_tenth_mean", tenths.first_tenth_mean) ||
        !cJSON_AddNumberToObject(l, "last_tenth_mean", tenths.last_tenth_mean) ||
        !cJSON_AddNumberToObject(l, "steps", (double)n) ||
        !cJSON_AddBoolToObject(l, "falls", tenths.falls) ||
        !cJSON_AddStringToObject(l, "of", n_buckets > 1
                                              ? "the MSE of each step's forward pass on fixed "
                                                "data (every step draws the t and noise of the "
                                                "first), warm-up included; the buckets take "
                                                "turns and each has its own level, so the "
                                                "curve alternates; tenths are of each bucket's "
                                                "own steps, averaged over the buckets, and it "
                                                "falls when it falls in every bucket"
                                              : "the MSE of each step's forward pass on fixed "
                                                "data (every step draws the t and noise of the "
                                                "first), warm-up included; tenths are means of "
                                                "steps"))
        return AITK_E_NOMEM;
    size_t window = (n + 199) / 200;
    for (size_t i = 0; i < n; i += window) {
        double sum = 0;
        size_t k = 0;
        for (; k < window && i + k < n; k++)
            sum += loss[i + k];
        if (!cJSON_AddItemToArray(curve, cJSON_CreateNumber(sum / (double)k)))
            return AITK_E_NOMEM;
    }
    return AITK_OK;
}

/* The buckets a GPU runs: the job's own (--config), else the cuda
 * section's of bench/workloads.yaml, else the model's largest default
 * bucket (1024 px). One model built for the largest runs them all. */
static void gpu_buckets(const aitk_bench_config *cfg, const aitk_bench_request *req,
                        const aitk_model_spec *spec, aitk_bench_plan *plan)
{
    const long *res = NULL;
    size_t n = 0;
    if (req->train && req->train->n_resolutions) {
        res = req->train->resolutions;
        n = req->train->n_resolutions;
    } else if (cfg->cuda.n_resolutions) {
        res = cfg->cuda.resolutions;
        n = cfg->cuda.n_resolutions;
    }
    n = n > AITK_BENCH_MAX_BUCKETS ? AITK_BENCH_MAX_BUCKETS : n;
    for (size_t i = 0; i < n; i++)
        plan->resolutions[i] = res[i];
    plan->n_buckets = n;
    if (n)
        return;
    long r = 0;
    for (size_t i = 0; i < spec->defaults.n_resolutions; i++)
        r = spec->defaults.resolutions[i] > r ? spec->defaults.resolutions[i] : r;
    plan->resolutions[0] = r > 0 ? r : spec->defaults.resolution;
    plan->n_buckets = 1;
}

/* The largest of the plan's buckets: the one that sets the peak. */
static long largest_bucket(const aitk_bench_plan *plan)
{
    long r = 0;
    for (size_t i = 0; i < plan->n_buckets; i++)
        r = plan->resolutions[i] > r ? plan->resolutions[i] : r;
    return r;
}

/* The cost model's answer for the same job on the same GPU, beside the
 * measurement: `predict` is what people without this GPU are told. */
static aitk_status add_predicted(cJSON *w, const aitk_bench_request *req,
                                 const aitk_model_spec *spec, const aitk_bench_plan *plan)
{
    const aitk_gpu_spec *gpu = req->device->gpu;
    if (!gpu)
        return AITK_OK;
    aitk_cost_params *loaded = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = req->cost_params ? AITK_OK : aitk_cost_params_load(&loaded, &err);
    const aitk_cost_params *p = req->cost_params ? req->cost_params : loaded;
    aitk_workload wl;
    aitk_prediction pr;
    aitk_trainers *trainers = NULL;
    if (!st)
        st = aitk_trainers_load(&trainers, &err);
    if (!st) {
        if (req->train)
            aitk_config_workload(req->train, spec, &wl);
        else
            aitk_workload_defaults(&wl, spec);
        /* As predict takes the job: an ai-toolkit job, with its trainer's
         * settings (models/trainers.yaml). */
        aitk_workload_set_trainer(&wl, trainers->fallback);
        /* The step measured beside it passes no attention mask: the job
         * without the one ai-toolkit's Chroma and OmniGen2 code adds (the
         * buyer report says that mask is not in a measured figure). */
        wl.attention_mask = AITK_MASK_NONE;
        /* Nor does it run a config's validation loss (train.validation_config),
         * which predict counts in the step of the job it reads. */
        wl.val_loss_every = 0;
        /* the buckets that ran: the cost model's time is their mean, its
         * memory their largest */
        memcpy(wl.resolutions, plan->resolutions, plan->n_buckets * sizeof(long));
        wl.n_resolutions = plan->n_buckets;
        st = aitk_cost_predict(&wl, p, gpu, &pr, &err);
    }
    aitk_trainers_free(trainers);
    aitk_cost_params_free(loaded);
    aitk_str_free(&err);
    if (st)
        return st == AITK_E_NOMEM ? st : AITK_OK; /* no prediction: nothing to set beside */
    cJSON *o = cJSON_AddObjectToObject(w, "predicted");
    return o && cJSON_AddNumberToObject(o, "step_s", pr.step_s) &&
                   cJSON_AddNumberToObject(o, "minutes_per_1000", pr.step_s * 1000.0 / 60.0) &&
                   cJSON_AddNumberToObject(o, "peak_bytes", aitk_memory_plan_peak(&pr.memory)) &&
                   cJSON_AddBoolToObject(o, "fits", pr.fits) &&
                   cJSON_AddStringToObject(o, "gpu", gpu->name) &&
                   cJSON_AddStringToObject(o, "source", "aitk-validate predict (models/cost.yaml) "
                                                        "for the same job on this GPU")
               ? AITK_OK
               : AITK_E_NOMEM;
}

/* A job that does not fit: the allocation that failed, what was already
 * allocated, and the memory plan, as an entry; never a crash. */
static aitk_status does_not_fit(const aitk_bench_request *req, const aitk_model_spec *spec,
                                const aitk_bench_alloc_failure *f,
                                const aitk_bench_plan *plan, cJSON **entry)
{
    const double gib = 1024.0 * 1024.0 * 1024.0;
    aitk_str msg = AITK_STR_INIT;
    aitk_str_appendf(&msg, "does not fit on %s: allocating %.2f GiB for %s (%s) failed with "
                           "%.2f GiB already allocated", req->device->name, f->bytes / gib,
                     f->tag, f->what, f->allocated / gib);
    if (isfinite(req->device->vram_bytes))
        aitk_str_appendf(&msg, " of %.1f GiB", req->device->vram_bytes / gib);
    if (f->limit > 0 && f->allocated + f->bytes > f->limit)
        aitk_str_appendf(&msg, "; the step may not hold more than the %.2f GiB the device had "
                               "free when it began (past that, NVIDIA's Windows driver would move "
                               "it into system memory and run it many times slower instead of "
                               "failing)", f->limit / gib);
    aitk_status st = aitk_str_status(&msg);
    if (!st)
        st = aitk_bench_workload_skipped(req->model_id, "cuda", aitk_str_cstr(&msg), entry);
    aitk_str_free(&msg);
    cJSON *m = st ? NULL : cJSON_AddObjectToObject(*entry, "memory");
    if (!st && (!m || !cJSON_AddBoolToObject(m, "fits", false) ||
                !cJSON_AddStringToObject(m, "failed_allocation", f->what) ||
                !cJSON_AddNumberToObject(m, "failed_bytes", f->bytes) ||
                !cJSON_AddNumberToObject(m, "allocated_bytes", f->allocated)))
        st = AITK_E_NOMEM;
    if (!st)
        st = add_predicted(*entry, req, spec, plan);
    return st;
}

/* The targets a GPU entry is judged against: the documented time scaled to
 * this GPU, its memory and the documented minimum. */
static aitk_status gpu_targets(const aitk_bench_request *req, const aitk_model_spec *spec,
                               aitk_bench_targets *t, aitk_str *source)
{
    *t = (aitk_bench_targets){.target_s = NAN, .documented_s = NAN,
                              .vram_bytes = req->device->vram_bytes,
                              .documented_min_bytes = spec->targets.min_vram_gb > 0
                                                          ? spec->targets.min_vram_gb * 1e9
                                                          : NAN,
                              .memory_source = spec->targets.source};
    if (!req->device->gpu || !req->device->gpudb)
        return AITK_OK;
    aitk_cost_params *loaded = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = req->cost_params ? AITK_OK : aitk_cost_params_load(&loaded, &err);
    const aitk_gpu_spec *tgpu = NULL;
    if (!st)
        st = aitk_bench_scaled_target(spec, req->device->gpudb, req->device->gpu,
                                      req->cost_params ? req->cost_params : loaded,
                                      &t->target_s, &tgpu, source, &err);
    if (!st) {
        t->target_gpu = tgpu->name;
        t->time_source = aitk_str_cstr(source);
        t->documented_s = spec->targets.minutes_per_1000 * 60.0;
    } else {
        t->target_s = NAN; /* no target: the entry is reported without a time verdict */
    }
    aitk_str_free(&err);
    aitk_cost_params_free(loaded);
    return st == AITK_E_NOMEM ? st : AITK_OK;
}

/* The runner's plan for this job on this backend: batch, steps, time
 * limit, and the buckets (the GPU runs the job's own, the CPU its small
 * configuration). */
static void make_plan(const aitk_bench_config *cfg, const aitk_bench_request *req,
                      const aitk_model_spec *spec, bool gpu, aitk_bench_plan *plan)
{
    const aitk_bench_backend_cfg *bc = gpu ? &cfg->cuda : &cfg->cpu;
    *plan = (aitk_bench_plan){
        .name = req->model_id,
        .batch = req->train ? req->train->batch
                 : spec->defaults.batch > 0 ? spec->defaults.batch : 1,
        .timed_steps = req->steps > 0 && !req->full ? req->steps : bc->standard_steps,
        .full = req->full,
        .requested_steps = req->full && req->steps > 0 ? req->steps : bc->full_steps,
        .time_limit_s = bc->time_limit_s,
        .warmup = aitk_warmup_default,
        .progress = req->progress,
    };
    if (!req->full)
        plan->requested_steps = 1000;
    if (gpu) {
        gpu_buckets(cfg, req, spec, plan);
        if (req->device->gpu && req->device->gpu->matmul_bf16_tflops > 0)
            plan->peak_flops = req->device->gpu->matmul_bf16_tflops * 1e12;
    } else {
        const long *res = bc->n_resolutions ? bc->resolutions : spec->defaults.resolutions;
        plan->n_buckets = bc->n_resolutions ? bc->n_resolutions : spec->defaults.n_resolutions;
        memcpy(plan->resolutions, res, plan->n_buckets * sizeof *res);
    }
}

/* The entry of a step that could not be built: "does not fit" when an
 * allocation ran out on the device, else the reason. */
static aitk_status not_built(const aitk_bench_request *req, const aitk_model_spec *spec,
                             aitk_status st, const aitk_bench_alloc_failure *fail,
                             const aitk_str *err, const char *bname,
                             const aitk_bench_plan *plan, cJSON **entry)
{
    if (st == AITK_E_NOMEM && fail->happened)
        return does_not_fit(req, spec, fail, plan, entry);
    aitk_str msg = AITK_STR_INIT;
    aitk_str_appendf(&msg, "could not build the training step: %s%s%s", aitk_strerror(st),
                     err->len ? ": " : "", aitk_str_cstr(err));
    st = st == AITK_E_NOMEM ? st : failed_entry(req->model_id, bname, msg.ptr, entry);
    aitk_str_free(&msg);
    return st;
}

static void entry_title(const aitk_bench_request *req, const aitk_model_spec *spec,
                        const aitk_bench_plan *plan, bool gpu, aitk_str *title)
{
    long rank = req->train ? req->train->rank : spec->defaults.rank;
    if (gpu) {
        aitk_str_appendf(title, "%s LoRA r%ld, ", spec->title, rank);
        for (size_t b = 0; b < plan->n_buckets; b++)
            aitk_str_appendf(title, "%s%ld", b ? "/" : "", plan->resolutions[b]);
        aitk_str_appendf(title, " px, batch %ld%s", plan->batch,
                         req->train ? " (from --config)" : "");
    } else {
        aitk_str_appendf(title, "%s LoRA r%ld, small CPU configuration%s", spec->title, rank,
                         req->train ? " (from --config)" : "");
    }
}

/* The job the step ran, as built: a figure is read against its rank, base
 * precision, optimizer and checkpointing (recomputing each block costs a
 * forward pass that MFU, by PaLM's definition, does not count). The CPU
 * reference's fp32 base has no name in the report's enum: left out. */
static aitk_status add_setup(cJSON *conf, const aitk_step_setup *s)
{
    const char *base = s->base == AITK_STEP_BASE_BF16  ? "bf16"
                       : s->base == AITK_STEP_BASE_FP8 ? "fp8"
                       : s->base == AITK_STEP_BASE_NF4 ? "nf4"
                                                       : NULL;
    if (!cJSON_AddNumberToObject(conf, "rank", (double)s->rank) ||
        !cJSON_AddNumberToObject(conf, "alpha", s->alpha) ||
        (base && !cJSON_AddStringToObject(conf, "base_dtype", base)) ||
        !cJSON_AddStringToObject(conf, "optimizer",
                                 s->optimizer == AITK_STEP_ADAMW8BIT ? "adamw8bit" : "adamw") ||
        !cJSON_AddBoolToObject(conf, "gradient_checkpointing", s->checkpointing))
        return AITK_E_NOMEM;
    return AITK_OK;
}

/* Which buckets ran and how: one model built for the largest, switched to
 * each bucket in turn. */
static aitk_status add_buckets_note(cJSON *conf, const aitk_bench_plan *plan)
{
    aitk_str note = AITK_STR_INIT;
    if (plan->n_buckets == 1) {
        aitk_str_appendf(&note, "one bucket, %ld px", plan->resolutions[0]);
    } else {
        aitk_str_append(&note, "buckets ");
        for (size_t b = 0; b < plan->n_buckets; b++)
            aitk_str_appendf(&note, "%s%ld", b ? ", " : "", plan->resolutions[b]);
        aitk_str_appendf(&note, " px, one step each in turn, on one model built for %ld px "
                                "(its buffers, and the peak, are that bucket's); the step time "
                                "is the mean of the timed steps (whole cycles at the standard "
                                "level), FLOPs per step the buckets' mean",
                         largest_bucket(plan));
    }
    aitk_status st = aitk_str_status(&note);
    if (!st && !cJSON_AddStringToObject(conf, "buckets_note", aitk_str_cstr(&note)))
        st = AITK_E_NOMEM;
    aitk_str_free(&note);
    return st;
}

/* What the step itself tells beside the runner's figures: LoRA parameter
 * count, the memory plan and the device's own peak, the losses, and (GPU)
 * the prediction for the same job. */
static aitk_status add_step_facts(cJSON *entry, const aitk_bench_request *req,
                                  const aitk_model_spec *spec, const aitk_bench_plan *plan,
                                  const aitk_bench_result *r, aitk_bench_steps *steps,
                                  double planned, bool gpu)
{
    aitk_status st = add_configuration(entry, plan, !gpu);
    if (!st && req->train && !gpu)
        st = add_config_note(entry);
    cJSON *conf = st ? NULL : cJSON_GetObjectItemCaseSensitive(entry, "configuration");
    if (!st &&
        !cJSON_AddNumberToObject(conf, "lora_params", (double)aitk_bench_steps_lora_params(steps)))
        st = AITK_E_NOMEM;
    if (!st)
        st = add_setup(conf, aitk_bench_steps_setup(steps));
    if (!st)
        st = add_buckets_note(conf, plan);
    if (!st)
        st = add_prediction(entry, r->peak_bytes, planned);
    const double device_peak = aitk_bench_steps_device_peak(steps);
    cJSON *mem = st ? NULL : cJSON_GetObjectItemCaseSensitive(entry, "memory");
    if (!st && mem && isfinite(device_peak) &&
        (!cJSON_AddNumberToObject(mem, "device_in_use_bytes", device_peak) ||
         !cJSON_AddStringToObject(mem, "device_in_use_source",
                                  "cudaMemGetInfo total - free, highest seen after a step: "
                                  "the CUDA context, library workspaces and other processes "
                                  "included")))
        st = AITK_E_NOMEM;
    if (!st)
        st = add_loss(entry, steps, plan->n_buckets);
    if (!st && gpu)
        st = add_predicted(entry, req, spec, plan);
    return st;
}

/* The backend's paths after the warm-up (the runner's after_warmup hook),
 * so the GEMM-in-step figures describe the timed steps alone. */
typedef struct warm_snapshot {
    const aitk_backend *be;
    aitk_bench_paths paths;
    aitk_status st;
} warm_snapshot;

static void take_warm_snapshot(void *ctx)
{
    warm_snapshot *w = ctx;
    w->st = aitk_bench_paths_take(w->be, &w->paths);
}

/* The step's GEMMs against the same GEMMs alone (workload_gemm_in_step.h),
 * when the timed steps ran. The model is freed first: the problems timed
 * alone need buffers of their own, and a job that filled the GPU would
 * leave no room for them. */
static aitk_status add_gemm_in_step(cJSON *entry, const aitk_backend *be,
                                    const aitk_bench_result *r, aitk_bench_steps **steps,
                                    const warm_snapshot *warm, const aitk_bench_paths *after)
{
    if (r->timed == 0 || r->outcome == AITK_BENCH_FAILED)
        return AITK_OK;
    if (warm->st)
        return warm->st;
    aitk_bench_steps_free(*steps);
    *steps = NULL;
    return aitk_bench_gemm_in_step_add(entry, be, &warm->paths, after);
}

/* What a GPU step may allocate: the device's free memory when it begins.
 * Past it a CUDA allocation fails on Linux, but NVIDIA's Windows driver
 * (536.40 and later) by default moves it into system memory and goes on
 * (NVIDIA support answer 5490), so a job that does not fit would be timed,
 * spilled and many times slower, as if it fitted. 0 (no cap) when the
 * backend cannot say. */
static double device_free_bytes(const aitk_backend *be)
{
    size_t free_b = 0, total_b = 0;
    if (!be->mem_info || be->mem_info(&free_b, &total_b) || free_b == 0 || free_b > total_b)
        return 0;
    return (double)free_b;
}

static aitk_status run_backend(const aitk_bench_config *cfg, const aitk_bench_request *req,
                               const aitk_model_spec *spec, const aitk_backend *be, bool gpu,
                               cJSON **entry)
{
    const char *bname = gpu ? "cuda" : "cpu";
    aitk_bench_plan plan;
    make_plan(cfg, req, spec, gpu, &plan);
    aitk_str err = AITK_STR_INIT, title = AITK_STR_INIT, tsource = AITK_STR_INIT;
    aitk_status st = cost_flops(spec, plan.resolutions, plan.n_buckets, req->cost_params,
                                plan.flops_per_step, &err);
    if (st == AITK_E_NOMEM)
        return st;
    aitk_str_clear(&err); /* no cost figures: the step graph's own count still applies */
    aitk_bench_steps *steps = NULL;
    aitk_bench_alloc_failure fail;
    aitk_bench_paths before, after = {0};
    warm_snapshot warm = {.be = be};
    if (aitk_bench_paths_take(be, &before))
        return AITK_E_NOMEM;
    st = aitk_bench_steps_create(spec, plan.resolutions, plan.n_buckets, req->train, be,
                                 gpu ? device_free_bytes(be) : 0, &steps, &fail, &err);
    plan.step = aitk_bench_steps_run;
    plan.peak_bytes = aitk_bench_steps_peak;
    plan.user = steps;
    if (gpu) {
        plan.after_warmup = take_warm_snapshot;
        plan.after_warmup_ctx = &warm;
    }
    if (st) {
        st = not_built(req, spec, st, &fail, &err, bname, &plan, entry);
        aitk_bench_paths_free(&before);
        aitk_str_free(&err);
        return st;
    }
    aitk_bench_result r;
    st = aitk_bench_run(&plan, &r);
    if (st) {
        aitk_bench_steps_free(steps);
        aitk_bench_paths_free(&before);
        aitk_bench_paths_free(&warm.paths);
        aitk_str_free(&err);
        return st;
    }
    st = aitk_bench_paths_take(be, &after);
    const double planned = aitk_bench_steps_planned(steps);
    aitk_bench_targets t = {.cpu_figures = true, .target_s = NAN, .documented_s = NAN, .vram_bytes = NAN,
                            .documented_min_bytes = NAN};
    if (!st && gpu)
        st = gpu_targets(req, spec, &t, &tsource);
    entry_title(req, spec, &plan, gpu, &title);
    if (!st)
        st = aitk_bench_result_json(&plan, &r, aitk_str_cstr(&title), bname, req->device->name,
                                    &t, entry);
    if (!st)
        st = add_step_facts(*entry, req, spec, &plan, &r, steps, planned, gpu);
    if (!st)
        st = aitk_bench_paths_json(*entry, &before, &after);
    if (!st && gpu)
        st = add_gemm_in_step(*entry, be, &r, &steps, &warm, &after);
    if (st && *entry) {
        cJSON_Delete(*entry);
        *entry = NULL;
    }
    aitk_bench_steps_free(steps);
    aitk_bench_result_free(&r);
    aitk_bench_paths_free(&before);
    aitk_bench_paths_free(&after);
    aitk_bench_paths_free(&warm.paths);
    aitk_str_free(&title);
    aitk_str_free(&tsource);
    aitk_str_free(&err);
    return st;
}

aitk_status aitk_bench_workload_run(const aitk_bench_config *cfg, const aitk_bench_request *req,
                                    cJSON **entry)
{
    *entry = NULL;
    if (!cfg || !req || !req->model_id || !req->device || !req->device->backend)
        return AITK_E_INVAL;
    const bool gpu = strcmp(req->device->backend, "cpu") != 0;
    const aitk_backend *be = gpu ? req->device->impl : aitk_backend_cpu();
    if (!be)
        return aitk_bench_workload_skipped(req->model_id, req->device->backend,
                                           "not run: no GPU backend is open (the gpu.plugin "
                                           "check says why)", entry);
    const aitk_bench_backend_cfg *bc = gpu ? &cfg->cuda : &cfg->cpu;
    aitk_model_spec *spec = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_model_spec_load(req->model_id, bc->tiny, &spec, &err);
    if (st) {
        aitk_str msg = AITK_STR_INIT;
        aitk_str_appendf(&msg, "could not load the model spec: %s", aitk_str_cstr(&err));
        st = st == AITK_E_NOMEM ? st
                                : failed_entry(req->model_id, req->device->backend, msg.ptr,
                                               entry);
        aitk_str_free(&msg);
        aitk_str_free(&err);
        return st;
    }
    aitk_str_free(&err);
    st = run_backend(cfg, req, spec, be, gpu, entry);
    aitk_model_spec_free(spec);
    return st;
}
