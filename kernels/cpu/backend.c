/* The CPU reference backend's descriptor (kernels/backend.h).
 *
 * There is one "device", the host: probe names the CPU model (Linux's
 * /proc/cpuinfo, else plain "CPU"), counts the online logical CPUs and the
 * physical memory. open, synchronize and close have nothing to do (calls
 * run synchronously on host memory). mem_info reads MemAvailable and
 * MemTotal from /proc/meminfo on Linux and GlobalMemoryStatusEx on Windows,
 * and says AITK_E_UNSUPPORTED where neither answers, rather than guessing. The build also targets Windows (mingw),
 * so every platform call is behind its own #if. */
#include <stdio.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/cpu.h"

#if defined(_WIN32)
#include <windows.h>
#elif defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

/* Copies the text after "key<spaces>:" of the first matching line of a
 * /proc file into val; false when the file or the key is missing. */
static bool proc_field(const char *path, const char *key, char *val, size_t len)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return false;
    char line[512];
    bool found = false;
    const size_t klen = strlen(key);
    while (!found && fgets(line, sizeof line, fp)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        const char *p = line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        snprintf(val, len, "%s", p);
        val[strcspn(val, "\r\n")] = '\0';
        found = true;
    }
    fclose(fp);
    return found;
}

#if !defined(_WIN32)
/* A /proc/meminfo figure ("MemTotal:  16318412 kB") in bytes; 0 if absent. */
static uint64_t meminfo_bytes(const char *key)
{
    char val[128];
    unsigned long long kib = 0;
    if (!proc_field("/proc/meminfo", key, val, sizeof val) || sscanf(val, "%llu", &kib) != 1)
        return 0;
    return (uint64_t)kib * 1024u;
}
#endif

static int online_cpus(void)
{
#if defined(_WIN32)
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return (int)si.dwNumberOfProcessors;
#elif defined(_SC_NPROCESSORS_ONLN)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#else
    return 1;
#endif
}

static uint64_t total_memory(void)
{
#if defined(_WIN32)
    MEMORYSTATUSEX ms;
    ms.dwLength = sizeof ms;
    return GlobalMemoryStatusEx(&ms) ? (uint64_t)ms.ullTotalPhys : 0;
#else
    uint64_t total = meminfo_bytes("MemTotal");
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    if (total == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0)
            total = (uint64_t)pages * (uint64_t)page;
    }
#endif
    return total;
#endif
}

static aitk_status cpu_probe(aitk_backend_probe *out)
{
    if (!out)
        return AITK_E_INVAL;
    memset(out, 0, sizeof *out);
    aitk_backend_device *d = &out->devices[0];
    if (!proc_field("/proc/cpuinfo", "model name", d->name, sizeof d->name) || !d->name[0])
        snprintf(d->name, sizeof d->name, "CPU");
    d->index = 0;
    d->sm_count = online_cpus();
    d->total_memory_bytes = total_memory();
    out->device_count = 1;
    out->n_devices = 1;
    return AITK_OK;
}

static aitk_status cpu_open(int device)
{
    if (device != 0)
        return AITK_E_INVAL;
    aitk_cpu_counts_reset(); /* paths count from open, as backend.h says */
    return AITK_OK;
}

static aitk_status cpu_synchronize(void)
{
    return AITK_OK; /* every CPU op has finished when it returns */
}

static aitk_status cpu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes)
        return AITK_E_INVAL;
#if defined(_WIN32)
    /* Windows' own figures: physical memory available and installed. */
    MEMORYSTATUSEX ms;
    ms.dwLength = sizeof ms;
    if (!GlobalMemoryStatusEx(&ms))
        return AITK_E_UNSUPPORTED;
    const uint64_t avail = ms.ullAvailPhys, total = ms.ullTotalPhys;
#else
    const uint64_t avail = meminfo_bytes("MemAvailable"), total = meminfo_bytes("MemTotal");
#endif
    if (total == 0)
        return AITK_E_UNSUPPORTED; /* no /proc/meminfo: no honest figure to give */
    *free_bytes = (size_t)avail;
    *total_bytes = (size_t)total;
    return AITK_OK;
}

/* The CPU holds nothing outside aitk_buf_alloc but attention's transient
 * strip, which ops.h leaves out of the account. */
static size_t cpu_workspace_bytes(void)
{
    return 0;
}

static void cpu_last_error(char *buf, size_t len)
{
    /* The one CPU failure with words beyond its aitk_status: OpenBLAS not
     * opening, or not fitting the address-space limit (blas.h). */
    if (buf && len)
        snprintf(buf, len, "%s", aitk_cpu_blas_error());
}

static void path_set(aitk_backend_path *p, const char *op, const char *kernel, long calls)
{
    snprintf(p->op, sizeof p->op, "%s", op);
    snprintf(p->kernel, sizeof p->kernel, "%s", kernel);
    p->calls = calls;
    p->ms = -1.0; /* the CPU reference does not time its ops */
}

/* "gemm" counts the gemm member and both lora_linear members: all three run
 * on cblas_sgemm. */
static aitk_status cpu_paths(aitk_backend_path *out, size_t cap, size_t *n)
{
    if (!n || (cap && !out))
        return AITK_E_INVAL;
    const aitk_cpu_counts c = aitk_cpu_counts_get();
    aitk_backend_path all[3];
    path_set(&all[0], "gemm", "OpenBLAS sgemm (fp32)", c.gemm);
    path_set(&all[1], "attention_forward", "CPU reference (fp32, row strips)",
             c.attention_forward);
    path_set(&all[2], "attention_backward", "CPU reference (fp32, row strips)",
             c.attention_backward);
    *n = cap < 3 ? cap : 3;
    for (size_t i = 0; i < *n; i++)
        out[i] = all[i];
    return AITK_OK;
}

static void cpu_close(void)
{
}

static const aitk_backend cpu_backend = {
    .abi_version = AITK_BACKEND_ABI,
    .name = "cpu",
    .build = "CPU reference: fp32, OpenBLAS, OpenMP",
    .probe = cpu_probe,
    .open = cpu_open,
    .ops = NULL, /* set below: aitk_ops_cpu() is not a constant expression */
    .synchronize = cpu_synchronize,
    .mem_info = cpu_mem_info,
    .workspace_bytes = cpu_workspace_bytes,
    .last_error = cpu_last_error,
    .paths = cpu_paths,
    .close = cpu_close,
};

const aitk_backend *aitk_backend_cpu(void)
{
    static aitk_backend b;
    if (!b.ops) {
        b = cpu_backend;
        b.ops = aitk_ops_cpu();
    }
    return &b;
}
