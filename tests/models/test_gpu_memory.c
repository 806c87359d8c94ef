/* The memory a process sees on each GPU (models/gpus.yaml total_memory_gib):
 * the published figures written out here from the issues each row's source
 * names, the derived ones from the header's rule worked by hand, and the
 * loader's refusals of a figure that cannot be a card's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/gpudb.h"

static aitk_gpudb *db;

static int setup(void **state)
{
    (void)state;
    unsetenv("AITK_DATA_DIR");
    aitk_str err = AITK_STR_INIT;
    if (aitk_gpudb_load(&db, &err)) {
        fprintf(stderr, "%s\n", aitk_str_cstr(&err));
        return -1;
    }
    aitk_str_free(&err);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    aitk_gpudb_free(db);
    return 0;
}

static const aitk_gpu_spec *gpu(const char *name)
{
    const aitk_gpu_spec *g = NULL;
    if (aitk_gpudb_find(db, name, &g, NULL))
        fail_msg("no row '%s'", name);
    return g;
}

/* Figures PyTorch printed in its out-of-memory messages ("total capacity of
 * N GiB"), as the issues quote them, GPUInspector.jl's A40 page, and CUDA's
 * own total for the RTX PRO 6000 Blackwell. */
static void test_reported_figures(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double gib;
    } rows[] = {{"RTX 3090", 23.70}, {"RTX 4090", 23.64},       {"RTX 5090", 31.37},
                {"L40S", 44.53},     {"A40", 44.99},            {"L40", 44.40},
                {"RTX 6000 Ada", 44.43}, {"A100 80GB SXM", 79.25}, {"A100 40GB SXM", 39.50},
                {"H100 SXM", 79.11}, {"A10", 21.99},
                {"RTX PRO 6000 Blackwell", 94.97}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const aitk_gpu_spec *g = gpu(rows[i].name);
        if (g->total_memory_gib != rows[i].gib || strcmp(aitk_gpu_total_memory_kind(g),
                                                         "reported") != 0)
            fail_msg("%s: %g GiB (%s), expected %g reported", g->name, g->total_memory_gib,
                     aitk_gpu_total_memory_kind(g), rows[i].gib);
    }
}

/* The derived rows: vram_gb x the median share of the published rows of the
 * card's kind, rounded down to 0.01 GiB, worked by hand. GeForce: the
 * median of 23.70/24, 23.64/24, 31.37/32 is 0.9850 (16 GB: 15.76). Data
 * centre and workstation: 44.40, 44.43, 44.53, 44.99 of 48 and 21.99 of 24,
 * median 0.92563 = 0.9256 (48 GB: 44.43). HBM:
 * 39.50/40, 79.11/80, 79.25/80, median 0.9889 (141 GB: 139.43). */
static void test_derived_figures(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double gib;
    } rows[] = {{"RTX 4080", 15.76}, {"RTX 3060 12GB", 11.82}, {"RTX 3080 10GB", 9.85},
                {"RTX 3090 Ti", 23.64}, {"RTX A6000", 44.43},
                {"H200 SXM", 139.43},  {"B200", 178.00},        {"H100 PCIe", 79.11}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const aitk_gpu_spec *g = gpu(rows[i].name);
        if (fabs(g->total_memory_gib - rows[i].gib) > 1e-9 ||
            strcmp(aitk_gpu_total_memory_kind(g), "derived") != 0 ||
            strncmp(g->total_memory_source, "derived:", 8) != 0)
            fail_msg("%s: %g GiB (%s), expected %g derived", g->name, g->total_memory_gib,
                     aitk_gpu_total_memory_kind(g), rows[i].gib);
    }
    /* Every row has the figure, below its nominal size: none falls back. */
    for (size_t i = 0; i < db->count; i++) {
        const aitk_gpu_spec *g = &db->gpus[i];
        if (!g->total_memory_source || !(g->total_memory_gib < g->vram_gb))
            fail_msg("%s: total memory %g GiB (%s)", g->name, g->total_memory_gib,
                     aitk_gpu_total_memory_kind(g));
    }
}

/* One entry with `figure` in place of its total memory: the database, or
 * NULL with the message in err. */
static aitk_gpudb *parse_entry(const char *figure, aitk_str *err)
{
    char text[512];
    snprintf(text, sizeof text,
             "schema: 1\nmatmul_default_fraction: {value: 0.8, source: s}\ngpus:\n"
             "  - {name: X, vram_gb: 48, bandwidth_gbs: 1, bf16_tflops: 100, fp16_tflops: 1,"
             " fp32_tflops: 1, cc: '8.9', source: s%s}\n", figure);
    aitk_yaml_doc *doc = NULL;
    aitk_gpudb *d = NULL;
    if (aitk_yaml_parse("gpus.yaml", text, strlen(text), &doc, err) == AITK_OK)
        (void)aitk_gpudb_from_doc(doc, &d, err);
    return d;
}

/* A figure without its source, above the card's size, far below it (0.85 x
 * 48 = 40.8 GiB is the floor), or with an empty source is refused at its
 * place; none at all leaves the nominal size, said to be nominal. */
static void test_entry_figures(void **state)
{
    (void)state;
    static const struct {
        const char *figure, *words;
    } bad[] = {
        {", total_memory_gib: 44", "gpus.yaml:4:136: X: total_memory_gib needs its source"},
        {", total_memory_gib: {value: 48.5, source: s}",
         "X: total_memory_gib 48.5 is not in [0.85 x vram_gb, vram_gb 48]"},
        {", total_memory_gib: {value: 40.7, source: s}",
         "X: total_memory_gib 40.7 is not in [0.85 x vram_gb, vram_gb 48]"},
        {", total_memory_gib: {value: 44, source: ' '}", "X: total_memory_gib has an empty source"},
        {", total_memory_gib: {source: s}", "missing 'value'"},
        {", total_memory_gib: {value: 44, source: s, colour: red}", "colour"},
    };
    aitk_str err = AITK_STR_INIT;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        aitk_str_clear(&err);
        aitk_gpudb *d = parse_entry(bad[i].figure, &err);
        if (d || !strstr(aitk_str_cstr(&err), bad[i].words)) {
            aitk_gpudb_free(d);
            fail_msg("case %zu: '%s' lacks '%s'", i, aitk_str_cstr(&err), bad[i].words);
        }
    }
    static const struct {
        const char *figure, *kind;
        double gib;
    } good[] = {
        {"", "nominal", 48},
        {", total_memory_gib: {value: 40.8, source: s}", "reported", 40.8},
        {", total_memory_gib: {value: 48, source: s}", "reported", 48},
        {", total_memory_gib: {value: 44, source: 'derived: r'}, unverified: [total_memory_gib]",
         "derived", 44},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        aitk_str_clear(&err);
        aitk_gpudb *d = parse_entry(good[i].figure, &err);
        if (!d)
            fail_msg("good %zu refused: %s", i, aitk_str_cstr(&err));
        const bool ok = d->gpus[0].total_memory_gib == good[i].gib &&
                        strcmp(aitk_gpu_total_memory_kind(&d->gpus[0]), good[i].kind) == 0;
        aitk_gpudb_free(d);
        assert_true(ok);
    }
    aitk_str_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reported_figures),
        cmocka_unit_test(test_derived_figures),
        cmocka_unit_test(test_entry_figures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
