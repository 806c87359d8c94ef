/* getopt_long parsing for the validate command, and its --help text. */
#include "validate/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cliopt.h"
#include "validate/probes/workloads.h"

/* Every option loop ends bad usage through aitk_opt_usage_error: one exit code. */
_Static_assert((int)AITK_OPT_EXIT_USAGE == (int)AITK_EXIT_USAGE,
               "common/cliopt.h and validate/cli.h disagree on the usage exit code");

enum { OPT_NO_COLOR = 256, OPT_STRICT, OPT_JSON, OPT_MARKDOWN, OPT_PROFILE, OPT_CPU, OPT_STEPS,
       OPT_PYTHON, OPT_AITK_DIR, OPT_HTML, OPT_JUNIT, OPT_REDACT, OPT_BUNDLE, OPT_CONFIG,
       OPT_STANDARD, OPT_MPI };

static const struct option long_opts[] = {
    {"quick", no_argument, NULL, 'q'},
    {"full", no_argument, NULL, 'f'},
    {"standard", no_argument, NULL, OPT_STANDARD},
    {"model", required_argument, NULL, 'm'},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"cpu", no_argument, NULL, OPT_CPU},
    {"output-dir", required_argument, NULL, 'o'},
    {"json", required_argument, NULL, OPT_JSON},
    {"markdown", required_argument, NULL, OPT_MARKDOWN},
    {"html", required_argument, NULL, OPT_HTML},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"redact", no_argument, NULL, OPT_REDACT},
    {"support-bundle", required_argument, NULL, OPT_BUNDLE},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"python", required_argument, NULL, OPT_PYTHON},
    {"aitk-dir", required_argument, NULL, OPT_AITK_DIR},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"mpi", no_argument, NULL, OPT_MPI},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"no-color", no_argument, NULL, OPT_NO_COLOR},
    {"quiet", no_argument, NULL, 'Q'},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

