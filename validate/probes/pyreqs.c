/* Requirements files and installed distributions (pyreqs.h). */
#include "validate/probes/pyreqs.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "validate/probes/pep440.h"
#include "validate/probes/pyenv.h"
#include "validate/probes/vcs_url.h"

/* Requirements files are a few kilobytes; a bigger one is not one. */
#define MAX_FILE (1u << 20)
/* Includes nest a level or two in practice (ai-toolkit: one). */
#define MAX_DEPTH 8

aitk_status aitk_pyreq_normalize(const char *name, size_t len, aitk_str *out)
{
    bool sep = false;
    for (size_t i = 0; i < len; i++) {
        const char ch = name[i];
        if (ch == '-' || ch == '_' || ch == '.') {
            sep = true;
            continue;
        }
        if (sep && out->len)
            aitk_str_append(out, "-");
        sep = false;
        const char low = (char)tolower((unsigned char)ch);
        aitk_str_appendn(out, &low, 1);
    }
    return aitk_str_status(out);
}

static bool name_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '-' || ch == '_' || ch == '.';
}

static aitk_status add_req(aitk_pyreqs *r, const char *name, size_t len, const char *pin,
                           size_t pin_len, const char *file, long line)
{
    aitk_pyreq *grown = aitk_realloc(r->items, (r->count + 1) * sizeof *r->items);
    if (!grown)
        return AITK_E_NOMEM;
    r->items = grown;
    aitk_pyreq *q = &r->items[r->count];
    memset(q, 0, sizeof *q);
    aitk_str n = AITK_STR_INIT, w = AITK_STR_INIT;
    aitk_pyreq_normalize(name, len, &n);
    const char *base = aitk_path_base_name(file);
    aitk_str_appendf(&w, "%s:%ld", base, line);
    q->name = aitk_str_steal(&n);
    q->where = aitk_str_steal(&w);
    q->pin = pin ? aitk_strndup(pin, pin_len) : NULL;
    r->count++;
    if (!q->name || !q->where || (pin && !q->pin))
        return AITK_E_NOMEM;
    return AITK_OK;
}

/* The value of parameter `key` ("egg=") in a URL's fragment, whose
 * parameters are '&'-separated (#subdirectory=x&egg=name), or NULL. */
static const char *fragment_param(const char *url, const char *key)
{
    const char *frag = strchr(url, '#');
    for (const char *p = frag; p; p = strchr(p, '&')) {
        p++;
        if (strncmp(p, key, strlen(key)) == 0)
            return p + strlen(key);
    }
    return NULL;
}

/* A wheel file's base name ("name-1.0-py3-none-any.whl", `len` bytes)
 * read as pip reads it (PEP 427): the name before the first '-', the
 * version after it, which pip pins (==1.0). The name's length, or 0 when
 * it is not a wheel's name. */
static size_t wheel_name(const char *base, size_t len, const char **version, size_t *vlen)
{
    if (len <= 4 || strncmp(base + len - 4, ".whl", 4) != 0)
        return 0;
    const char *dash = memchr(base, '-', len);
    if (!dash)
        return 0;
    const char *v = dash + 1, *stop = memchr(v, '-', (size_t)(base + len - v));
    *version = v;
    *vlen = stop ? (size_t)(stop - v) : 0;
    return (size_t)(dash - base);
}

/* The requirement just added asks for a commit of a repository: where
 * from, and which revision (vcs_url.h). */
static aitk_status set_vcs(aitk_pyreqs *r, const aitk_vcs_url *u, bool named_by_url)
{
    aitk_pyreq *q = &r->items[r->count - 1];
    q->named_by_url = named_by_url;
    q->repo = aitk_strdup(aitk_str_cstr(&u->repo));
    q->revision = u->revision.len ? aitk_strdup(aitk_str_cstr(&u->revision)) : NULL;
    q->subdirectory = u->subdirectory.len ? aitk_strdup(aitk_str_cstr(&u->subdirectory)) : NULL;
    return q->repo && (q->revision || !u->revision.len) &&
                   (q->subdirectory || !u->subdirectory.len)
               ? AITK_OK
               : AITK_E_NOMEM;
}

