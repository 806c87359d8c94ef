/* Reading back a saved `deps --json` document (render_md.h) for
 * `render DEPS.json`: checked field by field before anything is rendered,
 * so a damaged file is one line naming the field (exit 2), never a page
 * that reads "PASS" because a list was missing. */
#include <cjson/cJSON.h>
#include <string.h>

#include "validate/libdeps/render_md.h"

#define DEPS_SCHEMA "aitk-deps/1"

static aitk_status bad(aitk_str *err, const char *path, const char *where, int i,
                       const char *what)
{
    if (i >= 0)
        aitk_str_appendf(err, "%s: %s[%d]: %s", path, where, i, what);
    else
        aitk_str_appendf(err, "%s: %s: %s", path, where, what);
    return AITK_E_PARSE;
}

static bool string_list(const cJSON *a)
{
    const cJSON *s;
    if (!cJSON_IsArray(a))
        return false;
    cJSON_ArrayForEach(s, a)
        if (!cJSON_IsString(s))
            return false;
    return true;
}

/* Optional fields must be of their kind when present. */
static const char *finding_problem(const cJSON *p)
{
    static const char *const texts[] = {"path", "detail", "kind", "name"};
    static const char *const lists[] = {"chain", "searched", "skipped", "duplicates"};
    if (!cJSON_IsObject(p))
        return "not an object";
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "name")))
        return "name: missing or not a string";
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, texts[k]);
        if (v && !cJSON_IsString(v) && !cJSON_IsNull(v))
            return "a text field (path, detail, kind, name) is not a string";
    }
    for (size_t k = 0; k < sizeof lists / sizeof *lists; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, lists[k]);
        if (v && !string_list(v))
            return "a list field (chain, searched, skipped, duplicates) is not a list of strings";
    }
    const cJSON *rem = cJSON_GetObjectItemCaseSensitive(p, "remedy");
    if (rem && !cJSON_IsNull(rem) && !cJSON_IsObject(rem))
        return "remedy: neither an object nor null";
    return NULL;
}

static aitk_status check_root(const char *path, const cJSON *r, int i, aitk_str *err)
{
    static const char *const groups[] = {"problems", "warnings", "unknown"};
    if (!cJSON_IsObject(r))
        return bad(err, path, "roots", i, "not an object");
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "path")))
        return bad(err, path, "roots", i, "path: missing or not a string");
    if (!cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(r, "ok")))
        return bad(err, path, "roots", i, "ok: missing or not true/false");
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(r, groups[g]), *p;
        /* "unknown" came with this renderer: older documents lack it. */
        if (!list && g == 2)
            continue;
        if (!cJSON_IsArray(list)) {
            aitk_str_appendf(err, "%s: roots[%d].%s: missing or not a list", path, i, groups[g]);
            return AITK_E_PARSE;
        }
        int k = 0;
        cJSON_ArrayForEach(p, list)
        {
            const char *why = finding_problem(p);
            if (why) {
                aitk_str_appendf(err, "%s: roots[%d].%s[%d]: %s", path, i, groups[g], k, why);
                return AITK_E_PARSE;
            }
            k++;
        }
    }
    return AITK_OK;
}

static aitk_status check_doc(const char *path, const cJSON *doc, aitk_str *err)
{
    const cJSON *roots = cJSON_GetObjectItemCaseSensitive(doc, "roots");
    const cJSON *skipped = cJSON_GetObjectItemCaseSensitive(doc, "skipped"), *x;
    if (!cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(doc, "ok")))
        return bad(err, path, "ok", -1, "missing or not true/false");
    if (!cJSON_IsArray(roots))
        return bad(err, path, "roots", -1, "missing or not a list");
    if (skipped && !cJSON_IsArray(skipped))
        return bad(err, path, "skipped", -1, "not a list");
    int i = 0;
    cJSON_ArrayForEach(x, roots)
    {
        aitk_status st = check_root(path, x, i++, err);
        if (st)
            return st;
    }
    i = 0;
    cJSON_ArrayForEach(x, skipped)
    {
        if (!cJSON_IsObject(x) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(x, "path")))
            return bad(err, path, "skipped", i, "not an object with a path");
        i++;
    }
    return AITK_OK;
}

aitk_status aitk_deps_json_load(const char *path, const char *text, size_t len, cJSON **out,
                                aitk_str *err)
{
    *out = NULL;
    cJSON *doc = cJSON_ParseWithLength(text, len);
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, DEPS_SCHEMA) != 0) {
        cJSON_Delete(doc);
        return AITK_E_NOTFOUND;
    }
    aitk_status st = check_doc(path, doc, err);
    if (st)
        cJSON_Delete(doc);
    else
        *out = doc;
    return st;
}
