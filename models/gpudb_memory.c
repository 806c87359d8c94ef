/* The memory a process sees on a GPU (total_memory_gib in models/gpus.yaml):
 * reading the figure with its source, and saying where it comes from. Kept
 * apart from gpudb.c, which reads the rest of an entry. */
#include <string.h>

#include "models/gpudb.h"

aitk_status aitk_gpu_load_total_memory(const aitk_yaml_doc *doc, const aitk_yaml_node *entry,
                                       aitk_gpu_spec *g, aitk_str *err)
{
    static const char *const keys[] = {"value", "source", NULL};
    const aitk_yaml_node *n = aitk_yaml_get(entry, "total_memory_gib"), *v = NULL;
    /* No figure: the nominal size stands in, and says so (kind "nominal"). */
    g->total_memory_gib = g->vram_gb;
    g->total_memory_source = NULL;
    if (!n)
        return AITK_OK;
    if (n->kind == AITK_YAML_SCALAR) {
        aitk_yaml_errorf(err, doc, n, "%s: total_memory_gib needs its source: write "
                                      "{value: %s, source: \"who saw it, where\"}",
                         g->name, n->text);
        return AITK_E_PARSE;
    }
    const char *source = NULL;
    double value = 0;
    aitk_status st = aitk_yaml_expect(doc, n, AITK_YAML_MAP, "total_memory_gib", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, n, keys, "total_memory_gib", err);
    if (!st)
        st = aitk_yaml_need(doc, n, "value", &v, err);
    if (!st)
        st = aitk_yaml_double(doc, v, &value, err);
    if (!st)
        st = aitk_yaml_need_string(doc, n, "source", &source, err);
    if (st)
        return st;
    if (strspn(source, " \t") == strlen(source)) {
        aitk_yaml_errorf(err, doc, aitk_yaml_get(n, "source"),
                         "%s: total_memory_gib has an empty source", g->name);
        return AITK_E_PARSE;
    }
    /* Never above the card's own size, and not far below it (gpudb.h). */
    if (!(value >= AITK_TOTAL_MEMORY_MIN_SHARE * g->vram_gb && value <= g->vram_gb)) {
        aitk_yaml_errorf(err, doc, v, "%s: total_memory_gib %g is not in [%.2f x vram_gb, "
                                      "vram_gb %g]", g->name, value, AITK_TOTAL_MEMORY_MIN_SHARE,
                         g->vram_gb);
        return AITK_E_RANGE;
    }
    g->total_memory_gib = value;
    g->total_memory_source = source;
    return AITK_OK;
}

const char *aitk_gpu_total_memory_kind(const aitk_gpu_spec *g)
{
    if (!g->total_memory_source)
        return "nominal";
    return aitk_gpu_is_unverified(g, AITK_GPU_TOTAL_MEMORY_GIB) ? "derived" : "reported";
}
