/* bench_step: times whole training steps of the CPU reference step
 * (models/step.h), for the side-by-side comparison with PyTorch eager
 * (tests/golden/bench_step_torch.py builds the same model).
 *
 *   bench_step [--model flux1-dev|chroma|omnigen2] [--hidden N --heads N
 *              --mlp N --double N --single N] [--img N] [--txt N] [--rank N]
 *              [--batch N] [--steps N] [--warmup N] [--ckpt 0|1]
 *
 * The model starts from the spec's tiny dimensions; --hidden/--heads/--mlp/
 * --double/--single resize the MMDiT (head_dim = hidden / heads; 0 keeps the
 * tiny value). Defaults: hidden 256, 4 heads, 2 double + 4 single blocks,
 * 256 image + 64 text tokens, rank 16 (issue 6's speed configuration). Prints one
 * line per step and the median. Exit codes: 0 ok, 2 bad usage or a
 * configuration the graph rejects, 3 a step failed. Threads: OMP_NUM_THREADS / OPENBLAS_NUM_THREADS as usual. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/spec.h"
#include "models/step.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static aitk_block_spec *block(aitk_model_spec *s, const char *name)
{
    for (size_t i = 0; i < s->n_blocks; i++)
        if (strcmp(s->blocks[i].name, name) == 0)
            return &s->blocks[i];
    return NULL;
}

static void resize_linear(aitk_block_spec *b, const char *name, long in, long out)
{
    for (size_t i = 0; b && i < b->n_linears; i++)
        if (strcmp(b->linears[i].name, name) == 0) {
            if (in)
                b->linears[i].in = in;
            if (out)
                b->linears[i].out = out;
        }
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_step [--model ID] [--hidden N --heads N --mlp N --double N "
                    "--single N] [--img N] [--txt N] [--rank N] [--batch N] [--steps N] "
                    "[--warmup N] [--ckpt 0|1]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *model = "flux1-dev";
    /* defaults: the small FLUX-shaped configuration */
    long hidden = 256, heads = 4, mlp = 0, nd = 2, ns = 4, img = 256, txt = 64, rank = 16;
    long batch = 1, steps = 7, warmup = 2, ckpt = 1;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            return usage();
        const char *k = argv[i], *v = argv[++i];
        char *end = NULL;
        long n = strtol(v, &end, 10);
        if (strcmp(k, "--model") == 0) {
            model = v;
            continue;
        }
        if (!end || *end || n < 0)
            return usage();
        long *dst = strcmp(k, "--hidden") == 0   ? &hidden
                    : strcmp(k, "--heads") == 0  ? &heads
                    : strcmp(k, "--mlp") == 0    ? &mlp
                    : strcmp(k, "--double") == 0 ? &nd
                    : strcmp(k, "--single") == 0 ? &ns
                    : strcmp(k, "--img") == 0    ? &img
                    : strcmp(k, "--txt") == 0    ? &txt
                    : strcmp(k, "--rank") == 0   ? &rank
                    : strcmp(k, "--batch") == 0  ? &batch
                    : strcmp(k, "--steps") == 0  ? &steps
                    : strcmp(k, "--warmup") == 0 ? &warmup
                    : strcmp(k, "--ckpt") == 0   ? &ckpt
                                                 : NULL;
        if (!dst)
            return usage();
        *dst = n;
    }
    aitk_str err = AITK_STR_INIT;
    aitk_model_spec *spec = NULL;
    if (aitk_model_spec_load(model, true, &spec, &err) != AITK_OK) {
        fprintf(stderr, "bench_step: %s\n", aitk_str_cstr(&err));
        return 2;
    }
    aitk_block_spec *db = block(spec, "double_stream"), *sb = block(spec, "single_stream");
    if (db && sb) {
        if (hidden)
            spec->hidden = hidden;
        if (heads)
            db->heads = sb->heads = heads;
        db->head_dim = sb->head_dim = spec->hidden / db->heads;
        if (mlp || hidden)
            resize_linear(db, "img_mlp_in", 0, mlp ? mlp : 4 * spec->hidden);
        if (nd)
            db->count = nd;
        if (ns)
            sb->count = ns;
    }
    aitk_step_setup s;
    aitk_step_setup_defaults(&s, spec);
    s.batch = batch;
    s.resolution = 0;
    s.img_tokens = img;
    s.txt_tokens = txt;
    s.rank = rank;
    s.alpha = (double)rank;
    s.checkpointing = ckpt != 0;
    s.base = AITK_STEP_BASE_FP32;
    s.optimizer = AITK_STEP_ADAMW;
    aitk_mem_account acct = {0};
    aitk_step_model *m = NULL;
    aitk_status st = aitk_step_model_create(spec, &s, aitk_ops_cpu(), &acct, &m, &err);
    if (st != AITK_OK) {
        fprintf(stderr, "bench_step: %s\n", aitk_str_cstr(&err));
        aitk_model_spec_free(spec);
        aitk_str_free(&err);
        return st == AITK_E_INVAL || st == AITK_E_RANGE ? 2 : 3;
    }
    printf("model %s hidden %ld heads %ld double %ld single %ld img %ld txt %ld rank %ld batch "
           "%ld checkpointing %s, %zu LoRA params, peak %.1f MiB\n", model, spec->hidden,
           db ? db->heads : 0, db ? db->count : 0, sb ? sb->count : 0, img, txt, rank, batch,
           ckpt ? "on" : "off", aitk_step_lora_params(m), acct.peak_total / 1048576.0);
    double *t = calloc((size_t)(steps > 0 ? steps : 1), sizeof *t);
    int rc = 0;
    for (long i = 0; i < warmup + steps && t; i++) {
        aitk_step_result r;
        double t0 = now_s();
        if (aitk_step_run(m, &r) != AITK_OK) {
            rc = 3;
            break;
        }
        double dt = now_s() - t0;
        printf("step %ld: %.2f ms loss %.5f %.2f GFLOP (%.2f GFLOP/s)%s\n", r.step, dt * 1e3,
               r.loss, r.flops * 1e-9, r.flops * 1e-9 / dt, i < warmup ? " warm-up" : "");
        if (i >= warmup)
            t[i - warmup] = dt;
    }
    if (!rc && t && steps > 0) {
        qsort(t, (size_t)steps, sizeof *t, cmp_double);
        printf("median %.2f ms over %ld steps (min %.2f, max %.2f)\n", t[steps / 2] * 1e3, steps,
               t[0] * 1e3, t[steps - 1] * 1e3);
    }
    free(t);
    aitk_step_model_free(m);
    aitk_model_spec_free(spec);
    aitk_str_free(&err);
    return rc;
}
