/* Text and JSON views of a dependency tree (render.h). The text leads with
 * what is broken, because that is the question the user came with; --all
 * adds the full tree for those who want to see every link. */
#include "validate/libdeps/render.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"

static const char *state_text(const aitk_dep_tree *t, const aitk_dep_node *n)
{
    switch (n->state) {
    case AITK_DEP_NOT_FOUND: return "NOT FOUND";
    case AITK_DEP_WRONG_ARCH: return "WRONG ARCHITECTURE";
    case AITK_DEP_BAD_FILE:
        return n->not_library                 ? "NOT A LIBRARY"
               : n->corrupt                   ? "CORRUPT"
               : n->refused && !n->truncated ? "REFUSED BY THE LOADER"
                                              : "UNREADABLE";
    case AITK_DEP_BAD_VERSION: return "MISSING VERSION";
    /* PE imports are functions; an ELF library binds data too (cuDNN's
     * missing LibraryLoader entries are function pointers). */
    case AITK_DEP_MISSING_SYMBOL: return t->format == AITK_DEP_ELF ? "MISSING SYMBOL"
                                                                    : "MISSING FUNCTION";
    default: return aitk_dep_state_name(n->state);
    }
}

/* Names, paths, details and the loader's words come from the files and the
 * system: each is made printable on one line where it is put into a line
 * (a newline in a DT_NEEDED name must not start a line of its own that reads
 * like ours). A few live at once: a ring of copies, freed by esc_free. */
typedef struct esc_ring {
    aitk_str s[8];
    unsigned next;
} esc_ring;

static const char *E(esc_ring *r, const char *text)
{
    aitk_str *b = &r->s[r->next++ % 8];
    aitk_str_clear(b);
    aitk_deps_text_escape(b, text ? text : "");
    return aitk_str_cstr(b);
}

static void esc_free(esc_ring *r)
{
    for (size_t i = 0; i < 8; i++)
        aitk_str_free(&r->s[i]);
}

static void text_remedy(aitk_str *o, const aitk_remedy *rem, const char *indent)
{
    if (!rem) {
        aitk_str_appendf(o, "%sfix: find which package ships this library and install it "
                            "(no known remedy in remedies.yaml)\n", indent);
        return;
    }
    aitk_str_appendf(o, "%scomes from: %s\n%ssymptom: %s\n%sfix: %s\n%ssource: %s\n", indent,
                     rem->comes_from, indent, rem->symptom, indent, rem->fix, indent, rem->source);
}

static void text_node(const aitk_dep_tree *t, size_t i, esc_ring *r, aitk_str *o)
{
    const aitk_dep_node *n = &t->nodes[i];
    for (unsigned d = 0; d < n->depth + 1; d++)
        aitk_str_append(o, "  ");
    aitk_str_appendf(o, "%s%s%s%s", E(r, n->name), n->delay ? " (delay-load)" : "",
                     n->forwarder ? " (forwarded export)" : "",
                     n->opened ? " (opened at run time)" : "");
    if (i == 0)
        aitk_str_appendf(o, " [%s]\n", E(r, n->arch ? n->arch : "?"));
    else if (n->state == AITK_DEP_FOUND)
        aitk_str_appendf(o, " => %s [%s%s]\n", E(r, n->path), E(r, n->how),
                         n->repeat ? ", already loaded" : "");
    else if (n->state == AITK_DEP_SYSTEM)
        aitk_str_appendf(o, " => %s\n", E(r, n->how));
    else
        aitk_str_appendf(o, " => %s%s%s\n", state_text(t, n), n->detail ? ": " : "",
                         n->detail ? E(r, n->detail) : "");
    for (size_t k = 0; k < n->skipped.count; k++) {
        for (unsigned d = 0; d < n->depth + 2; d++)
            aitk_str_append(o, "  ");
        aitk_str_appendf(o, "(skipped %s)\n", E(r, n->skipped.items[k]));
    }
    for (size_t c = n->first_child; c != AITK_DEP_NONE; c = t->nodes[c].next_sibling)
        text_node(t, c, r, o);
}

