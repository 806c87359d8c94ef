/* The GPU column and the matmul-mark legend that the `gpus` and `predict`
 * tables share (models/gpu_table.h), on GPU rows written out here: one
 * measured, one derived, one at the default share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "models/gpu_table.h"

static const char *const no_aliases[] = {NULL};

/* A row as models/gpus.yaml's loader leaves it: a listed rate has a source;
 * a derived one also has its figure in the unverified set; the default share
 * has no source and matmul = share x bf16. */
static aitk_gpu_spec row(const char *name, double bf16, double matmul, const char *matmul_source,
                         unsigned unverified)
{
    aitk_gpu_spec g = {.name = name, .aliases = no_aliases, .bf16_tflops = bf16,
                       .matmul_bf16_tflops = matmul, .matmul_source = matmul_source,
                       .unverified = unverified};
    return g;
}

static void test_name_width(void **state)
{
    (void)state;
    aitk_gpu_table t = AITK_GPU_TABLE_INIT;
    assert_int_equal(t.name_width, 16); /* an empty table still lines up under "GPU" */
    const aitk_gpu_spec short_name = row("L4", 121, 96.8, NULL, 0);
    aitk_gpu_table_add(&t, &short_name);
    assert_int_equal(t.name_width, 16);
    /* 22 characters: the column grows to the longest name... */
    const aitk_gpu_spec long_name = row("RTX PRO 6000 Blackwell", 503.8, 393.2, "m", 0);
    aitk_gpu_table_add(&t, &long_name);
    assert_int_equal(t.name_width, 22);
    /* ...and a shorter one after it does not shrink it. */
    const aitk_gpu_spec middle = row("RTX 4070 Ti SUPER", 88.2, 91.05, "m", 0);
    aitk_gpu_table_add(&t, &middle);
    assert_int_equal(t.name_width, 22);
}

/* The legend explains the marks the rows had, and only those. */
static void test_legend(void **state)
{
    (void)state;
    const aitk_gpu_spec measured = row("RTX 4090", 165.2, 166.6, "four rows", 0);
    const aitk_gpu_spec derived = row("RTX 3090 Ti", 80, 86.3, "derived from the RTX 3090",
                                      1u << AITK_GPU_MATMUL_BF16_TFLOPS);
    const aitk_gpu_spec other_unverified = row("RTX 5080", 112.6, 102.89, "issue #104",
                                               1u << AITK_GPU_BF16_TFLOPS);
    const aitk_gpu_spec by_default = row("L40", 200, 150, NULL, 0);
    aitk_str out = AITK_STR_INIT;

    /* Measured rows only (one with other figures unverified): no mark to explain. */
    aitk_gpu_table t = AITK_GPU_TABLE_INIT;
    aitk_gpu_table_add(&t, &measured);
    aitk_gpu_table_add(&t, &other_unverified);
    assert_int_equal(aitk_gpu_table_legend(&t, "  ", "matmul TF", &out), AITK_OK);
    assert_string_equal(aitk_str_cstr(&out), "  matmul TF: the bf16 TFLOP/s a large matmul ran at, "
                                             "as measured (models/gpus.yaml)\n");

    /* A derived row: its line, and still none for '*'. */
    aitk_gpu_table_add(&t, &derived);
    aitk_str_clear(&out);
    assert_int_equal(aitk_gpu_table_legend(&t, "", "matmul", &out), AITK_OK);
    assert_string_equal(aitk_str_cstr(&out),
                        "matmul: the bf16 TFLOP/s a large matmul ran at, as measured "
                        "(models/gpus.yaml);\n"
                        "~ none measured: derived from a measured GPU of the same chip\n");

    /* A default-share row: its line, with the share it was taken at (150 of 200). */
    aitk_gpu_table_add(&t, &by_default);
    aitk_str_clear(&out);
    assert_int_equal(aitk_gpu_table_legend(&t, "  ", "matmul TF", &out), AITK_OK);
    assert_string_equal(aitk_str_cstr(&out),
                        "  matmul TF: the bf16 TFLOP/s a large matmul ran at, as measured "
                        "(models/gpus.yaml);\n"
                        "  ~ none measured: derived from a measured GPU of the same chip;\n"
                        "  * none listed: 0.75 x the GPU's datasheet BF16 rate\n");

    /* The default share alone. */
    aitk_gpu_table only_default = AITK_GPU_TABLE_INIT;
    aitk_gpu_table_add(&only_default, &by_default);
    aitk_str_clear(&out);
    assert_int_equal(aitk_gpu_table_legend(&only_default, "", "matmul", &out), AITK_OK);
    assert_string_equal(aitk_str_cstr(&out),
                        "matmul: the bf16 TFLOP/s a large matmul ran at, as measured "
                        "(models/gpus.yaml);\n"
                        "* none listed: 0.75 x the GPU's datasheet BF16 rate\n");
    aitk_str_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_width),
        cmocka_unit_test(test_legend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
