/* The patterns of redaction: what a private value looks like in free text.
 *
 * Each matcher looks at the text starting at p and returns the length of
 * what it recognises there, or 0; none reads past the terminating NUL. They
 * know nothing of the report tree or of placeholders (redact.c does). */
#include "reports/redact_patterns.h"

#include <ctype.h>
#include <string.h>

bool aitk_redact_is_word(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

bool aitk_redact_is_name_char(char c)
{
    return aitk_redact_is_word(c) || c == '-';
}

bool aitk_redact_ci_contains(const char *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++) {
        size_t j = 0;
        while (j < m && tolower((unsigned char)hay[i + j]) == needle[j])
            j++;
        if (j == m)
            return true;
    }
    return false;
}

bool aitk_redact_ci_equal(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

static size_t hex_run(const char *p)
{
    size_t n = 0;
    while (isxdigit((unsigned char)p[n]))
        n++;
    return n;
}

size_t aitk_redact_match_uuid(const char *p)
{
    static const size_t groups[] = {8, 4, 4, 4, 12};
    size_t at = 0;
    for (size_t g = 0; g < 5; g++) {
        if (hex_run(p + at) < groups[g])
            return 0;
        at += groups[g];
        if (g < 4 && p[at++] != '-')
            return 0;
    }
    return aitk_redact_is_word(p[at]) ? 0 : at;
}

/* Cisco's form: three groups of four hex digits, 001a.2b3c.4d5e. */
static size_t match_mac_dotted(const char *p)
{
    for (size_t g = 0; g < 3; g++) {
        const char *q = p + g * 5;
        for (size_t k = 0; k < 4; k++)
            if (!isxdigit((unsigned char)q[k]))
                return 0;
        if (g < 2 && q[4] != '.')
            return 0;
    }
    /* 1234.5678.9abc.0 is a longer dotted run: a version, not an address. */
    if (aitk_redact_is_word(p[14]) || (p[14] == '.' && isxdigit((unsigned char)p[15])))
        return 0;
    return 14;
}

/* 00:1a:2b:3c:4d:5e, 00-1A-2B-3C-4D-5E, 001a.2b3c.4d5e. Twelve bare hex
 * digits are not taken: short commit hashes look the same. */
size_t aitk_redact_match_mac(const char *p)
{
    if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]))
        return 0;
    char sep = p[2];
    if (sep != ':' && sep != '-')
        return match_mac_dotted(p);
    for (size_t g = 0; g < 6; g++) {
        const char *q = p + g * 3;
        if (!isxdigit((unsigned char)q[0]) || !isxdigit((unsigned char)q[1]))
            return 0;
        if (g < 5 && q[2] != sep)
            return 0;
    }
    return aitk_redact_is_word(p[17]) || p[17] == sep ? 0 : 17;
}

size_t aitk_redact_match_ipv4(const char *p)
{
    size_t at = 0;
    for (int g = 0; g < 4; g++) {
        size_t d = 0;
        int v = 0;
        while (d < 4 && isdigit((unsigned char)p[at + d]))
            v = v * 10 + (p[at + d++] - '0');
        if (d == 0 || d > 3 || v > 255)
            return 0;
        at += d;
        if (g < 3 && p[at++] != '.')
            return 0;
    }
    /* 1.2.3.4.5 is a version, not an address. */
    if (aitk_redact_is_word(p[at]) || (p[at] == '.' && isdigit((unsigned char)p[at + 1])))
        return 0;
    return at;
}

/* Full, "::"-shortened, and with an IPv4 tail (::ffff:10.9.8.7, the
 * IPv4-mapped form), which is taken whole. */
size_t aitk_redact_match_ipv6(const char *p)
{
    size_t n = 0, colons = 0, groups = 0, in_group = 0, group_at = 0;
    bool double_colon = false;
    for (; isxdigit((unsigned char)p[n]) || p[n] == ':'; n++) {
        if (p[n] == ':') {
            colons++;
            if (p[n + 1] == ':')
                double_colon = true;
            if (in_group > 4)
                return 0;
            in_group = 0;
        } else if (in_group++ == 0) {
            groups++;
            group_at = n;
        }
    }
    if (p[n] == '.' && in_group > 0 && colons > 0) {
        size_t v4 = aitk_redact_match_ipv4(p + group_at);
        if (v4 && (double_colon || colons == 6))
            return group_at + v4;
        return 0;
    }
    if (in_group > 4 || aitk_redact_is_word(p[n]) || n < 6 || colons > 7 || groups < 2)
        return 0;
    return double_colon || colons == 7 ? n : 0;
}

static size_t alnum_run(const char *p, const char *extra)
{
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || (p[n] && strchr(extra, p[n])))
        n++;
    return n;
}

/* Tokens with a published prefix: Hugging Face (user and organisation),
 * GitHub, AWS key ids, OpenAI-style, Slack, GitLab, Stripe secret and
 * restricted keys, npm, Replicate, Google (API keys, OAuth client secrets
 * and access tokens), PyPI API tokens (pypi- and a base64url macaroon,
 * PyPI's help page "API tokens"). Each prefix is specific enough that an identifier
 * of the report does not start with it; the minimum length after it keeps
 * a bare mention ("sk_live_ keys") out. */
