#include "reports/causes.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

#include "reports/fields.h"

static cJSON *find(cJSON *checks, const char *id)
{
    cJSON *c;
    cJSON_ArrayForEach(c, checks)
    {
        if (strcmp(aitk_field_str(c, "id"), id) == 0)
            return c;
    }
    return NULL;
}

static bool failed(const cJSON *c)
{
    return c && strcmp(aitk_field_str(c, "status"), "fail") == 0;
}

/* The check at the head of c's chain of "follows" (c itself when it follows
 * none), or NULL when the chain does not end within `steps` links. */
static cJSON *head_of(cJSON *checks, cJSON *c, int steps)
{
    for (int i = 0; c && i < steps; i++) {
        const char *next = aitk_field_str(c, "follows");
        if (!*next)
            return c;
        c = find(checks, next);
    }
    return NULL;
}

/* The first check named in `ids` (comma-separated) that failed, other
 * than `self`; NULL if none did. */
static cJSON *first_failed(cJSON *checks, const char *ids, const cJSON *self)
{
    char id[128];
    while (*ids) {
        size_t n = strcspn(ids, ",");
        if (n < sizeof id) {
            memcpy(id, ids, n);
            id[n] = '\0';
            cJSON *target = find(checks, id);
            if (failed(target) && target != self)
                return target;
        }
        ids += n + (ids[n] == ',');
    }
    return NULL;
}

/* Keeps a "follows" only on a check that failed or warned, where it names
 * another check that failed (of a list, the first that did), and breaks any
 * loop at its first check in report order. */
static void drop_loose_links(cJSON *checks)
{
    int steps = cJSON_GetArraySize(checks) + 1;
    cJSON *c;
    cJSON_ArrayForEach(c, checks)
    {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(c, "follows");
        if (!f)
            continue;
        const char *status = aitk_field_str(c, "status");
        const bool bad = strcmp(status, "fail") == 0 || strcmp(status, "warn") == 0;
        cJSON *target = bad && cJSON_IsString(f) ? first_failed(checks, f->valuestring, c)
                                                 : NULL;
        const char *id = target ? aitk_field_str(target, "id") : NULL;
        cJSON *one = id ? cJSON_CreateString(id) : NULL;
        /* Out of memory: the link is dropped, never left pointing wrong. */
        if (!one || !cJSON_ReplaceItemInObjectCaseSensitive(c, "follows", one)) {
            cJSON_Delete(one);
            cJSON_DeleteItemFromObjectCaseSensitive(c, "follows");
        }
    }
    /* A check on a loop (its chain comes back to it) loses its link; one
     * that only leads into a loop keeps it, and ends at that check. */
    cJSON_ArrayForEach(c, checks)
    {
        cJSON *next = c;
        for (int i = 0; i < steps && next; i++) {
            const char *id = aitk_field_str(next, "follows");
            next = *id ? find(checks, id) : NULL;
            if (next == c) {
                cJSON_DeleteItemFromObjectCaseSensitive(c, "follows");
                break;
            }
        }
    }
}

/* {id, title, explains} for the failed check `head`. */
static cJSON *entry_for(cJSON *checks, cJSON *head, int steps)
{
    cJSON *e = cJSON_CreateObject(), *explains = NULL;
    bool ok = e && cJSON_AddStringToObject(e, "id", aitk_field_str(head, "id")) &&
              cJSON_AddStringToObject(e, "title", aitk_field_str(head, "title")) &&
              (explains = cJSON_AddArrayToObject(e, "explains"));
    cJSON *c;
    cJSON_ArrayForEach(c, checks)
    {
        if (!ok)
            break;
        if (c != head && *aitk_field_str(c, "follows") && head_of(checks, c, steps) == head)
            ok = cJSON_AddItemToArray(explains,
                                      cJSON_CreateString(aitk_field_str(c, "id")));
    }
    if (!ok) {
        cJSON_Delete(e);
        return NULL;
    }
    return e;
}

cJSON *aitk_report_link_causes(cJSON *checks)
{
    drop_loose_links(checks);
    int steps = cJSON_GetArraySize(checks) + 1;
    cJSON *first = cJSON_CreateArray();
    cJSON *c;
    cJSON_ArrayForEach(c, checks)
    {
        if (!first)
            break;
        if (!failed(c) || *aitk_field_str(c, "follows"))
            continue;
        cJSON *e = entry_for(checks, c, steps);
        if (!e || !cJSON_AddItemToArray(first, e)) {
            cJSON_Delete(e);
            cJSON_Delete(first);
            first = NULL;
        }
    }
    return first;
}

bool aitk_fix_first_sentence(const cJSON *entry, aitk_str *out)
{
    const cJSON *explains = cJSON_GetObjectItemCaseSensitive(entry, "explains");
    int n = cJSON_GetArraySize(explains);
    if (!cJSON_IsArray(explains) || n == 0)
        return false;
    aitk_str_appendf(out, "%s (%s): %d other check%s follow%s from it: ",
                     aitk_field_str(entry, "id"), aitk_field_str(entry, "title"), n,
                     n == 1 ? "" : "s", n == 1 ? "s" : "");
    const cJSON *e;
    cJSON_ArrayForEach(e, explains)
    {
        aitk_str_appendf(out, "%s%s", e == explains->child ? "" : ", ",
                         cJSON_IsString(e) ? e->valuestring : "?");
    }
    return true;
}

void aitk_fix_first_lines(aitk_str *out, const cJSON *summary, const char *before,
                          const char *after, aitk_text_escape escape)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, aitk_field_array(summary, "fix_first"))
    {
        aitk_str line = AITK_STR_INIT;
        if (aitk_fix_first_sentence(e, &line)) {
            aitk_str_append(out, before);
            escape(out, aitk_str_cstr(&line));
            aitk_str_append(out, after);
        }
        aitk_field_scratch_free(out, &line);
    }
}
