/* aitk-validate: arguments -> plan -> probes -> report -> files -> exit code.
 *
 * The only place that prints results and writes files; probes observe, the
 * report model holds the result, renderers turn it into text. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <sys/utsname.h>
#endif
#include <unistd.h>

#include "bench/cpu_backend.h"
#include "bench/progress.h"
#include "bench/runner.h"
#include "common/alloc.h"
#include "common/cliopt.h"
#include "common/dirlock.h"
#include "common/fileio.h"
#include "common/libload.h"
#include "common/log.h"
#include "common/selfpath.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/markdown.h"
#include "reports/redact.h"
#include "models/aitk_config.h"
#include "models/cost.h"
#include "reports/report.h"
#include "reports/buyer.h"
#include "validate/buyer.h"
#include "validate/cli.h"
#include "validate/commands.h"
#include "validate/compat.h"
#include "validate/engine.h"
#include "validate/version.h"

/* Every file a run writes, in one list: --output-dir (4 files),
 * --support-bundle (3), and the single-file options (4). */
enum { OUT_JSON, OUT_MARKDOWN, OUT_HTML, OUT_JUNIT, OUT_KINDS, MAX_OUTPUTS = 11 };

typedef struct output_file {
    aitk_str path;
    aitk_str what; /* the option that names it, for messages */
    int kind;
    bool redacted;
    bool in_dir; /* in --output-dir or --support-bundle, a folder this run holds */
} output_file;

typedef struct output_plan {
    output_file files[MAX_OUTPUTS];
    size_t count;
    bool any_redacted;
    /* Folders this run created for --output-dir / --support-bundle: each
     * path and the length of its part that existed before. A run refused
     * before it starts (exit 2) removes them again. */
    aitk_str made[2];
    size_t existed[2];
    aitk_dir_lock *locks[2]; /* the output folders, held for the run */
} output_plan;

static const char *const out_labels[OUT_KINDS] = {"Report", "Summary for an issue", "Page",
                                                  "JUnit"};

static aitk_status plan_add(output_plan *plan, const char *option, const char *dir,
                            const char *name, int kind, bool redacted, aitk_str *err)
{
    output_file *f = &plan->files[plan->count++];
    f->kind = kind;
    f->redacted = redacted;
    f->in_dir = dir != NULL;
    plan->any_redacted |= redacted;
    aitk_status st = dir ? aitk_path_join(&f->path, dir, name) : aitk_str_append(&f->path, name);
    if (!st)
        st = dir ? aitk_str_appendf(&f->what, "%s's", option) : aitk_str_append(&f->what, option);
    /* An empty name, a folder or a dangling link is refused now, not after
     * the run; a folder's report.json that is itself a folder, too. */
    return st ? st : aitk_output_path_check(aitk_str_cstr(&f->path), err);
}

static void plan_free(output_plan *plan)
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
static aitk_status plan_take_dirs(const aitk_options *o, output_plan *plan, aitk_str *err)
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
        const output_file *f = &plan->files[i];
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
 * another run took meanwhile (common/dirlock.h). */
