/* `aitk-validate fleet REPORT...|DIR [--format F] [--output FILE]
 * [--output-dir DIR]`: many nodes' reports merged into one fleet report
 * (reports/fleet.h), with compare's exit codes. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/cliopt.h"
#include "common/dirlock.h"
#include "common/fileio.h"
#include "common/log.h"
#include "reports/compare.h"
#include "reports/fields.h"
#include "reports/fleet.h"
#include "reports/report.h"
#include "validate/cli.h"
#include "validate/commands.h"
#include "validate/report_inputs.h"

#define MAX_REPORT_BYTES (64u << 20)
/* A fleet of thousands is real; a hundred thousand files is a whole disk. */
#define MAX_REPORTS 20000

static void fleet_help(void)
{
    fputs("Usage: aitk-validate fleet REPORT...|DIR... [--format text|markdown|html|json]\n"
          "                           [--output FILE] [--output-dir DIR]\n"
          "\n"
          "Merges the reports that one aitk-validate run per node left (a Slurm array, a\n"
          "Kubernetes Job per node, Ansible) into one fleet report:\n"
          "  - the nodes, each with its host, device and verdict;\n"
          "  - outliers: a node whose workload step time, throughput, peak memory or\n"
          "    microbenchmark figure is far from the other nodes', and a node that runs\n"
          "    another driver, CUDA, cuDNN, NCCL, torch, C library or kernel version than\n"
          "    most of the fleet;\n"
          "  - the checks, workloads and microbenchmarks that differ between nodes (a\n"
          "    different status matters; a different observed value alone is listed).\n"
          "\n"
          "Far means both: a modified z-score 0.6745 (x - median) / MAD beyond 3.5\n"
          "(Iglewicz and Hoaglin, as in the NIST/SEMATECH e-Handbook of Statistical\n"
          "Methods, 1.3.5.17) and more than 10% from the median, so the few percent of\n"
          "noise of a healthy fleet is not flagged. With fewer than 3 nodes no such\n"
          "outlier is claimed; version and check differences are still listed.\n"
          "\n"
          "A DIR stands for its *.json reports and the report.json in each folder inside\n"
          "it. A node is named after its file (node07.json: node07) or, for a\n"
          "report.json, its folder (node07/report.json: node07); two nodes with one name\n"
          "are named by their paths.\n"
          "  --format F        text (default), markdown, html or json\n"
          "  --output FILE     write there (atomically) instead of standard output\n"
          "                    (FILE -: standard output, as without it)\n"
          "  --output-dir DIR  write fleet.json, fleet.md and fleet.html into DIR\n"
          "                    (created; all three or none), and the text on the terminal\n"
          "                    (an output place that cannot be written is refused before\n"
          "                    any report is read)\n"
          "\n"
          "Example, after a Slurm array ran `aitk-validate --output-dir runs/$HOSTNAME`:\n"
          "  aitk-validate fleet runs/ --output-dir fleet/\n"
          "\n"
          "Exit codes: 0 no node stands out, 1 an outlier, a version that differs or a\n"
          "check whose status differs between nodes, 2 bad usage or an unreadable or\n"
          "malformed report (named, with the place), 3 internal error or an output that\n"
          "could not be written.\n",
          stdout);
}

typedef enum fleet_format { FLEET_TEXT, FLEET_MARKDOWN, FLEET_HTML, FLEET_JSON } fleet_format;

typedef struct fleet_opts {
    fleet_format fmt;
    const char *output, *output_dir;
} fleet_opts;

