/* Shared inside the CUDA backend (kernels/cuda) only: the one open device's
 * state, error wording, the report's path counters, and every op's
 * definition, which backend.c gathers into the aitk_ops table. CUDA types
 * are allowed here; this header never reaches the validator. */
#ifndef AITK_KERNELS_CUDA_INTERNAL_H
#define AITK_KERNELS_CUDA_INTERNAL_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything open() makes. One stream: every op is queued on it in call
 * order, so the graph's order is the GPU's order and synchronize is one
 * cudaStreamSynchronize. Buffers the backend keeps for itself grow on
 * demand and are freed by close; workspace_bytes is their sum. */
typedef struct aitk_cuda_ctx {
    bool open;
    int device, cc_major, cc_minor, sm_count;
    size_t smem_optin;          /* per-block shared memory a kernel may opt into */
    cudaStream_t stream;
    cublasLtHandle_t lt;
    void *gemm_ws;              /* the one cuBLASLt workspace */
    size_t gemm_ws_bytes;
    float *staging;             /* fp32 staging of upload_act / download_act */
    size_t staging_elems;
    uint16_t *lora_bf16;        /* bf16 copies of la and lb for one call */
    size_t lora_bf16_bytes;
    float *partials;            /* per-block partial sums (mse, absmax) */
    size_t partials_bytes;
    float *attn_scratch;        /* di = rowsum(dO * O) of the attention backward */
    size_t attn_scratch_bytes;
    void *attn_math;            /* the math attention path's workspace */
    size_t attn_math_bytes;
    void *cudnn_ws;             /* what cuDNN's plans ask for */
    size_t cudnn_ws_bytes;
    char error[AITK_BACKEND_ERROR_LEN];
} aitk_cuda_ctx;

extern aitk_cuda_ctx aitk_cuda;

