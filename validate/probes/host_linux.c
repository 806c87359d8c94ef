/* Host facts on Linux: /etc/os-release, uname, /proc/cpuinfo, /proc/meminfo,
 * statvfs. See host_sys.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "validate/probes/host_sys.h"

/* KEY=value or KEY="value" from os-release (shell-quoted subset). */
static void read_os_release(cJSON *os)
{
    FILE *f = fopen("/etc/os-release", "r");
    if (!f)
        f = fopen("/usr/lib/os-release", "r");
    if (!f)
        return;
    char line[512];
    static const struct { const char *key, *field; } wanted[] = {
        {"NAME", "name"}, {"VERSION_ID", "version"}, {"PRETTY_NAME", "pretty_name"},
        {"ID", "id"},
    };
    while (fgets(line, sizeof line, f)) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        char *v = eq + 1;
        v[strcspn(v, "\r\n")] = '\0';
        size_t n = strlen(v);
        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
            v[n - 1] = '\0';
            v++;
        }
        for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++)
            if (strcmp(line, wanted[i].key) == 0)
                cJSON_AddStringToObject(os, wanted[i].field, v);
    }
    fclose(f);
}

void aitk_host_read_cpu(aitk_host_cpu *ci)
{
    memset(ci, 0, sizeof *ci);
    ci->logical = sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    /* Physical cores: distinct (physical id, core id) pairs. */
    long pairs[1024][2];
    int npairs = 0;
    long phys = -1;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\n")] = '\0';
        if (!ci->model[0] && strncmp(line, "model name", 10) == 0)
            snprintf(ci->model, sizeof ci->model, "%s", v);
        else if (!ci->flags[0] && strncmp(line, "flags", 5) == 0)
            snprintf(ci->flags, sizeof ci->flags, "%s", v);
        else if (strncmp(line, "physical id", 11) == 0)
            phys = strtol(v, NULL, 10);
        else if (strncmp(line, "core id", 7) == 0) {
            long core = strtol(v, NULL, 10);
            int seen = 0;
            for (int i = 0; i < npairs && !seen; i++)
                seen = pairs[i][0] == phys && pairs[i][1] == core;
            if (!seen && npairs < 1024) {
                pairs[npairs][0] = phys;
                pairs[npairs][1] = core;
                npairs++;
            }
        }
    }
    fclose(f);
    ci->physical = npairs ? npairs : ci->logical;
}

static long long meminfo_kb(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* statvfs on the nearest existing ancestor: the cache folder may not exist
 * yet. That ancestor must be a folder: under a regular file nothing can be
 * created, whatever the disk has free. A relative path ends at ".". */
int aitk_host_free_bytes(const char *dir, double *out, aitk_str *probed)
{
    char *path = aitk_strdup(dir);
    if (!path)
        return -1;
    struct statvfs sv;
    struct stat sb;
    int rc = -1;
    for (;;) {
        if (stat(path, &sb) == 0) {
            if (S_ISDIR(sb.st_mode) && statvfs(path, &sv) == 0) {
                *out = (double)sv.f_bavail * (double)sv.f_frsize;
                aitk_str_append(probed, path);
                rc = 0;
            }
            break;
        }
        if (errno != ENOENT)
            break;
        char *slash = strrchr(path, '/');
        if (!slash) {
            if (strcmp(path, ".") == 0 || !*path)
                break;
            strcpy(path, "."); /* "relative" -> "."; fits: path is non-empty */
            continue;
        }
        if (slash == path) {
            if (path[1] == '\0')
                break;
            path[1] = '\0';
        } else {
            *slash = '\0';
        }
    }
    aitk_free(path);
    return rc;
}


void aitk_host_read_os(cJSON *host, cJSON *os, aitk_str *summary)
{
    read_os_release(os);
    struct utsname un;
    if (uname(&un) != 0) {
        aitk_str_append(summary, "Linux (uname failed)");
        return;
    }
    cJSON_AddStringToObject(os, "kernel", un.release);
    cJSON_AddStringToObject(os, "machine", un.machine);
    cJSON_AddStringToObject(os, "system", un.sysname);
    cJSON_AddStringToObject(host, "hostname", un.nodename);
    const cJSON *pretty = cJSON_GetObjectItemCaseSensitive(os, "pretty_name");
    aitk_str_appendf(summary, "%s, kernel %s, %s",
                     cJSON_IsString(pretty) ? pretty->valuestring : un.sysname, un.release,
                     un.machine);
}

int aitk_host_read_memory(double *total, double *available, const char **why)
{
    char *mem = NULL;
    if (aitk_file_read("/proc/meminfo", 1 << 20, &mem, NULL, NULL) != AITK_OK) {
        *why = "/proc/meminfo is not readable";
        return -1;
    }
    *total = (double)meminfo_kb(mem, "MemTotal:") * 1024;
    *available = (double)meminfo_kb(mem, "MemAvailable:") * 1024;
    aitk_free(mem);
    return 0;
}

/* Python's posixpath.expanduser: $HOME, else the password database's entry
 * for this user (as huggingface_hub, through expanduser, finds it). */
const char *aitk_host_home(void)
{
    const char *home = getenv("HOME");
    if (home && *home)
        return home;
    const struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
}