/* A VCS URL (false for any other, with nothing added): named by
 * "#egg=NAME" (`egg`, `egg_len` bytes) or by `name` (`name_len`), else by
 * its repository, as pip's build of it almost always is
 * (git+https://github.com/huggingface/diffusers.git@c943837...:
 * diffusers); `*st` says whether adding it worked. */
static bool add_vcs(aitk_pyreqs *r, const char *url, const char *name, size_t name_len,
                    const char *file, long line, aitk_status *st)
{
    aitk_vcs_url u;
    if (!aitk_vcs_url_parse(url, strcspn(url, " \t"), &u))
        return false;
    const bool by_url = !name_len;
    if (by_url) {
        name = aitk_str_cstr(&u.name);
        name_len = u.name.len;
    }
    *st = name_len ? add_req(r, name, name_len, NULL, 0, file, line) : AITK_OK;
    if (!*st && name_len)
        *st = set_vcs(r, &u, by_url);
    aitk_vcs_url_free(&u);
    return true;
}

/* A URL requirement's name, as pip has it before it builds anything:
 * "#egg=NAME" among the fragment's parameters, else a wheel file's name.
 * A VCS URL without #egg= is named by its repository (add_vcs); an
 * archive has no name until pip has built it: not judged. */
static aitk_status add_url(aitk_pyreqs *r, const char *url, const char *file, long line)
{
    const char *egg = fragment_param(url, "egg=");
    size_t egg_len = 0;
    while (egg && name_char(egg[egg_len]))
        egg_len++;
    aitk_status st;
    if (add_vcs(r, url, egg, egg_len, file, line, &st))
        return st;
    if (egg)
        return egg_len ? add_req(r, egg, egg_len, NULL, 0, file, line) : AITK_OK;
    const size_t end = strcspn(url, "#? \t");
    const char *base = url;
    for (const char *p = url; p < url + end; p++)
        if (*p == '/')
            base = p + 1;
    const char *version = NULL;
    size_t vlen = 0;
    const size_t n = wheel_name(base, (size_t)(url + end - base), &version, &vlen);
    return n ? add_req(r, base, n, vlen ? version : NULL, vlen, file, line) : AITK_OK;
}

/* A local file or folder (pip: a path separator, or an archive's
 * extension): a wheel's name is in its file name; the rest is not
 * judged. */
