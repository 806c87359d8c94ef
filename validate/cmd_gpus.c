/* `aitk-validate gpus [--json]`: lists the GPU database (models/gpus.yaml), so a
 * person can see which names `predict --gpu` accepts and what figures stand
 * behind a prediction. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/cliopt.h"
#include "common/log.h"
#include "models/gpu_table.h"
#include "models/gpudb.h"
#include "validate/cli.h"
#include "validate/commands.h"

static void gpus_help(void)
{
    fputs("Usage: aitk-validate gpus [--json] [--sources]\n"
          "\n"
          "Lists the GPUs `predict` knows: VRAM, memory bandwidth, dense BF16 and FP8\n"
          "tensor-core rates and the FP32 rate without tensor cores (TFLOP/s), compute\n"
          "capability, PCIe generation and TDP.\n"
          "  --sources   add each row's source and the figures marked unverified\n"
          "  --json      print the database as JSON instead\n"
          "Names are matched ignoring case, spaces and '-': \"rtx4090\", \"NVIDIA GeForce\n"
          "RTX 4090\" (as NVML reports it) and \"4090\" all find the RTX 4090. Part of a\n"
          "name must be whole words: \"L40\" does not find the L40S (a different GPU).\n"
          "\n"
          "Exit codes: 0 listed, 2 bad usage or a malformed database, 3 internal error\n"
          "or an output that could not be written.\n",
          stdout);
}

static int print_json(const aitk_gpudb *db)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < db->count; i++) {
        const aitk_gpu_spec *g = &db->gpus[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            cJSON_Delete(arr);
            return AITK_EXIT_INTERNAL;
        }
        /* A failed add leaves the tree whole; cJSON_Print below then fails. */
        cJSON_AddStringToObject(o, "name", g->name);
        cJSON *al = cJSON_AddArrayToObject(o, "aliases");
        for (const char *const *a = g->aliases; al && *a; a++)
            cJSON_AddItemToArray(al, cJSON_CreateString(*a));
        cJSON_AddNumberToObject(o, "vram_gb", g->vram_gb);
        cJSON_AddNumberToObject(o, "total_memory_gib", g->total_memory_gib);
        cJSON_AddStringToObject(o, "total_memory_kind", aitk_gpu_total_memory_kind(g));
        if (g->total_memory_source)
            cJSON_AddStringToObject(o, "total_memory_source", g->total_memory_source);
        cJSON_AddNumberToObject(o, "bandwidth_gbs", g->bandwidth_gbs);
        cJSON_AddNumberToObject(o, "bf16_tflops", g->bf16_tflops);
        cJSON_AddNumberToObject(o, "matmul_bf16_tflops", g->matmul_bf16_tflops);
        cJSON_AddStringToObject(o, "matmul_kind", aitk_gpu_matmul_kind(g));
        cJSON_AddStringToObject(o, "matmul_source", aitk_gpu_matmul_source(g));
        if (g->matmul_fp16_tflops > 0) {
            cJSON_AddNumberToObject(o, "matmul_fp16_tflops", g->matmul_fp16_tflops);
            cJSON_AddStringToObject(o, "matmul_fp16_source", g->matmul_fp16_source);
            cJSON_AddStringToObject(
                o, "matmul_fp16_kind",
                aitk_gpu_is_unverified(g, AITK_GPU_MATMUL_FP16_TFLOPS) ? "derived" : "measured");
        }
        cJSON_AddNumberToObject(o, "fp16_tflops", g->fp16_tflops);
        if (g->fp8_tflops > 0)
            cJSON_AddNumberToObject(o, "fp8_tflops", g->fp8_tflops);
        cJSON_AddNumberToObject(o, "fp32_tflops", g->fp32_tflops);
        if (g->nvml_shared)
            cJSON_AddStringToObject(o, "nvml_shared", g->nvml_shared);
        cJSON_AddStringToObject(o, "cc", g->cc);
        if (g->pcie_gen > 0) /* optional: no source gave the H20's */
            cJSON_AddNumberToObject(o, "pcie_gen", (double)g->pcie_gen);
        cJSON_AddNumberToObject(o, "tdp_w", (double)g->tdp_w);
        /* The figures' keys, as the entry's `unverified` list names them. */
        cJSON *unverified = cJSON_AddArrayToObject(o, "unverified");
        for (int f = 0; unverified && f < AITK_GPU_FIGURE_COUNT; f++)
            if (aitk_gpu_is_unverified(g, (aitk_gpu_figure)f))
                cJSON_AddItemToArray(unverified, cJSON_CreateString(aitk_gpu_figure_keys[f]));
        cJSON_AddStringToObject(o, "source", g->source);
    }
    char *text = arr ? cJSON_Print(arr) : NULL;
    cJSON_Delete(arr);
    if (!text)
        return AITK_EXIT_INTERNAL;
    puts(text);
    cJSON_free(text);
    return AITK_EXIT_OK;
}

