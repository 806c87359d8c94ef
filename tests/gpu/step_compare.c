/* Comparison helpers for bf16-storage steps (see step_compare.h). */
#include "step_compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void gpu_sums_add(gpu_vec_sums *s, const float *got, const float *ref, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const double g = got[i], r = ref[i];
        if (!isfinite(g))
            s->nonfinite = true;
        s->dot += g * r;
        s->got2 += g * g;
        s->ref2 += r * r;
        s->diff2 += (g - r) * (g - r);
    }
    s->n += n;
}

void gpu_sums_merge(gpu_vec_sums *into, const gpu_vec_sums *from)
{
    into->dot += from->dot;
    into->got2 += from->got2;
    into->ref2 += from->ref2;
    into->diff2 += from->diff2;
    into->n += from->n;
    into->nonfinite = into->nonfinite || from->nonfinite;
}

double gpu_sums_cosine(const gpu_vec_sums *s)
{
    if (s->nonfinite)
        return NAN;
    if (s->got2 == 0.0 && s->ref2 == 0.0)
        return 1.0;
    if (s->got2 == 0.0 || s->ref2 == 0.0)
        return 0.0;
    return s->dot / (sqrt(s->got2) * sqrt(s->ref2));
}

double gpu_sums_norm_err(const gpu_vec_sums *s)
{
    if (s->nonfinite)
        return NAN;
    if (s->ref2 == 0.0)
        return s->got2 == 0.0 ? 0.0 : INFINITY;
    return fabs(sqrt(s->got2) - sqrt(s->ref2)) / sqrt(s->ref2);
}

double gpu_sums_diff_err(const gpu_vec_sums *s)
{
    if (s->nonfinite)
        return NAN;
    if (s->ref2 == 0.0)
        return s->diff2 == 0.0 ? 0.0 : INFINITY;
    return sqrt(s->diff2) / sqrt(s->ref2);
}

/* Written as "not (x out of range)" so a NaN is never close. */
bool gpu_sums_close(const gpu_vec_sums *s, const gpu_vec_tol *tol)
{
    const double cosine = gpu_sums_cosine(s), norm_err = gpu_sums_norm_err(s);
    return cosine >= tol->min_cosine && norm_err <= tol->max_norm_err;
}

bool gpu_loss_close(double got, double ref, double tol)
{
    if (!isfinite(got) || ref == 0.0)
        return false;
    return fabs(got - ref) / fabs(ref) <= tol;
}

/* ---- snapshots ---- */

static bool is_lora(const aitk_step_model *m, size_t i, aitk_step_tensor *info)
{
    return aitk_step_tensor_info(m, i, info) == AITK_OK && info->kind == AITK_STEP_T_LORA;
}

aitk_status gpu_lora_snapshot_take(const aitk_step_model *m, gpu_lora_snapshot *out)
{
    memset(out, 0, sizeof *out);
    const size_t total = aitk_step_tensor_count(m);
    out->names = calloc(total ? total : 1, sizeof *out->names);
    out->values = calloc(total ? total : 1, sizeof *out->values);
    out->counts = calloc(total ? total : 1, sizeof *out->counts);
    if (!out->names || !out->values || !out->counts) {
        gpu_lora_snapshot_free(out);
        return AITK_E_NOMEM;
    }
    for (size_t i = 0; i < total; i++) {
        aitk_step_tensor info;
        if (!is_lora(m, i, &info))
            continue;
        const size_t k = out->n++;
        out->names[k] = strdup(info.name);
        out->values[k] = malloc(info.count * sizeof(float));
        out->counts[k] = info.count;
        if (!out->names[k] || !out->values[k]) {
            gpu_lora_snapshot_free(out);
            return AITK_E_NOMEM;
        }
        aitk_status st = aitk_step_tensor_get(m, i, out->values[k], info.count);
        if (st != AITK_OK) {
            gpu_lora_snapshot_free(out);
            return st;
        }
    }
    return AITK_OK;
}

const float *gpu_lora_snapshot_find(const gpu_lora_snapshot *s, const char *name, size_t count)
{
    for (size_t k = 0; k < s->n; k++)
        if (strcmp(s->names[k], name) == 0)
            return s->counts[k] == count ? s->values[k] : NULL;
    return NULL;
}

