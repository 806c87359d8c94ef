/* One validation run: arguments -> plan -> probes -> report -> files ->
 * exit code (run.h). Each phase below is one step of that line; a phase
 * that stops the run sets its exit code. */
#include "validate/run.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/cpu_backend.h"
#include "bench/progress.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/stop.h"
#include "models/aitk_config.h"
#include "models/cost.h"
#include "reports/console.h"
#include "reports/report.h"
#include "validate/buyer.h"
#include "validate/compat.h"
#include "validate/engine.h"
#include "validate/outputs.h"
#include "validate/run_redact.h"
#include "validate/version.h"

/* The console view (reports/console.h); a report it cannot render in full
 * (out of memory) shows what it could. It goes to stdout, which may be a
 * file or a pipe while stderr is the terminal; to stderr when a report
 * itself goes to stdout (`--json -`). */
static void print_summary(const cJSON *report, int verbosity, FILE *out)
{
    aitk_str text = AITK_STR_INIT;
    aitk_render_console(report, AITK_VERSION, verbosity, aitk_log_color_on(out), &text);
    fputs(aitk_str_cstr(&text), out);
    aitk_str_free(&text);
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
 * marks the workload "interrupted", and the report is still written; the
 * stop request (common/stop.h) keeps the signal, so the report says which
 * one stopped the run. It also ends the program a probe is running (import
 * torch may take two minutes) and starts no other (common/proc.h), whose
 * checks are then skipped as interrupted. A second Ctrl-C ends the program
 * at once (the default action is restored).
 * SIGTERM is the same request: `timeout 600 aitk-validate --full`, a
 * Kubernetes pod being stopped and Slurm's time limit all send it, and then
 * wait a while before SIGKILL; dying at once lost every report.
 *
 * A second signal within half a second of the first is the same request
 * delivered twice, not a person pressing again: GNU timeout sends its
 * signal to the child and then to the child's whole process group, so
 * `timeout -s INT` would otherwise kill the run it means to stop (seen on
 * the GPU machine: the report was lost). */
#ifndef _WIN32
static volatile sig_atomic_t sigint_seen;
static struct timespec sigint_first; /* written once, before sigint_seen */

static void on_sigint(int sig)
{
    static const char msg_int[] = "\naitk-validate: stopping after the current step; the report "
                                  "will still be written (Ctrl-C again to abort)\n";
    static const char msg_term[] = "\naitk-validate: terminated (SIGTERM): stopping after the "
                                   "current step; the report will still be written\n";
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* async-signal-safe (POSIX) */
    if (sigint_seen) {
        double since = (double)(now.tv_sec - sigint_first.tv_sec) +
                       (double)(now.tv_nsec - sigint_first.tv_nsec) / 1e9;
        if (since < 0.5)
            return;
        /* The program a probe runs (import torch) would outlive us. */
        aitk_proc_kill_running();
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    sigint_first = now;
    sigint_seen = 1;
    aitk_stop_request(sig);
    ssize_t ignored = sig == SIGTERM ? write(STDERR_FILENO, msg_term, sizeof msg_term - 1)
                                     : write(STDERR_FILENO, msg_int, sizeof msg_int - 1);
    (void)ignored;
}
#else
static void on_sigint(int sig)
{
    static const char msg[] = "\naitk-validate: stopping after the current step; the report "
                              "will still be written (Ctrl-C again to abort)\n";
    aitk_stop_request(sig);
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    signal(sig, SIG_DFL);
}
#endif

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
    sigaction(SIGTERM, &sa, NULL);
#endif
}

typedef struct run_state {
    const aitk_options *o;
    int rc; /* the exit code once a phase stops the run */
    aitk_str err;
    aitk_output_plan plan;
    aitk_compat *compat;
    aitk_redactor *redactor; /* NULL unless the run is redacted */
    aitk_run_ctx ctx;
    cJSON *report, *redacted;
    aitk_train_config train;
    bool have_train;
    aitk_cost_params *cost_params; /* for --config; the workloads use it too */
    bool plan_outputs; /* false: the report stays in memory (aitk_run_build) */
} run_state;

/* A refused input or output, said in one line (r->err): exit 2, or 3 when
 * the refusal was running out of memory. */
static bool refuse(run_state *r, aitk_status st)
{
    aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&r->err));
    r->rc = st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : AITK_EXIT_USAGE;
    return false;
}

