/* Where a learnt user or host name counts as that name in text.
 *
 * The rule (match_learnt in redact.c applies it):
 *  - A name of 4+ characters is bounded by anything that does not
 *    continue its edge: a letter after a name that ends in a letter, a
 *    digit after one that ends in a digit. '_', '-', '.', '/' and the like
 *    always bound it. So "jdoe" is replaced in jdoe2, jdoe_envs, hf_jdoe
 *    and jdoe-lora, but not in "jdoes", nor host "gpu7" in "gpu70".
 *  - A shorter name ("ml", "max", "ann") must stand alone: no letter,
 *    digit, '-', '_' or '.' on either side. Two or three letters glued to
 *    others are far more often part of an identifier than the name itself
 *    (libnvidia-ml.so.1, libcudart.so.13, max_split_size_mb), and those
 *    identifiers are what a support report is read for. The places where
 *    such a name really is the name stay covered: a path segment
 *    (/home/max/, /opt/max), a prompt (max@ml:), a field, prose ("by max"),
 *    and a host's domain after it (ml.example.org).
 *  - A name that is a technical word (the table below: the tool's own
 *    vocabulary and the names of software folders) is replaced only where it
 *    is a user's home folder (/home/<name>, C:\Users\<name>, ...) or where a
 *    field that holds a name is exactly it (host.hostname "cuda", USER; not
 *    a check titled "torch"). Such a name is shared
 *    by thousands of machines (the Jetson's "nvidia", a container's "python"),
 *    so it identifies little, while replacing it in prose turns remedies into
 *    nonsense ("[user-1]-smi") and system paths into riddles
 *    (/usr/local/[host-1]).
 *  - Any other name is replaced everywhere, system paths included: a user's
 *    folder in /opt (/opt/conda/envs/jdoe, /opt/jdoe) is as private as one
 *    in /home. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "reports/redact_patterns.h"

/* The technical words, lower case. Kept in C rather than in a data file:
 * redaction must work when no data folder is at hand (render --redact on
 * another machine), and a missing file must never make it replace less.
 * Grouped by why a word is here. */
static const char *const technical_words[] = {
    /* The GPU stack the tool names in titles, remedies and paths. */
    "nvidia", "cuda", "cudnn", "cudart", "cublas", "cublaslt", "nccl", "nvml", "tensorrt", "gpu",
    "gpus", "cpu", "driver", "toolkit", "runtime", "cu11", "cu12", "cu13",
    /* Python, its packagers and the ML libraries and models the tool checks. */
    "python", "python3", "pip", "conda", "anaconda", "miniconda", "miniforge", "mamba", "venv",
    "env", "envs", "torch", "pytorch", "diffusers", "transformers", "peft", "accelerate",
    "huggingface", "hf", "hub", "ai", "aitk", "lora", "flux", "chroma", "omnigen", "model",
    "models", "cache", "site", "packages", "dist",
    /* Folders of a system path (/usr/local/lib, C:\Program Files). */
    "usr", "local", "lib", "lib32", "lib64", "libx32", "bin", "sbin", "share", "include", "src",
    "opt", "etc", "var", "tmp", "dev", "proc", "sys", "run", "boot", "mnt", "media", "srv",
    "snap", "nix", "store", "home", "data", "program", "files", "system32",
    /* Systems and the default accounts of images and services, named in the
     * tool's text (WSL, Docker remedies) or shared by every such machine. */
    "linux", "windows", "wsl", "ubuntu", "debian", "fedora", "centos", "rocky", "docker",
    "container", "jupyter", "runner", "user", "users", "admin", "test", "build", "ci",
    /* Words of the report's own text that are also host or user names: the
     * CPU vendors, memory and process words, git's default branch. Replaced
     * in prose they turn "AMD EPYC", "47.9 GB free" or "refs/main" into
     * riddles, and as names they identify little. */
    "amd", "intel", "arm", "free", "total", "available", "kernel", "main", "master", "node",
    "fix", "so", "an",
};

bool aitk_redact_technical_word(const char *v, size_t n)
{
    for (size_t i = 0; i < sizeof technical_words / sizeof *technical_words; i++)
        if (strlen(technical_words[i]) == n && strncasecmp(v, technical_words[i], n) == 0)
            return true;
    return false;
}

/* c would continue a name whose edge character is `edge`. Bytes past ASCII
 * are taken for letters (UTF-8 names). */
static bool continues(char edge, char c)
{
    bool letter_edge = isalpha((unsigned char)edge) || (unsigned char)edge >= 0x80;
    bool letter = isalpha((unsigned char)c) || (unsigned char)c >= 0x80;
    return (letter_edge && letter) || (isdigit((unsigned char)edge) && isdigit((unsigned char)c));
}

/* c joins a short name into a longer identifier (see the rule above). */
static bool glue(char c)
{
    return aitk_redact_is_name_char(c) || c == '.' || (unsigned char)c >= 0x80;
}

/* p = ".example.org": the rest of a host's domain, two labels or more that
 * start with a letter (".so.1", a library's version, is not one). */
static bool domain_follows(const char *p)
{
    int labels = 0;
    while (*p == '.' && isalpha((unsigned char)p[1])) {
        labels++;
        for (p++; isalnum((unsigned char)*p) || *p == '-'; p++)
            ;
    }
    return labels >= 2;
}

bool aitk_redact_name_bounded(const char *in, size_t i, const char *name, size_t n)
{
    if (n < 4)
        return (i == 0 || !glue(in[i - 1])) &&
               (!glue(in[i + n]) || domain_follows(in + i + n));
    return (i == 0 || !continues(name[0], in[i - 1])) && !continues(name[n - 1], in[i + n]);
}

/* A folder whose children are home folders: home, homes, home2 (any
 * number), Users (Windows, macOS, Wine's "users"). Any case, any depth:
 * /nfs/homes/<x>, /mnt/c/Users/<x>, C:\USERS\<x>. */
bool aitk_redact_home_parent(const char *c, size_t n)
{
    if (n == 5 && strncasecmp(c, "users", 5) == 0)
        return true;
    if (n < 4 || strncasecmp(c, "home", 4) != 0)
        return false;
    if (n == 5 && (c[4] == 's' || c[4] == 'S'))
        return true;
    for (size_t k = 4; k < n; k++)
        if (!isdigit((unsigned char)c[k]))
            return false;
    return true;
}

static bool separator(char c)
{
    return c == '/' || c == '\\';
}

bool aitk_redact_home_component(const char *in, size_t i)
{
    if (i < 2 || !separator(in[i - 1]))
        return false;
    size_t end = i - 1, k = end;
    while (k > 0 && !separator(in[k - 1]) && !isspace((unsigned char)in[k - 1]) &&
           !strchr("\"'`:;,=(", in[k - 1]))
        k--;
    /* The parent must itself be a folder: "/home/x", "C:\Users\x", not
     * "home/x" at the start of a word. */
    if (k == 0 || !(separator(in[k - 1]) || in[k - 1] == ':'))
        return false;
    return aitk_redact_home_parent(in + k, end - k);
}