static aitk_status add_path(aitk_pyreqs *r, const char *s, const char *file, long line)
{
    const size_t end = strcspn(s, " \t");
    const char *base = s;
    for (const char *p = s; p < s + end; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    const char *version = NULL;
    size_t vlen = 0;
    const size_t n = wheel_name(base, (size_t)(s + end - base), &version, &vlen);
    return n ? add_req(r, base, n, vlen ? version : NULL, vlen, file, line) : AITK_OK;
}

static bool ends_with(const char *s, size_t len, const char *tail)
{
    const size_t n = strlen(tail);
    return len >= n && strncasecmp(s + len - n, tail, n) == 0;
}

/* pip reads a line as a path when it holds a separator or names an archive. */
static bool path_like(const char *s)
{
    static const char *const archives[] = {".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2",
                                           ".tbz", ".tar.xz", ".txz", ".tar"};
    const size_t end = strcspn(s, " \t;");
    if (memchr(s, '/', end) || memchr(s, '\\', end))
        return true;
    for (size_t i = 0; i < sizeof archives / sizeof *archives; i++)
        if (ends_with(s, end, archives[i]))
            return true;
    return false;
}

/* One requirement line, comments and options gone: PEP 508, "name @ URL",
 * a URL, or a path. A line with an environment marker is not judged. */
static aitk_status add_line(aitk_pyreqs *r, const char *s, const char *file, long line)
{
    if (strchr(s, ';'))
        return AITK_OK;
    size_t n = 0;
    while (name_char(s[n]))
        n++;
    /* name [extras] @ URL (PEP 508's URL form) */
    const char *after = s + n;
    while (*after == ' ' || *after == '\t')
        after++;
    if (*after == '[') {
        const char *close = strchr(after, ']');
        after = close ? close + 1 : after + strlen(after);
        while (*after == ' ' || *after == '\t')
            after++;
    }
    if (n && *after == '@') {
        const char *url = after + 1 + strspn(after + 1, " \t");
        aitk_status st;
        return add_vcs(r, url, s, n, file, line, &st) ? st : add_req(r, s, n, NULL, 0, file, line);
    }
    if (strstr(s, "://"))
        return add_url(r, s, file, line);
    if (path_like(s))
        return add_path(r, s, file, line);
    if (!n || !isalnum((unsigned char)s[0]))
        return AITK_OK;
    const char *spec = s + n;
    if (*spec == '[') {
        const char *close = strchr(spec, ']');
        spec = close ? close + 1 : spec + strlen(spec);
    }
    while (*spec == ' ' || *spec == '\t' || *spec == '(')
        spec++;
    /* A lone "==X" (not "===", no second specifier, no wildcard) is a pin. */
    const char *pin = NULL;
    size_t pin_len = 0;
    if (spec[0] == '=' && spec[1] == '=' && spec[2] != '=' && !strchr(spec, ',')) {
        pin = spec + 2;
        while (*pin == ' ')
            pin++;
        pin_len = strcspn(pin, " \t)");
        if (!pin_len || memchr(pin, '*', pin_len))
            pin = NULL;
    }
    return add_req(r, s, n, pin, pin ? pin_len : 0, file, line);
}

/* An option line: "-r FILE", "-rFILE", "--requirement FILE" or
 * "--requirement=FILE" give the file to include (else NULL); "-e URL" and
 * "--editable URL" the requirement (*editable). */
static const char *option_value(const char *s, bool *include, bool *editable)
{
    static const struct {
        const char *name;
        bool include;
    } opts[] = {{"--requirement", true}, {"--editable", false}, {"-r", true}, {"-e", false}};
    *include = *editable = false;
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
        size_t n = strlen(opts[i].name);
        if (strncmp(s, opts[i].name, n) != 0)
            continue;
        const char *v = s + n;
        if (n > 2 && *v != '=' && *v != ' ' && *v != '\t')
            continue; /* --requirements-something */
        while (*v == '=' || *v == ' ' || *v == '\t')
            v++;
        *include = opts[i].include;
        *editable = !opts[i].include;
        return *v ? v : NULL;
    }
    return NULL;
}

/* The files being read, outermost first: an include of one of them is a
 * loop. The paths belong to the callers up the recursion. */
typedef struct chain {
    const char *path[MAX_DEPTH];
    size_t depth;
} chain;

static aitk_status read_file(const char *path, aitk_pyreqs *r, chain *c, aitk_str *err);

/* "-r FILE" of `from` at `line`: relative to its folder. */
static aitk_status include(const char *from, long line, const char *name, aitk_pyreqs *r,
                           chain *c, aitk_str *err)
{
    aitk_str path = AITK_STR_INIT;
    const char *sep = aitk_path_last_separator(from);
    /* Absolute: from the root, or a Windows drive ("C:\\x", "C:/x"). */
    const bool absolute = name[0] == '/' || name[0] == '\\' ||
                          (isalpha((unsigned char)name[0]) && name[1] == ':');
    if (sep && !absolute)
        aitk_str_appendf(&path, "%.*s/%s", (int)(sep - from), from, name);
    else
        aitk_str_append(&path, name);
    aitk_status st = aitk_str_status(&path);
    /* The same file under another spelling (sub/../a.txt, A.TXT on
     * Windows) is the same file: compared by identity. */
    for (size_t i = 0; !st && i < c->depth; i++)
        if (aitk_same_file(c->path[i], aitk_str_cstr(&path)) == 1) {
            aitk_str_appendf(err, "%s:%ld: -r %s closes an include loop back to %s",
                             aitk_path_base_name(from), line, name,
                             aitk_path_base_name(c->path[i]));
            st = AITK_E_INVAL;
        }
    if (!st && c->depth >= MAX_DEPTH) {
        aitk_str_appendf(err, "%s:%ld: -r %s: more than %d files deep",
                         aitk_path_base_name(from), line, name, MAX_DEPTH);
        st = AITK_E_INVAL;
    }
    if (!st) {
        aitk_str why = AITK_STR_INIT;
        st = read_file(aitk_str_cstr(&path), r, c, &why);
        if (st == AITK_E_IO) {
            aitk_str_appendf(err, "%s:%ld: -r %s: %s", aitk_path_base_name(from), line, name,
                             aitk_str_cstr(&why));
            st = AITK_E_INVAL;
        } else if (st) {
            aitk_str_append(err, aitk_str_cstr(&why));
        }
        aitk_str_free(&why);
    }
    aitk_str_free(&path);
    return st;
}

