/* `aitk-validate trend REPORT|FOLDER... [--format F] [--output FILE]
 * [--threshold 5%] [--window 7] [--last N] [--fail-on-regression]`: how every
 * metric moved over a nightly job's saved reports (reports/trend.h). */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/cliopt.h"
#include "common/fileio.h"
#include "common/log.h"
#include "reports/compare.h"
#include "reports/report.h"
#include "reports/trend.h"
#include "validate/cli.h"
#include "validate/commands.h"
#include "validate/report_inputs.h"

#define MAX_REPORT_BYTES (64u << 20)
/* A year of nightly runs is 365; ten thousand files is a mistake (a whole
 * disk given as the folder), refused before reading them all. */
#define MAX_REPORTS 10000

static void trend_help(void)
{
    fputs("Usage: aitk-validate trend REPORT|FOLDER... [--format text|markdown|csv|html]\n"
          "                           [--output FILE] [--threshold 5%] [--window 7]\n"
          "                           [--last N] [--fail-on-regression]\n"
          "\n"
          "Puts saved reports in time order (their created_at) and shows how every metric\n"
          "moved: checks failed, each workload's step time, time per 1000 steps,\n"
          "throughput and peak memory, each microbenchmark. The latest run is judged\n"
          "against a baseline, the median of up to N earlier runs measured on the same\n"
          "device (so one noisy night neither raises nor hides an alarm, and a new GPU\n"
          "is not read as a speed-up), by the rule compare uses: worse by more than the\n"
          "threshold is a regression, and so is a number the run before had and the\n"
          "latest lacks.\n"
          "\n"
          "A FOLDER stands for its *.json reports and the report.json in each folder\n"
          "inside it: the layout a nightly job leaves with one --output-dir per night.\n"
          "  --format F           text (default); markdown, for a CI job summary; csv, one\n"
          "                       row per run and metric, for a dashboard; html, one page\n"
          "                       with a chart per metric\n"
          "  --output FILE        write there (atomically) instead of standard output\n"
          "                       (FILE -: standard output, as without it)\n"
          "  --threshold P        allowed change in the bad direction (default 5%)\n"
          "  --window N           baseline: median of up to N earlier runs (default 7)\n"
          "  --last N             only the N newest runs\n"
          "  --fail-on-regression exit 1 when the latest run regressed\n"
          "\n"
          "Example, in a nightly job that keeps nightly/<date>/report.json:\n"
          "  aitk-validate trend nightly/ --format html --output trend.html\n"
          "\n"
          "Exit codes: 0 done (no regression, or no --fail-on-regression), 1 a\n"
          "regression with --fail-on-regression, 2 bad usage or an unreadable report,\n"
          "3 internal error or an output that could not be written.\n",
          stdout);
}

typedef struct trend_opts {
    aitk_trend_format fmt;
    const char *output;
    double threshold;
    long window, last;
    bool gate;
} trend_opts;

static aitk_status load_into(aitk_trend *t, const char *path, aitk_str *err)
{
    char *text = NULL;
    size_t len = 0;
    cJSON *report = NULL;
    aitk_status st = aitk_file_read(path, MAX_REPORT_BYTES, &text, &len, err);
    if (!st)
        st = aitk_report_parse(path, text, len, &report, err);
    aitk_free(text);
    if (!st)
        st = aitk_trend_add_report(t, report, path, err);
    cJSON_Delete(report);
    return st;
}

static aitk_status read_all(aitk_trend *t, const aitk_report_inputs *l, aitk_str *err)
{
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < l->count; i++)
        st = load_into(t, l->paths[i], err);
    return st;
}