static void text_list(aitk_str *o, esc_ring *r, const char *title, const aitk_strlist *l,
                      bool numbered)
{
    if (!l->count)
        return;
    aitk_str_appendf(o, "    %s\n", title);
    for (size_t k = 0; k < l->count; k++) {
        if (numbered)
            aitk_str_appendf(o, "      %zu. %s\n", k + 1, E(r, l->items[k]));
        else
            aitk_str_appendf(o, "      %s\n", E(r, l->items[k]));
    }
}

/* Which kind of remedy a problem node wants (remedies.yaml `when:`). An
 * ELF library that has the version but not the symbol is another release
 * of it, not necessarily an older one (tree_needs.c). */
static aitk_remedy_when problem_kind(const aitk_dep_tree *t, const aitk_dep_node *n)
{
    switch (n->state) {
    case AITK_DEP_WRONG_ARCH: return AITK_REMEDY_WRONG_ARCH;
    case AITK_DEP_BAD_VERSION: return AITK_REMEDY_OLD_VERSION;
    case AITK_DEP_MISSING_SYMBOL:
        return t->format == AITK_DEP_ELF ? AITK_REMEDY_OTHER_RELEASE : AITK_REMEDY_OLD_VERSION;
    case AITK_DEP_BAD_FILE:
        return n->not_library ? AITK_REMEDY_NOT_LIBRARY
               : n->corrupt   ? AITK_REMEDY_CORRUPT
               : n->truncated ? AITK_REMEDY_TRUNCATED
               : n->refused   ? AITK_REMEDY_REFUSED
                              : AITK_REMEDY_MISSING;
    default: return AITK_REMEDY_MISSING;
    }
}

/* Remedies match library names; the root's name is the path it was given. */
static const char *remedy_key(const aitk_dep_tree *t, size_t i)
{
    return i == 0 ? aitk_path_base_name(t->nodes[0].name) : t->nodes[i].name;
}

/* The native loader's verdict (deps --load): a problem of its own only when
 * the walk found nothing that explains it. Returns the problems it adds. */
static size_t text_load(const aitk_dep_tree *t, esc_ring *r, aitk_str *o)
{
    if (!t->load)
        return 0;
    if (!aitk_dep_tree_load_problem(t)) {
        aitk_str_appendf(o, "  loader says: %s\n", E(r, t->load));
        /* Seen under Wine: "CORRUPT", then the loader loaded it. The two
         * cannot both be right here; the loader has the last word. */
        if (strcmp(t->load, "loaded") == 0 && aitk_dep_tree_problems(t) > 0)
            aitk_str_append(o, "    (the loader loaded it: the finding above does not stop "
                               "this load on this system; if it is not a missing copy, please "
                               "report it as a misreading by aitk-validate)\n");
        return 0;
    }
    aitk_str_appendf(o, "  PROBLEM: %s: NOT LOADABLE (though no link above is missing)\n"
                        "    file: %s\n    loader says: %s\n",
                     E(r, aitk_path_base_name(t->nodes[0].name)), E(r, t->nodes[0].path), E(r, t->load));
    return 1;
}

/* Links the tool cannot judge from here (AITK_DEP_UNKNOWN): said as such,
 * never as missing, each with why and, when one is known, the fix that
 * applies if it does turn out to be missing. Returns how many. */
