/* The GPU database against NVIDIA's datasheets and whitepapers (figures
 * written out here from the documents each row's `source` names), lookups by
 * the names NVML reports, and errors on a broken database file (read from
 * disk through AITK_DATA_DIR). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "models/cost.h"
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

/* From the datasheets and whitepapers: name as NVML reports it, VRAM GB, bandwidth GB/s,
 * BF16 TFLOPS, FP32 TFLOPS, compute capability, TDP W. */
typedef struct row_facts {
    const char *nvml;
    double vram, bw, bf16, fp32;
    const char *cc;
    long tdp;
} row_facts;

static const row_facts facts[] = {
    {"NVIDIA GeForce RTX 3090", 24, 936, 71, 35.6, "8.6", 350},
    {"NVIDIA GeForce RTX 3090 Ti", 24, 1008, 80, 40, "8.6", 450},
    {"NVIDIA GeForce RTX 4090", 24, 1008, 165.2, 82.6, "8.9", 450},
    {"NVIDIA GeForce RTX 5090", 32, 1792, 209.5, 104.8, "12.0", 575},
    {"NVIDIA RTX A6000", 48, 768, 154.8, 38.7, "8.6", 300},
    {"NVIDIA RTX 6000 Ada Generation", 48, 960, 364, 91.1, "8.9", 300},
    {"NVIDIA L4", 24, 300, 121, 30.3, "8.9", 72},
    {"NVIDIA A40", 48, 696, 149.7, 37.4, "8.6", 300},
    {"NVIDIA L40S", 48, 864, 362, 91.6, "8.9", 350},
    {"NVIDIA A10", 24, 600, 125, 31.2, "8.6", 150},
    {"NVIDIA A100-PCIE-40GB", 40, 1555, 312, 19.5, "8.0", 250},
    {"NVIDIA A100-SXM4-40GB", 40, 1555, 312, 19.5, "8.0", 400},
    {"NVIDIA A100 80GB PCIe", 80, 1935, 312, 19.5, "8.0", 300},
    {"NVIDIA A100-SXM4-80GB", 80, 2039, 312, 19.5, "8.0", 400},
    {"NVIDIA H100 PCIe", 80, 2000, 756, 51, "9.0", 350},
    {"NVIDIA H100 80GB HBM3", 80, 3350, 989, 67, "9.0", 700},
    {"NVIDIA H200", 141, 4800, 989, 67, "9.0", 700},
    {"NVIDIA B200", 180, 7700, 2250, 75, "10.0", 1000},
    /* Turing has no bf16 tensor cores: the row gives its FP32 rate as bf16's
     * ceiling (unverified), and the datasheet's 65 TFLOPS as fp16's. */
    {"Tesla T4", 16, 320, 8.1, 8.1, "7.5", 70},
};

/* Rows beyond NVIDIA's datasheets (RTX 50 and 40 SUPER cards, RTX PRO 6000
 * Blackwell, L40, the China cards RTX 4090 D, A800 and H20), written out from the secondary sources their `source` names: the
 * same fields, and each figure not read from NVIDIA marked unverified. */
static const struct {
    row_facts f;
    aitk_gpu_figure unverified; /* a figure that must be among the row's unverified */
} beyond[] = {
    {{"NVIDIA GeForce RTX 5080", 16, 960, 112.6, 56.3, "12.0", 360}, AITK_GPU_BANDWIDTH_GBS},
    {{"NVIDIA GeForce RTX 5070 Ti", 16, 896, 87.9, 43.9, "12.0", 300}, AITK_GPU_BANDWIDTH_GBS},
    {{"NVIDIA GeForce RTX 4080 SUPER", 16, 736, 104.5, 52.2, "8.9", 320}, AITK_GPU_BF16_TFLOPS},
    {{"NVIDIA GeForce RTX 4080", 16, 716.8, 97.5, 48.7, "8.9", 320}, AITK_GPU_BANDWIDTH_GBS},
    {{"NVIDIA GeForce RTX 4070 Ti SUPER", 16, 672, 88.2, 44.1, "8.9", 285}, AITK_GPU_BANDWIDTH_GBS},
    {{"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 96, 1792, 503.8, 125, "12.0", 600},
     AITK_GPU_BF16_TFLOPS},
    {{"NVIDIA L40", 48, 864, 181.05, 90.5, "8.9", 300}, AITK_GPU_BANDWIDTH_GBS},
    /* The 12-16 GB cards; those whose NVML name a card of another memory
     * size shares are found by their row names. */
    {{"RTX 3060 12GB", 12, 360, 25.5, 12.74, "8.6", 170}, AITK_GPU_BANDWIDTH_GBS},
    {{"RTX 3080 10GB", 10, 760, 59.5, 29.8, "8.6", 320}, AITK_GPU_BF16_TFLOPS},
    {{"RTX 4060 Ti 16GB", 16, 288, 44.1, 22.06, "8.9", 165}, AITK_GPU_BANDWIDTH_GBS},
    {{"NVIDIA GeForce RTX 4070", 12, 504, 58.3, 29.15, "8.9", 200}, AITK_GPU_BF16_TFLOPS},
    {{"NVIDIA GeForce RTX 4070 SUPER", 12, 504, 71.0, 35.5, "8.9", 220}, AITK_GPU_TDP_W},
    {{"RTX 5060 Ti 16GB", 16, 448, 47.4, 23.7, "12.0", 180}, AITK_GPU_BANDWIDTH_GBS},
    /* NVIDIA's cards for China. */
    {{"NVIDIA GeForce RTX 4090 D", 24, 1008, 147.1, 73.5, "8.9", 425}, AITK_GPU_BF16_TFLOPS},
    {{"NVIDIA A800-SXM4-80GB", 80, 2039, 312, 19.5, "8.0", 400}, AITK_GPU_BANDWIDTH_GBS},
    {{"NVIDIA H20", 96, 4000, 148, 44, "9.0", 500}, AITK_GPU_BF16_TFLOPS},
};

/* The row `f` names, with the figures `f` gives (against: where they come from). */
static const aitk_gpu_spec *check_row(const row_facts *f, const char *against)
{
    const aitk_gpu_spec *g = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_gpudb_find(db, f->nvml, &g, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    if (g->vram_gb != f->vram || g->bandwidth_gbs != f->bw || g->bf16_tflops != f->bf16 ||
        g->fp32_tflops != f->fp32 || strcmp(g->cc, f->cc) != 0 || g->tdp_w != f->tdp)
        fail_msg("%s (%s) differs from %s", g->name, f->nvml, against);
    return g;
}

static void test_beyond_facts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof beyond / sizeof *beyond; i++) {
        const aitk_gpu_spec *g = check_row(&beyond[i].f, "its sources");
        if (!aitk_gpu_is_unverified(g, beyond[i].unverified) ||
            (!strstr(g->source, "Secondary") && !strstr(g->source, "secondary")))
            fail_msg("%s: secondary figures must be marked unverified and sourced", g->name);
    }
}