static void plan_unmake_dirs(output_plan *plan)
{
    for (int d = 0; d < 2; d++) {
        aitk_str *p = &plan->made[d];
        aitk_dir_lock_release(plan->locks[d]);
        plan->locks[d] = NULL;
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
static aitk_status prepare_outputs(const aitk_options *o, output_plan *plan, aitk_str *err)
{
    static const char *const dir_names[OUT_KINDS] = {"report.json", "report.md", "report.html",
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
        for (int k = 0; k < (d == 0 ? OUT_KINDS : OUT_JUNIT); k++)
            if ((st = plan_add(plan, dir_options[d], dirs[d], dir_names[k], k,
                               d == 1 || o->redact, err)))
                return st;
    }
    const char *files[OUT_KINDS] = {o->json_path, o->markdown_path, o->html_path, o->junit_path};
    static const char *const file_options[OUT_KINDS] = {"--json", "--markdown", "--html",
                                                        "--junit"};
    for (int k = 0; k < OUT_KINDS; k++) {
        if (!files[k])
            continue;
        aitk_status st = plan_add(plan, file_options[k], NULL, files[k], k, o->redact, err);
        if (!st)
            st = aitk_output_file_ready(files[k], err);
        if (st)
            return st;
    }
    /* No output may replace an input or another output. */
    aitk_named_path outs[MAX_OUTPUTS];
    for (size_t i = 0; i < plan->count; i++)
        outs[i] = (aitk_named_path){aitk_str_cstr(&plan->files[i].what),
                                    aitk_str_cstr(&plan->files[i].path)};
    const aitk_named_path ins[] = {{"--config", o->config}, {"--python", o->python}};
    return aitk_outputs_distinct(outs, plan->count, ins, sizeof ins / sizeof *ins, err);
}

static aitk_status render_output(const cJSON *report, int kind, aitk_str *out)
{
    switch (kind) {
    case OUT_JSON: return aitk_report_to_json(report, out);
    case OUT_MARKDOWN: return aitk_render_markdown(report, out);
    case OUT_HTML: return aitk_render_html(report, out);
    default: return aitk_render_junit(report, out);
    }
}

/* This machine's network name: what --redact must remove wherever it appears. */
static int machine_name(char *out, size_t size)
{
#ifdef _WIN32
    DWORD n = (DWORD)size;
    return GetComputerNameA(out, &n) ? 0 : -1;
#else
    struct utsname un;
    if (uname(&un) != 0)
        return -1;
    snprintf(out, size, "%s", un.nodename);
    return 0;
#endif
}

/* The redactor of a redacted run, told who runs this and where: a probe may
 * have recorded them in a place no rule knows about, and stderr and the
 * closing lines are rewritten with it before the report exists. NULL: out
 * of memory. */
static aitk_redactor *run_redactor_new(void)
{
    aitk_redactor *r = NULL;
    /* The user's name as POSIX shells and Windows set it, and the last part
     * of the home folder (which is the account name on both). */
    static const char *user_vars[] = {"USER", "LOGNAME", "USERNAME"};
    const char *home = getenv("HOME");
    if (!home || !*home)
        home = getenv("USERPROFILE");
    const char *base = NULL;
    for (const char *p = home; p && *p; p++)
        if (*p == '/' || *p == '\\')
            base = p;
    aitk_status st = aitk_redactor_new(&r);
    for (size_t i = 0; i < sizeof user_vars / sizeof *user_vars && !st; i++)
        if (getenv(user_vars[i]) && *getenv(user_vars[i]))
            st = aitk_redactor_add(r, AITK_REDACT_USER, getenv(user_vars[i]));
    if (!st && base && base[1])
        st = aitk_redactor_add(r, AITK_REDACT_USER, base + 1);
    char host[256];
    if (!st && machine_name(host, sizeof host) == 0 && host[0])
        st = aitk_redactor_add(r, AITK_REDACT_HOST, host);
    if (st) {
        aitk_redactor_free(r);
        return NULL;
    }
    return r;
}

/* aitk_log's filter in a redacted run. */
static int redact_message(void *redactor, const char *message, aitk_str *out)
{
    return aitk_redactor_text(redactor, message, out) != AITK_OK;
}

/* A redacted copy of the report, by the run's redactor (which learns what
 * the tree gives away as well). */
static cJSON *redacted_copy(const cJSON *report, aitk_redactor *r)
{
    cJSON *copy = cJSON_Duplicate(report, 1);
    aitk_status st = copy ? aitk_redactor_apply(r, copy) : AITK_E_NOMEM;
    if (!st) {
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "redacted");
        if (!cJSON_AddBoolToObject(copy, "redacted", 1))
            st = AITK_E_NOMEM;
    }
    if (st) {
        cJSON_Delete(copy);
        return NULL;
    }
    return copy;
}

static const char *status_label(const char *status)
{
    if (strcmp(status, "pass") == 0)
        return aitk_log_color() ? AITK_GREEN "PASS" AITK_RESET : "PASS";
    if (strcmp(status, "warn") == 0)
        return aitk_log_color() ? AITK_YELLOW "WARN" AITK_RESET : "WARN";
    if (strcmp(status, "fail") == 0)
        return aitk_log_color() ? AITK_RED "FAIL" AITK_RESET : "FAIL";
    return aitk_log_color() ? AITK_DIM "SKIP" AITK_RESET : "SKIP";
}

static const char *text_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The buyer's answer, one sentence a model (reports/buyer.h), where the
 * console leaves it in view: just above the verdict. */
static void print_buyer(const cJSON *buyer)
{
    if (cJSON_GetArraySize(buyer) == 0)
        return;
    printf("%s\n", AITK_BUYER_HEADING);
    const cJSON *e;
    cJSON_ArrayForEach(e, buyer)
    {
        aitk_str line = AITK_STR_INIT;
        aitk_buyer_sentence(e, &line);
        printf("  %s\n", aitk_str_cstr(&line));
        aitk_str_free(&line);
    }
}

/* The console view: one line a check; the reason under failures, warnings and
 * skips (a skip without its reason reads like a pass nobody ran), remedies
 * under failures and warnings. */
static void print_summary(const cJSON *report, int verbosity)
{
    const cJSON *c;
    printf("aitk-validate %s · level %s · profile %s\n", AITK_VERSION, text_of(report, "level"),
           text_of(report, "profile"));
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "checks"))
    {
        const char *st = text_of(c, "status");
        printf("  %s  %-24s %s", status_label(st), text_of(c, "id"), text_of(c, "title"));
        if (*text_of(c, "observed"))
            printf(": %s", text_of(c, "observed"));
        printf("\n");
        int bad = strcmp(st, "fail") == 0 || strcmp(st, "warn") == 0;
        int skipped = strcmp(st, "skip") == 0;
        if ((bad || skipped || verbosity > 0) && *text_of(c, "message"))
            printf("        %s\n", text_of(c, "message"));
        if (verbosity > 0 && *text_of(c, "expected"))
            printf("        expected: %s\n", text_of(c, "expected"));
        if (bad && *text_of(c, "remedy"))
            printf("        fix: %s\n", text_of(c, "remedy"));
        if (verbosity > 0 && *text_of(c, "source"))
            printf("        source: %s\n", text_of(c, "source"));
    }
    print_buyer(cJSON_GetObjectItemCaseSensitive(report, "buyer"));
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(summary, "counts");
    const char *v = text_of(summary, "verdict");
    const double warned = cJSON_GetObjectItemCaseSensitive(counts, "warn")->valuedouble;
    printf("Verdict: %s (%g failed, %g warning%s, %g passed, %g skipped)\n",
           strcmp(v, "fail") == 0 ? "FAIL" : strcmp(v, "warn") == 0 ? "PASS with warnings" : "PASS",
           cJSON_GetObjectItemCaseSensitive(counts, "fail")->valuedouble, warned,
           warned == 1 ? "" : "s", cJSON_GetObjectItemCaseSensitive(counts, "pass")->valuedouble,
           cJSON_GetObjectItemCaseSensitive(counts, "skip")->valuedouble);
}

