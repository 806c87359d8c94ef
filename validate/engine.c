/* Checklist storage and the provider loop. */
#include "validate/engine.h"

#include <string.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/stop.h"
#include "common/str.h"

const char *aitk_level_name(aitk_level level)
{
    switch (level) {
    case AITK_LEVEL_QUICK: return "quick";
    case AITK_LEVEL_STANDARD: return "standard";
    case AITK_LEVEL_FULL: return "full";
    }
    return "unknown";
}

static void check_free_strings(aitk_check *c)
{
    aitk_free((char *)c->id);
    aitk_free((char *)c->category);
    aitk_free((char *)c->title);
    aitk_free((char *)c->observed);
    aitk_free((char *)c->expected);
    aitk_free((char *)c->message);
    aitk_free((char *)c->remedy);
    aitk_free((char *)c->source);
    aitk_free((char *)c->follows);
}

static int dup_field(const char **dst, const char *src)
{
    *dst = aitk_strdup(src ? src : "");
    return *dst != NULL;
}

aitk_status aitk_checklist_add(aitk_checklist *list, const aitk_check *c)
{
    if (!c->id || !c->category)
        return AITK_E_INVAL;
    aitk_check *p = aitk_grow(list->items, sizeof *p, list->count, &list->cap, 16);
    if (!p)
        return AITK_E_NOMEM;
    list->items = p;
    aitk_check copy = {.status = c->status, .duration_ms = c->duration_ms};
    int ok = dup_field(&copy.id, c->id) && dup_field(&copy.category, c->category) &&
             dup_field(&copy.title, c->title ? c->title : c->id) &&
             dup_field(&copy.observed, c->observed) && dup_field(&copy.expected, c->expected) &&
             dup_field(&copy.message, c->message) && dup_field(&copy.remedy, c->remedy) &&
             dup_field(&copy.source, c->source) && dup_field(&copy.follows, c->follows);
    if (!ok) {
        check_free_strings(&copy);
        return AITK_E_NOMEM;
    }
    uint64_t now = aitk_clock_ns();
    if (copy.duration_ms <= 0 && list->stamp_ns)
        copy.duration_ms = (double)(now - list->stamp_ns) / 1e6;
    list->stamp_ns = now;
    list->items[list->count++] = copy;
    return AITK_OK;
}

void aitk_checklist_free(aitk_checklist *list)
{
    for (size_t i = 0; i < list->count; i++)
        check_free_strings(&list->items[i]);
    aitk_free(list->items);
    memset(list, 0, sizeof *list);
}

aitk_status aitk_engine_run(aitk_run_ctx *ctx, const aitk_provider *providers, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const aitk_provider *p = &providers[i];
        if (ctx->level < p->min_level)
            continue;
        ctx->checks.stamp_ns = aitk_clock_ns();
        aitk_status st = p->run(ctx);
        if (st == AITK_E_NOMEM)
            return st;
        if (st) {
            /* A stop request (Ctrl-C, SIGTERM) is the person's, not the
             * machine's: a skip, never a failure. */
            const bool stopped = st == AITK_E_INTERRUPTED;
            aitk_str id = AITK_STR_INIT, msg = AITK_STR_INIT;
            aitk_str_appendf(&id, "%s.probe", p->category);
            aitk_str_appendf(&msg, "the %s probe stopped: %s", p->category,
                             stopped ? aitk_stop_words() : aitk_strerror(st));
            aitk_check c = {
                .id = aitk_str_cstr(&id),
                .category = p->category,
                .title = stopped ? "Probe interrupted" : "Probe error",
                .status = stopped ? AITK_CHECK_SKIP : AITK_CHECK_FAIL,
                .message = aitk_str_cstr(&msg),
                .remedy = stopped ? "Run again and let it finish."
                                  : "Run again with --verbose and file an issue with the "
                                    "report attached.",
            };
            aitk_status ast = aitk_checklist_add(&ctx->checks, &c);
            aitk_str_free(&id);
            aitk_str_free(&msg);
            if (ast)
                return ast;
        }
    }
    return AITK_OK;
}
