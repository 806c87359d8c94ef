#include "validate/probes/hub_token.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/str.h"
#include "validate/probes/dotenv.h"
#include "validate/probes/host.h"

#ifdef _WIN32
#define SEP "\\"
#else
#define SEP "/"
#endif

/* A token file or .env is a few hundred bytes; more is not one. */
#define MAX_TOKEN_FILE (64 * 1024)
#define DB_TIMEOUT_MS 20000

/* Reads the UI's database with the environment's own sqlite3 module and
 * prints only whether the HF_TOKEN setting has a value: the token never
 * leaves the child. Opened read-only, so a running UI is not disturbed. */
static const char db_script[] =
    "import pathlib, sqlite3, sys\n"
    "try:\n"
    "    uri = pathlib.Path(sys.argv[1]).resolve().as_uri() + '?mode=ro'\n"
    "    c = sqlite3.connect(uri, uri=True)\n"
    "    r = c.execute(\"SELECT value FROM Settings WHERE key = 'HF_TOKEN'\").fetchone()\n"
    "    print('set' if r and isinstance(r[0], str) and r[0].strip() else 'unset')\n"
    "except Exception as e:\n"
    "    print('error: %s: %s' % (type(e).__name__, (str(e).splitlines() or [''])[0]))\n";

aitk_status aitk_hub_token_file(aitk_str *path)
{
    const char *v = getenv("HF_TOKEN_PATH"), *why = "";
    if (v && *v) {
        aitk_str_clear(path);
        return aitk_str_append(path, v);
    }
    aitk_status st = aitk_host_hf_home(path, &why);
    return st ? st : aitk_str_append(path, SEP "token");
}

/* A file whose text is not blank (a token file), or that sets HF_TOKEN
 * (a .env). */
static bool file_has_token(const char *path, bool dotenv)
{
    char *text = NULL;
    size_t len = 0;
    aitk_str err = AITK_STR_INIT;
    bool has = aitk_file_read(path, MAX_TOKEN_FILE, &text, &len, &err) == AITK_OK && text &&
               (dotenv ? aitk_dotenv_sets(text, "HF_TOKEN") : !aitk_text_blank(text));
    aitk_free(text);
    aitk_str_free(&err);
    return has;
}

static void looked(aitk_hub_token *t, const char *place)
{
    aitk_str_appendf(&t->looked, "%s%s", t->looked.len ? "; " : "", place);
}

/* The checkout's .env, or the first one above it: python-dotenv's
 * find_dotenv stops at the first it finds walking up to the root. */
static bool dotenv_has_token(const char *checkout, aitk_hub_token *t)
{
    char *dir = aitk_realpath(checkout);
    bool has = false, found = false;
    aitk_str path = AITK_STR_INIT;
    for (size_t depth = 0; dir && !found && depth < 64; depth++) {
        aitk_str_clear(&path);
        /* In the separator the resolved folder is written in. */
        aitk_str_appendf(&path, "%s%s.env", dir, dir[strlen(dir) - 1] == SEP[0] ? "" : SEP);
        found = aitk_path_exists(aitk_str_cstr(&path));
        char *slash = strrchr(dir, SEP[0]);
        if (found || !slash || slash[1] == '\0')
            break; /* found, or the root ("/", "C:\\") was the last place */
        /* The parent; the root keeps its separator, as find_dotenv looks
         * there too. */
        const bool root = slash == dir || (slash == dir + 2 && dir[1] == ':');
        slash[root] = '\0';
    }
    if (found) {
        looked(t, aitk_str_cstr(&path));
        has = file_has_token(aitk_str_cstr(&path), true);
        if (has)
            aitk_str_appendf(&t->found, "HF_TOKEN in %s", aitk_str_cstr(&path));
    } else {
        aitk_str_clear(&path);
        aitk_path_join(&path, checkout, ".env");
        aitk_str_appendf(&path, " (none, nor above it)");
        looked(t, aitk_str_cstr(&path));
    }
    aitk_str_free(&path);
    aitk_free(dir);
    return has;
}

/* The UI's settings: read by `python`'s sqlite3 (db_script). */
static bool ui_db_has_token(const char *checkout, const char *python, aitk_hub_token *t)
{
    aitk_str db = AITK_STR_INIT, out = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_path_join(&db, checkout, "aitk_db.db");
    bool has = false;
    if (!aitk_path_exists(aitk_str_cstr(&db))) {
        aitk_str_free(&db);
        return false;
    }
    aitk_str_appendf(&t->looked, "%sthe UI's settings (%s)", t->looked.len ? "; " : "",
                     aitk_str_cstr(&db));
    if (!python || !*python) {
        aitk_str_appendf(&t->unread, "the UI's settings (%s): no Python to read them with",
                         aitk_str_cstr(&db));
    } else {
        const char *argv[] = {python, "-c", db_script, aitk_str_cstr(&db), NULL};
        aitk_proc_opts opts = {.timeout_ms = DB_TIMEOUT_MS, .max_output = 4096,
                               .end_with_child = true};
        aitk_proc_result res;
        memset(&res, 0, sizeof res);
        aitk_status st = aitk_proc_run(argv, &opts, &res, &out, NULL, &err);
        const char *answer = aitk_str_cstr(&out);
        if (!st && strncmp(answer, "set", 3) == 0) {
            has = true;
            aitk_str_appendf(&t->found, "the UI's settings (%s)", aitk_str_cstr(&db));
        } else if (st || strncmp(answer, "unset", 5) != 0) {
            aitk_str_appendf(&t->unread, "the UI's settings (%s): %.*s", aitk_str_cstr(&db),
                             (int)strcspn(st ? aitk_str_cstr(&err) : answer, "\r\n"),
                             st ? aitk_str_cstr(&err) : answer);
        }
    }
    aitk_str_free(&db);
    aitk_str_free(&out);
    aitk_str_free(&err);
    return has;
}

aitk_status aitk_hub_token_find(const char *checkout, const char *python, aitk_hub_token *out)
{
    memset(out, 0, sizeof *out);
    /* HF_TOKEN when it is set at all, even to spaces; the older name only
     * when it is not (huggingface_hub utils/_auth.py,
     * _get_token_from_environment: one `or` of the two, then stripped). */
    looked(out, "HF_TOKEN; HUGGING_FACE_HUB_TOKEN");
    const char *var = "HF_TOKEN", *v = getenv(var);
    if (!v || !*v)
        v = getenv(var = "HUGGING_FACE_HUB_TOKEN");
    if (v && !aitk_text_blank(v)) {
        aitk_str_appendf(&out->found, "%s in the environment", var);
        return aitk_str_status(&out->found);
    }
    aitk_str file = AITK_STR_INIT;
    if (aitk_hub_token_file(&file) == AITK_OK) {
        looked(out, aitk_str_cstr(&file));
        if (file_has_token(aitk_str_cstr(&file), false))
            aitk_str_appendf(&out->found, "the token file %s", aitk_str_cstr(&file));
    }
    aitk_str_free(&file);
    if (!out->found.len && checkout && !dotenv_has_token(checkout, out))
        ui_db_has_token(checkout, python, out);
    const aitk_str *lists[] = {&out->found, &out->looked, &out->unread};
    for (size_t i = 0; i < 3; i++)
        if (aitk_str_status(lists[i]))
            return aitk_str_status(lists[i]);
    return AITK_OK;
}

void aitk_hub_token_free(aitk_hub_token *t)
{
    aitk_str_free(&t->found);
    aitk_str_free(&t->looked);
    aitk_str_free(&t->unread);
}
