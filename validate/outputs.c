/* The output plan of a validation run (outputs.h). */
#include "validate/outputs.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "common/fileio.h"
#include "common/log.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/markdown.h"
#include "reports/report.h"


static const char *const out_labels[AITK_OUT_KINDS] = {"Report", "Summary for an issue", "Page",
                                                  "JUnit"};

static aitk_status plan_add(aitk_output_plan *plan, const char *option, const char *dir,
                            const char *name, int kind, bool redacted, aitk_str *err)
{
    aitk_output_file *f = &plan->files[plan->count++];
    f->kind = kind;
    f->redacted = redacted;
    f->in_dir = dir != NULL;
    f->to_stdout = !dir && aitk_output_is_stdout(name);
    plan->any_redacted |= redacted;
    plan->to_stdout |= f->to_stdout;
    aitk_status st = dir ? aitk_path_join(&f->path, dir, name) : aitk_str_append(&f->path, name);
    if (!st)
        st = dir ? aitk_str_appendf(&f->what, "%s's", option) : aitk_str_append(&f->what, option);
    /* An empty name, a folder or a dangling link is refused now, not after
     * the run; a folder's report.json that is itself a folder, too. */
    return st || f->to_stdout ? st : aitk_output_path_check(aitk_str_cstr(&f->path), err);
}

static void plan_free(aitk_output_plan *plan)
{
    for (size_t i = 0; i < plan->count; i++) {
        aitk_str_free(&plan->files[i].path);
        aitk_str_free(&plan->files[i].what);
    }
    for (int d = 0; d < 2; d++) {
        aitk_str_free(&plan->made[d]);
        aitk_dir_lock_release(plan->locks[d]);
        plan->locks[d] = NULL;
    }
}

/* Takes the output folders for this run, then clears what a run killed
 * before its commit left there (its staged report files). */
static aitk_status plan_take_dirs(const aitk_options *o, aitk_output_plan *plan, aitk_str *err)
{
    const char *dirs[2] = {o->output_dir, o->support_bundle};
    for (int d = 0; d < 2; d++) {
        if (!dirs[d])
            continue;
        aitk_status st = aitk_dir_lock_take(dirs[d], &plan->locks[d], err);
        if (st)
            return st;
    }
    for (size_t i = 0; i < plan->count; i++) {
        const aitk_output_file *f = &plan->files[i];
        if (!f->in_dir) /* a single-file option: its folder is not held */
            continue;
        size_t removed = 0;
        if (aitk_file_remove_stale_stages(aitk_str_cstr(&f->path), &removed))
            return AITK_E_NOMEM;
        if (removed)
            aitk_log(AITK_LOG_INFO, "removed %zu unfinished file(s) of an earlier run beside %s",
                     removed, aitk_str_cstr(&f->path));
    }
    return AITK_OK;
}

/* Length of the longest leading part of `dir` that exists already. */
static size_t existing_prefix(const char *dir)
{
    aitk_str p = AITK_STR_INIT;
    if (aitk_str_append(&p, dir))
        return strlen(dir);
    size_t n = p.len;
    while (n > 0 && !aitk_path_exists(aitk_str_cstr(&p))) {
        const char *sep = aitk_path_last_separator(aitk_str_cstr(&p));
        n = sep ? (size_t)(sep - aitk_str_cstr(&p)) : 0;
        p.ptr[n] = '\0';
        p.len = n;
    }
    aitk_str_free(&p);
    return n;
}

/* Removes, deepest first, the folders the run created; rmdir removes only
 * empty ones, so nothing a user put there meanwhile is lost, and none that
 * another run took meanwhile (common/dirlock.h). The caller has released
 * this run's own locks first. */
static void plan_unmake_dirs(aitk_output_plan *plan)
{
    for (int d = 0; d < 2; d++) {
        aitk_str *p = &plan->made[d];
        while (p->len > plan->existed[d]) {
            if (aitk_dir_remove_if_unheld(aitk_str_cstr(p)))
                break;
            const char *sep = aitk_path_last_separator(aitk_str_cstr(p));
            size_t n = sep ? (size_t)(sep - aitk_str_cstr(p)) : 0;
            p->ptr[n] = '\0';
            p->len = n;
        }
        aitk_str_clear(p);
    }
}