/* The row `name` finds, by name alone (the test fails with the lookup's words). */
static const aitk_gpu_spec *find_named(const char *name)
{
    const aitk_gpu_spec *g = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_gpudb_find(db, name, &g, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    return g;
}

static void test_facts(void **state)
{
    (void)state;
    assert_int_equal(db->count, sizeof facts / sizeof *facts + sizeof beyond / sizeof *beyond);
    for (size_t i = 0; i < sizeof facts / sizeof *facts; i++)
        assert_true(strlen(check_row(&facts[i], "its datasheet")->source) > 10);
}

/* Large bf16 matmul rates people measured (zzc0721/torch-performance-test-data,
 * written out here from its database.md rows and issues), and the five
 * derived from a sibling of the same chip (RTX 3090 Ti, 4080, 4080 SUPER,
 * A100 40GB SXM, RTX 4070: the rule in models/gpus.yaml's header); every other
 * GPU gets 0.80 x its datasheet rate (the median share of the ten
 * non-GeForce GPUs measured). */
static const struct {
    const char *name;
    double tflops;
} matmul[] = {
    {"RTX 3090", 76.58},   {"RTX 3090 Ti", 86.3}, {"RTX 4090", 166.6},
    {"RTX 5090", 239.1},   {"RTX A6000", 123.34}, {"A40", 122.29},
    {"L40S", 269.15},      {"A100 80GB SXM", 264.53}, {"H100 SXM", 786.45},
    {"H200 SXM", 790.29},  {"B200", 1696.03},
    {"RTX 5080", 102.89},  {"RTX 5070 Ti", 92.19}, {"RTX 4080 SUPER", 107.9},
    {"RTX 4080", 100.7},   {"RTX 4070 Ti SUPER", 91.05}, {"RTX PRO 6000 Blackwell", 393.2},
    {"A100 40GB SXM", 264.53},
    {"RTX 3060 12GB", 25.47}, {"RTX 3080 10GB", 64.68}, {"RTX 4060 Ti 16GB", 46.26},
    {"RTX 4070", 61.7},       {"RTX 4070 SUPER", 75.2}, {"RTX 5060 Ti 16GB", 48.24},
    {"T4", 2.25},
    {"RTX 4090 D", 148.91}, {"A800 80GB SXM", 266.48}, {"H20", 142.06},
};

/* The fp16 rate, listed where it is not the bf16 one: the T4's three
 * database.md rows, fp16 41.91, 42.71 and 41.93 (bf16 2.46, 2.27 and 2.01).
 * A job in fp16 gets it there and the bf16 rate everywhere else. */
static void test_fp16_rates(void **state)
{
    (void)state;
    size_t listed = 0;
    for (size_t i = 0; i < db->count; i++)
        listed += db->gpus[i].matmul_fp16_tflops > 0;
    assert_int_equal(listed, 1);
    const aitk_gpu_spec *t4 = find_named("T4");
    assert_float_equal(t4->matmul_fp16_tflops, 42.18, 1e-9);
    assert_non_null(strstr(t4->matmul_fp16_source, "41.91, 42.71 and 41.93"));
    assert_float_equal(aitk_gpu_matmul_tflops(t4, true), 42.18, 1e-9);
    assert_float_equal(aitk_gpu_matmul_tflops(t4, false), 2.25, 1e-9);
    assert_true(aitk_gpu_is_unverified(t4, AITK_GPU_BF16_TFLOPS));
    assert_float_equal(t4->fp16_tflops, 65, 1e-9);
    const aitk_gpu_spec *g = find_named("RTX 4090");
    assert_float_equal(aitk_gpu_matmul_tflops(g, true), 166.6, 1e-9);
    assert_null(g->matmul_fp16_source);
}

static void test_matmul_rates(void **state)
{
    (void)state;
    size_t listed = 0;
    for (size_t i = 0; i < db->count; i++) {
        const aitk_gpu_spec *g = &db->gpus[i];
        double want = 0.80 * g->bf16_tflops;
        bool in_table = false;
        for (size_t k = 0; k < sizeof matmul / sizeof *matmul; k++)
            if (strcmp(matmul[k].name, g->name) == 0) {
                want = matmul[k].tflops;
                in_table = true;
            }
        listed += g->matmul_source != NULL;
        if ((g->matmul_source != NULL) != in_table || fabs(g->matmul_bf16_tflops - want) > 1e-9 * want)
            fail_msg("%s: matmul %.6g (%s), expected %.6g", g->name, g->matmul_bf16_tflops,
                     g->matmul_source ? "listed" : "default share", want);
        if (g->matmul_source && strlen(g->matmul_source) < 20)
            fail_msg("%s: a listed matmul rate needs its source", g->name);
    }
    assert_int_equal(listed, sizeof matmul / sizeof *matmul);
    /* The derived figures are not measured: marked so, and said so. */
    static const char *const derived[] = {"RTX 3090 Ti", "RTX 4080", "RTX 4080 SUPER",
                                          "A100 40GB SXM", "RTX 4070"};
    const aitk_gpu_spec *g = NULL;
    for (size_t i = 0; i < sizeof derived / sizeof *derived; i++) {
        g = find_named(derived[i]);
        assert_true(aitk_gpu_is_unverified(g, AITK_GPU_MATMUL_BF16_TFLOPS));
        assert_non_null(strstr(g->matmul_source, "derived"));
        /* Tables mark it so: derived '~', measured ' ', the default share '*'. */
        assert_int_equal(aitk_gpu_matmul_mark(g), '~');
    }
    assert_int_equal(aitk_gpudb_find(db, "RTX 4090", &g, NULL), AITK_OK);
    assert_int_equal(aitk_gpu_matmul_mark(g), ' ');
    assert_int_equal(aitk_gpudb_find(db, "L4", &g, NULL), AITK_OK);
    assert_int_equal(aitk_gpu_matmul_mark(g), '*');
}

/* The rule of models/gpus.yaml's header for a rate derived from a measured
 * sibling, recomputed from the rows: the sibling's measured share of its
 * datasheet rate x the row's own, the same bf16/FP32 ratio (within 2%), at
 * least 0.9x the sibling's power per datasheet TFLOP/s. A sibling whose
 * measurement changes, or a derived row added without its sibling here,
 * fails. (The same chip the rows do not say: the sources do.) */
static void test_derived_rates_follow_the_rule(void **state)
{
    (void)state;
    static const struct {
        const char *row, *sibling;
    } pairs[] = {{"RTX 3090 Ti", "RTX 3090"},         {"RTX 4080", "RTX 4070 Ti SUPER"},
                 {"RTX 4080 SUPER", "RTX 4070 Ti SUPER"}, {"A100 40GB SXM", "A100 80GB SXM"},
                 {"RTX 4070", "RTX 4070 SUPER"}};
    size_t derived = 0;
    for (size_t i = 0; i < db->count; i++) {
        const aitk_gpu_spec *g = &db->gpus[i];
        const bool says_derived = g->matmul_source && strncmp(g->matmul_source, "derived", 7) == 0;
        if (says_derived != (aitk_gpu_matmul_mark(g) == '~'))
            fail_msg("%s: a matmul source saying 'derived' and the unverified mark go together",
                     g->name);
        derived += says_derived;
    }
    assert_int_equal(derived, sizeof pairs / sizeof *pairs);
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        const aitk_gpu_spec *g = find_named(pairs[i].row), *s = find_named(pairs[i].sibling);
        if (aitk_gpu_matmul_mark(s) != ' ')
            fail_msg("%s: its sibling %s was not measured", g->name, s->name);
        const double want = s->matmul_bf16_tflops / s->bf16_tflops * g->bf16_tflops;
        const double ratio_g = g->bf16_tflops / g->fp32_tflops;
        const double ratio_s = s->bf16_tflops / s->fp32_tflops;
        const double power = ((double)g->tdp_w / g->bf16_tflops) /
                             ((double)s->tdp_w / s->bf16_tflops);
        if (fabs(g->matmul_bf16_tflops - want) > 0.06)
            fail_msg("%s: %.2f, the rule gives %.3f from %s", g->name, g->matmul_bf16_tflops,
                     want, s->name);
        if (fabs(ratio_g / ratio_s - 1) > 0.02 || power < 0.9)
            fail_msg("%s from %s: bf16/FP32 %.3f vs %.3f, power per TFLOP/s %.2fx", g->name,
                     s->name, ratio_g, ratio_s, power);
    }
}