static size_t text_unknown(const aitk_dep_tree *t, const aitk_remedies *r, esc_ring *e,
                           aitk_str *o)
{
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++) {
        const aitk_dep_node *u = &t->nodes[i];
        if (u->repeat || u->state != AITK_DEP_UNKNOWN)
            continue;
        aitk_str chain = AITK_STR_INIT;
        aitk_dep_tree_chain(t, i, &chain);
        aitk_str_appendf(o, "  unknown: %s: %s\n", E(e, aitk_str_cstr(&chain)),
                         E(e, u->detail));
        aitk_str_free(&chain);
        /* One remedy text once a tree: the VC++ runtime's names share one. */
        const aitk_remedy *rem = aitk_remedies_find(r, u->name, false);
        const char *seen = NULL;
        for (size_t k = 0; rem && !seen && k < i; k++)
            if (t->nodes[k].state == AITK_DEP_UNKNOWN && !t->nodes[k].repeat &&
                aitk_remedies_find(r, t->nodes[k].name, false) == rem)
                seen = t->nodes[k].name;
        if (seen)
            aitk_str_appendf(o, "    if it is missing: as for %s above\n", E(e, seen));
        else if (rem)
            aitk_str_appendf(o, "    if it is missing: %s\n    source: %s\n", rem->fix,
                             rem->source);
        n++;
    }
    return n;
}

/* Names and paths come from the files (DT_NEEDED, import names) and must not
 * drive the terminal. */
void aitk_deps_text_escape(aitk_str *o, const char *s)
{
    aitk_str_append_printable(o, s, false);
}

static aitk_status render_text_raw(const aitk_dep_tree *t, const aitk_remedies *r, bool all,
                                   esc_ring *e, aitk_str *o)
{
    const aitk_dep_node *root = &t->nodes[0];
    if (t->not_library)
        aitk_str_appendf(o, "%s (not a shared library)\n", E(e, root->name));
    else
        aitk_str_appendf(o, "%s (%s %s)\n", E(e, root->name),
                         t->format == AITK_DEP_PE ? "PE" : "ELF", E(e, root->arch ? root->arch : "?"));
    if (all)
        for (size_t c = root->first_child; c != AITK_DEP_NONE; c = t->nodes[c].next_sibling)
            text_node(t, c, e, o);
    size_t problems = 0, warnings = 0;
    /* From the root: a cut-off root is itself the problem. */
    for (size_t i = 0; i < t->count; i++) {
        const aitk_dep_node *n = &t->nodes[i];
        bool problem = aitk_dep_state_is_problem(n->state);
        if (n->repeat || (!problem && !n->duplicates.count))
            continue;
        bool deferred = aitk_dep_tree_deferred(t, i);
        bool opened = aitk_dep_tree_opened(t, i);
        aitk_str chain = AITK_STR_INIT;
        aitk_dep_tree_chain(t, i, &chain);
        if (problem) {
            aitk_str_appendf(o, "  %s: %s: %s\n",
                             !deferred ? "PROBLEM"
                             : opened  ? "warning (opened at run time)"
                                       : "warning (delay-load)",
                             E(e, aitk_str_cstr(&chain)), state_text(t, n));
            if (n->path)
                aitk_str_appendf(o, "    file: %s%s%s%s\n", E(e, n->path), n->arch ? " (" : "",
                                 n->arch ? E(e, n->arch) : "", n->arch ? ")" : "");
            if (n->detail)
                aitk_str_appendf(o, "    why: %s\n", E(e, n->detail));
            if (deferred)
                aitk_str_append(o, opened ? "    (opened at run time, not linked: it fails only "
                                            "when first used)\n"
                                          : "    (a delay-load import: it fails only when first "
                                            "used)\n");
            text_list(o, e, "searched, in order:", &n->searched, true);
            text_list(o, e, "skipped candidates:", &n->skipped, false);
            text_remedy(o, aitk_remedies_find_kind(r, remedy_key(t, i), problem_kind(t, n)), "    ");
            if (deferred)
                warnings++;
            else
                problems++;
        }
        if (n->duplicates.count) {
            aitk_str_appendf(o, "  warning: %s: %zu copies on the search path\n",
                             E(e, aitk_str_cstr(&chain)), n->duplicates.count + 1);
            /* A refused first copy is where the load stops, not a loaded file. */
            aitk_str_appendf(o, "    %s: %s",
                             aitk_dep_state_is_problem(n->state) ? "first found (the load stops "
                                                                   "there)"
                                                                 : "loaded",
                             E(e, n->path ? n->path : "?"));
            if (n->version)
                aitk_str_appendf(o, " (version %s)", E(e, n->version));
            aitk_str_append(o, "\n");
            text_list(o, e, "also found:", &n->duplicates, false);
            const aitk_remedy *rem = aitk_remedies_find(r, n->name, true);
            if (rem)
                text_remedy(o, rem, "    ");
            warnings++;
        }
        aitk_str_free(&chain);
    }
    problems += text_load(t, e, o);
    size_t unknown = text_unknown(t, r, e, o);
    aitk_str_appendf(o, "  result: %zu problem%s, %zu warning%s", problems,
                     problems == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
    if (unknown)
        aitk_str_appendf(o, ", %zu unknown", unknown);
    aitk_str_appendf(o, " (%zu links examined)\n", t->count - 1);
    return aitk_str_status(o);
}

aitk_status aitk_deps_render_text(const aitk_dep_tree *t, const aitk_remedies *r, bool all,
                                  aitk_str *o)
{
    /* What came from the files is escaped where it is put in a line (E);
     * the lines themselves are ours. The page is escaped once more, lines
     * kept, for the remedy texts (remedies.yaml, which AITK_DATA_DIR may
     * replace): no control sequence reaches the terminal, though a newline
     * in a field put in without E would still start a line. */
    aitk_str raw = AITK_STR_INIT;
    esc_ring e = {0};
    aitk_status st = render_text_raw(t, r, all, &e, &raw);
    for (size_t i = 0; !st && i < 8; i++)
        st = aitk_str_status(&e.s[i]);
    if (!st)
        aitk_str_append_printable(o, raw.ptr ? raw.ptr : "", true);
    esc_free(&e);
    aitk_str_free(&raw);
    return st ? st : aitk_str_status(o);
}

static cJSON *json_list(const aitk_strlist *l)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t k = 0; a && k < l->count; k++)
        cJSON_AddItemToArray(a, cJSON_CreateString(l->items[k]));
    return a;
}