/* Refuses unusable output places before any probing: a run that cannot
 * save its result should not spend minutes first. */
static aitk_status prepare_outputs(const aitk_options *o, aitk_output_plan *plan,
                                   aitk_str *err)
{
    static const char *const dir_names[AITK_OUT_KINDS] = {"report.json", "report.md", "report.html",
                                                     "junit.xml"};
    const char *dirs[2] = {o->output_dir, o->support_bundle};
    static const char *const dir_options[2] = {"--output-dir", "--support-bundle"};
    for (int d = 0; d < 2; d++) {
        if (!dirs[d])
            continue;
        plan->existed[d] = existing_prefix(dirs[d]);
        aitk_status st = aitk_str_append(&plan->made[d], dirs[d]);
        if (!st)
            st = aitk_dir_create(dirs[d], err);
        if (!st)
            st = aitk_dir_check_writable(dirs[d], err);
        if (st)
            return st;
        /* The bundle is for a public issue: always redacted, and no JUnit. */
        for (int k = 0; k < (d == 0 ? AITK_OUT_KINDS : AITK_OUT_JUNIT); k++)
            if ((st = plan_add(plan, dir_options[d], dirs[d], dir_names[k], k,
                               d == 1 || o->redact, err)))
                return st;
    }
    const char *files[AITK_OUT_KINDS] = {o->json_path, o->markdown_path, o->html_path,
                                         o->junit_path};
    static const char *const file_options[AITK_OUT_KINDS] = {"--json", "--markdown", "--html",
                                                        "--junit"};
    for (int k = 0; k < AITK_OUT_KINDS; k++) {
        if (!files[k])
            continue;
        aitk_status st = plan_add(plan, file_options[k], NULL, files[k], k, o->redact, err);
        if (!st && !aitk_output_is_stdout(files[k]))
            st = aitk_output_file_ready(files[k], err);
        if (st)
            return st;
    }
    /* No output may replace an input or another output, and only one may
     * take standard output. */
    aitk_named_path outs[AITK_MAX_OUTPUTS];
    for (size_t i = 0; i < plan->count; i++)
        outs[i] = (aitk_named_path){aitk_str_cstr(&plan->files[i].what),
                                    aitk_str_cstr(&plan->files[i].path)};
    const aitk_named_path ins[] = {{"--config", o->config}, {"--python", o->python}};
    return aitk_outputs_distinct(outs, plan->count, ins, sizeof ins / sizeof *ins, err);
}

static aitk_status render_output(const cJSON *report, int kind, aitk_str *out)
{
    switch (kind) {
    case AITK_OUT_JSON: return aitk_report_to_json(report, out);
    case AITK_OUT_MARKDOWN: return aitk_render_markdown(report, out);
    case AITK_OUT_HTML: return aitk_render_html(report, out);
    default: return aitk_render_junit(report, out);
    }
}

aitk_status aitk_outputs_plan(const aitk_options *o, aitk_output_plan *plan, aitk_str *err)
{
    aitk_status st = prepare_outputs(o, plan, err);
    return st ? st : plan_take_dirs(o, plan, err);
}

/* Stages every file; false when one could not be written (named in err). */
static aitk_status stage_all(const aitk_output_plan *plan, const cJSON *report,
                             const cJSON *redacted, aitk_str *texts, aitk_staged *staged,
                             aitk_str *err)
{
    bool write_failed = false;
    for (size_t i = 0; i < plan->count; i++) {
        const aitk_output_file *f = &plan->files[i];
        if (render_output(f->redacted ? redacted : report, f->kind, &texts[i])) {
            aitk_log(AITK_LOG_ERROR, "could not render %s (out of memory)", f->path.ptr);
            return AITK_E_NOMEM;
        }
        if (f->to_stdout) /* written after the files (write_stdout) */
            continue;
        aitk_str why = AITK_STR_INIT;
        if (aitk_file_stage(f->path.ptr, aitk_str_cstr(&texts[i]), texts[i].len, &staged[i],
                            &why)) {
            aitk_str_appendf(err, "%s%s", write_failed ? "; " : "", aitk_str_cstr(&why));
            write_failed = true;
        }
        aitk_str_free(&why);
    }
    return write_failed ? AITK_E_IO : AITK_OK;
}