/* A redacted run redacts stderr from its first line on. */
static bool start_redacting(run_state *r)
{
    if (!(r->o->redact || r->o->support_bundle))
        return true;
    if (!(r->redactor = aitk_run_redactor_new())) {
        aitk_log(AITK_LOG_ERROR, "out of memory");
        return false;
    }
    aitk_log_set_filter(aitk_run_redact_message, r->redactor);
    return true;
}

/* What --config means for the run, once its usage is known good (a usage
 * error stays one line). */
static void tell_config_notes(run_state *r)
{
    const aitk_options *o = r->o;
    /* As predict --config says them: a typo (train.batchsize) is visible
     * without -v. */
    if (o->verbosity >= 0)
        aitk_config_warn_ignored(&r->train, o->config);
    if (o->verbosity > 0)
        aitk_config_list_no_effect(&r->train, o->config);
    /* predict refuses a full fine-tune; here the config only picks the
     * workload, whose LoRA step is measured: said, not refused. */
    if (aitk_config_check_job(&r->train, &r->err) && o->verbosity >= 0)
        aitk_log(AITK_LOG_WARN, "%s; the workloads measure its model's LoRA step",
                 aitk_str_cstr(&r->err));
    aitk_str_clear(&r->err);
}

/* --config: read (and refuse, positioned) before any probing; its model
 * is the workload to run. */
static bool read_train_config(run_state *r)
{
    const aitk_options *o = r->o;
    aitk_status st = aitk_config_read(o->config, &r->train, &r->err);
    if (st)
        return refuse(r, st);
    r->have_train = true;
    /* One verdict with `predict --config`: an optimizer the memory model
     * lacks is refused here too. */
    st = aitk_cost_params_load(&r->cost_params, &r->err);
    if (!st)
        st = aitk_config_check_optimizer(&r->train, r->cost_params, o->config, &r->err);
    if (st)
        return refuse(r, st);
    if (o->models && strcmp(o->models, r->train.model_id) != 0) {
        aitk_log(AITK_LOG_ERROR, "--model %s conflicts with --config %s, which trains %s",
                 o->models, o->config, r->train.model_id);
        r->rc = AITK_EXIT_USAGE;
        return false;
    }
    tell_config_notes(r);
    return true;
}

/* Everything the run reads or will write, refused before any probing. */
static bool take_inputs(run_state *r)
{
    aitk_status st = aitk_compat_load(r->o->profile, &r->compat, &r->err);
    if (st)
        return refuse(r, st);
    /* Every measurement needs OpenBLAS (bench/cpu_backend.h): when it cannot
     * open or fit the address-space limit, say so (exit 3) before any folder
     * exists. */
    if (r->o->level != AITK_LEVEL_QUICK && (st = aitk_bench_cpu_ready(&r->err))) {
        aitk_log(AITK_LOG_ERROR, "cannot measure: %s", aitk_str_cstr(&r->err));
        r->rc = AITK_EXIT_INTERNAL;
        return false;
    }
    if (r->plan_outputs && (st = aitk_outputs_plan(r->o, &r->plan, &r->err)))
        return refuse(r, st);
    return !r->o->config || read_train_config(r);
}