static void json_remedy(cJSON *o, const aitk_remedy *rem)
{
    if (!rem) {
        cJSON_AddNullToObject(o, "remedy");
        return;
    }
    cJSON *m = cJSON_AddObjectToObject(o, "remedy");
    cJSON_AddStringToObject(m, "comes_from", rem->comes_from);
    cJSON_AddStringToObject(m, "symptom", rem->symptom);
    cJSON_AddStringToObject(m, "fix", rem->fix);
    cJSON_AddStringToObject(m, "source", rem->source);
}

static void add_opt_string(cJSON *o, const char *key, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *json_node(const aitk_dep_tree *t, size_t i)
{
    const aitk_dep_node *n = &t->nodes[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", i == 0 ? aitk_path_base_name(n->name) : n->name);
    cJSON_AddStringToObject(o, "state", aitk_dep_state_name(n->state));
    add_opt_string(o, "path", n->path);
    add_opt_string(o, "how", n->how);
    add_opt_string(o, "arch", n->arch);
    if (n->version)
        cJSON_AddStringToObject(o, "version", n->version);
    if (n->detail)
        cJSON_AddStringToObject(o, "detail", n->detail);
    if (n->forwarder)
        cJSON_AddTrueToObject(o, "forwarder");
    if (n->delay)
        cJSON_AddTrueToObject(o, "delay_load");
    if (n->opened)
        cJSON_AddTrueToObject(o, "opened_at_run_time");
    if (n->repeat)
        cJSON_AddTrueToObject(o, "already_loaded");
    if (aitk_dep_state_is_problem(n->state) || n->state == AITK_DEP_UNKNOWN)
        cJSON_AddItemToObject(o, "searched", json_list(&n->searched));
    if (n->skipped.count)
        cJSON_AddItemToObject(o, "skipped", json_list(&n->skipped));
    if (n->duplicates.count)
        cJSON_AddItemToObject(o, "duplicates", json_list(&n->duplicates));
    if (n->first_child != AITK_DEP_NONE) {
        cJSON *kids = cJSON_AddArrayToObject(o, "children");
        for (size_t c = n->first_child; c != AITK_DEP_NONE; c = t->nodes[c].next_sibling)
            cJSON_AddItemToArray(kids, json_node(t, c));
    }
    return o;
}

static cJSON *json_chain(const aitk_dep_tree *t, size_t i)
{
    cJSON *a = cJSON_CreateArray();
    size_t n = t->nodes[i].depth + 1;
    for (size_t k = 0; k < n; k++) {
        size_t j = i;
        for (size_t up = 0; up < n - 1 - k; up++)
            j = t->nodes[j].parent;
        cJSON_AddItemToArray(a, cJSON_CreateString(aitk_path_base_name(t->nodes[j].name)));
    }
    return a;
}

/* The loader's refusal as a problem entry, shaped like the others. */
static cJSON *json_load_problem(const aitk_dep_tree *t)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "kind", "not_loadable");
    cJSON_AddStringToObject(p, "name", aitk_path_base_name(t->nodes[0].name));
    cJSON_AddItemToObject(p, "chain", json_chain(t, 0));
    add_opt_string(p, "path", t->nodes[0].path);
    cJSON_AddStringToObject(p, "detail", t->load);
    cJSON_AddBoolToObject(p, "delay_load", false);
    cJSON_AddItemToObject(p, "searched", cJSON_CreateArray());
    cJSON_AddNullToObject(p, "remedy");
    return p;
}