/* Figures no primary source confirms are unverified; the database must say so. */
static void test_unverified_marked(void **state)
{
    (void)state;
    const aitk_gpu_spec *g = NULL;
    aitk_str text = AITK_STR_INIT;
    assert_int_equal(aitk_gpudb_find(db, "A40", &g, NULL), AITK_OK);
    assert_int_equal(aitk_gpu_unverified_text(g, &text), AITK_OK);
    assert_string_equal(aitk_str_cstr(&text), "bandwidth_gbs, fp32_tflops");
    assert_int_equal(aitk_gpudb_find(db, "RTX 6000 Ada", &g, NULL), AITK_OK);
    assert_true(aitk_gpu_is_unverified(g, AITK_GPU_BF16_TFLOPS));
    assert_int_equal(aitk_gpudb_find(db, "RTX 4090", &g, NULL), AITK_OK);
    assert_int_equal(g->unverified, 0);
    aitk_str_clear(&text);
    assert_int_equal(aitk_gpu_unverified_text(g, &text), AITK_OK);
    assert_string_equal(aitk_str_cstr(&text), "");
    aitk_str_free(&text);
}

static void test_lookup_spellings(void **state)
{
    (void)state;
    static const char *const spellings[] = {"RTX 4090", "rtx4090", "rtx-4090", "4090",
                                            "geforce rtx 4090", "NVIDIA GeForce RTX 4090"};
    for (size_t i = 0; i < sizeof spellings / sizeof *spellings; i++) {
        const aitk_gpu_spec *g = NULL;
        aitk_str err = AITK_STR_INIT;
        if (aitk_gpudb_find(db, spellings[i], &g, &err))
            fail_msg("'%s': %s", spellings[i], aitk_str_cstr(&err));
        assert_string_equal(g->name, "RTX 4090");
        aitk_str_free(&err);
    }
    /* An exact name wins over partial matches: "RTX 3090" is not ambiguous
     * with "RTX 3090 Ti". */
    const aitk_gpu_spec *g = NULL;
    assert_int_equal(aitk_gpudb_find(db, "RTX 3090", &g, NULL), AITK_OK);
    assert_string_equal(g->name, "RTX 3090");
}

