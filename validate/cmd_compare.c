/* `aitk-validate compare BASE.json NEW.json [--threshold 5%] [--format F]
 * [--output FILE]`: the regression gate of a nightly CI job. */
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
#include "validate/cli.h"
#include "validate/commands.h"

#define MAX_REPORT_BYTES (64u << 20)

static void compare_help(void)
{
    fputs("Usage: aitk-validate compare BASE.json NEW.json [--threshold 5%] "
          "[--format text|markdown|html] [--output FILE]\n"
          "\n"
          "Compares two saved reports metric by metric: workload step times, time per\n"
          "1000 steps, throughput and peak memory; microbenchmark results; check\n"
          "statuses. A metric that got worse by more than the threshold, or a check that\n"
          "fails in NEW but did not in BASE, is a regression. So is a number that went\n"
          "missing (a workload, metric, microbenchmark or check BASE had and NEW lacks),\n"
          "a metric whose unit changed, and growth off 0 in the bad direction. Metrics\n"
          "only NEW has are listed as new and pass.\n"
          "  --threshold P   allowed change in the bad direction, in percent (default 5%)\n"
          "  --format F      text (default), markdown or html\n"
          "  --output FILE   write there (atomically) instead of standard output\n"
          "                  (FILE -: standard output, as without it)\n"
          "\n"
          "Exit codes: 0 no regression, 1 a regression, 2 bad usage or an unreadable or\n"
          "malformed report (a metric that is not a number >= 0, a repeated workload or\n"
          "microbenchmark name), 3 internal error or an output that could not be\n"
          "written.\n",
          stdout);
}

/* Read and parsed; what compare reads in it is checked by
 * aitk_compare_reports, which refuses a malformed report, naming `path`. */
static aitk_status load(const char *path, cJSON **report, aitk_str *err)
{
    char *text = NULL;
    size_t len = 0;
    aitk_status st = aitk_file_read(path, MAX_REPORT_BYTES, &text, &len, err);
    if (!st)
        st = aitk_report_parse(path, text, len, report, err);
    aitk_free(text);
    return st;
}

int aitk_cmd_compare(int argc, char **argv)
{
    static const struct option opts[] = {
        {"threshold", required_argument, NULL, 't'},
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    double threshold = 5;
    aitk_compare_format fmt = AITK_COMPARE_TEXT;
    const char *output = NULL;
    aitk_str err = AITK_STR_INIT;
    optind = 1;
    opterr = 0;
    int c;
    bool given[sizeof opts / sizeof *opts] = {false};
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (aitk_opt_once(c, opts, given, NULL, NULL, &err))
            return aitk_opt_usage_error("compare", &err);
        if (c == 't') {
            if (aitk_compare_parse_threshold(optarg, &threshold, &err))
                return aitk_opt_usage_error("compare", &err);
        } else if (c == 'f') {
            if (strcmp(optarg, "text") == 0)
                fmt = AITK_COMPARE_TEXT;
            else if (strcmp(optarg, "markdown") == 0)
                fmt = AITK_COMPARE_MARKDOWN;
            else if (strcmp(optarg, "html") == 0)
                fmt = AITK_COMPARE_HTML;
            else {
                aitk_str_appendf(&err, "--format: '%s' is not text, markdown or html", optarg);
                return aitk_opt_usage_error("compare", &err);
            }
        } else if (c == 'o') {
            output = aitk_output_is_stdout(optarg) ? NULL : optarg; /* -: stdout */
        } else if (c == 'h') {
            compare_help();
            return AITK_EXIT_OK;
        } else {
            aitk_opt_error("compare", c, argv[optind - 1], optopt, opts, &err);
            return aitk_opt_usage_error("compare", &err);
        }
    }
    if (optind != argc - 2) {
        aitk_log(AITK_LOG_ERROR, "compare: give exactly two reports, BASE and NEW "
                                 "(see compare --help)");
        return AITK_EXIT_USAGE;
    }
    cJSON *base = NULL, *now = NULL;
    const aitk_named_path out = {"--output", output};
    const aitk_named_path ins[] = {{"compare BASE", argv[optind]}, {"compare NEW", argv[optind + 1]}};
    aitk_status st = aitk_outputs_distinct(&out, 1, ins, 2, &err);
    if (!st && output)
        st = aitk_output_file_ready(output, &err);
    if (!st)
        st = load(argv[optind], &base, &err);
    if (!st)
        st = load(argv[optind + 1], &now, &err);
    if (st) {
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        aitk_str_free(&err);
        cJSON_Delete(base);
        return st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : AITK_EXIT_USAGE;
    }
    aitk_compare cmp = {0};
    aitk_str text = AITK_STR_INIT;
    int rc;
    if ((st = aitk_compare_reports(base, argv[optind], now, argv[optind + 1], threshold, &cmp,
                                   &err)) == AITK_E_PARSE) {
        /* Refused, not read leniently: a number read as missing or negative
         * could pass the gate. */
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        rc = AITK_EXIT_USAGE;
    } else if (st || (st = aitk_compare_render(&cmp, fmt, &text))) {
        aitk_log(AITK_LOG_ERROR, "compare: %s", aitk_strerror(st));
        rc = AITK_EXIT_INTERNAL;
    } else if (output && aitk_file_write_atomic(output, text.ptr, text.len, &err)) {
        /* The path was checked before the reports were read: this is the
         * write itself failing (a full disk). */
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        rc = AITK_EXIT_INTERNAL;
    } else {
        if (!output)
            fwrite(aitk_str_cstr(&text), 1, text.len, stdout);
        rc = cmp.regressions ? AITK_EXIT_FAILED : AITK_EXIT_OK;
    }
    aitk_compare_free(&cmp);
    aitk_str_free(&text);
    aitk_str_free(&err);
    cJSON_Delete(base);
    cJSON_Delete(now);
    return rc;
}