static bool probe(run_state *r)
{
    const aitk_options *o = r->o;
    r->ctx = (aitk_run_ctx){
        .level = o->level,
        .profile_name = r->compat->profile_name,
        .compat = r->compat,
        .output_dir = o->output_dir,
        .models = r->have_train ? r->train.model_id : o->models,
        .train_config = r->have_train ? &r->train : NULL,
        .steps = o->steps,
        .cpu_only = o->cpu,
        .python = o->python, .aitk_dir = o->aitk_dir,
        .cost_params = r->cost_params,
        .env = cJSON_CreateObject(),
    };
    /* Progress of long measurements on stderr: a bar on a terminal, lines
     * in a log, nothing with --quiet. */
    aitk_progress_set_default(aitk_progress_mode_for(stderr, o->verbosity < 0), stderr);
    if (o->level != AITK_LEVEL_QUICK) /* --quick has nothing long to stop gracefully */
        catch_sigint();
#ifndef _WIN32
    /* A reader of stdout or stderr that goes away must not end the run
     * before its reports are written: Ctrl-C on `aitk-validate 2>&1 | tee
     * log` ends tee too, and `2>&1 | head` ends early, and the next progress
     * line then raised SIGPIPE. The failed writes are lost instead, and one
     * to standard output is exit 3 at the end (main.c). */
    signal(SIGPIPE, SIG_IGN);
#endif
    if (!r->ctx.env || aitk_engine_run(&r->ctx, aitk_providers, aitk_provider_count)) {
        aitk_log(AITK_LOG_ERROR, "out of memory while probing");
        return false;
    }
    return true;
}

/* The redacted copy is made before the scrub, so that its secrets get
 * numbered placeholders ("[secret-2]") rather than the scrub's bare
 * "[secret]"; it is scrubbed after, in case a secret sat where --redact
 * does not rewrite (check ids, host.os). */
static bool make_report(run_state *r)
{
    if (!(r->report = build_report(r->o, &r->ctx)) || aitk_json_repair_utf8(r->report) ||
        (r->redactor && !(r->redacted = aitk_run_redacted_copy(r->report, r->redactor))) ||
        aitk_scrub_secrets(r->report) || aitk_scrub_secrets(r->redacted)) {
        aitk_log(AITK_LOG_ERROR, "could not build the report (out of memory)");
        return false;
    }
    return true;
}

/* The files, then the summary (a redacted run shows the redacted one),
 * then where the files are; the exit code from the verdict. With a report
 * on standard output, what is said for a person goes to stderr. */
static void write_and_show(run_state *r)
{
    const aitk_options *o = r->o;
    FILE *human = r->plan.to_stdout ? stderr : stdout;
    aitk_status st = aitk_outputs_write(&r->plan, r->report, r->redacted, &r->err);
    if (st == AITK_E_NOMEM)
        return;
    if (o->verbosity >= 0)
        print_summary(r->redactor ? r->redacted : r->report, o->verbosity, human);
    if (st) {
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&r->err));
        return;
    }
    if (o->verbosity >= 0)
        aitk_outputs_print(&r->plan, r->redactor, human);
    aitk_verdict v;
    r->rc = aitk_report_verdict(r->report, &v) ? AITK_EXIT_INTERNAL
            : v == AITK_VERDICT_FAIL           ? AITK_EXIT_FAILED
                                               : AITK_EXIT_OK;
}

static void run_free(run_state *r)
{
    aitk_outputs_end(&r->plan, r->rc == AITK_EXIT_USAGE);
    if (r->have_train)
        aitk_config_free(&r->train);
    aitk_cost_params_free(r->cost_params);
    cJSON_Delete(r->report);
    cJSON_Delete(r->redacted);
    aitk_log_set_filter(NULL, NULL);
    aitk_redactor_free(r->redactor);
    cJSON_Delete(r->ctx.env);
    aitk_checklist_free(&r->ctx.checks);
    aitk_compat_free(r->compat);
    aitk_str_free(&r->err);
}

int aitk_run_validate(const aitk_options *o)
{
    run_state r = {.o = o, .rc = AITK_EXIT_INTERNAL, .err = AITK_STR_INIT, .plan_outputs = true};
    if (start_redacting(&r) && take_inputs(&r) && probe(&r) && make_report(&r))
        write_and_show(&r);
    run_free(&r);
    return r.rc;
}

int aitk_run_build(const aitk_options *o, cJSON **report)
{
    run_state r = {.o = o, .rc = AITK_EXIT_INTERNAL, .err = AITK_STR_INIT};
    *report = NULL;
    if (start_redacting(&r) && take_inputs(&r) && probe(&r) && make_report(&r)) {
        /* The redacted copy when there is one: it is what may leave. */
        cJSON **kept = r.redacted ? &r.redacted : &r.report;
        *report = *kept;
        *kept = NULL;
        r.rc = AITK_EXIT_OK;
    }
    run_free(&r);
    return r.rc;
}
