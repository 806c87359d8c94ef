/* Version-control URLs (vcs_url.h). */
#include "validate/probes/vcs_url.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* pip's version control systems ("VCS Support" in pip's user guide). */
static const char *const vcs_prefixes[] = {"git+", "hg+", "svn+", "bzr+"};

static size_t vcs_prefix_len(const char *url, size_t len)
{
    for (size_t i = 0; i < sizeof vcs_prefixes / sizeof *vcs_prefixes; i++) {
        const size_t n = strlen(vcs_prefixes[i]);
        if (len > n && strncasecmp(url, vcs_prefixes[i], n) == 0)
            return n;
    }
    return 0;
}

/* Where the host starts and the path begins in `url` ("scheme://" at
 * `scheme_end`): the credentials, if any, end at the authority's last '@'. */
static void authority(const char *url, size_t len, size_t scheme_end, size_t *host,
                      size_t *path)
{
    const size_t start = scheme_end + 3;
    const char *slash = memchr(url + start, '/', len - start);
    *path = slash ? (size_t)(slash - url) : len;
    *host = start;
    for (size_t i = start; i < *path; i++)
        if (url[i] == '@')
            *host = i + 1;
}

void aitk_url_without_credentials(const char *url, size_t len, aitk_str *out)
{
    const char *sep = NULL;
    for (size_t i = 0; i + 2 < len && !sep; i++)
        if (url[i] == ':' && url[i + 1] == '/' && url[i + 2] == '/')
            sep = url + i;
    if (!sep) {
        aitk_str_appendn(out, url, len);
        return;
    }
    size_t host = 0, path = 0;
    authority(url, len, (size_t)(sep - url), &host, &path);
    aitk_str_appendn(out, url, (size_t)(sep - url) + 3);
    aitk_str_appendn(out, url + host, len - host);
}

/* The value of `key` ("subdirectory=") among the fragment's '&'-separated
 * parameters (url[frag..len), '#' included), appended to `out`. */
static void fragment_value(const char *url, size_t frag, size_t len, const char *key,
                          aitk_str *out)
{
    const size_t n = strlen(key);
    for (size_t i = frag; i < len; i++) {
        if ((url[i] != '#' && url[i] != '&') || len - i - 1 < n ||
            strncmp(url + i + 1, key, n) != 0)
            continue;
        const size_t from = i + 1 + n;
        size_t to = from;
        while (to < len && url[to] != '&')
            to++;
        aitk_str_appendn(out, url + from, to - from);
        return;
    }
}

bool aitk_vcs_url_parse(const char *url, size_t len, aitk_vcs_url *out)
{
    /* vcs+scheme://: the scheme's characters (RFC 3986), then "://". */
    const size_t prefix = vcs_prefix_len(url, len);
    size_t scheme_end = prefix;
    while (scheme_end < len && (isalnum((unsigned char)url[scheme_end]) ||
                                url[scheme_end] == '+' || url[scheme_end] == '-' ||
                                url[scheme_end] == '.'))
        scheme_end++;
    if (!prefix || scheme_end == prefix || len - scheme_end < 3 ||
        memcmp(url + scheme_end, "://", 3) != 0)
        return false;
    const char *hash = memchr(url + scheme_end, '#', len - scheme_end);
    const size_t frag = hash ? (size_t)(hash - url) : len;
    size_t host = 0, path = 0;
    authority(url, frag, scheme_end, &host, &path);
    /* A query is not the path's, as urlsplit has it (pip keeps it in the
     * URL it records); the revision follows the path's last '@' (pip's
     * rsplit on it). */
    const char *query = memchr(url + path, '?', frag - path);
    const size_t path_end = query ? (size_t)(query - url) : frag;
    size_t at = path_end;
    for (size_t i = path; i < path_end; i++)
        if (url[i] == '@')
            at = i;
    memset(out, 0, sizeof *out);
    aitk_url_without_credentials(url, at, &out->repo);
    aitk_str_appendn(&out->repo, url + path_end, frag - path_end);
    if (at < path_end)
        aitk_str_appendn(&out->revision, url + at + 1, path_end - at - 1);
    fragment_value(url, frag, len, "subdirectory=", &out->subdirectory);
    /* The name: the path's last segment, less ".git". */
    size_t stop = at;
    while (stop > path && url[stop - 1] == '/')
        stop--;
    size_t start = stop;
    while (start > path && url[start - 1] != '/')
        start--;
    if (stop - start > 4 && strncasecmp(url + stop - 4, ".git", 4) == 0)
        stop -= 4;
    aitk_str_appendn(&out->name, url + start, stop - start);
    return true;
}

void aitk_vcs_url_free(aitk_vcs_url *u)
{
    aitk_str_free(&u->repo);
    aitk_str_free(&u->revision);
    aitk_str_free(&u->name);
    aitk_str_free(&u->subdirectory);
}

/* The comparable form of a repository URL: no VCS prefix, no credentials,
 * scheme and host in lower case, no trailing '/' or ".git". */
static void comparable(const char *url, aitk_str *out)
{
    size_t len = strlen(url);
    const size_t prefix = vcs_prefix_len(url, len);
    url += prefix;
    len -= prefix;
    aitk_str bare = AITK_STR_INIT;
    aitk_url_without_credentials(url, len, &bare);
    const char *s = aitk_str_cstr(&bare);
    size_t n = bare.len;
    while (n && s[n - 1] == '/')
        n--;
    if (n > 4 && strncasecmp(s + n - 4, ".git", 4) == 0)
        n -= 4;
    const char *sep = strstr(s, "://");
    const char *path = sep ? strchr(sep + 3, '/') : NULL;
    const size_t lower = path ? (size_t)(path - s) : (sep ? n : 0);
    for (size_t i = 0; i < n; i++) {
        const char ch = i < lower ? (char)tolower((unsigned char)s[i]) : s[i];
        aitk_str_appendn(out, &ch, 1);
    }
    aitk_str_free(&bare);
}

bool aitk_vcs_same_repo(const char *a, const char *b)
{
    aitk_str x = AITK_STR_INIT, y = AITK_STR_INIT;
    comparable(a, &x);
    comparable(b, &y);
    const bool same = x.len && strcmp(aitk_str_cstr(&x), aitk_str_cstr(&y)) == 0;
    aitk_str_free(&x);
    aitk_str_free(&y);
    return same;
}

bool aitk_vcs_revision_is_commit(const char *revision)
{
    const size_t n = strlen(revision);
    if (n < 7 || n > 40)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)revision[i]))
            return false;
    return true;
}

bool aitk_vcs_commit_matches(const char *revision, const char *commit)
{
    return aitk_vcs_revision_is_commit(revision) && strlen(commit) >= strlen(revision) &&
           strncasecmp(commit, revision, strlen(revision)) == 0;
}