void aitk_cli_print_help(void)
{
    fputs(
        "Usage: aitk-validate [OPTIONS]\n"
        "       aitk-validate COMMAND [ARGS]   (COMMAND: deps, predict, compare, trend,\n"
        "                                       fleet, render, gpus)\n"
        "\n"
        "Tells whether this machine can train FLUX, Chroma and OmniGen2 LoRAs with\n"
        "ai-toolkit, how fast and in how much memory, and what to fix when it cannot.\n"
        "\n"
        "Depth (pick one; the default is --standard):\n"
        "  --quick             environment checks only: no workload, no CUDA library\n"
        "                      loaded; seconds\n"
        "  --standard          + CUDA libraries loaded, import torch, microbenchmarks,\n"
        "                      short workloads; minutes\n"
        "  --full              everything, including the 1000-step reference workloads\n"
        "\n"
        "What to run:\n"
        "  -m, --model LIST    workloads, comma-separated: flux1-dev, chroma, omnigen2\n"
        "                      (default: all three)\n"
        "      --steps N       timed training steps per workload after its warm-up,\n"
        "                      rounded up to whole passes over its resolution buckets;\n"
        "                      with --full, all steps run, warm-up included (1..10000000)\n"
        "      --cpu           use the CPU backend even when a GPU answers\n"
        "      --profile NAME  compatibility profile: ai-toolkit-current (default),\n"
        "                      seed-guide (the original troubleshooting guide)\n"
        "      --strict        warnings count as failures (exit 1)\n"
        "      --python PATH   the Python interpreter (or environment folder) ai-toolkit\n"
        "                      runs in (default: $VIRTUAL_ENV, $CONDA_PREFIX, the\n"
        "                      --aitk-dir venv, ./.venv, ./venv, ./python_embeded of\n"
        "                      AI-Toolkit-Easy-Install, conda's base when it is only\n"
        "                      active by default, python3 on PATH)\n"
        "      --aitk-dir DIR  an ai-toolkit checkout (default: the current folder when\n"
        "                      it is one); its .venv/ or venv/ (and python_embeded\n"
        "                      beside it) is searched in --python's order, after an\n"
        "                      active environment, before ./.venv and ./venv; its\n"
        "                      requirements files are read, and beyond --quick its\n"
        "                      start-up imports are run in the environment judged\n"
        "      --config FILE   run the workload of an ai-toolkit training config (its\n"
        "                      model, rank, alpha, batch, optimizer, quantize, checkpointing)\n"
        "\n"
        "Many machines:\n"
        "      --mpi           under mpirun or srun: every rank validates its own node and\n"
        "                      GPU (chosen by local rank); rank 0 writes each node's\n"
        "                      report and the fleet report into --output-dir\n"
        "\n"
        "Output:\n"
        "  -o, --output-dir DIR  write report.json, report.md, report.html and junit.xml\n"
        "                        into DIR (created)\n"
        "      --json FILE       write the JSON report to FILE\n"
        "      --markdown FILE   write the Markdown summary to FILE\n"
        "      --html FILE       write the HTML page (charts, every check) to FILE\n"
        "      --junit FILE      write JUnit XML (one test case per check) to FILE\n"
        "                        (FILE -: standard output, for one of these four at\n"
        "                        most; the summary then goes to stderr)\n"
        "      --redact          replace user and host names, home paths, IP and MAC\n"
        "                        addresses, GPU serials and UUIDs, tokens and keys in\n"
        "                        every output (the same value, the same placeholder)\n"
        "      --support-bundle DIR  write a redacted report.md (an issue body),\n"
        "                        report.html and report.json into DIR\n"
        "      --no-color        no colours (also: NO_COLOR=1, or not a terminal)\n"
        "  -Q, --quiet           print nothing but errors\n"
        "  -v, --verbose         print each check as it is made\n"
        "  -V, --version         print the version and exit\n"
        "  -h, --help            print this help and exit\n"
        "\n"
        "Commands (each has --help):\n"
        "  render REPORT.json [--markdown F] [--html F] [--junit F] [--redact]\n"
        "                                         re-render a saved report\n"
        "  compare BASE.json NEW.json [--threshold 5%] [--format text|markdown|html]\n"
        "                                         per-metric deltas; exit 1 on a regression\n"
        "  trend REPORT|FOLDER... [--format text|markdown|csv|html]\n"
        "                                         metrics over nightly runs, with charts\n"
        "  fleet REPORT...|DIR [--format text|markdown|html|json] [--output-dir DIR]\n"
        "                                         many nodes' reports: outliers, differences\n"
        "  deps PATH... [--windows-root DIR] [--json] [--load]\n"
        "                                         the broken link in a library tree, and its fix\n"
        "  predict --model M --gpu NAME [--explain]\n"
        "                                         time and memory on GPUs you do not have\n"
        "  gpus [--sources] [--json]              the GPU database predictions use\n"
        "\n"
        "Exit codes:\n"
        "  0  no check failed     1  a check failed (or warned under --strict)\n"
        "  2  bad usage or input  3  internal error, or an output not written\n"
        "\n"
        "Examples:\n"
        "  aitk-validate --config my_flux_lora.yaml  # the job you mean to run\n"
        "  aitk-validate --quick                     # is this machine set up at all?\n"
        "  aitk-validate --full --output-dir out/    # the whole run, reports in out/\n"
        "  aitk-validate --model flux1-dev --steps 50 --json flux.json\n"
        "  aitk-validate --quick --json - | jq .summary.verdict   # report on stdout\n"
        "  aitk-validate --quick --profile seed-guide --markdown issue.md\n"
        "  aitk-validate render out/report.json --markdown issue.md\n"
        "  aitk-validate --quick --support-bundle bundle/   # safe to attach to an issue\n"
        "  aitk-validate compare nightly/base.json out/report.json --threshold 5%\n"
        "  aitk-validate trend nightly/ --format html --output trend.html\n",
        stdout);
}

static aitk_status check_models(const char *list, aitk_str *err)
{
    if (!*list) {
        aitk_str_append(err, "--model: empty list (known: flux1-dev, chroma, omnigen2)");
        return AITK_E_INVAL;
    }
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        int known = 0;
        for (const char *const *m = aitk_reference_models; *m && !known; m++)
            known = strlen(*m) == len && strncmp(*m, p, len) == 0;
        if (!known) {
            aitk_str_appendf(err, "--model: unknown model '%.*s' (known: flux1-dev, chroma, omnigen2)",
                             (int)len, p);
            return AITK_E_INVAL;
        }
        /* A model named twice would run twice under one check id and one
         * workload name, which compare then cannot pair. */
        for (const char *q = list; q < p; q += strcspn(q, ",") + 1)
            if (strcspn(q, ",") == len && strncmp(q, p, len) == 0) {
                aitk_str_appendf(err, "--model: '%.*s' is named twice", (int)len, p);
                return AITK_E_INVAL;
            }
        p += len;
        if (*p == ',')
            p++;
    }
    return AITK_OK;
}