/* One logical line (continuations joined), its comment cut: pip's rule is
 * '#' at the start or after white space, so "#egg=" in a URL stays. */
static aitk_status one_line(char *s, const char *path, long line, aitk_pyreqs *r, chain *c,
                            aitk_str *err)
{
    for (char *p = s; *p; p++)
        if (*p == '#' && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
            *p = '\0';
            break;
        }
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    if (!*s)
        return AITK_OK;
    if (*s != '-')
        return add_line(r, s, path, line);
    bool inc = false, editable = false;
    const char *v = option_value(s, &inc, &editable);
    if (v && inc)
        return include(path, line, v, r, c, err);
    if (v && editable && strstr(v, "://"))
        return add_url(r, v, path, line);
    return AITK_OK; /* --index-url, -c, -f, an editable local folder...: not a name */
}

static aitk_status read_file(const char *path, aitk_pyreqs *r, chain *c, aitk_str *err)
{
    char *data = NULL;
    size_t len = 0;
    aitk_status st = aitk_file_read(path, MAX_FILE, &data, &len, err);
    if (st)
        return st == AITK_E_NOMEM ? st : AITK_E_IO;
    c->path[c->depth++] = path;
    long line = 1, first = 1;
    aitk_str logical = AITK_STR_INIT;
    /* A UTF-8 byte-order mark (Windows editors write one): pip drops it
     * (pip._internal.utils.encoding.auto_decode). */
    char *start = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? data + 3 : data;
    for (char *p = start; !st && p <= data + len; line++) {
        char *end = memchr(p, '\n', (size_t)(data + len - p));
        size_t n = end ? (size_t)(end - p) : (size_t)(data + len - p);
        if (n && p[n - 1] == '\r')
            n--;
        if (!logical.len)
            first = line;
        /* A line ending in '\' goes on on the next one, unless it is a
         * comment; a comment line ends the one it continues (pip's
         * join_lines, which puts a blank before it so it stays one). */
        const size_t lead = strspn(p, " \t");
        const bool comment = lead < n && p[lead] == '#';
        const bool more = n && p[n - 1] == '\\' && end && !comment;
        if (comment && logical.len)
            aitk_str_append(&logical, " ");
        aitk_str_appendn(&logical, p, more ? n - 1 : n);
        if (!more) {
            st = aitk_str_status(&logical);
            if (!st && logical.len)
                st = one_line(logical.ptr, path, first, r, c, err);
            aitk_str_clear(&logical);
        }
        if (!end)
            break;
        p = end + 1;
    }
    aitk_str_free(&logical);
    aitk_free(data);
    c->depth--;
    return st;
}

aitk_status aitk_pyreqs_read(const char *path, aitk_pyreqs *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    chain c = {.depth = 0};
    aitk_status st = read_file(path, out, &c, err);
    if (st)
        aitk_pyreqs_free(out);
    return st;
}

void aitk_pyreqs_free(aitk_pyreqs *r)
{
    for (size_t i = 0; i < r->count; i++) {
        aitk_free(r->items[i].name);
        aitk_free(r->items[i].pin);
        aitk_free(r->items[i].where);
        aitk_free(r->items[i].repo);
        aitk_free(r->items[i].revision);
        aitk_free(r->items[i].subdirectory);
    }
    aitk_free(r->items);
    memset(r, 0, sizeof *r);
}

const char *aitk_pyreqs_checkout(const char *aitk_dir)
{
    if (aitk_dir)
        return aitk_dir;
    return aitk_is_dir("toolkit") && aitk_path_exists("run.py") &&
                   aitk_path_exists("requirements.txt")
               ? "."
               : NULL;
}