void gpu_lora_snapshot_free(gpu_lora_snapshot *s)
{
    /* take counts a slot before filling it, so a half-filled one is freed too. */
    for (size_t k = 0; k < s->n; k++) {
        free(s->names[k]);
        free(s->values[k]);
    }
    free(s->names);
    free(s->values);
    free(s->counts);
    memset(s, 0, sizeof *s);
}

/* ---- comparing a model with a golden file ---- */

/* got and ref of one tensor, with `base` subtracted from both when given. */
static void add_tensor(gpu_vec_sums *s, float *got, float *ref, const float *base, size_t n)
{
    if (base)
        for (size_t j = 0; j < n; j++) {
            got[j] -= base[j];
            ref[j] -= base[j];
        }
    gpu_sums_add(s, got, ref, n);
}

static aitk_status compare_one(const aitk_step_model *m, size_t i, const aitk_step_tensor *info,
                               const aitk_golden *g, const char *prefix, bool grads,
                               const gpu_lora_snapshot *base, gpu_tensor_cmp *out, aitk_str *err)
{
    aitk_str name = AITK_STR_INIT;
    aitk_str_appendf(&name, "%s%s", prefix, info->name);
    const aitk_golden_tensor *ref = aitk_golden_get(g, aitk_str_cstr(&name));
    aitk_status st = AITK_OK;
    const float *b = base ? gpu_lora_snapshot_find(base, info->name, info->count) : NULL;
    if (!ref || ref->count != info->count) {
        aitk_str_appendf(err, "golden tensor %s %s", aitk_str_cstr(&name),
                         ref ? "has another size" : "missing");
        st = ref ? AITK_E_INVAL : AITK_E_NOTFOUND;
    } else if (base && !b) {
        aitk_str_appendf(err, "no initial value of %s", info->name);
        st = AITK_E_NOTFOUND;
    }
    float *got = NULL, *want = NULL;
    if (st == AITK_OK) {
        got = malloc(info->count * sizeof *got);
        want = malloc(info->count * sizeof *want);
        st = got && want ? AITK_OK : AITK_E_NOMEM;
    }
    if (st == AITK_OK)
        st = grads ? aitk_step_grad_get(m, i, got, info->count)
                   : aitk_step_tensor_get(m, i, got, info->count);
    if (st == AITK_OK) {
        memcpy(want, ref->data, info->count * sizeof *want);
        memset(out, 0, sizeof *out);
        snprintf(out->name, sizeof out->name, "%s", info->name);
        add_tensor(&out->sums, got, want, b, info->count);
    }
    free(got);
    free(want);
    aitk_str_free(&name);
    return st;
}

aitk_status gpu_lora_compare(const aitk_step_model *m, const aitk_golden *g, const char *prefix,
                             bool grads, const gpu_lora_snapshot *base, gpu_lora_cmp *out,
                             aitk_str *err)
{
    memset(out, 0, sizeof *out);
    const size_t total = aitk_step_tensor_count(m);
    out->t = calloc(total ? total : 1, sizeof *out->t);
    if (!out->t)
        return AITK_E_NOMEM;
    for (size_t i = 0; i < total; i++) {
        aitk_step_tensor info;
        if (!is_lora(m, i, &info))
            continue;
        aitk_status st = compare_one(m, i, &info, g, prefix, grads, base, &out->t[out->n], err);
        if (st != AITK_OK) {
            gpu_lora_cmp_free(out);
            return st;
        }
        gpu_sums_merge(&out->all, &out->t[out->n].sums);
        out->n++;
    }
    return AITK_OK;
}

void gpu_lora_cmp_free(gpu_lora_cmp *c)
{
    free(c->t);
    memset(c, 0, sizeof *c);
}

static double rms_of_ref(const gpu_vec_sums *s)
{
    return s->n ? sqrt(s->ref2 / (double)s->n) : 0.0;
}