/* Formats into a fixed buffer; a cut text ends with "..." (never silently). */
void aitk_cuda_errorf(char *buf, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* cudaSuccess: AITK_OK. Otherwise records "call: cudaErrorName: text" as
 * the last error and returns what it maps to: AITK_E_NOMEM for
 * cudaErrorMemoryAllocation, AITK_E_NOTFOUND for no device or driver,
 * AITK_E_UNSUPPORTED when the module has no code for the device,
 * AITK_E_INTERNAL otherwise. */
aitk_status aitk_cuda_check(cudaError_t e, const char *call);
aitk_status aitk_cuda_status_into(cudaError_t e, const char *call, char *buf, size_t len);
aitk_status aitk_cublas_check(cublasStatus_t s, const char *call);
/* AITK_E_INVAL with "op: why" as the last error: a graph bug. */
aitk_status aitk_cuda_inval(const char *op, const char *why);
/* AITK_E_INVAL when open() has not succeeded. */
aitk_status aitk_cuda_need_open(const char *op);
/* The launch status of the kernel just queued (cudaGetLastError). */
aitk_status aitk_cuda_launched(const char *kernel);

/* One more call of `op` served by `kernel` (the report's paths); returns
 * the path's index for aitk_cuda_timer_start, -1 when the table is full
 * (the call is then neither counted nor timed). */
int aitk_cuda_path(const char *op, const char *kernel);
void aitk_cuda_paths_reset(void);
/* Adds a timed call's device milliseconds to path `index`. */
void aitk_cuda_path_add_ms(int index, double ms);

/* Op timing (op_timer.c): on when AITK_TIME_OPS=1 at open (backend.h,
 * aitk_backend_path). A timed call is
 *     int slot; st = aitk_cuda_timer_start(aitk_cuda_path(op, kernel), &slot);
 *     if (!st) st = aitk_cuda_timer_stop(slot, <queue the work>);
 * start records an event before the work (nothing when timing is off:
 * *slot = -1), stop one after it and returns the work's status, or the
 * event call's when that failed. collect waits for the stream and adds
 * every pending pair's time to its path; paths() calls it. */
/* A call whose path is known only after it ran (attention: cuDNN or the
 * plain kernel) starts with AITK_CUDA_PATH_LATER and names it with
 * aitk_cuda_timer_name before stop. */
#define AITK_CUDA_PATH_LATER (-2)
void aitk_cuda_timer_name(int slot, int path);
bool aitk_cuda_timer_requested(void);
aitk_status aitk_cuda_timer_open(void);
void aitk_cuda_timer_close(void);
aitk_status aitk_cuda_timer_start(int path, int *slot);
aitk_status aitk_cuda_timer_stop(int slot, aitk_status call);
aitk_status aitk_cuda_timer_collect(void);

/* Grows *buf to at least `bytes` (stream-ordered free + alloc); used for
 * the backend's own buffers. */
aitk_status aitk_cuda_reserve(void **buf, size_t *have, size_t bytes, const char *what);

/* Most blocks a tensor reduction (absmax, mse) launches: few enough that
 * the host sums their partials from a stack array. */
#define AITK_CUDA_MAX_PARTIALS 1024

/* A reduction to the host in two halves around its kernel: begin picks the
 * grid for n elements (at most AITK_CUDA_MAX_PARTIALS blocks) and makes
 * room for one partial per block in aitk_cuda.partials; fetch copies the
 * grid's partials into host[] and waits for them. `op` names the op in
 * error texts. */
aitk_status aitk_cuda_partials_begin(size_t n, unsigned *grid, const char *op);
aitk_status aitk_cuda_partials_fetch(float *host, unsigned grid, const char *op);

/* Grid of a grid-stride loop over n items, 256 threads a block. */
unsigned aitk_cuda_grid(size_t n);

/* Token sums of modulate.cu per (sample, channel), in two column-sum
 * stages (kernels/math/colsum.h) into bf16 rows ld apart: dsumx of g x,
 * and dsum of g unless NULL. Shared by modulate_backward,
 * gated_residual_backward and layernorm_modulate_backward. */
aitk_status aitk_cuda_token_sums(const char *op, uint16_t *dsum, uint16_t *dsumx,
                                 const uint16_t *g, const uint16_t *x, int b, int t, int c,
                                 int ld);

/* cuDNN (attention_cudnn.c): loaded at open if present. */
int aitk_cudnn_runtime_version(void); /* loads the library if needed; 0: none */
aitk_status aitk_cudnn_open(void);    /* handle on aitk_cuda.stream; fine without cuDNN */
void aitk_cudnn_close(void);
bool aitk_cudnn_ready(void);
const char *aitk_cudnn_load_error(void);
/* AITK_OK when cuDNN ran it; else *why says why not (the plain kernel runs). */
aitk_status aitk_cudnn_sdpa_forward(aitk_act *out, float *lse, const aitk_act *q,
                                    const aitk_act *k, const aitk_act *v, int b, int t, int hq,
                                    int hkv, int d, float scale, const char **why);
aitk_status aitk_cudnn_sdpa_backward(aitk_act *dq, aitk_act *dk, aitk_act *dv,
                                     const aitk_act *dout, const aitk_act *q, const aitk_act *k,
                                     const aitk_act *v, const aitk_act *out, const float *lse,
                                     int b, int t, int hq, int hkv, int d, float scale,
                                     const char **why);
size_t aitk_cudnn_plan_cache_bytes(void);
/* The graph whose plan ran last (attention_cudnn_graph.h names): for the report. */
const char *aitk_cudnn_last_graph(bool backward);

/* NCCL collectives over every visible GPU (collectives.c); built only when
 * CMake finds nccl.h (AITK_CUDA_HAVE_NCCL), else the descriptor's entry is
 * NULL. */
extern const aitk_backend_collectives aitk_cuda_nccl;

/* The plain attention kernels (attention_plain.cu). */
aitk_status aitk_cuda_attention_plain_forward(aitk_act *out, float *lse, const aitk_act *q,
                                              const aitk_act *k, const aitk_act *v, int b,
                                              int t, int hq, int hkv, int d, float scale);
aitk_status aitk_cuda_attention_plain_backward(aitk_act *dq, aitk_act *dk, aitk_act *dv,
                                               const aitk_act *dout, const aitk_act *q,
                                               const aitk_act *k, const aitk_act *v,
                                               const aitk_act *out, const float *lse, int b,
                                               int t, int hq, int hkv, int d, float scale);

/* di = rowsum(dO * O) per (sample, query head, row), lse's layout, into the
 * backend's scratch (*di points there until the next call). */
aitk_status aitk_cuda_attention_di(float **di, const aitk_act *dout, const aitk_act *out, int b,
                                   int t, int hq, int d);

/* The math path (attention_math.cu): AITK_E_UNSUPPORTED with *why when it
 * cannot take the shape or cuBLASLt refuses one of its GEMMs (the plain
 * kernel runs then). */
aitk_status aitk_cuda_attention_math_forward(aitk_act *out, float *lse, const aitk_act *q,
                                             const aitk_act *k, const aitk_act *v, int b, int t,
                                             int hq, int hkv, int d, float scale,
                                             const char **why);
aitk_status aitk_cuda_attention_math_backward(aitk_act *dq, aitk_act *dk, aitk_act *dv,
                                              const aitk_act *dout, const aitk_act *q,
                                              const aitk_act *k, const aitk_act *v,
                                              const aitk_act *out, const float *lse, int b,
                                              int t, int hq, int hkv, int d, float scale,
                                              const char **why);

/* A GEMM inside another op (gemm.c): ops.h's gemm with an fp32 C when
 * c_f32, but no path and no timing of its own, so the outer op's path and
 * timer account for it. */
aitk_status aitk_cuda_gemm_inner(void *c, bool c_f32, const void *a, const void *b, int m, int n,
                                 int k, bool trans_a, bool trans_b, float alpha, float beta,
                                 int batch, long long stride_a, long long stride_b,
                                 long long stride_c);

/* ---- the ops (signatures and contracts: kernels/ops.h) ---- */
aitk_status aitk_cuda_alloc(void **out, size_t bytes);
void aitk_cuda_free(void *ptr);
aitk_status aitk_cuda_upload(void *dst, const void *host_src, size_t bytes);
aitk_status aitk_cuda_download(void *host_dst, const void *src, size_t bytes);
aitk_status aitk_cuda_upload_act(aitk_act *dst, const float *host_src, size_t n);
aitk_status aitk_cuda_download_act(float *host_dst, const aitk_act *src, size_t n);
aitk_status aitk_cuda_zero(void *dst, size_t bytes);
aitk_status aitk_cuda_draw_act(aitk_act *out, size_t n, uint64_t key, uint64_t first,
                               float scale, float add);
aitk_status aitk_cuda_draw_f32(float *out, size_t n, uint64_t key, uint64_t first, float scale,
                               float add);
aitk_status aitk_cuda_absmax(float *amax_host, const aitk_act *x, size_t n);
aitk_status aitk_cuda_gemm(aitk_act *c, const aitk_act *a, const aitk_act *b, int m, int n,
                           int k, bool trans_a, bool trans_b, float alpha, float beta, int batch,
                           long long stride_a, long long stride_b, long long stride_c);
aitk_status aitk_cuda_lora_linear_forward(aitk_act *y, aitk_act *xa, const aitk_act *x,
                                          const aitk_act *w, const aitk_act *bias,
                                          const float *la, const float *lb, int n, int in,
                                          int out, int r, float scale);
aitk_status aitk_cuda_lora_linear_backward(aitk_act *dx, float *dla, float *dlb, aitk_act *work,
                                           const aitk_act *dy, const aitk_act *x,
                                           const aitk_act *xa, const aitk_act *w,
                                           const float *la, const float *lb, int n, int in,
                                           int out, int r, float scale, bool accumulate_dx);
void aitk_cuda_gemm_close(void);
aitk_status aitk_cuda_layernorm_forward(aitk_act *out, float *mean, float *rstd,
                                        const aitk_act *inp, int n, int c, float eps);
aitk_status aitk_cuda_layernorm_backward(aitk_act *dinp, const aitk_act *dout,
                                         const aitk_act *inp, const float *mean,
                                         const float *rstd, int n, int c);
aitk_status aitk_cuda_rmsnorm_forward(aitk_act *out, float *rstd, const aitk_act *inp,
                                      const aitk_act *weight, int n, int c, float eps);
aitk_status aitk_cuda_rmsnorm_backward(aitk_act *dinp, float *dweight, const aitk_act *dout,
                                       const aitk_act *inp, const aitk_act *weight,
                                       const float *rstd, int n, int c);
aitk_status aitk_cuda_modulate_forward(aitk_act *out, const aitk_act *x, const aitk_act *shift,
                                       const aitk_act *scale, int b, int t, int c, int ld_mod);
aitk_status aitk_cuda_modulate_backward(aitk_act *dx, aitk_act *dshift, aitk_act *dscale,
                                        const aitk_act *dout, const aitk_act *x,
                                        const aitk_act *scale, int b, int t, int c, int ld_mod);
aitk_status aitk_cuda_layernorm_modulate_forward(aitk_act *out, aitk_act *ln, float *mean,
                                                 float *rstd, const aitk_act *inp,
                                                 const aitk_act *shift, const aitk_act *scale,
                                                 int b, int t, int c, int ld_mod, float eps);
aitk_status aitk_cuda_layernorm_modulate_backward(aitk_act *dinp, aitk_act *dshift,
                                                  aitk_act *dscale, const aitk_act *dout,
                                                  const aitk_act *inp, const aitk_act *ln,
                                                  const float *mean, const float *rstd,
                                                  const aitk_act *scale, int b, int t, int c,
                                                  int ld_mod);
aitk_status aitk_cuda_gated_residual_forward(aitk_act *resid, const aitk_act *x,
                                             const aitk_act *gate, int b, int t, int c,
                                             int ld_mod);
aitk_status aitk_cuda_gated_residual_backward(aitk_act *dx, aitk_act *dgate,
                                              const aitk_act *dresid, const aitk_act *x,
                                              const aitk_act *gate, int b, int t, int c,
                                              int ld_mod);
aitk_status aitk_cuda_rope_table(float *cos_t, float *sin_t, const float *pos, int t, int d,
                                 const int axes[3], float theta);
aitk_status aitk_cuda_rope_forward(aitk_act *out, const aitk_act *inp, const float *cos_t,
                                   const float *sin_t, int b, int t, int h, int d);
aitk_status aitk_cuda_rope_backward(aitk_act *dinp, const aitk_act *dout, const float *cos_t,
                                    const float *sin_t, int b, int t, int h, int d);
aitk_status aitk_cuda_gelu_forward(aitk_act *out, const aitk_act *inp, size_t n);
aitk_status aitk_cuda_gelu_backward(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp,
                                    size_t n);
aitk_status aitk_cuda_silu_forward(aitk_act *out, const aitk_act *inp, size_t n);
aitk_status aitk_cuda_silu_backward(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp,
                                    size_t n);
aitk_status aitk_cuda_swiglu_forward(aitk_act *out, const aitk_act *a, const aitk_act *u,
                                     size_t n);
aitk_status aitk_cuda_swiglu_backward(aitk_act *da, aitk_act *du, const aitk_act *dout,
                                      const aitk_act *a, const aitk_act *u, size_t n);
aitk_status aitk_cuda_attention_forward(aitk_act *out, float *lse, const aitk_act *q,
                                        const aitk_act *k, const aitk_act *v, int b, int t,
                                        int hq, int hkv, int d, float scale);
aitk_status aitk_cuda_attention_backward(aitk_act *dq, aitk_act *dk, aitk_act *dv,
                                         const aitk_act *dout, const aitk_act *q,
                                         const aitk_act *k, const aitk_act *v,
                                         const aitk_act *out, const float *lse, int b, int t,
                                         int hq, int hkv, int d, float scale);
aitk_status aitk_cuda_mse_forward(float *loss_host, const aitk_act *pred,
                                  const aitk_act *target, size_t n);
aitk_status aitk_cuda_mse_backward(aitk_act *dpred, float dloss, const aitk_act *pred,
                                   const aitk_act *target, size_t n);
aitk_status aitk_cuda_adamw_update(float *param, float *m, float *v, const float *grad,
                                   size_t n, const aitk_adamw_hparams *hp, long step);
aitk_status aitk_cuda_adamw8_update(float *param, uint8_t *m_q, uint8_t *v_q, float *m_scale,
                                    float *v_scale, const float *grad, size_t n,
                                    const aitk_adamw_hparams *hp, long step);
aitk_status aitk_cuda_fp8_dequantize(aitk_act *out, const uint8_t *q, float scale, size_t n);
aitk_status aitk_cuda_fp8_quantize(uint8_t *q, const aitk_act *inp, float scale, size_t n);
aitk_status aitk_cuda_nf4_dequantize(aitk_act *out, const uint8_t *q, const float *absmax,
                                     size_t n);
aitk_status aitk_cuda_nf4_quantize(uint8_t *q, float *absmax, const aitk_act *inp, size_t n);
aitk_status aitk_cuda_bf16_round(aitk_act *x, size_t n);
aitk_status aitk_cuda_copy2d(aitk_act *dst, int ld_dst, const aitk_act *src, int ld_src,
                             int rows, int cols);
aitk_status aitk_cuda_axpy(aitk_act *y, float alpha, const aitk_act *x, size_t n);

/* bf16 <-> fp32 conversion on the stream (copy.cu): n elements. */
aitk_status aitk_cuda_f32_to_bf16(uint16_t *dst, const float *src, size_t n, const char *op);
aitk_status aitk_cuda_bf16_to_f32(float *dst, const uint16_t *src, size_t n, const char *op);

#ifdef __cplusplus
}
#endif

#endif
