/* The GPU database (bench/gpus.yaml): datasheet figures for GPUs a person may
 * not have, with the names NVML reports, so `predict` can answer for any of
 * them and a probed GPU can find its own row. */
#ifndef AITK_MODELS_GPUDB_H
#define AITK_MODELS_GPUDB_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"
#include "common/yaml.h"

/* A rate above a GPU's datasheet figure by more than this is refused, in
 * bench/gpus.yaml's measured matmul rates and in the rates --calibrate reads
 * from a report alike. GeForce cards boost past the clock their datasheet
 * rate assumes (an RTX 5090's matmul ran 1.14x it), but not by this much:
 * more is a figure of another precision or an FP16-accumulate rate (2x on
 * GeForce), or a wrong datasheet row, and would make every prediction for
 * the GPU too fast. */
#define AITK_RATE_MAX_OVER_DATASHEET 1.25

typedef struct aitk_gpu_spec {
    const char *name;          /* short display name: "RTX 4090" */
    const char *const *aliases; /* NULL-terminated, NVML names among them */
    double vram_gb, bandwidth_gbs, bf16_tflops, fp16_tflops, fp8_tflops, fp32_tflops;
    /* The bf16 rate the GPU's tensor cores sustain on a large matmul: the
     * figure bench/gpus.yaml lists (measured, or for a GPU nobody measured,
     * derived from a measured sibling and marked unverified), else
     * bf16_tflops x the database's matmul_default_fraction. The cost
     * model's GEMM and attention efficiencies are fractions of it, so a
     * GeForce card that boosts past its datasheet and a 300 W card that never
     * reaches it are each counted at their own speed. */
    double matmul_bf16_tflops;
    const char *matmul_source; /* where the listed figure comes from; NULL: the default share */
    const char *cc;            /* compute capability "8.9" */
    long pcie_gen, tdp_w;
    const char *source;
    const char *unverified;    /* comma-separated field names, "" if none */
} aitk_gpu_spec;

typedef struct aitk_gpudb {
    aitk_yaml_doc *doc; /* owns the strings */
    double matmul_default_fraction; /* for GPUs without a measured matmul rate */
    const char *matmul_default_source;
    aitk_gpu_spec *gpus;
    size_t count;
    const char **alias_store;  /* backing store of every aliases array */
    char **unverified_store;
} aitk_gpudb;

/* Where g's matmul_bf16_tflops comes from: its matmul_source, or the
 * database's default share of the datasheet rate. */
const char *aitk_gpu_matmul_source(const aitk_gpu_spec *g);
/* Its mark in tables: ' ' measured, '~' derived (listed, but unverified),
 * '*' the default share. */
char aitk_gpu_matmul_mark(const aitk_gpu_spec *g);

/* Loads bench/gpus.yaml (embedded, or from AITK_DATA_DIR). */
aitk_status aitk_gpudb_load(aitk_gpudb **out, aitk_str *err);
aitk_status aitk_gpudb_from_doc(aitk_yaml_doc *doc, aitk_gpudb **out, aitk_str *err);
void aitk_gpudb_free(aitk_gpudb *db);

/* Finds a GPU by name or alias, ignoring case, spaces, '-' and '_'. If no name
 * matches exactly, a unique partial match is accepted ("4090"); several
 * partial matches are AITK_E_INVAL listing them; none is AITK_E_NOTFOUND. */
aitk_status aitk_gpudb_find(const aitk_gpudb *db, const char *name, const aitk_gpu_spec **out,
                            aitk_str *err);

#endif