aitk_status aitk_cli_parse(int argc, char **argv, aitk_options *o, aitk_str *err)
{
    memset(o, 0, sizeof *o);
    o->level = AITK_LEVEL_STANDARD;
    int quick = 0, full = 0, standard = 0, quiet = 0, verbose = 0;
    /* An option that takes one value, given twice, would silently lose the
     * first (the first --json's file never written): refused instead. */
    bool given[sizeof long_opts / sizeof *long_opts] = {false};
    static const int lists[] = {'m', 0};
    optind = 1;
    opterr = 0; /* we print our own one-line errors */
    int c;
    while ((c = getopt_long(argc, argv, ":qfm:o:QvVh", long_opts, NULL)) != -1) {
        if (aitk_opt_once(c, long_opts, given, NULL, lists, err))
            return AITK_E_INVAL;
        switch (c) {
        case 'q': quick = 1; break;
        case 'f': full = 1; break;
        case OPT_STANDARD: standard = 1; break;
        case 'm':
            if (check_models(optarg, err))
                return AITK_E_INVAL;
            o->models = optarg;
            break;
        case OPT_STEPS:
            if (aitk_opt_long("--steps", optarg, 1, 10000000, &o->steps, err))
                return AITK_E_INVAL;
            break;
        case OPT_CPU: o->cpu = true; break;
        case 'o': o->output_dir = optarg; break;
        case OPT_JSON: o->json_path = optarg; break;
        case OPT_MARKDOWN: o->markdown_path = optarg; break;
        case OPT_HTML: o->html_path = optarg; break;
        case OPT_JUNIT: o->junit_path = optarg; break;
        case OPT_REDACT: o->redact = true; break;
        case OPT_BUNDLE: o->support_bundle = optarg; break;
        case OPT_PROFILE: o->profile = optarg; break;
        case OPT_PYTHON:
            if (!*optarg) {
                aitk_str_append(err, "--python: empty path");
                return AITK_E_INVAL;
            }
            o->python = optarg;
            break;
        case OPT_AITK_DIR:
            if (!*optarg) {
                aitk_str_append(err, "--aitk-dir: empty folder name");
                return AITK_E_INVAL;
            }
            o->aitk_dir = optarg;
            break;
        case OPT_CONFIG:
            if (!*optarg) {
                aitk_str_append(err, "--config: empty file name");
                return AITK_E_INVAL;
            }
            o->config = optarg;
            break;
        case OPT_MPI: o->mpi = true; break;
        case OPT_STRICT: o->strict = true; break;
        case OPT_NO_COLOR: o->no_color = true; break;
        case 'Q': quiet = 1; o->verbosity = -1; break;
        case 'v': verbose = 1; o->verbosity = 1; break;
        case 'V': o->version = true; break;
        case 'h': o->help = true; break;
        default: aitk_opt_error(NULL, c, argv[optind - 1], optopt, long_opts, err); return AITK_E_INVAL;
        }
    }
    if (quiet && verbose) {
        aitk_str_append(err, "--quiet and --verbose cannot be combined: pick one");
        return AITK_E_INVAL;
    }
    if (optind < argc) {
        aitk_str_appendf(err, "unexpected argument '%s' (commands go first: aitk-validate "
                              "COMMAND ...; see --help)", argv[optind]);
        return AITK_E_INVAL;
    }
    if (quick + full + standard > 1) {
        aitk_str_appendf(err, "%s cannot be combined: pick one depth",
                         quick && full ? "--quick and --full"
                         : quick       ? "--quick and --standard"
                                       : "--standard and --full");
        return AITK_E_INVAL;
    }
    if (o->output_dir && !*o->output_dir) {
        aitk_str_append(err, "--output-dir: empty folder name");
        return AITK_E_INVAL;
    }
    if (o->support_bundle && !*o->support_bundle) {
        aitk_str_append(err, "--support-bundle: empty folder name");
        return AITK_E_INVAL;
    }
    o->level = quick ? AITK_LEVEL_QUICK : full ? AITK_LEVEL_FULL : AITK_LEVEL_STANDARD;
    return AITK_OK;
}