/* --sources: where a row's figures come from, under its line. */
static aitk_status print_sources(const aitk_gpu_spec *g, aitk_str *text)
{
    printf("    source: %s\n", g->source);
    if (g->matmul_source)
        printf("    matmul: %s\n", g->matmul_source);
    if (g->matmul_fp16_source)
        printf("    matmul in fp16: %.2f TFLOP/s%s, %s\n", g->matmul_fp16_tflops,
               aitk_gpu_is_unverified(g, AITK_GPU_MATMUL_FP16_TFLOPS) ? " (derived)" : "",
               g->matmul_fp16_source);
    if (g->total_memory_source)
        printf("    total memory %.2f GiB: %s\n", g->total_memory_gib, g->total_memory_source);
    aitk_str_clear(text);
    aitk_status st = aitk_gpu_unverified_text(g, text);
    if (!st && text->len)
        printf("    unverified: %s\n", aitk_str_cstr(text));
    return st;
}

int aitk_cmd_gpus(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"sources", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false, sources = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'j') {
            json = true;
        } else if (c == 's') {
            sources = true;
        } else if (c == 'h') {
            gpus_help();
            return AITK_EXIT_OK;
        } else {
            aitk_str err = AITK_STR_INIT;
            aitk_opt_error("gpus", c, argv[optind - 1], optopt, opts, &err);
            return aitk_opt_usage_error("gpus", &err);
        }
    }
    if (optind != argc) {
        aitk_log(AITK_LOG_ERROR, "gpus: unexpected argument '%s' (see gpus --help)", argv[optind]);
        return AITK_EXIT_USAGE;
    }
    aitk_str err = AITK_STR_INIT;
    aitk_gpudb *db = NULL;
    aitk_status st = aitk_gpudb_load(&db, &err);
    if (st) {
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        aitk_str_free(&err);
        return st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : AITK_EXIT_USAGE;
    }
    aitk_str_free(&err);
    int rc = AITK_EXIT_OK;
    if (json) {
        rc = print_json(db);
    } else {
        aitk_gpu_table t = AITK_GPU_TABLE_INIT;
        for (size_t i = 0; i < db->count; i++)
            aitk_gpu_table_add(&t, &db->gpus[i]);
        const int w = t.name_width;
        printf("%-*s %6s %8s %8s %9s %8s %8s %5s %5s %6s  %s\n", w, "GPU", "VRAM", "BW GB/s",
               "BF16", "matmul", "FP8", "FP32", "CC", "PCIe", "TDP W", "NVML name");
        aitk_str text = AITK_STR_INIT;
        bool any_shared = false;
        for (size_t i = 0; i < db->count; i++) {
            const aitk_gpu_spec *g = &db->gpus[i];
            printf("%-*s %4.0f GB %8.0f %8.1f %8.1f%c ", w, g->name, g->vram_gb,
                   g->bandwidth_gbs, g->bf16_tflops, g->matmul_bf16_tflops,
                   aitk_gpu_matmul_mark(g));
            if (g->fp8_tflops > 0)
                printf("%8.1f", g->fp8_tflops);
            else
                printf("%8s", "-");
            printf(" %8.1f %5s", g->fp32_tflops, g->cc);
            if (g->pcie_gen > 0)
                printf(" %5ld", g->pcie_gen);
            else
                printf(" %5s", "-");
            /* The first alias is the NVML name; a shared one is no alias. */
            printf(" %6ld  %s%s\n", g->tdp_w,
                   g->nvml_shared ? g->nvml_shared : g->aliases[0] ? g->aliases[0] : "",
                   g->nvml_shared ? " (shared)" : "");
            any_shared |= g->nvml_shared != NULL;
            if (sources && print_sources(g, &text))
                rc = AITK_EXIT_INTERNAL;
        }
        aitk_str_clear(&text);
        if (aitk_gpu_table_legend(&t, "", "matmul", &text))
            rc = AITK_EXIT_INTERNAL;
        printf("BF16 and FP8: dense tensor-core rates (no sparsity), BF16 with FP32 accumulate;\n"
               "FP32: the rate without tensor cores. All in TFLOP/s.\n%s"
               "Predictions count GEMM and attention against matmul. Data: models/gpus.yaml\n"
               "(with sources: --sources).\n", aitk_str_cstr(&text));
        if (any_shared)
            printf("(shared): NVML gives cards of another memory size this name too, so the\n"
                   "name alone does not find the row: give the row's name (a report given to\n"
                   "--calibrate is matched by the memory its probe saw).\n");
        aitk_str_free(&text);
        if (sources)
            printf("matmul default share: %s\n", db->matmul_default_source);
    }
    aitk_gpudb_free(db);
    return rc;
}
