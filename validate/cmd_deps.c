/* `aitk-validate deps PATH... [options]`: the library dependency doctor.
 *
 * Static by default: reading a file never runs its code. --load adds the
 * native loader's own verdict (dlopen / LoadLibraryExW), which runs library
 * constructors, so it is only done when asked. Compiled into aitk_libdeps
 * (see validate/libdeps/CMakeLists.txt). */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/dynload.h"
#include "common/log.h"
#include "validate/cli.h"
#include "validate/commands.h"
#include "validate/libdeps/render.h"
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
          "  --app-dir DIR        the application (python.exe) folder\n"
          "  --depth N            stop expanding below depth N\n"
          "  --all                print every link, not only the broken ones\n"
          "  --json               print JSON instead of text\n"
          "  --load               also load each file with the native loader and show its\n"
          "                       own error text (runs library constructors)\n"
          "\n"
          "Exit codes: 0 nothing missing, 1 a library is missing or unusable,\n"
          "2 bad usage or an unreadable PATH, 3 internal error.\n",
          stdout);
}

typedef struct deps_args {
    aitk_deps_opts opts;
    aitk_str native_root; /* on Windows, when --windows-root is not given */
    bool all, json, load;
} deps_args;

static int parse_args(int argc, char **argv, deps_args *a)
{
    static const struct option opts[] = {
        {"windows-root", required_argument, NULL, 'w'}, {"dll-dir", required_argument, NULL, 'D'},
        {"legacy", no_argument, NULL, 'L'},             {"path", required_argument, NULL, 'P'},
        {"app-dir", required_argument, NULL, 'A'},      {"depth", required_argument, NULL, 'd'},
        {"all", no_argument, NULL, 'a'},                {"json", no_argument, NULL, 'j'},
        {"load", no_argument, NULL, 'l'},               {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        aitk_status st = AITK_OK;
        long depth = 0;
        switch (c) {
        case 'w': a->opts.windows_root = optarg; break;
        case 'D': st = aitk_strlist_add(&a->opts.dll_dirs, optarg); break;
        case 'L': a->opts.win_mode = AITK_WIN_LEGACY; break;
        case 'P': st = aitk_strlist_add(&a->opts.win_path, optarg); break;
        case 'A': a->opts.app_dir = optarg; break;
        case 'a': a->all = true; break;
        case 'j': a->json = true; break;
        case 'l': a->load = true; break;
        case 'd': {
            /* Parsed here, not with aitk_cli_parse_long: aitk_libdeps sits
             * below aitk_validate_core in the link order. */
            char *end = NULL;
            depth = strtol(optarg, &end, 10);
            if (!*optarg || *end || depth < 1 || depth > 1000) {
                aitk_log(AITK_LOG_ERROR, "deps: --depth needs a whole number from 1 to 1000, "
                                         "found '%s'", optarg);
                return AITK_EXIT_USAGE;
            }
            a->opts.max_depth = (unsigned)depth;
            break;
        }
        case 'h': deps_help(); return -1;
        case ':':
            aitk_log(AITK_LOG_ERROR, "deps: %s needs a value", argv[optind - 1]);
            return AITK_EXIT_USAGE;
        default:
            aitk_log(AITK_LOG_ERROR, "deps: unknown option '%s' (see deps --help)",
                     argv[optind - 1]);
            return AITK_EXIT_USAGE;
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
    if (optind >= argc) {
        aitk_log(AITK_LOG_ERROR, "deps: give at least one library or DLL (see deps --help)");
        return AITK_EXIT_USAGE;
    }
    return AITK_EXIT_OK;
}

/* The native loader's verdict, for files this OS can load. */
static void load_verdict(const aitk_dep_tree *t, const char *path, aitk_str *text, cJSON *json)
{
#ifdef _WIN32
    bool native = t->format == AITK_DEP_PE;
#else
    bool native = t->format == AITK_DEP_ELF;
#endif
    aitk_str err = AITK_STR_INIT;
    const char *verdict = "not loadable on this OS";
    aitk_dl *dl = NULL;
    if (native) {
        if (aitk_dl_open(path, AITK_DL_DEFAULT, &dl, &err) == AITK_OK) {
            verdict = "loaded";
            aitk_dl_close(dl);
        } else {
            verdict = aitk_str_cstr(&err);
        }
    }
    if (text)
        aitk_str_appendf(text, "  loader says: %s\n", verdict);
    if (json)
        cJSON_AddStringToObject(json, "load", verdict);
    aitk_str_free(&err);
}

int aitk_cmd_deps(int argc, char **argv)
{
    deps_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        goto out;
    aitk_deps *d = NULL;
    aitk_remedies *rem = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_remedies_load(&rem, &err) || aitk_deps_new(&a.opts, &d, &err)) {
        aitk_log(AITK_LOG_ERROR, "deps: %s", aitk_str_cstr(&err));
        aitk_str_free(&err);
        aitk_remedies_free(rem);
        rc = AITK_EXIT_INTERNAL;
        goto out;
    }
    cJSON *doc = a.json ? cJSON_CreateObject() : NULL;
    cJSON *roots = doc ? cJSON_AddArrayToObject(doc, "roots") : NULL;
    cJSON *errors = doc ? cJSON_AddArrayToObject(doc, "errors") : NULL;
    if (doc)
        cJSON_AddStringToObject(doc, "schema", "aitk-deps/1");
    bool any_problem = false, any_bad_input = false;
    for (int i = optind; i < argc && rc != AITK_EXIT_INTERNAL; i++) {
        aitk_dep_tree t;
        aitk_str_clear(&err);
        aitk_status st = aitk_deps_analyze(d, argv[i], &t, &err);
        if (st == AITK_E_NOMEM) {
            rc = AITK_EXIT_INTERNAL;
            break;
        }
        if (st) {
            any_bad_input = true;
            aitk_log(AITK_LOG_ERROR, "deps: %s", aitk_str_cstr(&err));
            if (errors)
                cJSON_AddItemToArray(errors, cJSON_CreateString(aitk_str_cstr(&err)));
            continue;
        }
        any_problem |= aitk_dep_tree_problems(&t) > 0;
        if (doc) {
            cJSON *j = NULL;
            if (aitk_deps_render_json(&t, rem, &j))
                rc = AITK_EXIT_INTERNAL;
            else {
                if (a.load)
                    load_verdict(&t, argv[i], NULL, j);
                cJSON_AddItemToArray(roots, j);
            }
        } else {
            aitk_str text = AITK_STR_INIT;
            if (aitk_deps_render_text(&t, rem, a.all, &text))
                rc = AITK_EXIT_INTERNAL;
            if (a.load)
                load_verdict(&t, argv[i], &text, NULL);
            fputs(aitk_str_cstr(&text), stdout);
            aitk_str_free(&text);
        }
        aitk_dep_tree_free(&t);
    }
    if (doc && rc != AITK_EXIT_INTERNAL) {
        cJSON_AddBoolToObject(doc, "ok", !any_problem && !any_bad_input);
        char *s = cJSON_Print(doc);
        if (!s)
            rc = AITK_EXIT_INTERNAL;
        else
            printf("%s\n", s);
        cJSON_free(s);
    }
    cJSON_Delete(doc);
    aitk_str_free(&err);
    aitk_deps_free(d);
    aitk_remedies_free(rem);
    if (rc != AITK_EXIT_INTERNAL)
        rc = any_bad_input ? AITK_EXIT_USAGE : any_problem ? AITK_EXIT_FAILED : AITK_EXIT_OK;
out:
    aitk_strlist_free(&a.opts.dll_dirs);
    aitk_strlist_free(&a.opts.win_path);
    aitk_str_free(&a.native_root);
    return rc < 0 ? AITK_EXIT_OK : rc;
}
