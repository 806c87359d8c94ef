/* Building, summarising, serialising and re-reading the report tree. */
#include "reports/report.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "reports/causes.h"

static const char *const verdict_names[] = {"pass", "warn", "fail"};

const char *aitk_verdict_name(aitk_verdict v)
{
    return (unsigned)v <= AITK_VERDICT_FAIL ? verdict_names[v] : "unknown";
}

cJSON *aitk_report_new(const aitk_report_meta *meta)
{
    cJSON *r = cJSON_CreateObject();
    if (!r)
        return NULL;
    char stamp[32];
    aitk_utc_iso8601(stamp, sizeof stamp);
    cJSON *tool = cJSON_AddObjectToObject(r, "tool");
    int ok = cJSON_AddStringToObject(r, "schema_version", AITK_REPORT_SCHEMA_VERSION) && tool &&
             cJSON_AddStringToObject(tool, "name", "aitk-validate") &&
             cJSON_AddStringToObject(tool, "version", meta->tool_version) &&
             cJSON_AddStringToObject(tool, "git_commit", meta->git_commit) &&
             cJSON_AddStringToObject(r, "created_at", stamp) &&
             cJSON_AddStringToObject(r, "command", meta->command) &&
             cJSON_AddStringToObject(r, "level", meta->level) &&
             cJSON_AddStringToObject(r, "profile", meta->profile) &&
             cJSON_AddBoolToObject(r, "strict", meta->strict) &&
             cJSON_AddArrayToObject(r, "checks");
    if (!ok) {
        cJSON_Delete(r);
        return NULL;
    }
    /* schema_version first makes the file self-describing at a glance. */
    return r;
}

static int add_text(cJSON *obj, const char *key, const char *value)
{
    return cJSON_AddStringToObject(obj, key, value ? value : "") != NULL;
}

aitk_status aitk_report_add_check(cJSON *report, const aitk_check *c)
{
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks");
    if (!cJSON_IsArray(checks) || !c->id || !c->category)
        return AITK_E_INVAL;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return AITK_E_NOMEM;
    int ok = add_text(o, "id", c->id) && add_text(o, "category", c->category) &&
             add_text(o, "title", c->title ? c->title : c->id) &&
             add_text(o, "status", aitk_check_status_name(c->status)) &&
             add_text(o, "observed", c->observed) && add_text(o, "expected", c->expected) &&
             add_text(o, "message", c->message) && add_text(o, "remedy", c->remedy) &&
             add_text(o, "source", c->source) &&
             (!c->follows || !*c->follows || add_text(o, "follows", c->follows)) &&
             cJSON_AddNumberToObject(o, "duration_ms", c->duration_ms);
    if (!ok || !cJSON_AddItemToArray(checks, o)) {
        cJSON_Delete(o);
        return AITK_E_NOMEM;
    }
    return AITK_OK;
}

aitk_status aitk_report_set_section(cJSON *report, const char *name, cJSON *section)
{
    if (!section)
        return AITK_E_INVAL;
    cJSON_DeleteItemFromObjectCaseSensitive(report, name);
    return cJSON_AddItemToObject(report, name, section) ? AITK_OK : AITK_E_NOMEM;
}