/* {"name", "chain", "detail", "remedy"} for each link that cannot be judged
 * from here; the remedy is the one that applies if it is missing. */
static void json_unknown(const aitk_dep_tree *t, const aitk_remedies *r, cJSON *list)
{
    for (size_t i = 0; list && i < t->count; i++) {
        const aitk_dep_node *u = &t->nodes[i];
        if (u->repeat || u->state != AITK_DEP_UNKNOWN)
            continue;
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", u->name);
        cJSON_AddItemToObject(p, "chain", json_chain(t, i));
        add_opt_string(p, "detail", u->detail);
        json_remedy(p, aitk_remedies_find(r, u->name, false));
        cJSON_AddItemToArray(list, p);
    }
}

aitk_status aitk_deps_render_json(const aitk_dep_tree *t, const aitk_remedies *r, cJSON **out)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", t->nodes[0].path);
    if (t->not_library) { /* a broken library: neither format, and what it is instead */
        cJSON_AddNullToObject(o, "format");
        cJSON_AddStringToObject(o, "not_library", aitk_dep_other_name(t->not_library));
    } else {
        cJSON_AddStringToObject(o, "format", t->format == AITK_DEP_PE ? "pe" : "elf");
    }
    add_opt_string(o, "arch", t->nodes[0].arch);
    cJSON_AddBoolToObject(o, "ok", aitk_dep_tree_problems(t) == 0);
    if (t->load)
        cJSON_AddStringToObject(o, "load", t->load);
    if (t->load && strcmp(t->load, "loaded") == 0 && aitk_dep_tree_problems(t) > 0)
        cJSON_AddTrueToObject(o, "load_disagrees");
    cJSON *problems = cJSON_AddArrayToObject(o, "problems");
    cJSON *warnings = cJSON_AddArrayToObject(o, "warnings");
    if (aitk_dep_tree_load_problem(t))
        cJSON_AddItemToArray(problems, json_load_problem(t));
    for (size_t i = 0; i < t->count; i++) {
        const aitk_dep_node *n = &t->nodes[i];
        bool problem = aitk_dep_state_is_problem(n->state);
        if (n->repeat || (!problem && !n->duplicates.count))
            continue;
        cJSON *p = cJSON_CreateObject();
        bool deferred = aitk_dep_tree_deferred(t, i);
        cJSON_AddStringToObject(p, "kind", problem ? aitk_dep_state_name(n->state) : "duplicate");
        cJSON_AddStringToObject(p, "name", n->name);
        cJSON_AddItemToObject(p, "chain", json_chain(t, i));
        add_opt_string(p, "path", n->path);
        if (n->detail)
            cJSON_AddStringToObject(p, "detail", n->detail);
        if (n->not_library)
            cJSON_AddStringToObject(p, "not_library", aitk_dep_other_name(n->not_library));
        if (n->refused)
            cJSON_AddBoolToObject(p, "refused", true);
        if (n->corrupt)
            cJSON_AddBoolToObject(p, "corrupt", true);
        if (n->truncated)
            cJSON_AddBoolToObject(p, "truncated", true);
        const bool at_run_time = aitk_dep_tree_opened(t, i);
        cJSON_AddBoolToObject(p, "delay_load", deferred && !at_run_time);
        if (at_run_time)
            cJSON_AddTrueToObject(p, "opened_at_run_time");
        cJSON_AddItemToObject(p, "searched", json_list(&n->searched));
        if (n->skipped.count)
            cJSON_AddItemToObject(p, "skipped", json_list(&n->skipped));
        if (n->duplicates.count)
            cJSON_AddItemToObject(p, "duplicates", json_list(&n->duplicates));
        json_remedy(p, problem ? aitk_remedies_find_kind(r, remedy_key(t, i), problem_kind(t, n))
                                   : aitk_remedies_find(r, remedy_key(t, i), true));
        cJSON_AddItemToArray(problem && !deferred ? problems : warnings, p);
    }
    json_unknown(t, r, cJSON_AddArrayToObject(o, "unknown"));
    cJSON_AddItemToObject(o, "tree", json_node(t, 0));
    /* cJSON drops items silently when an allocation fails: check the shape. */
    if (!o || !cJSON_GetObjectItem(o, "tree") || !cJSON_GetObjectItem(o, "warnings")) {
        cJSON_Delete(o);
        return AITK_E_NOMEM;
    }
    *out = o;
    return AITK_OK;
}

