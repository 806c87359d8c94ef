/* The fake driver's machine, read from AITK_STUB_GPU by both stub libraries:
 *
 *   driver=535.104.05;cuda=12020;nvml_init=9;cu_init=100;
 *   refuse=nvmlDeviceGetMemoryInfo:3;refuse=cuDeviceGetUuid_v2:999;
 *   gpu=NVIDIA GeForce RTX 4090|8.9|24564[|mig=1][|display=1][|remap_pending=1]
 *                                        [|mig_instance=1][|model=tcc]
 *                                        [|nvlink=LINKS.VERSION]
 *
 * One "gpu=" item per GPU: name | compute capability | memory in MiB, then
 * optional flags. nvml_init / cu_init make the init call return that error
 * code; each "refuse=" makes the named function answer that error code for
 * every call (the per-call refusal tests), "refuse=NAME@N:CODE" for device N
 * only. mig_instance makes the CUDA stub
 * present that device as a MIG compute instance: cuDeviceGetUuid_v2 answers
 * the instance's UUID, cuDeviceGetUuid the GPU's. model= is the Windows
 * driver model NVML answers (wddm, the default, tcc or mcdm; the _v1 call
 * answers MCDM as WDDM, as drivers before MCDM had no such value). nvlink=
 * gives the GPU that many active NVLinks of that nvmlNvlinkVersion_t
 * (18.6: eighteen NVLink 4.0 links); without it NVML answers NOT_SUPPORTED
 * for link 0, as for a GPU without NVLink. Test-only code: malformed
 * specs give a stub with no GPU. */
#ifndef AITK_TESTS_STUB_SPEC_H
#define AITK_TESTS_STUB_SPEC_H

#include <stdlib.h>
#include <string.h>

#define STUB_MAX_GPUS 8

typedef struct stub_gpu {
    char name[96];
    int major, minor;
    unsigned long long mem_mib;
    int mig, display, remap_pending, mig_instance;
    int driver_model; /* nvmlDriverModel_t: 0 WDDM, 1 WDM (TCC), 2 MCDM */
    int nvlinks, nvlink_version; /* active NVLinks and their nvmlNvlinkVersion_t; 0: none */
} stub_gpu;

#define STUB_MAX_REFUSALS 16
typedef struct stub_refusal {
    char name[64];
    int code;
} stub_refusal;

typedef struct stub_spec {
    char driver[32];
    int cuda;
    int nvml_init, cu_init;
    int count;
    stub_gpu gpus[STUB_MAX_GPUS];
    int refusals;
    stub_refusal refuse[STUB_MAX_REFUSALS];
} stub_spec;

static void stub_copy(char *dst, size_t cap, const char *src, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void stub_parse_gpu(stub_spec *s, const char *item)
{
    if (s->count >= STUB_MAX_GPUS)
        return;
    stub_gpu *g = &s->gpus[s->count];
    memset(g, 0, sizeof *g);
    size_t n = strcspn(item, "|");
    stub_copy(g->name, sizeof g->name, item, n);
    if (!item[n])
        return;
    item += n + 1;
    g->major = atoi(item);
    const char *dot = strchr(item, '.');
    g->minor = dot ? atoi(dot + 1) : 0;
    item += strcspn(item, "|");
    if (!*item)
        return;
    g->mem_mib = strtoull(item + 1, NULL, 10);
    s->count++;
    while ((item = strchr(item + 1, '|')) != NULL) {
        if (strncmp(item, "|mig=1", 6) == 0)
            g->mig = 1;
        if (strncmp(item, "|display=1", 10) == 0)
            g->display = 1;
        if (strncmp(item, "|remap_pending=1", 16) == 0)
            g->remap_pending = 1;
        if (strncmp(item, "|mig_instance=1", 15) == 0)
            g->mig_instance = 1;
        if (strncmp(item, "|model=tcc", 10) == 0)
            g->driver_model = 1;
        if (strncmp(item, "|model=mcdm", 11) == 0)
            g->driver_model = 2;
        if (strncmp(item, "|nvlink=", 8) == 0) {
            g->nvlinks = atoi(item + 8);
            const char *v = strchr(item + 8, '.');
            g->nvlink_version = v ? atoi(v + 1) : 0;
        }
    }
}

static void stub_spec_read(stub_spec *s)
{
    memset(s, 0, sizeof *s);
    strcpy(s->driver, "570.86.15");
    s->cuda = 12080;
    const char *text = getenv("AITK_STUB_GPU");
    while (text && *text) {
        size_t n = strcspn(text, ";");
        char item[256];
        stub_copy(item, sizeof item, text, n);
        if (strncmp(item, "driver=", 7) == 0)
            stub_copy(s->driver, sizeof s->driver, item + 7, strlen(item + 7));
        else if (strncmp(item, "cuda=", 5) == 0)
            s->cuda = atoi(item + 5);
        else if (strncmp(item, "nvml_init=", 10) == 0)
            s->nvml_init = atoi(item + 10);
        else if (strncmp(item, "cu_init=", 8) == 0)
            s->cu_init = atoi(item + 8);
        else if (strncmp(item, "gpu=", 4) == 0)
            stub_parse_gpu(s, item + 4);
        else if (strncmp(item, "refuse=", 7) == 0 && s->refusals < STUB_MAX_REFUSALS &&
                 strchr(item, ':')) {
            stub_refusal *r = &s->refuse[s->refusals++];
            const char *colon = strchr(item, ':');
            stub_copy(r->name, sizeof r->name, item + 7, (size_t)(colon - item - 7));
            r->code = atoi(colon + 1);
        }
        text += n;
        if (*text == ';')
            text++;
    }
}

/* The error code `fn` was told to answer for device `dev` (-1: a call with
 * no device), or 0 (answer normally). "refuse=NAME@N:CODE" refuses for
 * device N only. */
static int stub_refused_dev(const stub_spec *s, const char *fn, int dev)
{
    size_t n = strlen(fn);
    for (int i = 0; i < s->refusals; i++) {
        const char *name = s->refuse[i].name;
        if (strncmp(name, fn, n) != 0)
            continue;
        if (name[n] == '\0' || (name[n] == '@' && dev >= 0 && atoi(name + n + 1) == dev))
            return s->refuse[i].code;
    }
    return 0;
}

static int stub_refused(const stub_spec *s, const char *fn) { return stub_refused_dev(s, fn, -1); }

#endif