aitk_status aitk_report_finish(cJSON *report, aitk_verdict *verdict)
{
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks");
    if (!cJSON_IsArray(checks))
        return AITK_E_INVAL;
    double counts[AITK_CHECK_STATUS_COUNT] = {0};
    const cJSON *c;
    cJSON_ArrayForEach(c, checks)
    {
        aitk_check_status st;
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "status");
        if (!cJSON_IsString(s) || aitk_check_status_parse(s->valuestring, &st))
            return AITK_E_INVAL;
        counts[st]++;
    }
    bool strict = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "strict"));
    aitk_verdict v = AITK_VERDICT_PASS;
    if (counts[AITK_CHECK_FAIL] > 0 || (strict && counts[AITK_CHECK_WARN] > 0))
        v = AITK_VERDICT_FAIL;
    else if (counts[AITK_CHECK_WARN] > 0)
        v = AITK_VERDICT_WARN;

    cJSON *summary = cJSON_CreateObject();
    cJSON *cnt = summary ? cJSON_AddObjectToObject(summary, "counts") : NULL;
    int ok = cnt != NULL;
    for (int i = 0; ok && i < AITK_CHECK_STATUS_COUNT; i++)
        ok = cJSON_AddNumberToObject(cnt, aitk_check_status_name((aitk_check_status)i),
                                     counts[i]) != NULL;
    ok = ok && cJSON_AddNumberToObject(cnt, "total", (double)cJSON_GetArraySize(checks)) &&
         cJSON_AddStringToObject(summary, "verdict", aitk_verdict_name(v)) &&
         cJSON_AddNumberToObject(summary, "exit_code", v == AITK_VERDICT_FAIL ? 1 : 0);
    /* Which failures come from which (causes.h): the first to fix. */
    cJSON *first = ok ? aitk_report_link_causes(checks) : NULL;
    if (ok && (!first || !cJSON_AddItemToObject(summary, "fix_first", first))) {
        cJSON_Delete(first);
        ok = 0;
    }
    if (!ok) {
        cJSON_Delete(summary);
        return AITK_E_NOMEM;
    }
    aitk_status st = aitk_report_set_section(report, "summary", summary);
    if (!st && verdict)
        *verdict = v;
    return st;
}

aitk_status aitk_report_verdict(const cJSON *report, aitk_verdict *verdict)
{
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(summary, "verdict");
    for (int i = 0; cJSON_IsString(v) && i <= AITK_VERDICT_FAIL; i++)
        if (strcmp(v->valuestring, verdict_names[i]) == 0) {
            *verdict = (aitk_verdict)i;
            return AITK_OK;
        }
    return AITK_E_PARSE;
}

/* One string: NULL-safe; a repaired copy replaces the old one. */
static aitk_status repair_string(char **text)
{
    bool nomem = false;
    char *fixed = *text ? aitk_utf8_repaired(*text, &nomem) : NULL;
    if (nomem)
        return AITK_E_NOMEM;
    if (!fixed)
        return AITK_OK;
    /* cJSON owns its strings through its hooks: copy into its allocation. */
    char *owned = (char *)cJSON_malloc(strlen(fixed) + 1);
    if (owned)
        strcpy(owned, fixed);
    aitk_free(fixed);
    if (!owned)
        return AITK_E_NOMEM;
    cJSON_free(*text);
    *text = owned;
    return AITK_OK;
}

aitk_status aitk_json_repair_utf8(cJSON *node)
{
    for (; node; node = node->next) {
        aitk_status st = AITK_OK;
        if (!(node->type & cJSON_StringIsConst))
            st = repair_string(&node->string);
        if (!st && cJSON_IsString(node))
            st = repair_string(&node->valuestring);
        if (!st && node->child)
            st = aitk_json_repair_utf8(node->child);
        if (st)
            return st;
    }
    return AITK_OK;
}

aitk_status aitk_report_to_json(const cJSON *report, aitk_str *out)
{
    char *text = cJSON_Print(report);
    if (!text)
        return AITK_E_NOMEM;
    aitk_status st = aitk_str_append(out, text);
    if (!st)
        st = aitk_str_append(out, "\n");
    cJSON_free(text);
    return st;
}

/* cJSON allocates through the project's allocator, so that a failed
 * allocation inside a parse is counted (aitk_alloc_failures) and told apart
 * from bad input. Objects made before are freed by the same free(). */
void aitk_report_use_project_allocator(void)
{
    static bool done;
    if (done)
        return;
    cJSON_Hooks hooks = {aitk_malloc, aitk_free};
    cJSON_InitHooks(&hooks);
    done = true;
}