static int parse_args(int argc, char **argv, fleet_opts *o, aitk_str *err)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"output-dir", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const char *const formats[] = {"text", "markdown", "html", "json"};
    optind = 1;
    opterr = 0;
    int c;
    bool given[sizeof opts / sizeof *opts] = {false};
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (aitk_opt_once(c, opts, given, NULL, NULL, err))
            return AITK_EXIT_USAGE;
        if (c == 'f') {
            size_t k = 0;
            while (k < 4 && strcmp(formats[k], optarg) != 0)
                k++;
            if (k == 4) {
                aitk_str_appendf(err, "--format: '%s' is not text, markdown, html or json",
                                 optarg);
                return AITK_EXIT_USAGE;
            }
            o->fmt = (fleet_format)k;
        } else if (c == 'o') {
            o->output = aitk_output_is_stdout(optarg) ? NULL : optarg; /* -: stdout */
        } else if (c == 'd') {
            o->output_dir = optarg;
        } else if (c == 'h') {
            fleet_help();
            return -1;
        } else {
            aitk_opt_error("fleet", c, argv[optind - 1], optopt, opts, err);
            return AITK_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        aitk_str_append(err, "name the node reports: report files or folders of them "
                             "(see fleet --help)");
        return AITK_EXIT_USAGE;
    }
    return AITK_EXIT_OK;
}

/* node07.json -> node07; node07/report.json -> node07. */
static char *node_name(const char *path)
{
    const char *base = aitk_path_base_name(path);
    aitk_str s = AITK_STR_INIT;
    if (strcmp(base, "report.json") == 0 && base > path) {
        const char *end = base - 1, *start = path;
        for (const char *p = path; p < end; p++)
            if (*p == '/' || *p == '\\')
                start = p + 1;
        aitk_str_appendn(&s, start, (size_t)(end - start));
    }
    if (!s.len) {
        size_t n = strlen(base);
        aitk_str_appendn(&s, base, n > 5 && strcmp(base + n - 5, ".json") == 0 ? n - 5 : n);
    }
    char *name = aitk_str_status(&s) ? NULL : aitk_strdup(aitk_str_cstr(&s));
    aitk_str_free(&s);
    return name;
}

typedef struct loaded {
    aitk_fleet_node *nodes;
    cJSON **trees;
    char **names;
    const char **paths; /* the inputs' paths, borrowed */
    size_t n;
} loaded;

static void loaded_free(loaded *l)
{
    for (size_t i = 0; i < l->n; i++) {
        cJSON_Delete(l->trees[i]);
        aitk_free(l->names[i]);
    }
    aitk_free(l->nodes);
    aitk_free(l->trees);
    aitk_free(l->names);
    aitk_free(l->paths);
    *l = (loaded){0};
}

/* Two nodes with one name (two racks' node01/report.json) are named by
 * their paths instead, so the table never shows one name twice. */
static void names_by_path(loaded *l)
{
    for (size_t i = 0; i < l->n; i++) {
        bool twice = false;
        for (size_t j = 0; j < l->n && !twice; j++)
            twice = j != i && strcmp(l->names[i], l->names[j]) == 0;
        if (twice)
            l->nodes[i].name = l->paths[i];
    }
}

/* Whether `text` is a fleet report: the error path only, so a node's
 * report is parsed once. */
static bool is_fleet_report(const char *text, size_t len)
{
    cJSON *t = cJSON_ParseWithLength(text, len);
    bool fleet = strcmp(aitk_field_str(t, "kind"), "aitk-validate fleet") == 0;
    cJSON_Delete(t);
    return fleet;
}

/* One report, parsed and checked as compare checks it, its path named in
 * any error. *tree stays NULL for a fleet report found in a folder (the
 * last run's --output-dir inside the nodes' folder): passed over, not read
 * as a node. */
static aitk_status load_one(const char *path, bool from_dir, cJSON **tree, aitk_str *err)
{
    char *text = NULL;
    size_t len = 0;
    aitk_str why = AITK_STR_INIT;
    aitk_status st = aitk_file_read(path, MAX_REPORT_BYTES, &text, &len, &why);
    if (!st && (st = aitk_report_parse(path, text, len, tree, &why)) == AITK_E_PARSE &&
        is_fleet_report(text, len)) {
        aitk_str_clear(&why);
        if (from_dir)
            st = AITK_OK;
        else
            aitk_str_appendf(&why, "%s: a fleet report, not a node's report", path);
    }
    aitk_free(text);
    if (!st && *tree)
        st = aitk_compare_check_report(*tree, path, &why);
    if (st) {
        cJSON_Delete(*tree);
        *tree = NULL;
        aitk_str_append(err, aitk_str_cstr(&why));
    }
    aitk_str_free(&why);
    return st;
}

