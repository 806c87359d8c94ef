/* A fake CUDA backend plugin with one pretend GPU, for testing what the
 * validator does with a backend that answers (the loader's checks, the
 * gpu.plugin check's wording, the micro suite's GPU hook) on a machine
 * without a GPU. Every figure is synthetic and known in advance. Its
 * operation table is complete, but every op answers AITK_E_UNSUPPORTED:
 * nothing here computes.
 *
 * FAKE_MODE picks the variant, one module each:
 * 0: complete, cuDNN 9.14.0 and cuBLASLt 13.0.0 seen, and collectives over
 *    two pretend GPUs (GPU1 cannot access GPU0; every collective takes
 *    exactly 1 ms; NCCL 2.28.9);
 * 1: complete, no cuDNN, no collectives (a plugin built without NCCL);
 * 2: the descriptor lacks `paths`;
 * 3: the operation table lacks `attention_backward`;
 * 4: complete but for a collectives entry without `time`. */
#include <stdio.h>
#include <string.h>

#include "kernels/backend.h"

#ifndef FAKE_MODE
#define FAKE_MODE 0
#endif

static aitk_status probe(aitk_backend_probe *out)
{
    memset(out, 0, sizeof *out);
    out->runtime_version = out->driver_version = 13000;
    out->cublaslt_version = 130000;
    out->cudnn_version = FAKE_MODE == 1 ? 0 : 91400;
    out->device_count = out->n_devices = 1;
    snprintf(out->devices[0].name, sizeof out->devices[0].name, "Fake GPU 9000");
    out->devices[0].cc_major = 9;
    out->devices[0].total_memory_bytes = 80ull << 30;
    out->devices[0].sm_count = 100;
    out->devices[0].clock_khz = 1500000;
    return AITK_OK;
}

static aitk_status open_device(int device)
{
    return device == 0 ? AITK_OK : AITK_E_NOTFOUND;
}

static aitk_status synchronize(void)
{
    return AITK_OK;
}

static aitk_status mem_info(size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = *total_bytes = (size_t)80 << 30;
    return AITK_OK;
}

static size_t workspace_bytes(void)
{
    return 0;
}

static void last_error(char *buf, size_t len)
{
    snprintf(buf, len, "fake: every op is unsupported");
}

static aitk_status paths(aitk_backend_path *out, size_t cap, size_t *n)
{
    *n = 0;
    return AITK_OK;
}

static void close_backend(void)
{
}

static aitk_status fake_alloc(void **out, size_t bytes)
{
    return AITK_E_UNSUPPORTED;
}

static void fake_free(void *ptr)
{
}

