/* Markdown for `deps` (render_md.h): what a support issue needs, laid out
 * as the main report's Markdown is (reports/markdown.c): a "## aitk-validate
 * deps: VERDICT" heading with the counts, then one section per library
 * examined with a bullet per broken link (its chain, why, the folders
 * searched in order, the fix and its source), the warnings, the links that
 * cannot be judged from where the tool ran, and the full tree folded away.
 * It reads only the deps JSON (schema aitk-deps/1), so a saved
 * `deps --json` renders alike anywhere. Text from the files and the system
 * goes through aitk_markdown_inline: a '|' or a newline in a DLL name
 * cannot break the page. */
#include "validate/libdeps/render_md.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/fileio.h"
#include "reports/markdown.h"
#include "reports/redact.h"

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static const cJSON *list(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* "torch_cpu.dll -> fbgemm.dll -> libomp140.x86_64.dll" */
static void md_chain(aitk_str *o, const cJSON *p)
{
    const cJSON *c;
    int k = 0;
    cJSON_ArrayForEach(c, list(p, "chain"))
    {
        if (k++)
            aitk_str_append(o, " -> ");
        aitk_markdown_inline(o, cJSON_IsString(c) ? c->valuestring : "?");
    }
    if (k == 0)
        aitk_markdown_inline(o, str(p, "name"));
}

static void md_sub(aitk_str *o, const char *label, const char *text)
{
    if (!*text)
        return;
    aitk_str_appendf(o, "  - %s", label);
    aitk_markdown_inline(o, text);
    aitk_str_append(o, "\n");
}

static void md_strings(aitk_str *o, const char *label, const cJSON *items, bool numbered)
{
    if (cJSON_GetArraySize(items) == 0)
        return;
    aitk_str_appendf(o, "  - %s\n", label);
    const cJSON *s;
    int k = 0;
    cJSON_ArrayForEach(s, items)
    {
        if (numbered)
            aitk_str_appendf(o, "    %d. ", ++k);
        else
            aitk_str_append(o, "    - ");
        aitk_markdown_inline(o, cJSON_IsString(s) ? s->valuestring : "?");
        aitk_str_append(o, "\n");
    }
}

static void md_remedy(aitk_str *o, const cJSON *p, const char *fix_label)
{
    const cJSON *rem = list(p, "remedy");
    if (!cJSON_IsObject(rem)) {
        if (strcmp(fix_label, "**fix:** ") == 0)
            md_sub(o, fix_label, "find which package ships this library and install it (no "
                                 "known remedy in remedies.yaml)");
        return;
    }
    md_sub(o, "comes from: ", str(rem, "comes_from"));
    md_sub(o, fix_label, str(rem, "fix"));
    md_sub(o, "source: ", str(rem, "source"));
}

/* "not_found" -> "not found" */
static void md_kind(aitk_str *o, const char *kind)
{
    for (const char *k = kind; *k; k++)
        aitk_str_appendc(o, *k == '_' ? ' ' : *k);
}

/* The name of an earlier finding of the same list with the same fix, or
 * NULL: one fix text is written once a library (2.4.0's torch_cpu.dll
 * lacks libomp140 twice, directly and through fbgemm.dll). */
static const char *fix_given(const cJSON *p)
{
    /* cJSON: the first item's prev is the last one, whose next is NULL. */
    const char *fix = str(list(p, "remedy"), "fix");
    for (const cJSON *q = p->prev; *fix && q && q->next; q = q->prev)
        if (strcmp(str(list(q, "remedy"), "fix"), fix) == 0)
            return str(q, "name");
    return NULL;
}

static void md_problem(aitk_str *o, const cJSON *p, bool warning)
{
    aitk_str_append(o, warning ? "- warning: " : "- **PROBLEM**: ");
    md_chain(o, p);
    aitk_str_append(o, ": ");
    md_kind(o, str(p, "kind"));
    aitk_str_append(o, "\n");
    md_sub(o, "file: ", str(p, "path"));
    md_sub(o, "why: ", str(p, "detail"));
    if (cJSON_IsTrue(list(p, "delay_load")))
        md_sub(o, "", "a delay-load import: it fails only when first used");
    if (cJSON_IsTrue(list(p, "opened_at_run_time")))
        md_sub(o, "", "opened at run time, not linked: it fails only when first used");
    md_strings(o, "searched, in order:", list(p, "searched"), true);
    md_strings(o, "skipped candidates:", list(p, "skipped"), false);
    md_strings(o, "copies on the search path:", list(p, "duplicates"), false);
    const char *same = fix_given(p);
    if (same) {
        aitk_str_append(o, "  - **fix:** as for ");
        aitk_markdown_inline(o, same);
        aitk_str_append(o, " above\n");
    } else {
        md_remedy(o, p, "**fix:** ");
    }
}

static void md_unknown(aitk_str *o, const cJSON *u)
{
    aitk_str_append(o, "- unknown: ");
    md_chain(o, u);
    aitk_str_append(o, "\n");
    md_sub(o, "why: ", str(u, "detail"));
    md_remedy(o, u, "if it is missing: ");
}

/* One library examined: its verdict line, then each finding. */
static void md_root(aitk_str *o, const cJSON *root)
{
    const cJSON *problems = list(root, "problems"), *warnings = list(root, "warnings"),
                *unknown = list(root, "unknown");
    const char *path = str(root, "path"), *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    aitk_str_append(o, "\n### ");
    aitk_markdown_inline(o, base);
    aitk_str_appendf(o, ": %s\n\n", cJSON_IsTrue(list(root, "ok")) ? "PASS" : "FAIL");
    aitk_str_append(o, "File: ");
    aitk_markdown_inline(o, path);
    if (*str(root, "format")) {
        aitk_str_append(o, " (");
        aitk_markdown_inline(o, strcmp(str(root, "format"), "pe") == 0 ? "PE" : "ELF");
        aitk_str_append(o, " ");
        aitk_markdown_inline(o, *str(root, "arch") ? str(root, "arch") : "?");
        aitk_str_append(o, ")");
    } else if (*str(root, "not_library")) {
        aitk_str_append(o, " (not a library: ");
        aitk_markdown_inline(o, str(root, "not_library"));
        aitk_str_append(o, ")");
    }
    aitk_str_append(o, "\n\n");
    const cJSON *p;
    cJSON_ArrayForEach(p, problems)
        md_problem(o, p, false);
    cJSON_ArrayForEach(p, warnings)
        md_problem(o, p, true);
    cJSON_ArrayForEach(p, unknown)
        md_unknown(o, p);
    if (*str(root, "load")) {
        aitk_str_append(o, "- loader says: ");
        aitk_markdown_inline(o, str(root, "load"));
        aitk_str_append(o, "\n");
    }
    aitk_str_appendf(o, "- result: %d problem%s, %d warning%s, %d unknown\n",
                     cJSON_GetArraySize(problems), cJSON_GetArraySize(problems) == 1 ? "" : "s",
                     cJSON_GetArraySize(warnings), cJSON_GetArraySize(warnings) == 1 ? "" : "s",
                     cJSON_GetArraySize(unknown));
}

static int count_all(const cJSON *roots, const char *key)
{
    int n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, roots)
        n += cJSON_GetArraySize(list(r, key));
    return n;
}