static void test_lookup_failures(void **state)
{
    (void)state;
    const aitk_gpu_spec *g = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_gpudb_find(db, "A100", &g, &err), AITK_E_INVAL);
    assert_null(g);
    assert_non_null(strstr(aitk_str_cstr(&err), "ambiguous"));
    assert_non_null(strstr(aitk_str_cstr(&err), "A100 80GB SXM"));
    aitk_str_clear(&err);
    assert_int_equal(aitk_gpudb_find(db, "Voodoo 5 6000", &g, &err), AITK_E_NOTFOUND);
    assert_non_null(strstr(aitk_str_cstr(&err), "Voodoo 5 6000"));
    /* Callers that want no message may pass NULL. */
    assert_int_equal(aitk_gpudb_find(db, "A100", &g, NULL), AITK_E_INVAL);
    assert_int_equal(aitk_gpudb_find(db, "Voodoo", &g, NULL), AITK_E_NOTFOUND);
    /* Real GPUs the database lacks, whose names begin like ones it has: the
     * 141 GB H20-3e must not borrow the H20's figures, nor the A800 PCIe the
     * A800 SXM's; nor a truncated "409". */
    static const char *const others[] = {"NVIDIA H20-3e", "B20", "409",
                                         "NVIDIA A800 80GB PCIe", "RTX 409",
                                         /* other products whose names begin like listed ones' */
                                         "RTX 4060", "NVIDIA GeForce RTX 4060", "4070 Ti",
                                         "RTX 3060 Ti", "RTX 3080 Ti", "5060",
                                         "RTX 5070", "Quadro RTX 6000", "RTX 6000"};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        if (aitk_gpudb_find(db, others[i], &g, NULL) != AITK_E_NOTFOUND)
            fail_msg("'%s' found '%s'", others[i], g ? g->name : "(ambiguous)");
    /* The H20 (a fraction of the H200's BF16 rate) and the RTX 4090 D have
     * their own rows: none borrows its neighbour's figures. */
    static const struct {
        const char *query, *row;
    } own[] = {{"NVIDIA H20", "H20"},
               {"H20", "H20"},
               {"H200", "H200 SXM"},
               {"NVIDIA GeForce RTX 4090 D", "RTX 4090 D"},
               {"RTX 4090D", "RTX 4090 D"},
               {"RTX 4090", "RTX 4090"},
               {"NVIDIA GeForce RTX 4090", "RTX 4090"}};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
        assert_int_equal(aitk_gpudb_find(db, own[i].query, &g, NULL), AITK_OK);
        assert_string_equal(g->name, own[i].row);
    }
    /* The L40 has its own row (half the L40S's BF16 rate): neither borrows
     * the other's figures. */
    assert_int_equal(aitk_gpudb_find(db, "L40", &g, NULL), AITK_OK);
    assert_string_equal(g->name, "L40");
    assert_int_equal(aitk_gpudb_find(db, "NVIDIA L40S", &g, NULL), AITK_OK);
    assert_string_equal(g->name, "L40S");
    /* A name that stops before variant words still narrows: "RTX PRO 6000"
     * is the RTX PRO 6000 Blackwell, "geforce rtx 4080" the RTX 4080 (not
     * the SUPER). */
    assert_int_equal(aitk_gpudb_find(db, "RTX PRO 6000", &g, NULL), AITK_OK);
    assert_string_equal(g->name, "RTX PRO 6000 Blackwell");
    assert_int_equal(aitk_gpudb_find(db, "geforce rtx 4080", &g, NULL), AITK_OK);
    assert_string_equal(g->name, "RTX 4080");
    /* Whole words still narrow: "A100 80GB" is both 80 GB parts. */
    aitk_str_clear(&err);
    assert_int_equal(aitk_gpudb_find(db, "A100 80GB", &g, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "A100 80GB PCIe"));
    assert_null(strstr(aitk_str_cstr(&err), "40GB"));
    /* The NVML name of both the 16 and the 8 GB RTX 4060 Ti finds neither
     * row: the 16 GB row is not taken for a probed 8 GB card, and the
     * message names the row to give if it is that card. Its own name does. */
    aitk_str_clear(&err);
    assert_int_equal(aitk_gpudb_find(db, "NVIDIA GeForce RTX 4060 Ti", &g, &err), AITK_E_INVAL);
    assert_null(g);
    assert_string_equal(aitk_str_cstr(&err),
                        "'NVIDIA GeForce RTX 4060 Ti' is the name NVML gives cards of more than "
                        "one memory size; listed: 'RTX 4060 Ti 16GB' (if it is that card, give "
                        "that name)");
    assert_int_equal(aitk_gpudb_find(db, "RTX 4060 Ti 16GB", &g, NULL), AITK_OK);
    assert_int_equal(g->vram_gb, 16);
    assert_int_equal(aitk_gpudb_find(db, "NVIDIA GeForce RTX 4070", &g, NULL), AITK_OK);
    assert_string_equal(g->name, "RTX 4070");
    aitk_str_free(&err);
}

/* Parses `text` as models/gpus.yaml: the database, or NULL with the message in err. */
static aitk_gpudb *parse_db(const char *text, aitk_str *err)
{
    aitk_yaml_doc *doc = NULL;
    aitk_gpudb *d = NULL;
    if (aitk_yaml_parse("gpus.yaml", text, strlen(text), &doc, err) == AITK_OK)
        (void)aitk_gpudb_from_doc(doc, &d, err);
    return d;
}

/* A card probed under a name NVML gives cards of several memory sizes finds
 * the row of the memory it reported, allowing for what ECC keeps (a 16th on
 * GDDR6), and no row when no listed card of the name has that memory. Two
 * sizes of one name are written here, since models/gpus.yaml lists one. */