static cJSON *build_report(const aitk_options *o, aitk_run_ctx *ctx)
{
    aitk_report_meta meta = {
        .tool_version = AITK_VERSION,
        .git_commit = AITK_GIT_COMMIT,
        .level = aitk_level_name(o->level),
        .profile = ctx->profile_name,
        .command = "validate",
        .strict = o->strict,
    };
    cJSON *report = aitk_report_new(&meta);
    if (!report)
        return NULL;
    for (size_t i = 0; i < ctx->checks.count; i++)
        if (aitk_report_add_check(report, &ctx->checks.items[i]))
            goto fail;
    /* Measurements are top-level arrays of the report, not environment facts. */
    static const char *const measured[] = {"workloads", "micro"};
    for (size_t i = 0; i < sizeof measured / sizeof *measured; i++) {
        cJSON *m = cJSON_DetachItemFromObjectCaseSensitive(ctx->env, measured[i]);
        if (m && aitk_report_set_section(report, measured[i], m))
            goto fail;
    }
    /* The buyer's question first: read from the workloads just attached. */
    cJSON *buyer = NULL;
    if (aitk_buyer_build(cJSON_GetObjectItemCaseSensitive(report, "workloads"), ctx->env,
                         ctx->cost_params, &buyer) ||
        aitk_report_set_section(report, "buyer", buyer))
        goto fail;
    cJSON *host = cJSON_DetachItemFromObjectCaseSensitive(ctx->env, "host");
    if (!host)
        host = cJSON_CreateObject();
    if (aitk_report_set_section(report, "host", host) ||
        aitk_report_set_section(report, "environment", cJSON_Duplicate(ctx->env, 1)) ||
        aitk_report_finish(report, NULL))
        goto fail;
    return report;
fail:
    cJSON_Delete(report);
    return NULL;
}

