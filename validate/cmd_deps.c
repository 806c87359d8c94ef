/* `aitk-validate deps PATH... [options]`: the library dependency doctor.
 *
 * Static by default: reading a file never runs its code. --load adds the
 * native loader's own verdict (dlopen / LoadLibraryExW), which runs library
 * constructors, so it is only done when asked, and never in this process:
 * a constructor may abort, fault, hang or end the process with status 0,
 * and the tool must still say so rather than die or report success. Each
 * file is loaded by a copy of this program (the hidden LOAD_CHILD option)
 * under a time limit, and how that copy ended is the verdict. Compiled into
 * aitk_libdeps (see validate/libdeps/CMakeLists.txt). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _WIN32
#include <windows.h>
#endif

#include "common/alloc.h"
#include "common/cliopt.h"
#include "common/dynload.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/selfpath.h"
#include "reports/report.h"
#include "validate/cli.h"
#include "validate/commands.h"
#include "validate/libdeps/render.h"
#include "validate/libdeps/render_md.h"
#include "validate/libdeps/tree.h"

static void deps_help(void)
{
    fputs("Usage: aitk-validate deps PATH... [options]\n"
          "\n"
          "Finds the broken link in the dependency tree of each ELF (.so) or PE (.dll)\n"
          "file: the chain to it, the folders the loader searched in order, and the fix.\n"
          "  --windows-root DIR   a folder holding Windows/System32 (PE trees examined\n"
          "                       from another system); without it, on Windows this\n"
          "                       system's own folders, elsewhere a built-in list of\n"
          "                       the DLLs every Windows 10+ install has\n"
          "  --dll-dir DIR        an add_dll_directory folder (repeatable; default: the\n"
          "                       folders torch adds, derived from the DLL's location)\n"
          "  --legacy             emulate torch's fallback (LoadLibraryW, PATH searched)\n"
          "  --path DIR           a PATH folder for --legacy (repeatable)\n"
          "  --app-dir DIR        the application (python.exe) folder; default: read\n"
          "                       from torch's environment (pyvenv.cfg home, or the\n"
          "                       environment itself), where python3XY.dll is\n"
          "  --depth N            stop expanding below depth N\n"
          "  --all                print every link, not only the broken ones\n"
          "  --json               print JSON instead of text\n"
          "  --markdown FILE      also write the findings as Markdown, for a support\n"
          "                       issue (`render` turns a saved --json into the same);\n"
          "                       FILE -: standard output, the text then goes to stderr\n"
          "  --load               also load each file with the native loader and show its\n"
          "                       own error text (runs library constructors, in a\n"
          "                       separate process); a refusal or crash is a problem\n"
          "  --load-timeout S     give up on a --load after S seconds (default 30)\n"
          "\n"
          "\n"
          "Every PATH is read once, before anything is printed: a PATH that is\n"
          "missing, unreadable or not a regular file stops the run (exit 2, nothing\n"
          "printed). An ELF or PE file that is damaged, whatever byte, is the broken\n"
          "link, as a damaged dependency is: a problem (exit 1), UNREADABLE when cut\n"
          "short (shorter than plausible headers describe), CORRUPT when a header\n"
          "holds what no tool writes or points past the end of a file otherwise\n"
          "whole, REFUSED BY THE LOADER when ld.so will not load it as it is.\n"
          "A GNU ld script (such as libc.so) or an ar\n"
          "archive is listed as skipped, as is any other file that is no library and\n"
          "not named like one (README.txt); neither changes the exit code, unless\n"
          "every PATH is skipped (exit 2). A file named like a library (.so, .so.N,\n"
          ".dll, .pyd) that is none (empty, text, a Git LFS pointer) is a problem.\n"
          "A DLL in none of the folders examined is \"unknown\", not missing, when the\n"
          "folder that would hold it was not given: System32 (--windows-root, from\n"
          "another system) or python.exe's (--app-dir, for python3XY.dll); unknown\n"
          "links are listed with the fix that applies if they are missing and do not\n"
          "change the exit code.\n"
          "\n"
          "Exit codes: 0 nothing missing, 1 a library is missing or unusable,\n"
          "2 bad usage or an unreadable PATH, 3 internal error or an output that could\n"
          "not be written.\n",
          stdout);
}

/* `aitk-validate deps --load-child PATH`: this program as the loading
 * process of --load. Not in --help: it is how the tool calls itself. */