static void test_lookup_by_probed_memory(void **state)
{
    (void)state;
    const double gib = 1073741824.0;
#define ROW(name, shared, vram) "  - {name: " name ", nvml_shared: NVIDIA " shared ", "    \
                                "vram_gb: " vram ", bandwidth_gbs: 1, bf16_tflops: 1, "   \
                                "fp16_tflops: 1, fp32_tflops: 1, cc: '8.9', source: s}\n"
    static const char text[] = "schema: 1\nmatmul_default_fraction: {value: 0.8, source: s}\n"
                               "gpus:\n" ROW("Y 16GB", "Y", "16") ROW("Y 8GB", "Y", "8")
                               ROW("V 11GB", "V", "11") ROW("V 12GB", "V", "12")
                               "  - {name: Z, aliases: [NVIDIA Z], vram_gb: 48, "
                               "bandwidth_gbs: 1, bf16_tflops: 1, fp16_tflops: 1, "
                               "fp32_tflops: 1, cc: '8.6', source: s}\n";
#undef ROW
    aitk_str err = AITK_STR_INIT;
    aitk_gpudb *d = parse_db(text, &err);
    if (!d)
        fail_msg("%s", aitk_str_cstr(&err));
    const aitk_gpu_spec *g = NULL;
    static const struct {
        double gib;
        const char *row;
    } cases[] = {{16, "Y 16GB"}, {16 * 15 / 16.0, "Y 16GB"}, {15.2, "Y 16GB"},
                 {8, "Y 8GB"},   {7.99, "Y 8GB"},          {7.5, "Y 8GB"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (aitk_gpudb_find_probed(d, "NVIDIA Y", cases[i].gib * gib, &g, NULL) != AITK_OK ||
            strcmp(g->name, cases[i].row) != 0)
            fail_msg("%.2f GiB: want '%s', got '%s'", cases[i].gib, cases[i].row,
                     g ? g->name : "(none)");
    }
    /* Sizes near enough that a memory could be either: the nearer. */
    assert_int_equal(aitk_gpudb_find_probed(d, "NVIDIA V", 10.9 * gib, &g, NULL), AITK_OK);
    assert_string_equal(g->name, "V 11GB");
    assert_int_equal(aitk_gpudb_find_probed(d, "NVIDIA V", 11.8 * gib, &g, NULL), AITK_OK);
    assert_string_equal(g->name, "V 12GB");
    /* Between the sizes, above them, below them: none. */
    static const double none[] = {12, 20, 6, 16.5};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
        aitk_str_clear(&err);
        if (aitk_gpudb_find_probed(d, "NVIDIA Y", none[i] * gib, &g, &err) != AITK_E_NOTFOUND ||
            g)
            fail_msg("%.2f GiB found '%s'", none[i], g ? g->name : "(ambiguous)");
    }
    assert_string_equal(aitk_str_cstr(&err), "'NVIDIA Y' with 16.5 GiB is none of the cards of "
                                             "that name listed: 'Y 16GB' (16 GB), 'Y 8GB' (8 GB)");
    /* Memory unknown: as by name alone. */
    aitk_str_clear(&err);
    assert_int_equal(aitk_gpudb_find_probed(d, "NVIDIA Y", 0, &g, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "is the name NVML gives cards of more than one"));
    /* A name of one card is found by it whatever memory is reported (an A40
     * with ECC on shows 44.99 GiB of 48), as are the shared rows' own names. */
    assert_int_equal(aitk_gpudb_find_probed(d, "NVIDIA Z", 44.99 * gib, &g, NULL), AITK_OK);
    assert_string_equal(g->name, "Z");
    assert_int_equal(aitk_gpudb_find_probed(d, "Y 8GB", 16 * gib, &g, NULL), AITK_OK);
    assert_string_equal(g->name, "Y 8GB");
    aitk_str_clear(&err);
    assert_int_equal(aitk_gpudb_find_probed(d, "NVIDIA W", 16 * gib, &g, &err), AITK_E_NOTFOUND);
    assert_non_null(strstr(aitk_str_cstr(&err), "unknown GPU 'NVIDIA W'"));
    aitk_gpudb_free(d);

    /* The database as shipped: its 16 GB RTX 4060 Ti, and not for an 8 GB one. */
    assert_int_equal(aitk_gpudb_load(&d, NULL), AITK_OK);
    assert_int_equal(
        aitk_gpudb_find_probed(d, "NVIDIA GeForce RTX 4060 Ti", 15.996 * gib, &g, NULL), AITK_OK);
    assert_string_equal(g->name, "RTX 4060 Ti 16GB");
    assert_int_equal(
        aitk_gpudb_find_probed(d, "NVIDIA GeForce RTX 4060 Ti", 7.996 * gib, &g, NULL),
        AITK_E_NOTFOUND);
    aitk_gpudb_free(d);
    aitk_str_free(&err);
}

/* The forms an entry is read in, from a database written here: a listed
 * matmul rate as {value, source}; none listed: the default share, even where
 * matmul_default_fraction follows the list; `unverified` as a set of figures,
 * which alone decides the '~' mark. */
