/* What every table of GPUs prints alike: the width of its GPU column and the
 * legend of the marks beside matmul rates (aitk_gpu_matmul_mark), so that
 * `aitk-validate gpus` and `predict` line up and explain a '~' or a '*' in
 * the same words. */
#ifndef AITK_MODELS_GPU_TABLE_H
#define AITK_MODELS_GPU_TABLE_H

#include <stdbool.h>

#include "common/status.h"
#include "common/str.h"
#include "models/gpudb.h"

/* The narrowest GPU column, so that short lists still line up under "GPU". */
#define AITK_GPU_NAME_MIN_WIDTH 16

typedef struct aitk_gpu_table {
    int name_width;          /* the longest name added, at least AITK_GPU_NAME_MIN_WIDTH */
    bool any_derived;        /* a row marked '~' */
    double default_fraction; /* the share of its BF16 rate a '*' row was taken at; 0: no
                              * row marked '*' */
} aitk_gpu_table;

#define AITK_GPU_TABLE_INIT {AITK_GPU_NAME_MIN_WIDTH, false, 0}

/* Takes account of a row for g, before the table is printed. */
void aitk_gpu_table_add(aitk_gpu_table *t, const aitk_gpu_spec *g);

/* Appends the legend of the matmul column (named `column` in the table's
 * header) to out, each line starting with `indent` and ending in '\n': what
 * the figures are, then a line for '~' and one for '*' when a row added
 * had that mark. */
aitk_status aitk_gpu_table_legend(const aitk_gpu_table *t, const char *indent, const char *column,
                                  aitk_str *out);

#endif