/* The output asked for on standard output, once the files are in place.
 * Its control characters are escaped as render's are (a report holds text
 * from the machine), in a way that keeps JSON valid; a write that fails (a
 * reader gone: SIGPIPE is ignored during a run) is AITK_E_IO. */
static aitk_status write_stdout(const aitk_output_plan *plan, const aitk_str *texts,
                                aitk_str *err)
{
    for (size_t i = 0; i < plan->count; i++) {
        if (!plan->files[i].to_stdout)
            continue;
        if (aitk_fputs_printable(aitk_str_cstr(&texts[i]), stdout))
            return AITK_E_NOMEM;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            aitk_str_appendf(err, "%s -: standard output: write failed",
                             aitk_str_cstr(&plan->files[i].what));
            clearerr(stdout); /* said here: main.c need not say it again */
            return AITK_E_IO;
        }
    }
    return AITK_OK;
}

static aitk_status commit_all(const aitk_output_plan *plan, aitk_staged *staged, aitk_str *err)
{
    bool write_failed = false;
    for (size_t i = 0; i < plan->count; i++) {
        if (plan->files[i].to_stdout)
            continue;
        aitk_str why = AITK_STR_INIT;
        if (aitk_file_commit(&staged[i], &why)) {
            aitk_str_appendf(err, "%s%s", write_failed ? "; " : "", aitk_str_cstr(&why));
            write_failed = true;
        }
        aitk_str_free(&why);
    }
    return write_failed ? AITK_E_IO : AITK_OK;
}

aitk_status aitk_outputs_write(const aitk_output_plan *plan, const cJSON *report,
                               const cJSON *redacted, aitk_str *err)
{
    aitk_str texts[AITK_MAX_OUTPUTS] = {0};
    aitk_staged staged[AITK_MAX_OUTPUTS] = {0};
    aitk_str_clear(err);
    aitk_status st = stage_all(plan, report, redacted, texts, staged, err);
    if (st == AITK_E_IO)
        aitk_str_append(err, " (no report file was replaced)");
    else if (!st)
        st = commit_all(plan, staged, err);
    if (!st)
        st = write_stdout(plan, texts, err);
    for (size_t i = 0; i < AITK_MAX_OUTPUTS; i++) {
        aitk_file_discard(&staged[i]);
        aitk_str_free(&texts[i]);
    }
    return st;
}

void aitk_outputs_print(const aitk_output_plan *plan, aitk_redactor *redactor, FILE *out)
{
    for (size_t i = 0; i < plan->count; i++) {
        if (plan->files[i].to_stdout) {
            fprintf(out, "%s%s: standard output\n", out_labels[plan->files[i].kind],
                    plan->files[i].redacted ? " (redacted)" : "");
            continue;
        }
        const char *path = plan->files[i].path.ptr;
        aitk_str shown = AITK_STR_INIT;
        if (redactor)
            path = aitk_redactor_text(redactor, path, &shown) ? "(path withheld)"
                                                               : aitk_str_cstr(&shown);
        /* The path is the user's text: its control characters (ESC, a
         * newline) are shown escaped, never sent to the terminal. */
        aitk_str printable = AITK_STR_INIT;
        fprintf(out, "%s%s: %s\n", out_labels[plan->files[i].kind],
                plan->files[i].redacted ? " (redacted)" : "",
                aitk_str_append_printable(&printable, path, false) ? "(path withheld)"
                                                                  : aitk_str_cstr(&printable));
        aitk_str_free(&printable);
        aitk_str_free(&shown);
    }
}

void aitk_outputs_end(aitk_output_plan *plan, bool refused)
{
    for (int d = 0; d < 2; d++) {
        aitk_dir_lock_release(plan->locks[d]);
        plan->locks[d] = NULL;
    }
    if (refused)
        plan_unmake_dirs(plan);
    plan_free(plan);
}