static void test_entry_forms(void **state)
{
    (void)state;
#define ROW(name, bf16, extra) "  - {name: " name ", vram_gb: 24, bandwidth_gbs: 1, bf16_tflops: " \
                               bf16 ", fp16_tflops: 1, fp32_tflops: 1, cc: '8.9', tdp_w: 300, " \
                               "source: s" extra "}\n"
    static const char text[] =
        "schema: 1\ngpus:\n"
        ROW("M", "100", ", matmul_bf16_tflops: {value: 90.5, source: \"bench of M\"},"
                        " unverified: [tdp_w, bandwidth_gbs]")
        ROW("D", "100", ", matmul_bf16_tflops: {value: 80, source: \"derived from M\"},"
                        " unverified: [tdp_w, matmul_bf16_tflops]")
        ROW("N", "200", "")
        "matmul_default_fraction: {value: 0.5, source: s}\n";
#undef ROW
    aitk_str err = AITK_STR_INIT, u = AITK_STR_INIT;
    aitk_gpudb *d = parse_db(text, &err);
    if (!d)
        fail_msg("%s", aitk_str_cstr(&err));
    assert_int_equal(d->count, 3);
    const aitk_gpu_spec *m = &d->gpus[0], *der = &d->gpus[1], *n = &d->gpus[2];
    /* Measured: the figure and its source, unmarked though other figures of
     * the row are unverified. */
    assert_true(m->matmul_bf16_tflops == 90.5);
    assert_string_equal(m->matmul_source, "bench of M");
    assert_string_equal(aitk_gpu_matmul_source(m), "bench of M");
    assert_true(aitk_gpu_is_unverified(m, AITK_GPU_TDP_W));
    assert_true(aitk_gpu_is_unverified(m, AITK_GPU_BANDWIDTH_GBS));
    assert_false(aitk_gpu_is_unverified(m, AITK_GPU_MATMUL_BF16_TFLOPS));
    assert_int_equal(aitk_gpu_matmul_mark(m), ' ');
    /* In the order of the figures, not of the list. */
    assert_int_equal(aitk_gpu_unverified_text(m, &u), AITK_OK);
    assert_string_equal(aitk_str_cstr(&u), "bandwidth_gbs, tdp_w");
    /* Derived: the same form, its figure in the unverified set. */
    assert_true(der->matmul_bf16_tflops == 80);
    assert_true(aitk_gpu_is_unverified(der, AITK_GPU_MATMUL_BF16_TFLOPS));
    assert_int_equal(aitk_gpu_matmul_mark(der), '~');
    aitk_str_clear(&u);
    assert_int_equal(aitk_gpu_unverified_text(der, &u), AITK_OK);
    assert_string_equal(aitk_str_cstr(&u), "matmul_bf16_tflops, tdp_w");
    /* None listed: 0.5 x 200, the share written after the list. */
    assert_true(d->matmul_default_fraction == 0.5);
    assert_null(n->matmul_source);
    assert_true(n->matmul_bf16_tflops == 100);
    assert_int_equal(aitk_gpu_matmul_mark(n), '*');
    assert_non_null(strstr(aitk_gpu_matmul_source(n), "matmul_default_fraction"));
    assert_int_equal(n->unverified, 0);
    aitk_gpudb_free(d);
    aitk_str_free(&u);
    aitk_str_free(&err);
}

/* A broken database on disk: the error names the file and the place. */
static void test_broken_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/aitk-gpudb-XXXXXX";
    assert_non_null(mkdtemp(dir));
    aitk_str path = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_str_appendf(&path, "%s/models", dir);
    assert_int_equal(aitk_dir_create(aitk_str_cstr(&path), NULL), AITK_OK);
    aitk_str_append(&path, "/gpus.yaml");
    /* Each case is a database broken in one place; H is the header a whole
     * one starts with. */
#define H "schema: 1\nmatmul_default_fraction: {value: 0.8, source: s}\ngpus:\n"
#define ROW(extra) "  - {name: X, vram_gb: 24, bandwidth_gbs: 1, bf16_tflops: 100," \
                   " fp16_tflops: 1, fp32_tflops: 1, cc: '8.9', source: s" extra "}\n"
