/* The GPU database (models/gpus.yaml): datasheet figures for GPUs a person may
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
 * models/gpus.yaml's measured matmul rates and in the rates --calibrate reads
 * from a report alike. GeForce cards boost past the clock their datasheet
 * rate assumes (an RTX 5090's matmul ran 1.14x it), but not by this much:
 * more is a figure of another precision or an FP16-accumulate rate (2x on
 * GeForce), or a wrong datasheet row, and would make every prediction for
 * the GPU too fast. */
#define AITK_RATE_MAX_OVER_DATASHEET 1.25

/* The figures of a GPU entry, in the order the entries list them: the keys
 * its `unverified` list may name. */
#define AITK_GPU_FIGURES(X)                                                                \
    X(AITK_GPU_VRAM_GB, "vram_gb")                                                         \
    X(AITK_GPU_BANDWIDTH_GBS, "bandwidth_gbs")                                             \
    X(AITK_GPU_BF16_TFLOPS, "bf16_tflops")                                                 \
    X(AITK_GPU_FP16_TFLOPS, "fp16_tflops")                                                 \
    X(AITK_GPU_FP8_TFLOPS, "fp8_tflops")                                                   \
    X(AITK_GPU_FP32_TFLOPS, "fp32_tflops")                                                 \
    X(AITK_GPU_MATMUL_BF16_TFLOPS, "matmul_bf16_tflops")                                   \
    X(AITK_GPU_MATMUL_FP16_TFLOPS, "matmul_fp16_tflops")                                   \
    X(AITK_GPU_CC, "cc")                                                                   \
    X(AITK_GPU_PCIE_GEN, "pcie_gen")                                                       \
    X(AITK_GPU_TDP_W, "tdp_w")                                                             \
    X(AITK_GPU_TOTAL_MEMORY_GIB, "total_memory_gib")

typedef enum aitk_gpu_figure {
#define AITK_X_FIGURE_ENUM(id, key) id,
    AITK_GPU_FIGURES(AITK_X_FIGURE_ENUM)
#undef AITK_X_FIGURE_ENUM
    AITK_GPU_FIGURE_COUNT
} aitk_gpu_figure;

/* Each figure's key in models/gpus.yaml, indexed by aitk_gpu_figure. */
extern const char *const aitk_gpu_figure_keys[AITK_GPU_FIGURE_COUNT];

typedef struct aitk_gpu_spec {
    const char *name;          /* short display name: "RTX 4090" */
    const char *const *aliases; /* NULL-terminated, NVML names among them */
    double vram_gb, bandwidth_gbs, bf16_tflops, fp16_tflops, fp8_tflops, fp32_tflops;
    /* The bf16 rate the GPU's tensor cores sustain on a large matmul: the
     * figure models/gpus.yaml lists (measured, or for a GPU nobody measured,
     * derived from a measured sibling and marked unverified), else
     * bf16_tflops x the database's matmul_default_fraction, filled in when
     * the entry is loaded. The cost model's GEMM and attention efficiencies
     * are fractions of it, so a GeForce card that boosts past its datasheet
     * and a 300 W card that never reaches it are each counted at their own
     * speed. */
    double matmul_bf16_tflops;
    /* The listed figure's source (matmul_bf16_tflops: {value, source});
     * NULL: the default share. */
    const char *matmul_source;
    /* Where a GPU's fp16 matmul runs at another rate than its bf16 one (a
     * Turing or Volta card has fp16 tensor cores and no bf16 ones, so
     * torch's bf16 matmul falls back to far slower kernels there): the fp16
     * rate people measured, with its source (matmul_fp16_tflops: {value,
     * source}); 0 and NULL: the same as matmul_bf16_tflops. */
    double matmul_fp16_tflops;
    const char *matmul_fp16_source;
    /* The NVML name this card shares with a card of another memory size
     * (RTX 4060 Ti 16 and 8 GB): not an alias, since a probed card of that
     * name may be the other one; looking it up says so. NULL: none. */
    const char *nvml_shared;
    /* The memory a process sees, GiB, as PyTorch's total_memory reports it
     * (below vram_gb: what the driver keeps, and ECC), and where the figure
     * comes from; NULL: the entry lists none, and vram_gb read as GiB stands
     * in for it (models/gpudb_memory.c). */
    double total_memory_gib;
    const char *total_memory_source;
    const char *cc;            /* compute capability "8.9" */
    long pcie_gen, tdp_w;
    const char *source;
    /* The figures the entry's `unverified` list names: bit (1u << f) for
     * each aitk_gpu_figure f (aitk_gpu_is_unverified). */
    unsigned unverified;
} aitk_gpu_spec;