/* Which problems a description takes: those that stop the load, or those
 * under a library opened at run time. */
typedef enum described { DESCRIBE_LOAD, DESCRIBE_RUN_TIME } described;

static bool described_here(const aitk_dep_tree *t, size_t i, const aitk_remedies *r,
                           described which)
{
    const aitk_dep_node *n = &t->nodes[i];
    if (n->repeat || !aitk_dep_state_is_problem(n->state))
        return false;
    if (which == DESCRIBE_LOAD)
        return !aitk_dep_tree_deferred(t, i);
    return aitk_dep_tree_opened(t, i) &&
           !(n->state == AITK_DEP_NOT_FOUND &&
             aitk_remedies_of_driver(r, aitk_path_base_name(n->name)));
}

/* "a.so -> b.so -> c.so" from the library that opens the topmost library
 * opened at run time above node i, down to i: the same whichever of a
 * folder's libraries leads there. */
static void chain_from_opener(const aitk_dep_tree *t, size_t i, aitk_str *out)
{
    size_t top = i;
    for (size_t j = i; j != AITK_DEP_NONE; j = t->nodes[j].parent)
        if (t->nodes[j].opened)
            top = j;
    const size_t from = t->nodes[top].parent;
    aitk_str rest = AITK_STR_INIT;
    for (size_t j = i; j != from && j != AITK_DEP_NONE; j = t->nodes[j].parent) {
        aitk_str step = AITK_STR_INIT;
        aitk_str_appendf(&step, " -> %s%s", aitk_path_base_name(t->nodes[j].name),
                         aitk_str_cstr(&rest));
        aitk_str_free(&rest);
        rest = step;
    }
    aitk_str_appendf(out, "%s%s", aitk_path_base_name(t->nodes[from].name), aitk_str_cstr(&rest));
    aitk_str_free(&rest);
}