static aitk_status load_all(loaded *l, const aitk_report_inputs *in, aitk_str *err)
{
    l->nodes = aitk_calloc(in->count, sizeof *l->nodes);
    l->trees = aitk_calloc(in->count, sizeof *l->trees);
    l->names = aitk_calloc(in->count, sizeof *l->names);
    l->paths = aitk_calloc(in->count, sizeof *l->paths);
    if (!l->nodes || !l->trees || !l->names || !l->paths)
        return AITK_E_NOMEM;
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < in->count; i++) {
        cJSON *tree = NULL;
        st = load_one(in->paths[i], in->in_folder[i], &tree, err);
        if (st || !tree)
            continue;
        l->trees[l->n] = tree;
        l->paths[l->n] = in->paths[i];
        if (!(l->names[l->n] = node_name(in->paths[i]))) {
            l->n++;
            return AITK_E_NOMEM;
        }
        l->nodes[l->n] = (aitk_fleet_node){l->names[l->n], tree};
        l->n++;
    }
    return st;
}

/* The inputs, folders expanded, each file once: a report named directly
 * and through its folder would be two nodes with one node's figures,
 * pulling the median towards them. */
static aitk_status gather(int argc, char **argv, aitk_report_inputs *in, aitk_str *err)
{
    aitk_status st = AITK_OK;
    for (int i = optind; !st && i < argc; i++)
        st = aitk_is_dir(argv[i]) ? aitk_report_inputs_expand(in, argv[i], err)
                                  : aitk_report_inputs_add(in, argv[i], err);
    if (!st)
        aitk_report_inputs_unique(in);
    return st;
}

/* fleet.json, fleet.md, fleet.html in `dir`: staged, then committed only
 * when all three are written, under the folder's lock. */
static aitk_status write_dir(const char *dir, const aitk_str texts[3], aitk_str *err)
{
    static const char *const names[] = {"fleet.json", "fleet.md", "fleet.html"};
    aitk_staged staged[3] = {{0}};
    aitk_dir_lock *lock = NULL;
    aitk_str path = AITK_STR_INIT;
    aitk_status st = aitk_dir_create(dir, err);
    if (!st)
        st = aitk_dir_lock_take(dir, &lock, err);
    for (int i = 0; !st && i < 3; i++) {
        aitk_str_clear(&path);
        st = aitk_path_join(&path, dir, names[i]);
        if (!st)
            st = aitk_file_stage(path.ptr, texts[i].ptr, texts[i].len, &staged[i], err);
    }
    for (int i = 0; !st && i < 3; i++)
        st = aitk_file_commit(&staged[i], err);
    for (int i = 0; i < 3; i++)
        aitk_file_discard(&staged[i]);
    aitk_dir_lock_release(lock);
    aitk_str_free(&path);
    return st;
}

static aitk_status render(const cJSON *fleet, fleet_format fmt, aitk_str *out)
{
    switch (fmt) {
    case FLEET_MARKDOWN:
        return aitk_fleet_render_markdown(fleet, out);
    case FLEET_HTML:
        return aitk_fleet_render_html(fleet, out);
    case FLEET_JSON:
        return aitk_report_to_json(fleet, out);
    default:
        return aitk_fleet_render_text(fleet, out);
    }
}