static aitk_status fake_upload(void *dst, const void *host_src, size_t bytes)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_download(void *host_dst, const void *src, size_t bytes)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_upload_act(aitk_act *dst, const float *host_src, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_download_act(float *host_dst, const aitk_act *src, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_zero(void *dst, size_t bytes)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_draw_act(aitk_act *out, size_t n, uint64_t key, uint64_t first, float scale, float add)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_draw_f32(float *out, size_t n, uint64_t key, uint64_t first, float scale, float add)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_absmax(float *amax_host, const aitk_act *x, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_gemm(aitk_act *c, const aitk_act *a, const aitk_act *b, int m, int n, int k, bool trans_a, bool trans_b, float alpha, float beta, int batch, long long stride_a, long long stride_b, long long stride_c)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_lora_linear_forward(aitk_act *y, aitk_act *xa, const aitk_act *x, const aitk_act *w, const aitk_act *bias, const float *la, const float *lb, int n, int in, int out, int r, float scale)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_lora_linear_backward(aitk_act *dx, float *dla, float *dlb, aitk_act *work, const aitk_act *dy, const aitk_act *x, const aitk_act *xa, const aitk_act *w, const float *la, const float *lb, int n, int in, int out, int r, float scale, bool accumulate_dx)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_layernorm_forward(aitk_act *out, float *mean, float *rstd, const aitk_act *inp, int n, int c, float eps)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_layernorm_backward(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp, const float *mean, const float *rstd, int n, int c)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_rmsnorm_forward(aitk_act *out, float *rstd, const aitk_act *inp, const aitk_act *weight, int n, int c, float eps)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_rmsnorm_backward(aitk_act *dinp, float *dweight, const aitk_act *dout, const aitk_act *inp, const aitk_act *weight, const float *rstd, int n, int c)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_modulate_forward(aitk_act *out, const aitk_act *x, const aitk_act *shift, const aitk_act *scale, int b, int t, int c, int ld_mod)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_modulate_backward(aitk_act *dx, aitk_act *dshift, aitk_act *dscale, const aitk_act *dout, const aitk_act *x, const aitk_act *scale, int b, int t, int c, int ld_mod)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_layernorm_modulate_forward(aitk_act *out, aitk_act *ln, float *mean, float *rstd, const aitk_act *inp, const aitk_act *shift, const aitk_act *scale, int b, int t, int c, int ld_mod, float eps)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_layernorm_modulate_backward(aitk_act *dinp, aitk_act *dshift, aitk_act *dscale, const aitk_act *dout, const aitk_act *inp, const aitk_act *ln, const float *mean, const float *rstd, const aitk_act *scale, int b, int t, int c, int ld_mod)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_gated_residual_forward(aitk_act *resid, const aitk_act *x, const aitk_act *gate, int b, int t, int c, int ld_mod)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_gated_residual_backward(aitk_act *dx, aitk_act *dgate, const aitk_act *dresid, const aitk_act *x, const aitk_act *gate, int b, int t, int c, int ld_mod)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_rope_table(float *cos_t, float *sin_t, const float *pos, int t, int d, const int axes[3], float theta)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_rope_forward(aitk_act *out, const aitk_act *inp, const float *cos_t, const float *sin_t, int b, int t, int h, int d)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_rope_backward(aitk_act *dinp, const aitk_act *dout, const float *cos_t, const float *sin_t, int b, int t, int h, int d)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_gelu_forward(aitk_act *out, const aitk_act *inp, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_gelu_backward(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_silu_forward(aitk_act *out, const aitk_act *inp, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_silu_backward(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_swiglu_forward(aitk_act *out, const aitk_act *a, const aitk_act *u, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_swiglu_backward(aitk_act *da, aitk_act *du, const aitk_act *dout, const aitk_act *a, const aitk_act *u, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_attention_forward(aitk_act *out, float *lse, const aitk_act *q, const aitk_act *k, const aitk_act *v, int b, int t, int hq, int hkv, int d, float scale)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_attention_backward(aitk_act *dq, aitk_act *dk, aitk_act *dv, const aitk_act *dout, const aitk_act *q, const aitk_act *k, const aitk_act *v, const aitk_act *out, const float *lse, int b, int t, int hq, int hkv, int d, float scale)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_mse_forward(float *loss_host, const aitk_act *pred, const aitk_act *target, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_mse_backward(aitk_act *dpred, float dloss, const aitk_act *pred, const aitk_act *target, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_adamw_update(float *param, float *m, float *v, const float *grad, size_t n, const aitk_adamw_hparams *hp, long step)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_adamw8_update(float *param, uint8_t *m_q, uint8_t *v_q, float *m_scale, float *v_scale, const float *grad, size_t n, const aitk_adamw_hparams *hp, long step)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_fp8_dequantize(aitk_act *out, const uint8_t *q, float scale, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_fp8_quantize(uint8_t *q, const aitk_act *inp, float scale, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_nf4_dequantize(aitk_act *out, const uint8_t *q, const float *absmax, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_nf4_quantize(uint8_t *q, float *absmax, const aitk_act *inp, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_bf16_round(aitk_act *x, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_copy2d(aitk_act *dst, int ld_dst, const aitk_act *src, int ld_src, int rows, int cols)
{
    return AITK_E_UNSUPPORTED;
}

static aitk_status fake_axpy(aitk_act *y, float alpha, const aitk_act *x, size_t n)
{
    return AITK_E_UNSUPPORTED;
}

/* Not const: the variants clear one member in the entry point. */
static aitk_ops ops = {
    .name = "cuda",
    .act_dtype = AITK_DTYPE_BF16,
    .alloc = fake_alloc,
    .free = fake_free,
    .upload = fake_upload,
    .download = fake_download,
    .upload_act = fake_upload_act,
    .download_act = fake_download_act,
    .zero = fake_zero,
    .draw_act = fake_draw_act,
    .draw_f32 = fake_draw_f32,
    .absmax = fake_absmax,
    .gemm = fake_gemm,
    .lora_linear_forward = fake_lora_linear_forward,
    .lora_linear_backward = fake_lora_linear_backward,
    .layernorm_forward = fake_layernorm_forward,
    .layernorm_backward = fake_layernorm_backward,
    .rmsnorm_forward = fake_rmsnorm_forward,
    .rmsnorm_backward = fake_rmsnorm_backward,
    .modulate_forward = fake_modulate_forward,
    .modulate_backward = fake_modulate_backward,
    .layernorm_modulate_forward = fake_layernorm_modulate_forward,
    .layernorm_modulate_backward = fake_layernorm_modulate_backward,
    .gated_residual_forward = fake_gated_residual_forward,
    .gated_residual_backward = fake_gated_residual_backward,
    .rope_table = fake_rope_table,
    .rope_forward = fake_rope_forward,
    .rope_backward = fake_rope_backward,
    .gelu_forward = fake_gelu_forward,
    .gelu_backward = fake_gelu_backward,
    .silu_forward = fake_silu_forward,
    .silu_backward = fake_silu_backward,
    .swiglu_forward = fake_swiglu_forward,
    .swiglu_backward = fake_swiglu_backward,
    .attention_forward = fake_attention_forward,
    .attention_backward = fake_attention_backward,
    .mse_forward = fake_mse_forward,
    .mse_backward = fake_mse_backward,
    .adamw_update = fake_adamw_update,
    .adamw8_update = fake_adamw8_update,
    .fp8_dequantize = fake_fp8_dequantize,
    .fp8_quantize = fake_fp8_quantize,
    .nf4_dequantize = fake_nf4_dequantize,
    .nf4_quantize = fake_nf4_quantize,
    .bf16_round = fake_bf16_round,
    .copy2d = fake_copy2d,
    .axpy = fake_axpy,
};

/* Two pretend GPUs for the multigpu checks; only 0 -> 1 is a peer. */
static aitk_status fake_peers(aitk_backend_peers *out)
{
    memset(out, 0, sizeof *out);
    out->n_devices = 2;
    out->library_version = 22809;
    out->can_access[0][0] = out->can_access[1][1] = 1;
    out->can_access[0][1] = 1;
    return AITK_OK;
}

static aitk_status fake_time(aitk_collective kind, size_t count, aitk_dtype dtype, int warmup,
                             int iters, double *seconds)
{
    (void)kind, (void)count, (void)dtype, (void)warmup, (void)iters;
    *seconds = 1e-3;
    return AITK_OK;
}

static void fake_coll_close(void) {}

static const aitk_backend_collectives fake_collectives = {
    .peers = fake_peers, .time = fake_time, .close = fake_coll_close};
static const aitk_backend_collectives fake_collectives_no_time = {
    .peers = fake_peers, .close = fake_coll_close};

static aitk_backend backend = {
    .abi_version = AITK_BACKEND_ABI,
    .name = "cuda",
    .build = "fake",
    .probe = probe,
    .open = open_device,
    .ops = &ops,
    .synchronize = synchronize,
    .mem_info = mem_info,
    .workspace_bytes = workspace_bytes,
    .last_error = last_error,
    .paths = paths,
    .close = close_backend,
};

const aitk_backend *aitk_backend_plugin_get(int abi_version);
const aitk_backend *aitk_backend_plugin_get(int abi_version)
{
    if (FAKE_MODE == 0)
        backend.collectives = &fake_collectives;
    if (FAKE_MODE == 4)
        backend.collectives = &fake_collectives_no_time;
    if (FAKE_MODE == 2)
        backend.paths = NULL;
    if (FAKE_MODE == 3)
        ops.attention_backward = NULL;
    return abi_version == AITK_BACKEND_ABI ? &backend : NULL;
}