static aitk_status describe(const aitk_dep_tree *t, const aitk_remedies *r, described which,
                            aitk_str *observed, aitk_str *remedy, aitk_str *sources,
                            size_t *count)
{
    for (size_t i = 0; i < t->count; i++) {
        const aitk_dep_node *n = &t->nodes[i];
        if (!described_here(t, i, r, which))
            continue;
        (*count)++;
        aitk_str chain = AITK_STR_INIT, entry = AITK_STR_INIT;
        if (which == DESCRIBE_RUN_TIME)
            chain_from_opener(t, i, &chain);
        else
            aitk_dep_tree_chain(t, i, &chain);
        aitk_str_appendf(&entry, "%s%s: %s",
                         which == DESCRIBE_RUN_TIME ? "at first use, not at import: " : "",
                         aitk_str_cstr(&chain), state_text(t, n));
        if (n->detail)
            aitk_str_appendf(&entry, " (%s)", n->detail);
        /* Every library of a folder that reaches cuDNN reaches the same
         * broken sub-library: it is said once. */
        if (which == DESCRIBE_RUN_TIME && entry.len && strstr(aitk_str_cstr(observed), entry.ptr)) {
            aitk_str_free(&entry);
            aitk_str_free(&chain);
            continue;
        }
        aitk_str_appendf(observed, "%s%s", observed->len ? "; " : "", aitk_str_cstr(&entry));
        aitk_str_free(&entry);
        /* The same folders are searched for every name a tree lacks, and a
         * check joins the problems of many trees: each list is said once. */
        aitk_str searched = AITK_STR_INIT;
        for (size_t k = 0; k < n->searched.count; k++)
            aitk_str_appendf(&searched, " %zu. %s", k + 1, n->searched.items[k]);
        if (searched.len && strstr(aitk_str_cstr(observed), searched.ptr))
            aitk_str_append(observed, "; searched: the same folders as above");
        else if (searched.len)
            aitk_str_appendf(observed, "; searched:%s", searched.ptr);
        aitk_str_free(&searched);
        aitk_str_free(&chain);
        const aitk_remedy *rem = aitk_remedies_find_kind(r, remedy_key(t, i), problem_kind(t, n));
        if (rem && !strstr(aitk_str_cstr(remedy), rem->fix)) {
            /* Fixes end in file names ("...ship libomp140.x86_64.dll"): a
             * plain space or a period would run two together. */
            aitk_str_appendf(remedy, "%s%s: %s", remedy->len ? "; also, for " : "", n->name,
                             rem->fix);
            aitk_str_appendf(sources, "%s%s", sources->len ? "; " : "", rem->source);
        }
    }
    if (aitk_str_status(observed) || aitk_str_status(remedy) || aitk_str_status(sources))
        return AITK_E_NOMEM;
    return AITK_OK;
}

aitk_status aitk_deps_describe_problems(const aitk_dep_tree *t, const aitk_remedies *r,
                                        aitk_str *observed, aitk_str *remedy, aitk_str *sources)
{
    size_t count = 0;
    return describe(t, r, DESCRIBE_LOAD, observed, remedy, sources, &count);
}

aitk_status aitk_deps_describe_run_time_problems(const aitk_dep_tree *t, const aitk_remedies *r,
                                                 aitk_str *observed, aitk_str *remedy,
                                                 aitk_str *sources, size_t *count)
{
    *count = 0;
    return describe(t, r, DESCRIBE_RUN_TIME, observed, remedy, sources, count);
}