/* A row with the figures `figs`; B: ROW's figures without cc. */
#define FIG(figs) "  - {name: X, " figs ", source: s}\n"
#define B "vram_gb: 24, bandwidth_gbs: 1, bf16_tflops: 100, fp16_tflops: 1, fp32_tflops: 1"
    static const char *const bad[] = {
        H "  - name: X\n    vram_gb: lots\n",
        H ROW(", colour: red"),
        H "  - {name: X, vram_gb: 0, bandwidth_gbs: 1, bf16_tflops: 1,"
        " fp16_tflops: 1, fp32_tflops: 1, cc: '8.9', source: s}\n",
        "schema: 1\nmatmul_default_fraction: {value: 0.8, source: s}\ngpus: [\n",
        /* One alias on two rows: the second row's GPU would get the first's figures. */
        H "  - {name: X, aliases: [NVIDIA X], vram_gb: 24, bandwidth_gbs: 1,"
        " bf16_tflops: 1, fp16_tflops: 1, fp32_tflops: 1, cc: '8.9', source: s}\n"
        "  - {name: Y, aliases: [nvidia-x], vram_gb: 24, bandwidth_gbs: 1, bf16_tflops: 1,"
        " fp16_tflops: 1, fp32_tflops: 1, cc: '8.9', source: s}\n",
        H "  - {name: ' ', vram_gb: 24, bandwidth_gbs: 1, bf16_tflops: 1,"
        " fp16_tflops: 1, fp32_tflops: 1, cc: '8.9', source: s}\n",
        /* The matmul rate: a bare number (no source), the older spelling
         * with the source beside the figure (with or without it), one past
         * 1.25x the datasheet (another precision's), none, and each way the
         * {value, source} form can be incomplete. */
        H ROW(", matmul_bf16_tflops: 90"),
        H ROW(", matmul_source: somebody"),
        H ROW(", matmul_bf16_tflops: 90, matmul_source: s"),
        H ROW(", matmul_bf16_tflops: {value: 126, source: s}"),
        H ROW(", matmul_bf16_tflops: {value: 0, source: s}"),
        H ROW(", matmul_bf16_tflops: {value: 90}"),
        H ROW(", matmul_bf16_tflops: {source: s}"),
        H ROW(", matmul_bf16_tflops: {value: 90, source: ' '}"),
        H ROW(", matmul_bf16_tflops: {value: 90, source: s, by: me}"),
        H ROW(", matmul_bf16_tflops: [90, s]"),
        /* The fp16 rate of a card without bf16 tensor cores: the same
         * rules, against the datasheet's fp16 rate (ROW's is 1). */
        H ROW(", matmul_fp16_tflops: 1"),
        H ROW(", matmul_fp16_tflops: {value: 2, source: s}"),
        "schema: 1\ngpus:\n" ROW(""),
        "schema: 1\nmatmul_default_fraction: {value: 1.2, source: s}\ngpus:\n" ROW(""),
        "schema: 1\nmatmul_default_fraction: {value: 0.8}\ngpus:\n" ROW(""),
        /* unverified: a name that is no figure key (a typo that would drop a
         * '~' mark), a figure the row does not give (it lists no matmul
         * rate: the '*' share is no derived figure), one named twice, not a
         * list. */
        H ROW(", unverified: [bandwidth_gbs, matmul_bf16_tflop]"),
        H ROW(", unverified: [matmul_bf16_tflops]"),
        H ROW(", unverified: [cc, cc]"),
        H ROW(", unverified: cc"),
        /* A shared NVML name that another row answers to: that row would
         * stand in for every card of the name. */
        H ROW(", nvml_shared: NVIDIA Y")
          "  - {name: Y, aliases: [NVIDIA Y], vram_gb: 24, bandwidth_gbs: 1, bf16_tflops: 1,"
          " fp16_tflops: 1, fp32_tflops: 1, cc: '8.9', source: s}\n",
        /* cc: anything but major.minor in range (a number, a boolean, a
         * null, an overflow, a two-digit minor); a datasheet figure past
         * its ceiling (an exponent or unit slip), each at its edge; PCIe
         * generation and TDP out of range. */
        H FIG(B ", cc: 99999999999999999999"),
        H FIG(B ", cc: true"),
        H FIG(B ", cc: ~"),
        H FIG(B ", cc: 1e309"),
        H FIG(B ", cc: '8.10'"),
        H FIG(B ", cc: '0.9'"),
        H FIG(B ", cc: '21.0'"),
        H FIG(B ", cc: 8"),
        H FIG("vram_gb: 24, bandwidth_gbs: 1, bf16_tflops: 99999999999999999999, fp16_tflops: 1,"
              " fp32_tflops: 1, cc: '8.9'"),
        H FIG("vram_gb: 24, bandwidth_gbs: 1, bf16_tflops: 10001, fp16_tflops: 1,"
              " fp32_tflops: 1, cc: '8.9'"),
        H FIG("vram_gb: 24, bandwidth_gbs: 1, bf16_tflops: 100, fp16_tflops: 10001,"
              " fp32_tflops: 1, cc: '8.9'"),
        H FIG(B ", fp8_tflops: 20001, cc: '8.9'"),
        H FIG("vram_gb: 24, bandwidth_gbs: 1, bf16_tflops: 100, fp16_tflops: 1,"
              " fp32_tflops: 1001, cc: '8.9'"),
        H FIG("vram_gb: 24, bandwidth_gbs: 100001, bf16_tflops: 100, fp16_tflops: 1,"
              " fp32_tflops: 1, cc: '8.9'"),
        H FIG("vram_gb: 4097, bandwidth_gbs: 1, bf16_tflops: 100, fp16_tflops: 1,"
              " fp32_tflops: 1, cc: '8.9'"),
        H FIG(B ", cc: '8.9', pcie_gen: 9"),
        H FIG(B ", cc: '8.9', tdp_w: 0"),
        /* Another format version, or none: not read as version 1. */
        "schema: 3\nmatmul_default_fraction: {value: 0.8, source: s}\ngpus:\n" ROW(""),
        "matmul_default_fraction: {value: 0.8, source: s}\ngpus:\n" ROW(""),
    };