/* The offset of the first NUL inside a JSON string, raw or written \u0000,
 * or -1. cJSON ends a string there, so "flux\u00001-dev" would be read as
 * "flux": a different name, silently. Outside strings a raw NUL is left to
 * the parser, which stops at it. */
static long string_nul(const char *text, size_t len)
{
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        const char c = text[i];
        if (!in_string) {
            in_string = c == '"';
            continue;
        }
        if (c == '\0')
            return (long)i;
        if (c == '"')
            in_string = false;
        else if (c == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && i + 5 < len && memcmp(text + i + 2, "0000", 4) == 0)
                return (long)i;
            i++; /* the escaped character, a quote or a backslash among them */
        }
    }
    return -1;
}

/* The fields every renderer reads; anything else is optional. */
aitk_status aitk_report_parse(const char *path, const char *text, size_t len, cJSON **out,
                              aitk_str *err)
{
    *out = NULL;
    const char *end = NULL;
    aitk_report_use_project_allocator();
    unsigned long failed_before = aitk_alloc_failures();
    cJSON *r = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!r && aitk_alloc_failures() != failed_before) {
        aitk_str_appendf(err, "%s: out of memory while reading it", path);
        return AITK_E_NOMEM;
    }
    /* Only white space may follow the value: two reports pasted into one
     * file, or a truncated write followed by an old tail, is not a report. */
    const char *rest = end;
    while (r && rest && rest < text + len && (*rest == ' ' || *rest == '\t' || *rest == '\n' ||
                                              *rest == '\r' || *rest == '\0'))
        rest++;
    const char *what = "not valid JSON";
    const long nul = r ? string_nul(text, len) : -1;
    if (nul >= 0) {
        cJSON_Delete(r);
        r = NULL;
        end = text + nul;
        what = "a string holds a NUL character (raw or \\u0000), which would cut it short";
    } else if (r && rest && rest < text + len) {
        cJSON_Delete(r);
        r = NULL;
        end = rest;
        what = "text after the end of the JSON value";
    }
    if (!r) {
        /* Name the line and column of the first bad byte. */
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        int line = 1, col = 1;
        for (size_t i = 0; i < off && i < len; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        aitk_str_appendf(err, "%s:%d:%d: %s", path, line, col, what);
        return AITK_E_PARSE;
    }
    const char *problem = NULL;
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(r, "schema_version");
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(r, "checks");
    if (!cJSON_IsObject(r))
        problem = "the top level is not an object";
    else if (!sv)
        problem = "no schema_version: this is not an aitk-validate report";
    else if (!cJSON_IsString(sv))
        problem = "schema_version is not a string (\"1.x\")";
    else if (strncmp(sv->valuestring, "1.", 2) != 0)
        problem = "unsupported schema_version (this build reads 1.x)";
    else if (!cJSON_IsArray(checks))
        problem = "'checks' is missing or not a list";
    else if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "summary")))
        problem = "'summary' is missing or not an object";
    const cJSON *c;
    int i = 0;
    if (!problem) {
        cJSON_ArrayForEach(c, checks)
        {
            aitk_check_status st;
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "status");
            if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(c, "id")) ||
                !cJSON_IsString(s) || aitk_check_status_parse(s->valuestring, &st)) {
                aitk_str_appendf(err, "%s: checks[%d] lacks a valid id or status", path, i);
                cJSON_Delete(r);
                return AITK_E_PARSE;
            }
            i++;
        }
    }
    if (problem) {
        aitk_str_appendf(err, "%s: %s", path, problem);
        cJSON_Delete(r);
        return AITK_E_PARSE;
    }
    /* A report from elsewhere may carry raw bytes: renderers get UTF-8. */
    if (aitk_json_repair_utf8(r)) {
        cJSON_Delete(r);
        aitk_str_appendf(err, "%s: out of memory while reading it", path);
        return AITK_E_NOMEM;
    }
    *out = r;
    return AITK_OK;
}