/* Writes what was asked; AITK_E_IO (exit 3) when a write fails. */
static aitk_status emit(const cJSON *fleet, const fleet_opts *o, aitk_str *err)
{
    aitk_str text = AITK_STR_INIT, files[3] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    aitk_status st = render(fleet, o->fmt, &text);
    if (!st && o->output_dir) {
        st = render(fleet, FLEET_JSON, &files[0]);
        if (!st)
            st = render(fleet, FLEET_MARKDOWN, &files[1]);
        if (!st)
            st = render(fleet, FLEET_HTML, &files[2]);
        if (!st && write_dir(o->output_dir, files, err))
            st = AITK_E_IO;
    }
    if (!st && o->output) {
        if (aitk_file_write_atomic(o->output, text.ptr, text.len, err))
            st = AITK_E_IO;
    } else if (!st) {
        aitk_fputs_printable(aitk_str_cstr(&text), stdout);
    }
    aitk_str_free(&text);
    for (int i = 0; i < 3; i++)
        aitk_str_free(&files[i]);
    return st;
}

/* Outputs checked before any report is read: a place that cannot be
 * written, or an output that is one of the reports, is bad usage (exit 2),
 * not a failure found after the work. The output folder is made here;
 * *made says so, for the caller to remove it again when it stays empty. */
static aitk_status outputs_ready(const fleet_opts *o, const aitk_report_inputs *in, bool *made,
                                 aitk_str *err)
{
    aitk_status st = o->output ? aitk_output_file_ready(o->output, err) : AITK_OK;
    const aitk_named_path out = {"--output", o->output};
    for (size_t i = 0; !st && o->output && i < in->count; i++) {
        const aitk_named_path p = {"fleet", in->paths[i]};
        st = aitk_outputs_distinct(&out, 1, &p, 1, err);
    }
    if (!st && o->output_dir) {
        *made = !aitk_is_dir(o->output_dir);
        st = aitk_dir_create(o->output_dir, err);
        if (!st)
            st = aitk_dir_check_writable(o->output_dir, err);
    }
    return st;
}

int aitk_cmd_fleet(int argc, char **argv)
{
    fleet_opts o = {.fmt = FLEET_TEXT};
    aitk_str err = AITK_STR_INIT;
    int rc = parse_args(argc, argv, &o, &err);
    if (rc < 0)
        return AITK_EXIT_OK;
    if (rc)
        return aitk_opt_usage_error("fleet", &err);
    aitk_report_inputs in = {.cmd = "fleet", .max = MAX_REPORTS};
    loaded l = {0};
    cJSON *fleet = NULL;
    bool made = false;
    aitk_status st = gather(argc, argv, &in, &err);
    if (!st)
        st = outputs_ready(&o, &in, &made, &err);
    if (!st)
        st = load_all(&l, &in, &err);
    if (!st && l.n == 0) {
        aitk_str_append(&err, "fleet: no node reports among the inputs (only fleet reports)");
        st = AITK_E_NOTFOUND;
    }
    if (!st) {
        names_by_path(&l);
        st = aitk_fleet_merge(l.nodes, l.n, &fleet, &err);
    }
    if (st) {
        /* Input errors carry their message (exit 2); anything without one
         * is ours (out of memory, or a bug): exit 3. */
        bool input = err.len && st != AITK_E_NOMEM;
        aitk_log(AITK_LOG_ERROR, "%s", input ? aitk_str_cstr(&err) : aitk_strerror(st));
        rc = input ? AITK_EXIT_USAGE : AITK_EXIT_INTERNAL;
        /* A refused run leaves nothing behind, not even the folder. */
        if (made)
            aitk_dir_remove_empty(o.output_dir);
    } else if ((st = emit(fleet, &o, &err))) {
        aitk_log(AITK_LOG_ERROR, "%s", err.len ? aitk_str_cstr(&err) : aitk_strerror(st));
        rc = AITK_EXIT_INTERNAL;
    } else {
        rc = aitk_fleet_exit_code(fleet) ? AITK_EXIT_FAILED : AITK_EXIT_OK;
    }
    cJSON_Delete(fleet);
    loaded_free(&l);
    aitk_report_inputs_free(&in);
    aitk_str_free(&err);
    return rc;
}