/* Ctrl-C during a run: the benchmark runner finishes the step in flight,
 * marks the workload "interrupted", and the report is still written. A
 * second Ctrl-C ends the program at once (the default action is restored). */
static void on_sigint(int sig)
{
    static const char msg[] = "\naitk-validate: stopping after the current step; the report "
                              "will still be written (Ctrl-C again to abort)\n";
    aitk_bench_request_stop();
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    signal(sig, SIG_DFL);
}

static void catch_sigint(void)
{
#ifdef _WIN32
    /* The C runtime turns Ctrl-C (a console control event) into SIGINT. */
    signal(SIGINT, on_sigint);
#else
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
#endif
}

static int run_validate(const aitk_options *o)
{
    aitk_str err = AITK_STR_INIT;
    output_plan plan = {0};
    aitk_compat *compat = NULL;
    aitk_redactor *redactor = NULL;
    int rc = AITK_EXIT_INTERNAL;
    aitk_run_ctx ctx = {0};
    cJSON *report = NULL, *redacted = NULL;
    aitk_str texts[MAX_OUTPUTS] = {0};
    aitk_staged staged[MAX_OUTPUTS] = {0};
    aitk_train_config train = {0};
    bool have_train = false;
    aitk_cost_params *cost_params = NULL; /* for --config; the workloads use it too */

    /* A redacted run (--redact, or a bundle, which is always redacted)
     * redacts all it shows: files, the summary, stderr, the closing lines.
     * People paste the terminal along with the bundle. */
    bool redacting = o->redact || o->support_bundle;
    if (redacting) {
        if (!(redactor = run_redactor_new())) {
            aitk_log(AITK_LOG_ERROR, "out of memory");
            goto out;
        }
        aitk_log_set_filter(redact_message, redactor);
    }
    aitk_status st = aitk_compat_load(o->profile, &compat, &err);
    if (st) {
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        rc = st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : AITK_EXIT_USAGE;
        goto out;
    }
    /* Every measurement needs OpenBLAS (bench/cpu_backend.h): when it cannot
     * open or fit the address-space limit, say so before any folder exists. */
    if (o->level != AITK_LEVEL_QUICK && (st = aitk_bench_cpu_ready(&err))) {
        aitk_log(AITK_LOG_ERROR, "cannot measure: %s", aitk_str_cstr(&err));
        goto out;
    }
    if ((st = prepare_outputs(o, &plan, &err)) || (st = plan_take_dirs(o, &plan, &err))) {
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        rc = st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : AITK_EXIT_USAGE;
        goto out;
    }
    /* --config: read (and refuse, positioned) before any probing; its model
     * is the workload to run. */
    if (o->config) {
        if ((st = aitk_config_read(o->config, &train, &err))) {
            aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
            rc = st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : AITK_EXIT_USAGE;
            goto out;
        }
        have_train = true;
        /* One verdict with `predict --config`: an optimizer the memory model
         * lacks is refused here too. */
        st = aitk_cost_params_load(&cost_params, &err);
        if (!st)
            st = aitk_config_check_optimizer(&train, cost_params, o->config, &err);
        if (st) {
            aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
            rc = st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : AITK_EXIT_USAGE;
            goto out;
        }
        if (o->models && strcmp(o->models, train.model_id) != 0) {
            aitk_log(AITK_LOG_ERROR, "--model %s conflicts with --config %s, which trains %s",
                     o->models, o->config, train.model_id);
            rc = AITK_EXIT_USAGE;
            goto out;
        }
        /* As predict --config says them, once the usage is known good (a
         * usage error stays one line): a typo (train.batchsize) is visible
         * without -v. */
        if (o->verbosity >= 0)
            aitk_config_warn_ignored(&train, o->config);
        if (o->verbosity > 0)
            aitk_config_list_no_effect(&train, o->config);
        /* predict refuses a full fine-tune; here the config only picks the
         * workload, whose LoRA step is measured: said, not refused. */
        if (aitk_config_check_job(&train, &err) && o->verbosity >= 0)
            aitk_log(AITK_LOG_WARN, "%s; the workloads measure its model's LoRA step",
                     aitk_str_cstr(&err));
        aitk_str_clear(&err);
    }
    ctx = (aitk_run_ctx){
        .level = o->level,
        .profile_name = compat->profile_name,
        .compat = compat,
        .output_dir = o->output_dir,
        .models = have_train ? train.model_id : o->models,
        .train_config = have_train ? &train : NULL,
        .steps = o->steps,
        .cpu_only = o->cpu,
        .python = o->python, .aitk_dir = o->aitk_dir,
        .cost_params = cost_params,
        .env = cJSON_CreateObject(),
    };
    /* Progress of long measurements on stderr: a bar on a terminal, lines
     * in a log, nothing with --quiet. */
    aitk_progress_set_default(aitk_progress_mode_for(stderr, o->verbosity < 0), stderr);
    if (o->level != AITK_LEVEL_QUICK) /* --quick has nothing long to stop gracefully */
        catch_sigint();
    if (!ctx.env || aitk_engine_run(&ctx, aitk_providers, aitk_provider_count)) {
        aitk_log(AITK_LOG_ERROR, "out of memory while probing");
        goto out;
    }
    if (!(report = build_report(o, &ctx)) || aitk_json_repair_utf8(report) ||
        aitk_scrub_secrets(report) ||
        (redacting && !(redacted = redacted_copy(report, redactor)))) {
        aitk_log(AITK_LOG_ERROR, "could not build the report (out of memory)");
        goto out;
    }
    /* The files are replaced together: each is rendered and written in full
     * beside its target first, and only when all are written are they put
     * in place, so a full disk leaves the last run's files as they were,
     * not a new report.json beside an old report.html. Every failure is
     * named, "; " between them. */
    int write_failed = 0;
    aitk_str_clear(&err);
    for (size_t i = 0; i < plan.count; i++) {
        const output_file *f = &plan.files[i];
        if (render_output(f->redacted ? redacted : report, f->kind, &texts[i])) {
            aitk_log(AITK_LOG_ERROR, "could not render %s (out of memory)", f->path.ptr);
            goto out;
        }
        aitk_str why = AITK_STR_INIT;
        if (aitk_file_stage(f->path.ptr, aitk_str_cstr(&texts[i]), texts[i].len, &staged[i],
                            &why)) {
            aitk_str_appendf(&err, "%s%s", write_failed ? "; " : "", aitk_str_cstr(&why));
            write_failed = 1;
        }
        aitk_str_free(&why);
    }
    if (write_failed) {
        aitk_str_append(&err, " (no report file was replaced)");
    } else {
        for (size_t i = 0; i < plan.count; i++) {
            aitk_str why = AITK_STR_INIT;
            if (aitk_file_commit(&staged[i], &why)) {
                aitk_str_appendf(&err, "%s%s", write_failed ? "; " : "", aitk_str_cstr(&why));
                write_failed = 1;
            }
            aitk_str_free(&why);
        }
    }
    if (o->verbosity >= 0)
        print_summary(redacting ? redacted : report, o->verbosity);
    if (write_failed) {
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        rc = AITK_EXIT_INTERNAL;
        goto out;
    }
    for (size_t i = 0; o->verbosity >= 0 && i < plan.count; i++) {
        const char *path = plan.files[i].path.ptr;
        aitk_str shown = AITK_STR_INIT;
        if (redactor)
            path = aitk_redactor_text(redactor, path, &shown) ? "(path withheld)"
                                                               : aitk_str_cstr(&shown);
        printf("%s%s: %s\n", out_labels[plan.files[i].kind],
               plan.files[i].redacted ? " (redacted)" : "", path);
        aitk_str_free(&shown);
    }
    aitk_verdict v;
    rc = aitk_report_verdict(report, &v) ? AITK_EXIT_INTERNAL
         : v == AITK_VERDICT_FAIL        ? AITK_EXIT_FAILED
                                         : AITK_EXIT_OK;
out:
    for (int d = 0; d < 2; d++) {
        aitk_dir_lock_release(plan.locks[d]);
        plan.locks[d] = NULL;
    }
    if (rc == AITK_EXIT_USAGE)
        plan_unmake_dirs(&plan);
    if (have_train)
        aitk_config_free(&train);
    aitk_cost_params_free(cost_params);
    cJSON_Delete(report);
    cJSON_Delete(redacted);
    aitk_log_set_filter(NULL, NULL);
    aitk_redactor_free(redactor);
    cJSON_Delete(ctx.env);
    aitk_checklist_free(&ctx.checks);
    aitk_compat_free(compat);
    for (size_t i = 0; i < MAX_OUTPUTS; i++) {
        aitk_file_discard(&staged[i]);
        aitk_str_free(&texts[i]);
    }
    plan_free(&plan);
    aitk_str_free(&err);
    return rc;
}

