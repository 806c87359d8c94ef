/* Host facts on Windows: the true OS version from ntdll's RtlGetVersion
 * (GetVersionEx answers what the manifest claims, not what runs), the
 * product name from the registry, the CPU from CPUID (with the OS's XSAVE
 * state, as /proc/cpuinfo reports only what the kernel enabled), memory from
 * GlobalMemoryStatusEx, free disk from GetDiskFreeSpaceExW. Under Wine,
 * ntdll's wine_get_version says so, and the report says it too: figures
 * taken under Wine describe Wine's view of the Linux host. See host_sys.h. */
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "common/alloc.h"
#include "validate/probes/host_sys.h"

typedef LONG(WINAPI *rtl_get_version_fn)(OSVERSIONINFOW *);
typedef const char *(__cdecl *wine_get_version_fn)(void);

static FARPROC ntdll_proc(const char *name)
{
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    return ntdll ? GetProcAddress(ntdll, name) : NULL;
}

/* A REG_SZ from HKLM into `out` (UTF-8); 0 or -1. */
static int registry_string(const wchar_t *key, const wchar_t *value, char *out, size_t size)
{
    wchar_t w[256];
    DWORD bytes = sizeof w;
    if (RegGetValueW(HKEY_LOCAL_MACHINE, key, value, RRF_RT_REG_SZ, NULL, w, &bytes) !=
        ERROR_SUCCESS)
        return -1;
    return WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)size, NULL, NULL) > 0 ? 0 : -1;
}

void aitk_host_read_os(cJSON *host, cJSON *os, aitk_str *summary)
{
    static const wchar_t *nt_key = L"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion";
    OSVERSIONINFOW vi = {.dwOSVersionInfoSize = sizeof vi};
    rtl_get_version_fn rtl = (rtl_get_version_fn)(void (*)(void))ntdll_proc("RtlGetVersion");
    char version[64] = "";
    if (rtl && rtl(&vi) == 0)
        snprintf(version, sizeof version, "%lu.%lu.%lu", (unsigned long)vi.dwMajorVersion,
                 (unsigned long)vi.dwMinorVersion, (unsigned long)vi.dwBuildNumber);
    char product[128] = "", display[64] = "";
    registry_string(nt_key, L"ProductName", product, sizeof product);
    registry_string(nt_key, L"DisplayVersion", display, sizeof display);
    cJSON_AddStringToObject(os, "name", product[0] ? product : "Windows");
    cJSON_AddStringToObject(os, "id", "windows");
    if (version[0])
        cJSON_AddStringToObject(os, "version", version);
    char pretty[256];
    snprintf(pretty, sizeof pretty, "%s%s%s", product[0] ? product : "Windows",
             display[0] ? " " : "", display);
    cJSON_AddStringToObject(os, "pretty_name", pretty);
    cJSON_AddStringToObject(os, "kernel", version[0] ? version : "unknown");
    SYSTEM_INFO si;
    GetNativeSystemInfo(&si);
    const char *machine = si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_AMD64   ? "AMD64"
                          : si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64 ? "ARM64"
                          : si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_INTEL ? "x86"
                                                                                      : "unknown";
    cJSON_AddStringToObject(os, "machine", machine);
    cJSON_AddStringToObject(os, "system", "Windows");
    wine_get_version_fn wine = (wine_get_version_fn)(void (*)(void))ntdll_proc("wine_get_version");
    if (wine)
        cJSON_AddStringToObject(os, "wine", wine());
    wchar_t wname[MAX_COMPUTERNAME_LENGTH + 1];
    DWORD n = MAX_COMPUTERNAME_LENGTH + 1;
    char name[4 * (MAX_COMPUTERNAME_LENGTH + 1)];
    if (GetComputerNameW(wname, &n) &&
        WideCharToMultiByte(CP_UTF8, 0, wname, -1, name, sizeof name, NULL, NULL) > 0)
        cJSON_AddStringToObject(host, "hostname", name);
    aitk_str_appendf(summary, "%s, build %s, %s%s%s", pretty, version[0] ? version : "unknown",
                     machine, wine ? ", under Wine " : "", wine ? wine() : "");
}

static void add_flag(aitk_host_cpu *cpu, const char *flag, int on)
{
    size_t len = strlen(cpu->flags);
    if (on && len + strlen(flag) + 2 < sizeof cpu->flags)
        snprintf(cpu->flags + len, sizeof cpu->flags - len, "%s%s", len ? " " : "", flag);
}

/* XCR0: which register states the OS saves (and so lets programs use). */
static unsigned long long os_xsave_mask(unsigned ecx1)
{
    if (!(ecx1 & bit_OSXSAVE))
        return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (unsigned long long)hi << 32 | lo;
}