typedef struct aitk_gpudb {
    aitk_yaml_doc *doc; /* owns the strings */
    double matmul_default_fraction; /* for GPUs without a measured matmul rate */
    const char *matmul_default_source;
    aitk_gpu_spec *gpus;
    size_t count;
    const char **alias_store;  /* backing store of every aliases array */
} aitk_gpudb;

/* Whether g's entry lists figure f as unverified. */
bool aitk_gpu_is_unverified(const aitk_gpu_spec *g, aitk_gpu_figure f);
/* Appends the keys of g's unverified figures to out, ", " between them, in
 * the order of AITK_GPU_FIGURES; nothing when there are none. */
aitk_status aitk_gpu_unverified_text(const aitk_gpu_spec *g, aitk_str *out);
/* Where g's matmul_bf16_tflops comes from: its listed source, or the
 * database's default share of the datasheet rate. */
const char *aitk_gpu_matmul_source(const aitk_gpu_spec *g);
/* The matmul rate a job computing in fp16 (fp16 true) or bf16 gets on g,
 * and the datasheet's rate for the same precision: fp16's only where g
 * lists an fp16 matmul rate of its own. */
double aitk_gpu_matmul_tflops(const aitk_gpu_spec *g, bool fp16);
double aitk_gpu_datasheet_tflops(const aitk_gpu_spec *g, bool fp16);
/* Its mark in tables: ' ' measured, '~' derived (listed, and named in the
 * entry's unverified list), '*' the default share. */
char aitk_gpu_matmul_mark(const aitk_gpu_spec *g);
/* The same in a word, for JSON: "measured", "derived" or "default". */
const char *aitk_gpu_matmul_kind(const aitk_gpu_spec *g);

/* Where g's total_memory_gib comes from: "reported" (a public figure),
 * "derived" (the header's rule; listed in the entry's unverified) or
 * "nominal" (none listed: vram_gb read as GiB). */
const char *aitk_gpu_total_memory_kind(const aitk_gpu_spec *g);
/* Reads an entry's optional total_memory_gib: {value, source} into g (after
 * vram_gb); a value outside [AITK_TOTAL_MEMORY_MIN_SHARE x vram_gb, vram_gb]
 * is refused, naming the place. Used by the database loader. */
aitk_status aitk_gpu_load_total_memory(const aitk_yaml_doc *doc, const aitk_yaml_node *entry,
                                       aitk_gpu_spec *g, aitk_str *err);
/* The smallest share of vram_gb a card's total memory can be: ECC takes
 * 1/16 of GDDR memory and the driver a few hundred MiB more (the published
 * cards keep 0.925 or more); far below is a figure of another card or
 * another unit. */
#define AITK_TOTAL_MEMORY_MIN_SHARE 0.85

/* Loads models/gpus.yaml (embedded, or from AITK_DATA_DIR). */
aitk_status aitk_gpudb_load(aitk_gpudb **out, aitk_str *err);
aitk_status aitk_gpudb_from_doc(aitk_yaml_doc *doc, aitk_gpudb **out, aitk_str *err);
void aitk_gpudb_free(aitk_gpudb *db);

/* Finds a GPU by name or alias, ignoring case, spaces, '-' and '_'. If no name
 * matches exactly, a unique partial match is accepted ("4090"); several
 * partial matches are AITK_E_INVAL listing them; none is AITK_E_NOTFOUND. */
aitk_status aitk_gpudb_find(const aitk_gpudb *db, const char *name, const aitk_gpu_spec **out,
                            aitk_str *err);
/* The row of a GPU a probe saw: as aitk_gpudb_find, but a name NVML gives
 * cards of more than one memory size (nvml_shared) is told apart by the
 * memory the probe reported (bytes; 0 when unknown): the listed card whose
 * vram_gb that is, allowing for what ECC keeps. A memory no listed card of
 * that name has is AITK_E_NOTFOUND, naming them. */
/* Whether NVML gives `name` to cards of more than one memory size (a row's
 * nvml_shared names it). */
bool aitk_gpudb_is_shared_name(const aitk_gpudb *db, const char *name);
aitk_status aitk_gpudb_find_probed(const aitk_gpudb *db, const char *name, double memory_bytes,
                                   const aitk_gpu_spec **out, aitk_str *err);

#endif