/* What was printed must have reached standard output: `render r.json >
 * issue.md` on a full disk would otherwise leave half an issue body and exit
 * 0. A write that failed is exit 3, as a report file that could not be
 * written is. */
static int finish_stdout(int rc)
{
    errno = 0;
    const bool flushed = fflush(stdout) == 0;
    if (flushed && !ferror(stdout))
        return rc;
    /* The cause is known only when this flush failed; an earlier write's
     * errno is long gone. */
    if (!flushed && errno)
        aitk_log(AITK_LOG_ERROR, "standard output: write failed: %s", strerror(errno));
    else
        aitk_log(AITK_LOG_ERROR, "standard output: write failed");
    return AITK_EXIT_INTERNAL;
}

static int run_main(int argc, char **argv);

#ifdef _WIN32
/* A console shows bytes in its own output code page (437, 936, ...); this
 * program prints UTF-8 (its manifest makes that its code page), so the
 * console is switched to UTF-8 while it runs and switched back after. */
static UINT console_cp_before;
static void restore_console_code_page(void) { SetConsoleOutputCP(console_cp_before); }
static void console_utf8(void)
{
    console_cp_before = GetConsoleOutputCP(); /* 0 when there is no console */
    if (console_cp_before && console_cp_before != CP_UTF8 && SetConsoleOutputCP(CP_UTF8))
        atexit(restore_console_code_page);
}
#endif

