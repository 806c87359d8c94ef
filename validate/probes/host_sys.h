/* What the host probe reads from the operating system, one implementation per
 * platform (host_linux.c: /etc/os-release, uname, /proc; host_windows.c:
 * RtlGetVersion, the registry, CPUID, GlobalMemoryStatusEx). host.c judges;
 * these only observe. */
#ifndef AITK_VALIDATE_PROBES_HOST_SYS_H
#define AITK_VALIDATE_PROBES_HOST_SYS_H

#include <cjson/cJSON.h>

#include "common/str.h"

typedef struct aitk_host_cpu {
    char model[256];
    long logical;
    long physical;
    char flags[4096]; /* space-separated, Linux /proc/cpuinfo spelling ("avx2 avx512f amx_tile") */
} aitk_host_cpu;

/* Fills os {name, version, pretty_name, id, kernel, machine, system} and
 * host.hostname with what the platform tells; `summary` gets one line such as
 * "Debian GNU/Linux 12 (bookworm), kernel 6.1.0, x86_64". */
void aitk_host_read_os(cJSON *host, cJSON *os, aitk_str *summary);

void aitk_host_read_cpu(aitk_host_cpu *cpu);

/* Total and available physical memory in bytes: 0, or -1 with `why` set. */
int aitk_host_read_memory(double *total, double *available, const char **why);

/* Free bytes for an unprivileged user on the file system holding `dir`, or
 * its nearest existing ancestor (a cache folder may not exist yet); `probed`
 * gets the folder actually measured. 0, or -1. */
int aitk_host_free_bytes(const char *dir, double *out, aitk_str *probed);

/* The user's home folder as Python's os.path.expanduser("~") finds it; NULL
 * when there is none to find (then "~" is not expanded at all). */
const char *aitk_host_home(void);

#endif