static void read_cpu_flags(aitk_host_cpu *cpu)
{
    unsigned a, b, c1, d;
    if (!__get_cpuid(1, &a, &b, &c1, &d))
        return;
    unsigned long long xcr0 = os_xsave_mask(c1);
    int avx_os = (xcr0 & 0x6) == 0x6;          /* SSE + AVX state */
    int avx512_os = avx_os && (xcr0 & 0xe0) == 0xe0; /* opmask, ZMM_Hi256, Hi16_ZMM */
    int amx_os = (xcr0 & 0x60000) == 0x60000;  /* XTILECFG + XTILEDATA */
    add_flag(cpu, "fma", avx_os && (c1 & bit_FMA));
    add_flag(cpu, "f16c", avx_os && (c1 & bit_F16C));
    unsigned b7 = 0, c7 = 0, d7 = 0, a71 = 0, b71 = 0, c71 = 0, d71 = 0;
    if (__get_cpuid_count(7, 0, &a, &b7, &c7, &d7)) {
        add_flag(cpu, "avx2", avx_os && (b7 & bit_AVX2));
        add_flag(cpu, "avx512f", avx512_os && (b7 & bit_AVX512F));
        add_flag(cpu, "amx_tile", amx_os && (d7 & (1u << 24)));
        add_flag(cpu, "amx_bf16", amx_os && (d7 & (1u << 22)));
        if (__get_cpuid_count(7, 1, &a71, &b71, &c71, &d71))
            add_flag(cpu, "avx512_bf16", avx512_os && (a71 & (1u << 5)));
    }
}

static void read_cpu_brand(aitk_host_cpu *cpu)
{
    unsigned regs[12];
    unsigned max = __get_cpuid_max(0x80000000u, NULL);
    if (max < 0x80000004u)
        return;
    for (unsigned i = 0; i < 3; i++)
        __get_cpuid(0x80000002u + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2],
                    &regs[4 * i + 3]);
    char brand[49];
    memcpy(brand, regs, 48);
    brand[48] = '\0';
    const char *p = brand;
    while (*p == ' ')
        p++;
    snprintf(cpu->model, sizeof cpu->model, "%s", p);
}

static long physical_cores(void)
{
    DWORD len = 0;
    GetLogicalProcessorInformationEx(RelationProcessorCore, NULL, &len);
    if (GetLastError() != ERROR_INSUFFICIENT_BUFFER || len == 0)
        return 0;
    char *buf = aitk_malloc(len);
    long cores = 0;
    if (buf && GetLogicalProcessorInformationEx(
                   RelationProcessorCore, (SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *)buf, &len)) {
        for (DWORD off = 0; off < len;) {
            const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *e =
                (const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *)(buf + off);
            if (e->Size == 0)
                break;
            cores += e->Relationship == RelationProcessorCore;
            off += e->Size;
        }
    }
    aitk_free(buf);
    return cores;
}

void aitk_host_read_cpu(aitk_host_cpu *cpu)
{
    memset(cpu, 0, sizeof *cpu);
    read_cpu_brand(cpu);
    read_cpu_flags(cpu);
    cpu->logical = (long)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
    long cores = physical_cores();
    cpu->physical = cores > 0 ? cores : cpu->logical;
}

int aitk_host_read_memory(double *total, double *available, const char **why)
{
    MEMORYSTATUSEX ms = {.dwLength = sizeof ms};
    if (!GlobalMemoryStatusEx(&ms)) {
        *why = "GlobalMemoryStatusEx failed";
        return -1;
    }
    *total = (double)ms.ullTotalPhys;
    *available = (double)ms.ullAvailPhys;
    return 0;
}

int aitk_host_free_bytes(const char *dir, double *out, aitk_str *probed)
{
    /* The nearest existing ancestor: drop one component at a time. */
    char *path = aitk_strdup(dir);
    if (!path)
        return -1;
    int rc = -1;
    for (;;) {
        wchar_t w[MAX_PATH];
        ULARGE_INTEGER avail;
        if (MultiByteToWideChar(CP_UTF8, 0, path, -1, w, MAX_PATH) > 0 &&
            GetDiskFreeSpaceExW(w, &avail, NULL, NULL)) {
            *out = (double)avail.QuadPart;
            aitk_str_append(probed, path);
            rc = 0;
            break;
        }
        char *cut = strrchr(path, '\\');
        char *slash = strrchr(path, '/');
        if (!cut || (slash && slash > cut))
            cut = slash;
        if (!cut || cut == path)
            break;
        *cut = '\0';
    }
    aitk_free(path);
    return rc;
}

const char *aitk_host_home(void)
{
    /* Python's ntpath.expanduser: USERPROFILE, else HOMEDRIVE + HOMEPATH. */
    static char home[MAX_PATH * 2];
    const char *v = getenv("USERPROFILE");
    if (v && *v)
        return v;
    const char *drive = getenv("HOMEDRIVE"), *path = getenv("HOMEPATH");
    if (drive && path) {
        snprintf(home, sizeof home, "%s%s", drive, path);
        return home;
    }
    return NULL;
}