aitk_status aitk_deps_render_markdown(const cJSON *doc, aitk_str *out)
{
    const cJSON *roots = list(doc, "roots"), *skipped = list(doc, "skipped");
    const int problems = count_all(roots, "problems"), warnings = count_all(roots, "warnings");
    const char *label = !cJSON_IsTrue(list(doc, "ok")) ? "FAIL"
                        : warnings                      ? "PASS with warnings"
                                                        : "PASS";
    aitk_str_appendf(out, "## aitk-validate deps: %s\n\n", label);
    aitk_str_appendf(out, "%d problem%s · %d warning%s · %d unknown · %d librar%s examined",
                     problems, problems == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s",
                     count_all(roots, "unknown"), cJSON_GetArraySize(roots),
                     cJSON_GetArraySize(roots) == 1 ? "y" : "ies");
    if (cJSON_GetArraySize(skipped))
        aitk_str_appendf(out, " · %d skipped", cJSON_GetArraySize(skipped));
    aitk_str_append(out, "\n");
    const cJSON *r;
    cJSON_ArrayForEach(r, roots)
        md_root(out, r);
    if (cJSON_GetArraySize(skipped)) {
        aitk_str_append(out, "\n### Skipped (not shared libraries)\n\n");
        cJSON_ArrayForEach(r, skipped)
        {
            aitk_str_append(out, "- ");
            aitk_markdown_inline(out, str(r, "path"));
            aitk_str_append(out, ": ");
            aitk_markdown_inline(out, str(r, "reason"));
            aitk_str_append(out, "\n");
        }
    }
    return aitk_str_status(out);
}

aitk_status aitk_deps_markdown_ready(const char *md, char *const *inputs, size_t n, aitk_str *err)
{
    if (aitk_output_is_stdout(md)) /* standard output: no file to check */
        return AITK_OK;
    const aitk_named_path out = {"--markdown", md};
    aitk_status st = AITK_OK;
    /* `deps --markdown torch_cpu.dll torch_cpu.dll` would replace the DLL. */
    for (size_t i = 0; !st && i < n; i++) {
        const aitk_named_path in = {"deps", inputs[i]};
        st = aitk_outputs_distinct(&out, 1, &in, 1, err);
    }
    return st ? st : aitk_output_file_ready(md, err);
}

aitk_status aitk_deps_markdown_write(const cJSON *doc, const char *md, aitk_str *err)
{
    aitk_str page = AITK_STR_INIT;
    aitk_status st = aitk_deps_render_markdown(doc, &page);
    if (!st && aitk_output_is_stdout(md)) /* main.c checks that it got there */
        st = aitk_fputs_printable(aitk_str_cstr(&page), stdout);
    else if (!st)
        st = aitk_file_write_atomic(md, aitk_str_cstr(&page), page.len, err);
    aitk_str_free(&page);
    return st;
}

aitk_status aitk_deps_render_saved(cJSON *doc, bool redact, aitk_str *page)
{
    /* As render does for a report: a file from elsewhere loses what is a
     * secret by its shape, and with --redact the user and host names in
     * its paths too, before anything is written. */
    aitk_status st = aitk_scrub_secrets(doc);
    aitk_redactor *r = NULL;
    if (!st && redact && !(st = aitk_redactor_new(&r)))
        st = aitk_redactor_apply(r, doc);
    aitk_redactor_free(r);
    return st ? st : aitk_deps_render_markdown(doc, page);
}