#define LOAD_CHILD "--load-child"
/* The child's last line. Library constructors may print anything; they do
 * not print this, so its absence means the process ended inside the loader. */
#define VERDICT_MARK "aitk-deps-load-verdict: "
enum { CHILD_LOADED = 0, CHILD_REFUSED = 1 };
#define LOAD_TIMEOUT_MS_DEFAULT 30000L

typedef struct deps_args {
    aitk_deps_opts opts;
    aitk_str native_root; /* on Windows, when --windows-root is not given */
    bool all, json, load;
    const char *markdown; /* --markdown FILE, or NULL */
    long load_timeout_ms;
} deps_args;

/* --markdown FILE: checked before any work (bad usage, exit 2), written
 * after it (a failed write is exit 3); render_md.c does both. */
static int deps_markdown_ready(const char *md, char **inputs, int n)
{
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_deps_markdown_ready(md, inputs, (size_t)n, &err);
    if (st)
        aitk_log(AITK_LOG_ERROR, "deps: %s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    return st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : st ? AITK_EXIT_USAGE : AITK_EXIT_OK;
}

static int deps_markdown_write(const cJSON *doc, const char *md)
{
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_deps_markdown_write(doc, md, &err);
    if (st)
        aitk_log(AITK_LOG_ERROR, "deps: --markdown: %s",
                 err.len ? aitk_str_cstr(&err) : aitk_strerror(st));
    aitk_str_free(&err);
    return st ? AITK_EXIT_INTERNAL : AITK_EXIT_OK;
}

static int parse_args(int argc, char **argv, deps_args *a)
{
    static const struct option opts[] = {
        {"windows-root", required_argument, NULL, 'w'}, {"dll-dir", required_argument, NULL, 'D'},
        {"legacy", no_argument, NULL, 'L'},             {"path", required_argument, NULL, 'P'},
        {"app-dir", required_argument, NULL, 'A'},      {"depth", required_argument, NULL, 'd'},
        {"all", no_argument, NULL, 'a'},                {"json", no_argument, NULL, 'j'},
        {"load", no_argument, NULL, 'l'},               {"help", no_argument, NULL, 'h'},
        {"load-timeout", required_argument, NULL, 'T'}, {"markdown", required_argument, NULL, 'M'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    a->load_timeout_ms = LOAD_TIMEOUT_MS_DEFAULT;
    int c;
    bool given[sizeof opts / sizeof *opts] = {false};
    static const int repeatable[] = {'D', 'P', 0};
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        aitk_status st = AITK_OK;
        aitk_str err = AITK_STR_INIT;
        long n = 0;
        if (aitk_opt_once(c, opts, given, repeatable, NULL, &err))
            return aitk_opt_usage_error("deps", &err);
        switch (c) {
        case 'w': a->opts.windows_root = optarg; break;
        case 'D': st = aitk_strlist_add(&a->opts.dll_dirs, optarg); break;
        case 'L': a->opts.win_mode = AITK_WIN_LEGACY; break;
        case 'P': st = aitk_strlist_add(&a->opts.win_path, optarg); break;
        case 'A': a->opts.app_dir = optarg; break;
        case 'a': a->all = true; break;
        case 'j': a->json = true; break;
        case 'l': a->load = true; break;
        case 'M': a->markdown = optarg; break;
        case 'd':
            if (aitk_opt_long("--depth", optarg, 1, 1000, &n, &err))
                return aitk_opt_usage_error("deps", &err);
            a->opts.max_depth = (unsigned)n;
            break;
        case 'T':
            if (aitk_opt_long("--load-timeout", optarg, 1, 3600, &n, &err))
                return aitk_opt_usage_error("deps", &err);
            a->load_timeout_ms = n * 1000;
            break;
        case 'h': deps_help(); return -1;
        default:
            aitk_opt_error("deps", c, argv[optind - 1], optopt, opts, &err);
            return aitk_opt_usage_error("deps", &err);
        }
        if (st)
            return AITK_EXIT_INTERNAL;
    }
    /* On Windows the system's own folders are the default; elsewhere PE trees
     * are resolved against the built-in list unless --windows-root says where. */
    if (!a->opts.windows_root && aitk_deps_native_windows_root(&a->native_root) == AITK_OK)
        a->opts.windows_root = a->native_root.ptr;
    const char *dirs[] = {a->opts.windows_root, a->opts.app_dir};
    for (size_t i = 0; i < 2; i++) {
        struct stat sb;
        if (dirs[i] && (stat(dirs[i], &sb) != 0 || !S_ISDIR(sb.st_mode))) {
            aitk_log(AITK_LOG_ERROR, "deps: %s: not a folder", dirs[i]);
            return AITK_EXIT_USAGE;
        }
    }
    /* os.add_dll_directory refuses a missing folder, so does this; a PATH
     * entry may be missing (PATH often names such folders), but --path
     * without --legacy would be ignored, which reads as "searched". */
    for (size_t i = 0; i < a->opts.dll_dirs.count; i++) {
        struct stat sb;
        if (stat(a->opts.dll_dirs.items[i], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            aitk_log(AITK_LOG_ERROR, "deps: --dll-dir %s: not a folder", a->opts.dll_dirs.items[i]);
            return AITK_EXIT_USAGE;
        }
    }
    if (a->opts.win_path.count && a->opts.win_mode != AITK_WIN_LEGACY) {
        aitk_log(AITK_LOG_ERROR, "deps: --path only applies with --legacy (torch's PATH fallback)");
        return AITK_EXIT_USAGE;
    }
    if (optind >= argc) {
        aitk_log(AITK_LOG_ERROR, "deps: give at least one library or DLL (see deps --help)");
        return AITK_EXIT_USAGE;
    }
    if (a->json && aitk_output_is_stdout(a->markdown)) {
        aitk_log(AITK_LOG_ERROR, "deps: --json and --markdown - both ask for standard output: "
                                 "only one output can go there; give --markdown a file name");
        return AITK_EXIT_USAGE;
    }
    return a->markdown ? deps_markdown_ready(a->markdown, argv + optind, argc - optind)
                       : AITK_EXIT_OK;
}

/* The child side: load one file, print the loader's verdict, and end at
 * once. _Exit skips the library's destructors and our own exit handlers:
 * the question was whether it loads, and the answer is already out. */
static int load_child(const char *path)
{
#ifdef _WIN32
    /* No "missing DLL" or crash dialog: nobody would see it, the parent would
     * wait for the time limit. */
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
#endif
    aitk_str err = AITK_STR_INIT;
    aitk_dl *dl = NULL;
    aitk_status st = aitk_dl_open(path, AITK_DL_DEFAULT, &dl, &err);
    /* On a fresh line: a constructor may have left one unfinished. */
    printf("\n" VERDICT_MARK "%s\n", st ? aitk_str_cstr(&err) : "loaded");
    fflush(stdout);
    _Exit(st ? CHILD_REFUSED : CHILD_LOADED);
}

/* The text after the last verdict mark in the child's output, up to the end
 * of that line; false when there is none. */
static bool child_verdict(const aitk_str *out, aitk_str *verdict)
{
    const char *last = NULL, *text = aitk_str_cstr(out);
    for (const char *p = text; (p = strstr(p, VERDICT_MARK)); p++)
        last = p;
    if (!last)
        return false;
    last += strlen(VERDICT_MARK);
    aitk_str_appendn(verdict, last, strcspn(last, "\r\n"));
    return true;
}

#ifndef _WIN32
static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGSEGV: return "SIGSEGV";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGPIPE: return "SIGPIPE";
    default: return "a signal";
    }
}
#endif

/* The last non-empty line of the child's error output: an AddressSanitizer
 * or loader message often says what happened. */
static void append_last_line(aitk_str *to, const aitk_str *errout)
{
    const char *text = aitk_str_cstr(errout);
    size_t end = errout->len;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    if (end > start)
        aitk_str_appendf(to, "; its last error output: %.*s", (int)(end - start), text + start);
}

/* How the child ended, as the file's verdict; *failed unless it loaded. */
static void describe_child(aitk_status st, const aitk_proc_result *r, const aitk_str *out,
                           const aitk_str *errout, const char *shown, long timeout_ms,
                           aitk_str *verdict, bool *failed)
{
    *failed = true;
    if (st == AITK_E_TIMEOUT) {
        aitk_str_appendf(verdict, "the loader did not finish within %ld s while loading %s (a "
                                  "library constructor that waits or loops?); it was stopped",
                         timeout_ms / 1000, shown);
        return;
    }
#ifndef _WIN32
    if (r->term_signal) {
        aitk_str_appendf(verdict, "the loader crashed the process: signal %d (%s) while loading %s",
                         r->term_signal, signal_name(r->term_signal), shown);
        return;
    }
#else
    if ((unsigned)r->exit_code >= 0xC0000000u) { /* an NTSTATUS: an unhandled exception */
        aitk_str_appendf(verdict, "the loader crashed the process: exception 0x%08X while "
                                  "loading %s", (unsigned)r->exit_code, shown);
        return;
    }
#endif
    aitk_str said = AITK_STR_INIT;
    bool marked = child_verdict(out, &said);
    if (marked && r->exit_code == CHILD_LOADED && strcmp(aitk_str_cstr(&said), "loaded") == 0)
        *failed = false;
    if (marked && (r->exit_code == CHILD_REFUSED || !*failed)) {
        aitk_str_append(verdict, aitk_str_cstr(&said)); /* the loader's own words */
    } else {
        aitk_str_appendf(verdict, "the process loading %s ended inside the loader with exit "
                                  "status %d and no verdict (a library constructor that calls "
                                  "exit?)", shown, r->exit_code);
        append_last_line(verdict, errout);
    }
    aitk_str_free(&said);
}

/* The native loader's verdict on `path` (shown to the user as `shown`),
 * for files this OS can load, into t->load / t->load_failed. AITK_E_EXEC
 * (err says why) when the loading process could not be started. */
static aitk_status load_verdict(const char *self, long timeout_ms, const char *path,
                                const char *shown, aitk_dep_tree *t, aitk_str *err)
{
    /* A file named like this OS's libraries that is none is refused by its
     * loader: its words are what the user met. One named like the other
     * OS's (a pointer fbgemm.dll examined on Linux) is not, since ld.so's
     * "invalid ELF header" is not what a Windows user saw. */
    size_t len = strlen(path);
    bool dll_name = len > 4 && (strcasecmp(path + len - 4, ".dll") == 0 ||
                                strcasecmp(path + len - 4, ".pyd") == 0);
#ifdef _WIN32
    bool native = t->not_library ? dll_name : t->format == AITK_DEP_PE;
#else
    bool native = t->not_library ? !dll_name : t->format == AITK_DEP_ELF;
#endif
    aitk_str verdict = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    if (!native) {
        aitk_str_append(&verdict, "not loadable on this OS");
    } else {
        const char *argv[] = {self, "deps", LOAD_CHILD, path, NULL};
        aitk_proc_result r = {0};
        aitk_str out = AITK_STR_INIT, errout = AITK_STR_INIT;
        /* The verdict is the loading process's: a helper a library's
         * constructor forks must neither hold it back (keeping the pipes
         * open) nor outlive the tool. */
        const aitk_proc_opts po = {
            .timeout_ms = timeout_ms, .max_output = 64u << 10, .end_with_child = true};
        st = aitk_proc_run(argv, &po, &r, &out, &errout, err);
        if (st == AITK_OK || st == AITK_E_TIMEOUT) {
            describe_child(st, &r, &out, &errout, shown, timeout_ms, &verdict, &t->load_failed);
            st = AITK_OK;
        }
        aitk_str_free(&out);
        aitk_str_free(&errout);
    }
    if (!st && !(t->load = aitk_str_steal(&verdict)))
        st = AITK_E_NOMEM;
    aitk_str_free(&verdict);
    return st;
}

/* What every root of one run shares. */
typedef struct deps_run {
    const deps_args *a;
    aitk_deps *d;
    aitk_remedies *rem;
    cJSON *roots, *skipped; /* NULL without --json */
    const char *self;       /* this program, for --load */
    FILE *text;             /* the text: stdout, or stderr when the Markdown goes there */
} deps_run;

/* One PATH: its tree once read, or why it was passed over. */
typedef struct deps_input {
    const char *path;
    aitk_dep_other skip; /* skipped, not a library: what it is instead; else NONE */
    aitk_dep_tree t;
    bool read;           /* t holds a root (and, once walked, its tree) to free */
} deps_input;

/* Before anything is written: the PATH's one read (aitk_deps_read_root).
 * A PATH that is missing, unreadable, a folder or a device stops the run
 * (exit 2, one line on stderr). One that is not a library is noted as
 * skipped, or, named like a library, kept as a broken one: libdeps' one
 * rule (aitk_deps_not_library_is_problem) decides. */
static int read_input(const deps_run *run, deps_input *in)
{
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_deps_read_root(run->d, in->path, &in->t, &err);
    int rc = AITK_EXIT_OK;
    if (st == AITK_E_UNSUPPORTED && in->t.not_library) {
        in->skip = in->t.not_library;
    } else if (st == AITK_E_NOMEM) {
        rc = AITK_EXIT_INTERNAL;
    } else if (st) {
        aitk_log(AITK_LOG_ERROR, "deps: %s", aitk_str_cstr(&err));
        rc = AITK_EXIT_USAGE;
    } else {
        in->read = true;
    }
    aitk_str_free(&err);
    return rc;
}

/* The static walk from a root read above, output-free. A damaged library
 * is a finding (libdeps makes it the root's problem); what is left here is
 * a file this build cannot read at all (an ELF file in the Windows build). */
static int walk_input(const deps_run *run, deps_input *in)
{
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_deps_walk(run->d, &in->t, &err);
    int rc = AITK_EXIT_OK;
    if (st)
        in->read = false; /* the walk freed the tree */
    if (st == AITK_E_NOMEM) {
        rc = AITK_EXIT_INTERNAL;
    } else if (st) {
        aitk_log(AITK_LOG_ERROR, "deps: %s", aitk_str_cstr(&err));
        rc = AITK_EXIT_USAGE;
    }
    aitk_str_free(&err);
    return rc;
}

static int render_one(const deps_run *run, const aitk_dep_tree *t)
{
    if (run->roots) { /* --json, or --markdown, which is drawn from the JSON */
        cJSON *j = NULL;
        if (aitk_deps_render_json(t, run->rem, &j))
            return AITK_EXIT_INTERNAL;
        cJSON_AddItemToArray(run->roots, j);
    }
    if (run->a->json)
        return AITK_EXIT_OK;
    aitk_str text = AITK_STR_INIT;
    int rc = aitk_deps_render_text(t, run->rem, run->a->all, &text) ? AITK_EXIT_INTERNAL
                                                                     : AITK_EXIT_OK;
    fputs(aitk_str_cstr(&text), run->text);
    aitk_str_free(&text);
    return rc;
}

/* One input, after all were read: a skip note, or the loader's verdict when
 * asked and the report. Returns this input's exit code. */
static int deps_one(const deps_run *run, deps_input *in)
{
    if (in->skip) {
        if (run->skipped) {
            cJSON *s = cJSON_CreateObject();
            cJSON_AddStringToObject(s, "path", in->path);
            cJSON_AddStringToObject(s, "reason", aitk_dep_other_text(in->skip));
            cJSON_AddStringToObject(s, "kind", aitk_dep_other_name(in->skip));
            cJSON_AddItemToArray(run->skipped, s);
        }
        if (!run->a->json) {
            aitk_str line = AITK_STR_INIT;
            aitk_deps_text_escape(&line, in->path);
            fprintf(run->text, "%s: skipped, not a shared library: %s\n",
                    aitk_str_cstr(&line), aitk_dep_other_text(in->skip));
            aitk_str_free(&line);
        }
        return AITK_EXIT_OK;
    }
    aitk_dep_tree *t = &in->t;
    aitk_str err = AITK_STR_INIT;
    int rc = AITK_EXIT_OK;
#ifdef _WIN32
    const char *load_path = in->path; /* LoadLibraryExW wants its own separators */
#else
    const char *load_path = t->nodes[0].path; /* dlopen searches for a name without a slash */
#endif
    if (run->a->load &&
        load_verdict(run->self, run->a->load_timeout_ms, load_path, in->path, t, &err)) {
        aitk_log(AITK_LOG_ERROR, "deps: --load: %s", aitk_str_cstr(&err));
        rc = AITK_EXIT_INTERNAL;
    }
    if (!rc)
        rc = render_one(run, t);
    if (!rc && aitk_dep_tree_problems(t) > 0)
        rc = AITK_EXIT_FAILED;
    aitk_str_free(&err);
    return rc;
}

/* Reads every input before writing anything, so that exit 2 (a missing or
 * unreadable PATH) writes nothing to stdout: first
 * each PATH's one read, then the walks. Inputs skipped as no library do
 * not change the exit code, unless every input is skipped: then there is
 * nothing to examine (exit 2). A file named like a library that is none (a
 * lone Git LFS pointer) is examined: a finding, exit 1. */
static int deps_all(deps_run *run, char **paths, size_t count)
{
    deps_input *in = aitk_calloc(count ? count : 1, sizeof *in);
    if (!in)
        return AITK_EXIT_INTERNAL;
    int rc = AITK_EXIT_OK;
    size_t examined = 0;
    for (size_t i = 0; i < count && !rc; i++) {
        in[i].path = paths[i];
        rc = read_input(run, &in[i]);
        examined += !rc && !in[i].skip;
    }
    if (!rc && examined == 0) {
        for (size_t i = 0; i < count; i++)
            aitk_log(AITK_LOG_ERROR, "deps: %s: not a shared library: %s", in[i].path,
                     aitk_dep_other_text(in[i].skip));
        rc = AITK_EXIT_USAGE;
    }
    for (size_t i = 0; i < count && !rc; i++)
        if (!in[i].skip)
            rc = walk_input(run, &in[i]);
    cJSON *doc = NULL;
    if (!rc && (run->a->json || run->a->markdown)) {
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "schema", "aitk-deps/1");
        run->roots = cJSON_AddArrayToObject(doc, "roots");
        run->skipped = cJSON_AddArrayToObject(doc, "skipped");
        /* Kept for readers of schema aitk-deps/1: bad input no longer
         * reaches the JSON (exit 2 writes nothing), so it stays empty. */
        cJSON_AddArrayToObject(doc, "errors");
        if (!run->roots || !run->skipped)
            rc = AITK_EXIT_INTERNAL;
    }
    bool any_problem = false;
    for (size_t i = 0; i < count && !rc; i++) {
        int one = deps_one(run, &in[i]);
        if (one == AITK_EXIT_INTERNAL)
            rc = one;
        any_problem |= one == AITK_EXIT_FAILED;
    }
    if (doc && !rc) {
        cJSON_AddBoolToObject(doc, "ok", !any_problem);
        /* Paths are bytes; the JSON must be UTF-8. */
        char *s = aitk_json_repair_utf8(doc) ? NULL : cJSON_Print(doc);
        if (!s)
            rc = AITK_EXIT_INTERNAL;
        else if (run->a->json)
            printf("%s\n", s);
        cJSON_free(s);
    }
    if (doc && !rc && run->a->markdown)
        rc = deps_markdown_write(doc, run->a->markdown);
    cJSON_Delete(doc);
    for (size_t i = 0; i < count; i++)
        if (in[i].read)
            aitk_dep_tree_free(&in[i].t);
    aitk_free(in);
    if (!rc && any_problem)
        rc = AITK_EXIT_FAILED;
    return rc;
}