static int parse_args(int argc, char **argv, trend_opts *o, aitk_str *err)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"threshold", required_argument, NULL, 't'},
        {"window", required_argument, NULL, 'w'},
        {"last", required_argument, NULL, 'l'},
        {"fail-on-regression", no_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct {
        const char *name;
        aitk_trend_format fmt;
    } formats[] = {{"text", AITK_TREND_TEXT},
                   {"markdown", AITK_TREND_MARKDOWN},
                   {"csv", AITK_TREND_CSV},
                   {"html", AITK_TREND_HTML}};
    optind = 1;
    opterr = 0;
    int c;
    bool given[sizeof opts / sizeof *opts] = {false};
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        aitk_status st = aitk_opt_once(c, opts, given, NULL, NULL, err);
        if (st)
            return AITK_EXIT_USAGE;
        if (c == 'f') {
            size_t k = 0;
            while (k < sizeof formats / sizeof *formats && strcmp(formats[k].name, optarg) != 0)
                k++;
            if (k == sizeof formats / sizeof *formats) {
                aitk_str_appendf(err, "--format: '%s' is not text, markdown, csv or html",
                                 optarg);
                return AITK_EXIT_USAGE;
            }
            o->fmt = formats[k].fmt;
        } else if (c == 'o') {
            o->output = aitk_output_is_stdout(optarg) ? NULL : optarg; /* -: stdout */
        } else if (c == 't') {
            st = aitk_compare_parse_threshold(optarg, &o->threshold, err);
        } else if (c == 'w') {
            st = aitk_opt_long("--window", optarg, 1, 1000, &o->window, err);
        } else if (c == 'l') {
            st = aitk_opt_long("--last", optarg, 1, MAX_REPORTS, &o->last, err);
        } else if (c == 'g') {
            o->gate = true;
        } else if (c == 'h') {
            trend_help();
            return -1;
        } else {
            aitk_opt_error("trend", c, argv[optind - 1], optopt, opts, err);
            return AITK_EXIT_USAGE;
        }
        if (st)
            return AITK_EXIT_USAGE;
    }
    if (optind >= argc) {
        aitk_str_append(err, "name the reports: report files or folders of them "
                             "(see trend --help)");
        return AITK_EXIT_USAGE;
    }
    return AITK_EXIT_OK;
}

/* Input errors carry their message (exit 2); anything without one is ours
 * (out of memory, or a bug): exit 3 with the status's own words. */
static int fail(aitk_status st, aitk_str *err)
{
    if (err->len && st != AITK_E_NOMEM) {
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(err));
        return AITK_EXIT_USAGE;
    }
    aitk_log(AITK_LOG_ERROR, "trend: %s", aitk_strerror(st));
    return AITK_EXIT_INTERNAL;
}

int aitk_cmd_trend(int argc, char **argv)
{
    trend_opts o = {.fmt = AITK_TREND_TEXT, .threshold = 5, .window = 7};
    aitk_str err = AITK_STR_INIT;
    int rc = parse_args(argc, argv, &o, &err);
    if (rc < 0)
        return AITK_EXIT_OK;
    if (rc)
        return aitk_opt_usage_error("trend", &err);
    aitk_trend t;
    aitk_status st = aitk_trend_init(&t, o.threshold, (size_t)o.window);
    /* An output that cannot be written is refused before any report is read. */
    if (!st && o.output)
        st = aitk_output_file_ready(o.output, &err);
    aitk_report_inputs inputs = {.cmd = "trend", .max = MAX_REPORTS};
    for (int i = optind; !st && i < argc; i++) {
        if (aitk_is_dir(argv[i]))
            st = aitk_report_inputs_expand(&inputs, argv[i], &err);
        else
            st = aitk_report_inputs_add(&inputs, argv[i], &err);
    }
    /* The output may not replace a report it reads (a trend.json among the
     * nightly reports, say). */
    const aitk_named_path out = {"--output", o.output};
    for (size_t i = 0; !st && o.output && i < inputs.count; i++) {
        const aitk_named_path in = {"trend", inputs.paths[i]};
        st = aitk_outputs_distinct(&out, 1, &in, 1, &err);
    }
    /* Every input once: a report named twice (directly and through its
     * folder, or by two paths) would count as two nights of the same
     * figures. */
    aitk_report_inputs_unique(&inputs);
    if (!st)
        st = read_all(&t, &inputs, &err);
    aitk_report_inputs_free(&inputs);
    if (!st)
        st = aitk_trend_finish(&t, (size_t)o.last);
    aitk_str text = AITK_STR_INIT;
    if (!st)
        st = aitk_trend_render(&t, o.fmt, &text);
    bool write_failed = false;
    if (!st && o.output)
        write_failed = (st = aitk_file_write_atomic(o.output, text.ptr, text.len, &err)) != 0;
    if (st) {
        rc = fail(st, &err);
        /* Checked before the reports were read: the write itself failed. */
        if (write_failed)
            rc = AITK_EXIT_INTERNAL;
    } else {
        if (!o.output)
            aitk_fputs_printable(aitk_str_cstr(&text), stdout);
        rc = o.gate && t.regressions ? AITK_EXIT_FAILED : AITK_EXIT_OK;
    }
    aitk_trend_free(&t);
    aitk_str_free(&text);
    aitk_str_free(&err);
    return rc;
}