static bool skipped(const char *name, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (strcmp(name, *skip) == 0)
            return true;
    return false;
}

static bool same_text(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* The installed distribution pip recorded as coming from the repository
 * (and folder in it) `q` asks for, the copy Python imports (the first
 * found), or NULL. A requirement that names its package must be that
 * package: a repository can hold several (#subdirectory=). */
static const cJSON *installed_from(const cJSON *dists, const aitk_pyreq *q)
{
    const cJSON *d;
    cJSON_ArrayForEach(d, dists)
    {
        const cJSON *du = cJSON_GetObjectItemCaseSensitive(d, "direct_url");
        const char *url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(du, "url"));
        const char *source = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(du, "source"));
        const char *subdir =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(du, "subdirectory"));
        if (url && source && strcmp(source, "vcs") == 0 && aitk_vcs_same_repo(url, q->repo) &&
            same_text(subdir, q->subdirectory) &&
            (q->named_by_url || strcmp(d->string, q->name) == 0))
            return d;
    }
    return NULL;
}

/* How the installed copy `d` differs from the repository and revision `q`
 * asks for, into `how` ("" when it is that one). A copy installed from a
 * local folder (pip install -e ., a developer's checkout) is at whatever
 * commit the folder is: not judged. */
static void vcs_difference(const aitk_pyreq *q, const cJSON *d, aitk_str *how)
{
    const cJSON *du = cJSON_GetObjectItemCaseSensitive(d, "direct_url");
    const char *source = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(du, "source"));
    const char *url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(du, "url"));
    const char *commit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(du, "commit_id"));
    const char *asked =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(du, "requested_revision"));
    if (!source || !url)
        aitk_str_append(how, "from a package index (no direct_url.json)");
    else if (strcmp(source, "dir") == 0)
        return;
    else if (strcmp(source, "archive") == 0)
        aitk_str_appendf(how, "from the archive %s", url);
    else if (!aitk_vcs_same_repo(url, q->repo))
        aitk_str_appendf(how, "from %s", url);
    else if (!q->revision)
        return;
    else if (aitk_vcs_revision_is_commit(q->revision) ? commit && aitk_vcs_commit_matches(
                                                                       q->revision, commit)
                                                      : asked && strcmp(asked, q->revision) == 0)
        return;
    else if (commit)
        aitk_str_appendf(how, "at commit %.12s", commit);
    else
        aitk_str_append(how, "at a commit not recorded");
}

/* `word` (n bytes) onto a list of words with one space between, once. */
static void add_word(aitk_str *list, const char *word, size_t n)
{
    for (const char *s = aitk_str_cstr(list); *s;) {
        const size_t m = strcspn(s, " ");
        if (m == n && strncmp(s, word, n) == 0)
            return;
        s += m + (s[m] == ' ');
    }
    aitk_str_appendf(list, "%s%.*s", list->len ? " " : "", (int)n, word);
}

/* pip installs from a repository by running its program, named as the
 * URL's scheme before '+' ("git+https://..." runs git). */
static void needs_program(const aitk_pyreq *q, aitk_pyreqs_verdict *v)
{
    add_word(&v->vcs_programs, q->repo, strcspn(q->repo, "+"));
}

/* A requirement from a repository's revision: installed, and from there.
 * The copy pip recorded as coming from the repository is the one judged,
 * whatever its name; else the one named as the requirement is. */
static void judge_vcs(const aitk_pyreq *q, const cJSON *dists, const char *const *skip,
                      aitk_pyreqs_verdict *v)
{
    const cJSON *d = installed_from(dists, q);
    if (!d)
        d = cJSON_GetObjectItemCaseSensitive(dists, q->name);
    if (!d) {
        needs_program(q, v);
        if (!skipped(q->name, skip))
            aitk_str_appendf(&v->missing, "%s%s%s", v->missing.len ? ", " : "", q->name,
                             q->named_by_url ? " (named by its repository)" : "");
        return;
    }
    aitk_str how = AITK_STR_INIT;
    vcs_difference(q, d, &how);
    if (how.len) {
        needs_program(q, v);
        add_word(&v->elsewhere_names, d->string, strlen(d->string));
        const char *version = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "version"));
        aitk_str_appendf(&v->elsewhere, "%s%s %s %s, not %s", v->elsewhere.len ? "; " : "",
                         d->string, version ? version : "", aitk_str_cstr(&how), q->repo);
        /* A commit shown as git shows one short: 12 digits tell it apart. */
        if (q->revision) {
            const bool commit = aitk_vcs_revision_is_commit(q->revision);
            aitk_str_appendf(&v->elsewhere, "@%.*s", commit ? 12 : (int)strlen(q->revision),
                             q->revision);
        }
        aitk_str_appendf(&v->elsewhere, " (%s)", q->where);
    }
    aitk_str_free(&how);
}

