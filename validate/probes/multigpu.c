/* The multigpu checks (see multigpu.h). */
#include "validate/probes/multigpu.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "bench/collective_bw.h"
#include "bench/config.h"
#include "bench/gpu_backend.h"
#include "bench/micro/collectives.h"
#include "common/str.h"
#include "validate/probes/links.h"

static const char *const nccl_source =
    "NCCL through the CUDA plugin; busbw as github.com/NVIDIA/nccl-tests doc/PERFORMANCE.md "
    "defines it; sizes in bench/workloads.yaml collectives:";

/* The three checks skipped for one reason. */
static aitk_status skip_all(aitk_run_ctx *ctx, const char *why)
{
    static const struct { const char *id, *title; } checks[] = {
        {"multigpu.peer_access", "Peer access between GPUs (cudaDeviceCanAccessPeer)"},
        {"multigpu.link", "Link between GPUs (NVLink or PCIe, from NVML)"},
        {"multigpu.nccl", "NCCL collectives bandwidth (all-reduce, all-gather, reduce-scatter)"},
    };
    aitk_status st = AITK_OK;
    for (size_t i = 0; i < sizeof checks / sizeof *checks && !st; i++) {
        aitk_check c = {.id = checks[i].id, .category = "multigpu", .title = checks[i].title,
                        .status = AITK_CHECK_SKIP, .message = why};
        st = aitk_checklist_add(&ctx->checks, &c);
    }
    return st;
}

/* "0->1 yes, 1->0 yes" and whether every pair can reach the other. */
static bool describe_peers(const aitk_backend_peers *p, aitk_str *obs, cJSON *rec)
{
    bool all = true;
    cJSON *m = cJSON_AddArrayToObject(rec, "peer_access");
    for (int i = 0; i < p->n_devices; i++) {
        cJSON *row = cJSON_CreateArray();
        for (int j = 0; j < p->n_devices; j++) {
            cJSON_AddItemToArray(row, cJSON_CreateBool(p->can_access[i][j]));
            if (i == j)
                continue;
            all = all && p->can_access[i][j];
            aitk_str_appendf(obs, "%sGPU%d->GPU%d %s", obs->len ? ", " : "", i, j,
                             p->can_access[i][j] ? "yes" : "no");
        }
        if (!cJSON_AddItemToArray(m, row))
            cJSON_Delete(row);
    }
    return all;
}

static aitk_status peer_check(aitk_run_ctx *ctx, const aitk_backend_peers *p, cJSON *rec)
{
    aitk_str obs = AITK_STR_INIT;
    bool all = describe_peers(p, &obs, rec);
    aitk_check c = {
        .id = "multigpu.peer_access", .category = "multigpu",
        .title = "Peer access between GPUs (cudaDeviceCanAccessPeer)",
        .status = all ? AITK_CHECK_PASS : AITK_CHECK_WARN,
        .observed = aitk_str_cstr(&obs), .expected = "every GPU can access every other",
        .message = all ? "every pair of GPUs can read the other's memory directly"
                       : "some GPUs cannot reach each other directly: NCCL moves their data "
                         "through host memory, at a fraction of the link's rate",
        .remedy = all ? "" : "check that the GPUs sit under one PCIe root or NVLink, that the "
                             "IOMMU or PCIe ACS does not block peer traffic (NVIDIA's NCCL "
                             "troubleshooting guide, \"PCI Access Control Services\"), and "
                             "that no VM or container hides the link",
        .source = "cudaDeviceCanAccessPeer (CUDA runtime API, peer device memory access)"};
    aitk_status st = aitk_str_status(&obs) ? AITK_E_NOMEM
                                           : aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&obs);
    return st;
}

/* "; PCIe path GPU0-GPU1: SYSTEM" from NVML's topology[] (nvml.c), the
 * first pair's, as nvidia-smi topo -m would name it. */
static void describe_topology(const cJSON *nvml, aitk_str *text)
{
    const cJSON *pair = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(nvml, "topology"), 0);
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(pair, "gpus");
    const cJSON *level = cJSON_GetObjectItemCaseSensitive(pair, "common_ancestor");
    if (cJSON_GetArraySize(gpus) == 2 && cJSON_IsString(level))
        aitk_str_appendf(text, "; PCIe common ancestor of GPU%d and GPU%d: %s",
                         cJSON_GetArrayItem(gpus, 0)->valueint,
                         cJSON_GetArrayItem(gpus, 1)->valueint, level->valuestring);
}

/* The link from NVML's record; *link stays "unknown" when it says nothing.
 * NVML lists GPUs in PCI bus order and CUDA fastest first, so with mixed
 * GPUs and CUDA_VISIBLE_DEVICES the first n of NVML's may not be CUDA's n;
 * with every GPU visible the two sets are the same. */
static aitk_status link_check(aitk_run_ctx *ctx, int n, aitk_link *link, cJSON *rec)
{
    const cJSON *nvml = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(ctx->env, "gpu"), "nvml");
    aitk_str text = AITK_STR_INIT;
    aitk_status st = aitk_link_from_nvml(cJSON_GetObjectItemCaseSensitive(nvml, "devices"), n,
                                         link, &text);
    if (st == AITK_E_NOMEM) {
        aitk_str_free(&text);
        return st;
    }
    if (!st)
        describe_topology(nvml, &text);
    cJSON *l = cJSON_AddObjectToObject(rec, "link");
    cJSON_AddStringToObject(l, "kind", link->kind);
    if (link->gbs > 0)
        cJSON_AddNumberToObject(l, "gbs_per_direction", link->gbs);
    cJSON_AddStringToObject(l, "how", aitk_str_cstr(&text));
    aitk_check c = {.id = "multigpu.link", .category = "multigpu",
                    .title = "Link between GPUs (NVLink or PCIe, from NVML)",
                    .status = st ? AITK_CHECK_SKIP : AITK_CHECK_PASS,
                    .observed = st ? "" : aitk_str_cstr(&text),
                    .message = st ? aitk_str_cstr(&text)
                                  : "informational: the nominal rate busbw is read against",
                    .source = "NVML nvmlDeviceGetNvLinkState, nvmlDeviceGetNvLinkVersion, "
                              "nvmlDeviceGetCurrPcieLinkGeneration/Width; rates in "
                              "validate/probes/links.h"};
    st = aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&text);
    return st;
}