size_t aitk_redact_match_token(const char *p)
{
    static const struct {
        const char *prefix;
        const char *extra; /* characters besides alphanumerics */
        size_t min;        /* characters after the prefix */
    } kinds[] = {
        {"hf_", "", 20},       {"ghp_", "", 20},        {"gho_", "", 20},  {"ghu_", "", 20},
        {"ghs_", "", 20},      {"ghr_", "", 20},        {"github_pat_", "_", 20},
        {"AKIA", "", 16},      {"ASIA", "", 16},        {"sk-", "_-", 20}, {"xoxb-", "-", 10},
        {"xoxp-", "-", 10},    {"glpat-", "_-", 20},
        {"api_org_", "", 20},  {"sk_live_", "", 16},    {"sk_test_", "", 16},
        {"rk_live_", "", 16},  {"rk_test_", "", 16},    {"npm_", "", 30},  {"r8_", "", 30},
        {"AIza", "_-", 30},    {"GOCSPX-", "_-", 20},   {"ya29.", "_-.", 20},
        {"pypi-", "_-", 50},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        size_t k = strlen(kinds[i].prefix);
        if (strncmp(p, kinds[i].prefix, k) != 0)
            continue;
        size_t n = alnum_run(p + k, kinds[i].extra);
        if (n >= kinds[i].min && !aitk_redact_is_word(p[k + n]))
            return k + n;
    }
    return 0;
}

/* Long random-looking runs: hex of 32+ (API keys, hashes of secrets), or
 * base64 of 32+ with upper, lower and digits mixed (AWS secret keys are 40).
 * '_' and '-' are left out on purpose: identifiers and paths use them. */
size_t aitk_redact_match_random(const char *p, unsigned flags)
{
    size_t n = hex_run(p);
    if (n >= 32 && !aitk_redact_is_word(p[n]) && !(flags & AITK_REDACT_TEXT_NO_HEX))
        return n;
    if (p[0] == '/')
        return 0;
    size_t upper = 0, lower = 0, digit = 0;
    for (n = 0; isalnum((unsigned char)p[n]) || p[n] == '+' || p[n] == '/'; n++) {
        upper += isupper((unsigned char)p[n]) != 0;
        lower += islower((unsigned char)p[n]) != 0;
        digit += isdigit((unsigned char)p[n]) != 0;
    }
    while (p[n] == '=')
        n++;
    if (n < 32 || aitk_redact_is_word(p[n]) || upper < 2 || lower < 2 || digit < 2)
        return 0;
    return n;
}

/* Dotted numbers that are versions, not addresses: inside a longer dotted
 * run (9.1.0.70.1), after a version operator (==9.1.0.70), or after ':'
 * when every part is one digit (pkg:1.2.0.1; the addresses of that shape
 * are public resolvers such as 8.8.8.8, which identify nobody). Any other
 * four numbers after ':' are an address (MASTER_ADDR:10.20.30.40, inet
 * addr:192.168.7.9, eth0:10.0.0.5<0>); versions written there ("cuda:12.4",
 * "torch:2.4.1") have fewer than four parts and are never taken. A
 * four-part version after ':' or a space (cuDNN 9.1.0.70) is taken for an
 * address, as it always was: versions have their own fields (see
 * key_flags in redact.c), where no address is looked for. */
/* Whether the word before in[i] (past one run of spaces or a colon) names
 * software whose versions have four parts: "cuDNN 9.1.0.70", "TensorRT
 * 10.0.1.6", "libcudnn.so.9 9.1.0.70" (the CUDA stack's own findings), not
 * an address. */
static bool after_software_name(const char *in, size_t i)
{
    static const char *const names[] = {"cuda", "cudnn", "cublas", "nccl", "tensorrt", "cufft",
                                        "curand", "cusparse", "cusolver", "nvrtc", "nvjitlink",
                                        "driver", "version", "torch", "triton", ".so", ".dll"};
    size_t end = i;
    while (end > 0 && (in[end - 1] == ' ' || in[end - 1] == ':'))
        end--;
    if (end == i)
        return false;
    size_t start = end;
    while (start > 0 && !isspace((unsigned char)in[start - 1]))
        start--;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (aitk_redact_ci_contains(in + start, end - start, names[k]))
            return true;
    return false;
}

bool aitk_redact_version_context(const char *in, size_t i)
{
    if (i == 0)
        return false;
    if (after_software_name(in, i))
        return true;
    char prev = in[i - 1];
    if (prev == '.')
        return true;
    if (prev == ':') {
        const char *p = in + i;
        for (int g = 0; g < 4; g++, p += 2)
            if (!isdigit((unsigned char)p[0]) || (g < 3 ? p[1] != '.' : isdigit((unsigned char)p[1])))
                return false;
        return true;
    }
    return prev == '=' && i >= 2 && strchr("=<>~!", in[i - 2]);
}