int aitk_cmd_deps(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], LOAD_CHILD) == 0)
        return load_child(argv[2]);
    deps_args a = {0};
    aitk_str self = AITK_STR_INIT, err = AITK_STR_INIT;
    deps_run run = {.a = &a};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        goto out;
    aitk_status st = aitk_remedies_load(&run.rem, &err);
    if (st && st != AITK_E_NOMEM) { /* a broken data file (AITK_DATA_DIR): bad input */
        aitk_log(AITK_LOG_ERROR, "deps: %s", aitk_str_cstr(&err));
        rc = AITK_EXIT_USAGE;
        goto out;
    }
    if (st || aitk_deps_new(&a.opts, &run.d, &err) || (a.load && aitk_self_path(&self, &err))) {
        aitk_log(AITK_LOG_ERROR, "deps: %s", st ? aitk_strerror(st) : aitk_str_cstr(&err));
        rc = AITK_EXIT_INTERNAL;
        goto out;
    }
    run.self = aitk_str_cstr(&self);
    run.text = aitk_output_is_stdout(a.markdown) ? stderr : stdout;
    rc = deps_all(&run, argv + optind, (size_t)(argc - optind));
out:
    aitk_deps_free(run.d);
    aitk_remedies_free(run.rem);
    aitk_str_free(&err);
    aitk_str_free(&self);
    aitk_strlist_free(&a.opts.dll_dirs);
    aitk_strlist_free(&a.opts.win_path);
    aitk_str_free(&a.native_root);
    return rc < 0 ? AITK_EXIT_OK : rc;
}