int main(int argc, char **argv)
{
#ifdef _WIN32
    console_utf8();
#endif
    return finish_stdout(run_main(argc, argv));
}

/* This program loads the libraries it examines in copies of itself
 * (common/libload.h). Without its own path, nothing is loaded and the
 * checks say so. */
static void set_load_helper(void)
{
    aitk_str self = AITK_STR_INIT, err = AITK_STR_INIT;
    if (aitk_self_path(&self, &err) == AITK_OK)
        aitk_libload_set_helper(aitk_str_cstr(&self));
    aitk_str_free(&self);
    aitk_str_free(&err);
}

static int run_main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], AITK_LIBLOAD_CHILD_ARG) == 0)
        return aitk_libload_child(argc - 2, argv + 2);
    aitk_log_init(AITK_LOG_INFO, true);
    set_load_helper();
    if (argc > 1 && argv[1][0] != '-') {
        const aitk_command *cmd = aitk_command_find(argv[1]);
        if (!cmd) {
            aitk_log(AITK_LOG_ERROR, "unknown command '%s' (see --help)", argv[1]);
            return AITK_EXIT_USAGE;
        }
        return cmd->run(argc - 1, argv + 1);
    }
    aitk_options o;
    aitk_str err = AITK_STR_INIT;
    if (aitk_cli_parse(argc, argv, &o, &err))
        return aitk_opt_usage_error(NULL, &err);
    aitk_str_free(&err);
    if (o.help) {
        aitk_cli_print_help();
        return AITK_EXIT_OK;
    }
    if (o.version) {
        printf("aitk-validate %s (%s)\n", AITK_VERSION, AITK_GIT_COMMIT);
        return AITK_EXIT_OK;
    }
    aitk_log_init(o.verbosity < 0 ? AITK_LOG_ERROR : o.verbosity > 0 ? AITK_LOG_DEBUG : AITK_LOG_INFO,
                  !o.no_color);
    return run_validate(&o);
}