/* "all_reduce 187 GB/s at 1 GiB (42% of 450 GB/s)". */
static void describe_best(const aitk_coll_best *b, const aitk_link *link, aitk_str *obs)
{
    static const aitk_collective kinds[] = {AITK_COLLECTIVE_ALL_REDUCE,
                                            AITK_COLLECTIVE_ALL_GATHER,
                                            AITK_COLLECTIVE_REDUCE_SCATTER};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        aitk_collective k = kinds[i];
        if (b->busbw_gbs[k] <= 0)
            continue;
        aitk_str_appendf(obs, "%s%s busbw %.1f GB/s at %.0f MiB", obs->len ? "; " : "",
                         aitk_collective_name(k), b->busbw_gbs[k],
                         b->at_size_bytes[k] / 1048576.0);
        if (link->gbs > 0)
            aitk_str_appendf(obs, " (%.0f%% of %s %.1f GB/s)",
                             100.0 * b->busbw_gbs[k] / link->gbs, link->kind, link->gbs);
    }
}

static aitk_status nccl_check(aitk_run_ctx *ctx, const aitk_backend *be, int n,
                              const aitk_link *link)
{
    aitk_bench_config *cfg = NULL;
    aitk_str err = AITK_STR_INIT, notes = AITK_STR_INIT, obs = AITK_STR_INIT;
    aitk_coll_best best = {0};
    aitk_status st = aitk_bench_config_load(&cfg, &err);
    cJSON *micro = cJSON_GetObjectItemCaseSensitive(ctx->env, "micro");
    if (!st && !cJSON_IsArray(micro) && !(micro = cJSON_AddArrayToObject(ctx->env, "micro")))
        st = AITK_E_NOMEM;
    if (!st)
        st = aitk_coll_sweep(cfg, be, n, link->gbs > 0 ? link->gbs : 0.0, micro, &best,
                             &notes);
    if (st == AITK_E_NOMEM)
        goto out;
    if (!st)
        describe_best(&best, link, &obs);
    aitk_check c = {
        .id = "multigpu.nccl", .category = "multigpu",
        .title = "NCCL collectives bandwidth (all-reduce, all-gather, reduce-scatter)",
        .status = st || !best.runs ? AITK_CHECK_FAIL : notes.len ? AITK_CHECK_WARN
                                                                 : AITK_CHECK_PASS,
        .observed = aitk_str_cstr(&obs), .expected = "every collective runs at every size",
        .message = st ? (err.len ? aitk_str_cstr(&err) : aitk_strerror(st))
                      : notes.len ? aitk_str_cstr(&notes)
                                  : "busbw per size is in micro[] (category collective)",
        .remedy = st || notes.len ? "the message names what failed in NCCL's or CUDA's "
                                    "words; NCCL_DEBUG=INFO shows the transport it chose"
                                  : "",
        .source = nccl_source};
    st = aitk_str_status(&obs) || aitk_str_status(&notes) ? AITK_E_NOMEM
                                                           : aitk_checklist_add(&ctx->checks, &c);
out:
    aitk_bench_config_free(cfg);
    aitk_str_free(&err);
    aitk_str_free(&notes);
    aitk_str_free(&obs);
    return st;
}

aitk_status aitk_multigpu_checks(aitk_run_ctx *ctx)
{
    if (ctx->cpu_only)
        return skip_all(ctx, "--cpu: no GPU is used");
    const aitk_bench_gpu *gpu = aitk_bench_gpu_open();
    if (!gpu->backend)
        return skip_all(ctx, gpu->why.len ? aitk_str_cstr(&gpu->why) : "no GPU backend");
    const aitk_backend *be = gpu->backend;
    if (!be->collectives)
        return skip_all(ctx, "the CUDA plugin was built without NCCL (nccl.h was not found "
                             "when it was built)");
    static aitk_backend_peers peers; /* ~8 KiB: not on the stack */
    aitk_status st = be->collectives->peers(&peers);
    aitk_str why = AITK_STR_INIT;
    if (st)
        aitk_str_appendf(&why, "NCCL cannot be used: %s", peers.error);
    else if (peers.n_devices < 2)
        aitk_str_appendf(&why, "%d GPU visible: the multi-GPU checks need two",
                         peers.n_devices);
    if (why.len || aitk_str_status(&why)) {
        st = aitk_str_status(&why) ? AITK_E_NOMEM : skip_all(ctx, aitk_str_cstr(&why));
        aitk_str_free(&why);
        return st;
    }
    cJSON *rec = cJSON_AddObjectToObject(ctx->env, "multigpu");
    if (!rec)
        return AITK_E_NOMEM;
    cJSON_AddNumberToObject(rec, "gpus", peers.n_devices);
    cJSON_AddNumberToObject(rec, "nccl_version", peers.library_version);
    aitk_link link = {.kind = "unknown"};
    st = peer_check(ctx, &peers, rec);
    if (!st)
        st = link_check(ctx, peers.n_devices, &link, rec);
    if (!st)
        st = nccl_check(ctx, be, peers.n_devices, &link);
    return st;
}
