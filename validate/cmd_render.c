/* `aitk-validate render REPORT.json [--markdown FILE]`: renderers are pure
 * functions of the saved report, so any report can be re-rendered anywhere. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/log.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "validate/cli.h"
#include "validate/commands.h"

#define MAX_REPORT_BYTES (64u << 20)

static void render_help(void)
{
    fputs("Usage: aitk-validate render REPORT.json [--markdown FILE]\n"
          "\n"
          "Re-renders a saved report. Without an output option the Markdown goes to\n"
          "standard output.\n"
          "  --markdown FILE   write the Markdown summary to FILE (atomically)\n"
          "\n"
          "Exit codes: 0 rendered, 2 unreadable or malformed report, 3 internal error.\n",
          stdout);
}

int aitk_cmd_render(int argc, char **argv)
{
    static const struct option opts[] = {
        {"markdown", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *md_path = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'm') {
            md_path = optarg;
        } else if (c == 'h') {
            render_help();
            return AITK_EXIT_OK;
        } else if (c == ':') {
            aitk_log(AITK_LOG_ERROR, "render: %s needs a value", argv[optind - 1]);
            return AITK_EXIT_USAGE;
        } else {
            aitk_log(AITK_LOG_ERROR, "render: unknown option '%s' (see render --help)",
                     argv[optind - 1]);
            return AITK_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        aitk_log(AITK_LOG_ERROR, "render: give exactly one report file (see render --help)");
        return AITK_EXIT_USAGE;
    }
    const char *path = argv[optind];
    char *text = NULL;
    size_t len = 0;
    aitk_str err = AITK_STR_INIT;
    cJSON *report = NULL;
    aitk_status st = aitk_file_read(path, MAX_REPORT_BYTES, &text, &len, &err);
    if (!st)
        st = aitk_report_parse(path, text, len, &report, &err);
    aitk_free(text);
    if (st) {
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        aitk_str_free(&err);
        return st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : AITK_EXIT_USAGE;
    }
    aitk_str md = AITK_STR_INIT;
    int rc = AITK_EXIT_OK;
    if (aitk_render_markdown(report, &md)) {
        aitk_log(AITK_LOG_ERROR, "%s: could not render Markdown", path);
        rc = AITK_EXIT_INTERNAL;
    } else if (md_path) {
        if (aitk_file_write_atomic(md_path, md.ptr, md.len, &err)) {
            aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
            rc = AITK_EXIT_USAGE;
        }
    } else {
        fwrite(md.ptr, 1, md.len, stdout);
    }
    aitk_str_free(&md);
    aitk_str_free(&err);
    cJSON_Delete(report);
    return rc;
}