size_t gpu_lora_failures(const gpu_lora_cmp *c, const gpu_lora_rule *rule, FILE *log)
{
    size_t failures = 0;
    if (!gpu_sums_close(&c->all, &rule->all)) {
        failures++;
        fprintf(log, "  all tensors: cosine %.6f (min %.4g), norm error %.3g (max %.3g)\n",
                gpu_sums_cosine(&c->all), rule->all.min_cosine, gpu_sums_norm_err(&c->all),
                rule->all.max_norm_err);
    }
    const double floor = rule->small_rms_frac * rms_of_ref(&c->all);
    size_t judged = 0;
    for (size_t k = 0; k < c->n; k++) {
        const gpu_vec_sums *s = &c->t[k].sums;
        if (!s->nonfinite && rms_of_ref(s) < floor)
            continue;
        judged++;
        if (!gpu_sums_close(s, &rule->each)) {
            failures++;
            fprintf(log, "  %s: cosine %.6f (min %.4g), norm error %.3g (max %.3g)\n",
                    c->t[k].name, gpu_sums_cosine(s), rule->each.min_cosine,
                    gpu_sums_norm_err(s), rule->each.max_norm_err);
        }
    }
    fprintf(log, "  %zu of %zu tensors held to the per-tensor rule, %zu failures in all\n", judged, c->n,
            failures);
    return failures;
}

static void print_cell(FILE *out, const gpu_tensor_cmp *t)
{
    if (!t) {
        fprintf(out, " %10s %9s %9s", "-", "-", "-");
        return;
    }
    fprintf(out, " %10.6f %9.2e %9.2e", gpu_sums_cosine(&t->sums), gpu_sums_norm_err(&t->sums),
            gpu_sums_diff_err(&t->sums));
}

void gpu_lora_print_side_by_side(FILE *out, const char *title, const gpu_lora_cmp *cpu,
                                 const gpu_lora_cmp *gpu)
{
    fprintf(out, "%s: against the golden values (cosine, norm error, |diff|/|ref|)\n", title);
    fprintf(out, "  %-36s %10s %9s %9s | %10s %9s %9s\n", "tensor", "cpu cos", "norm err",
            "diff", "gpu cos", "norm err", "diff");
    for (size_t k = 0; k < cpu->n; k++) {
        const gpu_tensor_cmp *g = NULL;
        for (size_t j = 0; gpu && j < gpu->n; j++)
            if (strcmp(gpu->t[j].name, cpu->t[k].name) == 0)
                g = &gpu->t[j];
        fprintf(out, "  %-36.36s", cpu->t[k].name);
        print_cell(out, &cpu->t[k]);
        fprintf(out, " |");
        print_cell(out, g);
        fprintf(out, "  rms %.3g\n", rms_of_ref(&cpu->t[k].sums));
    }
    gpu_tensor_cmp all_cpu = {.sums = cpu->all}, all_gpu = {.sums = gpu ? gpu->all : cpu->all};
    snprintf(all_cpu.name, sizeof all_cpu.name, "all");
    fprintf(out, "  %-36s", "(all tensors as one vector)");
    print_cell(out, &all_cpu);
    fprintf(out, " |");
    print_cell(out, gpu ? &all_gpu : NULL);
    fprintf(out, "  rms %.3g\n", rms_of_ref(&cpu->all));
}

/* ---- the golden configuration ---- */

aitk_status gpu_golden_load_step(const char *model, aitk_golden *g, aitk_str *err)
{
    aitk_str path = AITK_STR_INIT;
    aitk_str_appendf(&path, "%s/tests/golden/data/step_", AITK_SOURCE_DIR);
    for (const char *c = model; *c; c++)
        aitk_str_appendc(&path, *c == '-' ? '_' : *c);
    aitk_str_append(&path, ".bin");
    aitk_status st = aitk_golden_load(g, aitk_str_cstr(&path), err);
    aitk_str_free(&path);
    return st;
}

aitk_status gpu_golden_setup(const aitk_golden *g, const aitk_model_spec *spec, bool ckpt,
                             aitk_step_setup *s, aitk_str *err)
{
    const aitk_golden_tensor *config = aitk_golden_get(g, "config");
    if (!config || config->count < 8) {
        aitk_str_append(err, "golden file has no config of 8 values");
        return AITK_E_PARSE;
    }
    const float *cfg = config->data;
    aitk_step_setup_defaults(s, spec);
    s->batch = (long)cfg[0];
    s->resolution = 0;
    s->img_tokens = (long)cfg[1];
    s->txt_tokens = (long)cfg[2];
    s->rank = (long)cfg[3];
    s->alpha = cfg[4];
    s->adamw.lr = cfg[5];
    s->adamw.weight_decay = cfg[6];
    s->seed = (uint64_t)cfg[7];
    s->base = AITK_STEP_BASE_FP32;
    s->optimizer = AITK_STEP_ADAMW;
    s->checkpointing = ckpt;
    return AITK_OK;
}