#undef ROW
    static const char *const expect[] = {
        "gpus.yaml:5:14", "colour", "must be > 0", "gpus.yaml:4:1: did not find expected node",
        "gpus.yaml:5:5: 'nvidia-x' already names 'X'", "gpus.yaml:4:5: a GPU name is empty",
        "gpus.yaml:4:138: X: matmul_bf16_tflops needs its source: write {value: 90, source: "
        "\"who measured it, how\"}",
        "gpus.yaml:4:118: 'matmul_source' is no longer read: write the source inside the "
        "figure, matmul_bf16_tflops: {value: N, source: \"...\"}",
        "gpus.yaml:4:142: 'matmul_source' is no longer read",
        "gpus.yaml:4:146: X: matmul_bf16_tflops 126 is not in (0, 1.25 x bf16_tflops 100]",
        "X: matmul_bf16_tflops 0 is not in",
        "gpus.yaml:4:138: missing 'source'",
        "gpus.yaml:4:138: missing 'value'",
        "gpus.yaml:4:158: X: matmul_bf16_tflops has an empty source",
        "unknown key 'by' in matmul_bf16_tflops",
        "gpus.yaml:4:138: matmul_bf16_tflops must be a mapping, found a list",
        "X: matmul_fp16_tflops needs its source: write {value: 1, source: ",
        "X: matmul_fp16_tflops 2 is not in (0, 1.25 x fp16_tflops 1]",
        "missing 'matmul_default_fraction'",
        "gpus.yaml:2:34: matmul_default_fraction 1.2 is not in (0, 1]", "missing 'source'",
        "gpus.yaml:4:146: X: unverified lists 'matmul_bf16_tflop', which is not a figure of a "
        "GPU entry (allowed: vram_gb, bandwidth_gbs, bf16_tflops, fp16_tflops, fp8_tflops, "
        "fp32_tflops, matmul_bf16_tflops, matmul_fp16_tflops, cc, pcie_gen, tdp_w, "
        "total_memory_gib)",
        "gpus.yaml:4:131: X: unverified lists 'matmul_bf16_tflops', which this entry does not "
        "give",
        "gpus.yaml:4:135: X: unverified lists 'cc' twice",
        "gpus.yaml:4:130: unverified must be a list, found a value",
        "gpus.yaml:4:5: X: nvml_shared 'NVIDIA Y' also names 'Y': a name NVML gives cards of "
        "more than one memory size must not find a row",
#define CC "X: cc must be a compute capability like 8.9 (major 1 to 20, minor 0 to 9), found "
        "gpus.yaml:4:100: " CC "'99999999999999999999'",
        "gpus.yaml:4:100: " CC "'true'",
        "gpus.yaml:4:100: " CC "'~'",
        "gpus.yaml:4:100: " CC "'1e309'",
        "gpus.yaml:4:100: " CC "'8.10'",
        "gpus.yaml:4:100: " CC "'0.9'",
        "gpus.yaml:4:100: " CC "'21.0'",
        "gpus.yaml:4:100: " CC "'8'",
#undef CC
        "gpus.yaml:4:59: X: bf16_tflops 1e+20 is above 10000: no GPU is anywhere near 10 "
        "PFLOP/s dense",
        "gpus.yaml:4:59: X: bf16_tflops 10001 is above 10000: no GPU is anywhere near 10 "
        "PFLOP/s dense",
        "gpus.yaml:4:77: X: fp16_tflops 10001 is above 10000: no GPU is anywhere near 10 "
        "PFLOP/s dense",
        "gpus.yaml:4:108: X: fp8_tflops 20001 is above 20000: no GPU is anywhere near 20 "
        "PFLOP/s dense fp8",
        "gpus.yaml:4:93: X: fp32_tflops 1001 is above 1000: no GPU is near 1 PFLOP/s without "
        "tensor cores",
        "gpus.yaml:4:43: X: bandwidth_gbs 100001 is above 100000: no GPU memory is near 100 TB/s",
        "gpus.yaml:4:24: X: vram_gb 4097 is above 4096: no GPU has 4 TB of memory",
        "gpus.yaml:4:117: X: pcie_gen must be from 1 to 7, found 9",
        "gpus.yaml:4:114: X: tdp_w must be from 1 to 5000, found 0",
        "gpus.yaml:1:9: schema 3 is not supported (this build reads schema 1)",
        "gpus.yaml:1:1: no 'schema' (this build reads schema 1)"};
    assert_int_equal(sizeof bad / sizeof *bad, sizeof expect / sizeof *expect);
    setenv("AITK_DATA_DIR", dir, 1);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(
            aitk_file_write_atomic(aitk_str_cstr(&path), bad[i], strlen(bad[i]), NULL), AITK_OK);
        aitk_gpudb *d = NULL;
        aitk_str_clear(&err);
        const aitk_status st = aitk_gpudb_load(&d, &err);
        if (st == AITK_OK || d || !strstr(aitk_str_cstr(&err), expect[i])) {
            /* The tests after this one must not read this file. */
            unsetenv("AITK_DATA_DIR");
            aitk_gpudb_free(d);
            fail_msg("case %zu: %s '%s' lacks '%s'", i, st ? "refused," : "loaded;",
                     aitk_str_cstr(&err), expect[i]);
        }
    }
    /* Each ceiling itself, and the compute capabilities at the ends of
     * the range, load. */
    static const char *const good[] = {
        H FIG("vram_gb: 4096, bandwidth_gbs: 100000, bf16_tflops: 10000, fp16_tflops: 10000,"
              " fp8_tflops: 20000, fp32_tflops: 1000, cc: '1.0', pcie_gen: 7, tdp_w: 5000"),
        H FIG(B ", cc: '20.9', pcie_gen: 1, tdp_w: 1"),
        H FIG(B ", cc: 12.0"),
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        assert_int_equal(
            aitk_file_write_atomic(aitk_str_cstr(&path), good[i], strlen(good[i]), NULL), AITK_OK);
        aitk_gpudb *d = NULL;
        aitk_str_clear(&err);
        if (aitk_gpudb_load(&d, &err)) {
            unsetenv("AITK_DATA_DIR");
            fail_msg("good %zu refused: %s", i, aitk_str_cstr(&err));
        }
        aitk_gpudb_free(d);
    }
    unsetenv("AITK_DATA_DIR");
    unlink(aitk_str_cstr(&path));
    aitk_str_clear(&path);
    aitk_str_appendf(&path, "%s/models", dir);
    rmdir(aitk_str_cstr(&path));
    rmdir(dir);
    aitk_str_free(&path);
    aitk_str_free(&err);
#undef B
#undef FIG
#undef H
}

/* Every allocation of a load can fail: reported, never crashed on or leaked
 * (the ASan build checks the leaks). The cost parameters load the same way. */
static void test_alloc_failures(void **state)
{
    (void)state;
    int failed = 0;
    for (long n = 0; n < 4000; n++) {
        aitk_gpudb *d = NULL;
        aitk_cost_params *p = NULL;
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_gpudb_load(&d, NULL);
        if (!st)
            st = aitk_cost_params_load(&p, NULL);
        aitk_alloc_fail_after(-1);
        aitk_gpudb_free(d);
        aitk_cost_params_free(p);
        if (!st)
            break;
        assert_int_equal(st, AITK_E_NOMEM);
        failed++;
    }
    assert_true(failed > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts),           cmocka_unit_test(test_beyond_facts),
        cmocka_unit_test(test_matmul_rates),
        cmocka_unit_test(test_fp16_rates),
        cmocka_unit_test(test_derived_rates_follow_the_rule),
        cmocka_unit_test(test_unverified_marked), cmocka_unit_test(test_entry_forms),
        cmocka_unit_test(test_lookup_spellings), cmocka_unit_test(test_lookup_failures),
        cmocka_unit_test(test_lookup_by_probed_memory),
        cmocka_unit_test(test_broken_file),     cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