/* One requirement against the installed distributions; one named in
 * `skip` is judged for its pin only. */
static void judge_one(const aitk_pyreq *q, const cJSON *dists, const char *const *skip,
                      aitk_pyreqs_verdict *v)
{
    if (q->repo) {
        judge_vcs(q, dists, skip, v);
        return;
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(dists, q->name);
    const char *version = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "version"));
    if (!d && skipped(q->name, skip))
        return;
    if (!d) {
        aitk_str_appendf(&v->missing, "%s%s", v->missing.len ? ", " : "", q->name);
    } else if (q->pin && version && *version && !aitk_pep440_pin_matches(q->pin, version)) {
        aitk_str_appendf(&v->unpinned, "%s%s %s (==%s at %s)", v->unpinned.len ? "; " : "",
                         q->name, version, q->pin, q->where);
    }
}

static bool same_requirement(const aitk_pyreq *a, const aitk_pyreq *b)
{
    return strcmp(a->name, b->name) == 0 && same_text(a->repo, b->repo) &&
           same_text(a->revision, b->revision) && same_text(a->subdirectory, b->subdirectory);
}

aitk_status aitk_pyreqs_judge(const char *checkout, const cJSON *site_packages,
                              const char *const *skip, aitk_pyreqs_verdict *v)
{
    memset(v, 0, sizeof *v);
    aitk_path_join(&v->file, checkout, "requirements.txt");
    aitk_pyreqs reqs;
    aitk_status st = aitk_str_status(&v->file);
    if (!st)
        st = aitk_pyreqs_read(aitk_str_cstr(&v->file), &reqs, &v->problem);
    if (st == AITK_E_IO || st == AITK_E_INVAL)
        return aitk_str_status(&v->problem);
    if (st)
        return st;
    cJSON *dists = cJSON_CreateObject();
    const cJSON *site;
    if (!dists)
        st = AITK_E_NOMEM;
    /* Every distribution, read as the python checks read their own. */
    cJSON_ArrayForEach(site, site_packages)
    {
        const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(site, "path"));
        if (dists && path)
            aitk_pyenv_scan_site(path, true, dists);
    }
    for (size_t i = 0; !st && i < reqs.count; i++) {
        /* A requirement in two included files is judged once, at its
         * first; a name asked for from a repository is judged as such. */
        bool again = false;
        for (size_t j = 0; j < i && !again; j++)
            again = same_requirement(&reqs.items[j], &reqs.items[i]);
        if (again)
            continue;
        v->listed++;
        judge_one(&reqs.items[i], dists, skip, v);
    }
    /* A list that ran out of memory while growing says so in its status. */
    const aitk_str *lists[] = {&v->missing, &v->unpinned, &v->elsewhere, &v->elsewhere_names,
                               &v->vcs_programs};
    for (size_t i = 0; !st && i < sizeof lists / sizeof lists[0]; i++)
        st = aitk_str_status(lists[i]);
    cJSON_Delete(dists);
    aitk_pyreqs_free(&reqs);
    return st;
}

void aitk_pyreqs_verdict_free(aitk_pyreqs_verdict *v)
{
    aitk_str_free(&v->file);
    aitk_str_free(&v->problem);
    aitk_str_free(&v->missing);
    aitk_str_free(&v->unpinned);
    aitk_str_free(&v->elsewhere);
    aitk_str_free(&v->elsewhere_names);
    aitk_str_free(&v->vcs_programs);
}
