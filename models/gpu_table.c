/* The GPU column and the matmul-mark legend shared by the `gpus` and
 * `predict` tables (gpu_table.h). */
#include "models/gpu_table.h"

#include <string.h>

void aitk_gpu_table_add(aitk_gpu_table *t, const aitk_gpu_spec *g)
{
    const size_t len = strlen(g->name);
    if (len > (size_t)t->name_width)
        t->name_width = (int)len;
    const char mark = aitk_gpu_matmul_mark(g);
    t->any_derived |= mark == '~';
    if (mark == '*') {
        /* Every such row holds the database's matmul_default_fraction x its
         * BF16 rate (filled in at load), so any one of them gives the share. */
        t->default_fraction = g->matmul_bf16_tflops / g->bf16_tflops;
    }
}

aitk_status aitk_gpu_table_legend(const aitk_gpu_table *t, const char *indent, const char *column,
                                  aitk_str *out)
{
    aitk_str_appendf(out, "%s%s: the bf16 TFLOP/s a large matmul ran at, as measured "
                          "(models/gpus.yaml)", indent, column);
    if (t->any_derived)
        aitk_str_appendf(out, ";\n%s~ none measured: derived from a measured GPU of the same chip",
                         indent);
    if (t->default_fraction > 0)
        aitk_str_appendf(out, ";\n%s* none listed: %.2f x the GPU's datasheet BF16 rate", indent,
                         t->default_fraction);
    aitk_str_append(out, "\n");
    return aitk_str_status(out);
}
