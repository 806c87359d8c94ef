/* Command-line contract of `aitk-validate` (the validate command).
 * Parsing only: no probing, no files. Errors are one line, exit code 2. */
#ifndef AITK_VALIDATE_CLI_H
#define AITK_VALIDATE_CLI_H

#include <stdbool.h>

#include "common/status.h"
#include "common/str.h"
#include "validate/engine.h"

enum {
    AITK_EXIT_OK = 0,       /* no check failed */
    AITK_EXIT_FAILED = 1,   /* a check failed (or warned under --strict) */
    AITK_EXIT_USAGE = 2,    /* bad usage or bad input */
    AITK_EXIT_INTERNAL = 3, /* internal error */
};

typedef struct aitk_options {
    aitk_level level;
    const char *models;        /* --model a,b */
    long steps;                /* --steps N (0: workload default) */
    bool cpu;                  /* --cpu */
    const char *output_dir;    /* --output-dir */
    const char *json_path;     /* --json */
    const char *markdown_path; /* --markdown */
    const char *html_path;     /* --html */
    const char *junit_path;    /* --junit */
    const char *support_bundle; /* --support-bundle DIR: redacted md/html/json */
    bool redact;               /* --redact: every output redacted */
    const char *profile;       /* --profile (NULL: the matrix's default) */
    const char *python;        /* --python PATH */
    const char *aitk_dir;      /* --aitk-dir DIR */
    const char *config;        /* --config FILE (an ai-toolkit training config) */
    bool mpi;                  /* --mpi: one rank of an MPI launch (validate/mpi_run.h) */
    bool strict;
    bool no_color;
    int verbosity;             /* -1 quiet, 0 normal, 1 verbose */
    bool help, version;
} aitk_options;

/* Parses argv (argv[0] is the program). On bad usage returns AITK_E_INVAL
 * with a one-line reason in err. */
aitk_status aitk_cli_parse(int argc, char **argv, aitk_options *o, aitk_str *err);

void aitk_cli_print_help(void);

#endif
