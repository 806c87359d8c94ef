/* Every option that `--help` shows is documented in a Markdown page of docs/.
 *
 * The README is one screen; the reference pages are the docs/ folder. An option that
 * a later change adds to a command's --help but to no page would leave the
 * reader with nothing but the help line, so this test runs the built binary's
 * --help for the main command and for every subcommand (one per
 * validate/cmd_<name>.c, the layout validate/commands.c asks for), collects
 * each long option it prints, and fails naming the option and the command
 * when no page under docs/ mentions it as a whole word. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ctype.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/str.h"
#include "tests/exe_run.h"

/* Characters that continue an option's name: "--load" inside
 * "--load-timeout" is a different option, not a mention. */
static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_';
}

/* True when `text` holds `opt` with no name character on either side. */
static bool mentions(const char *text, const char *opt)
{
    size_t n = strlen(opt);
    for (const char *p = strstr(text, opt); p; p = strstr(p + 1, opt)) {
        bool starts = p == text || !name_char(p[-1]);
        if (starts && !name_char(p[n]))
            return true;
    }
    return false;
}

/* True when `list` (one option a line) has the line `opt`. */
static bool listed(const char *list, const char *opt)
{
    size_t n = strlen(opt);
    for (const char *p = strstr(list, opt); p; p = strstr(p + 1, opt))
        if ((p == list || p[-1] == '\n') && p[n] == '\n')
            return true;
    return false;
}

/* Appends to `out` each distinct long option ("--foo") of `help`, one a line.
 * An option starts after a character that cannot be part of a name, so the
 * "--" of a text rule or of "a--b" is not taken for one. */
static void collect_options(const char *help, aitk_str *out)
{
    for (const char *p = strstr(help, "--"); p; p = strstr(p + 1, "--")) {
        if ((p != help && name_char(p[-1])) || !islower((unsigned char)p[2]))
            continue;
        size_t n = 2;
        while (name_char(p[n]))
            n++;
        while (p[n - 1] == '-')
            n--;
        aitk_str one = AITK_STR_INIT;
        aitk_str_appendn(&one, p, n);
        if (!listed(aitk_str_cstr(out), aitk_str_cstr(&one)))
            aitk_str_appendf(out, "%s\n", aitk_str_cstr(&one));
        aitk_str_free(&one);
    }
}

/* Every Markdown page (name ending in .md) of `dir`, one after another. */
static char *read_docs(const char *dir)
{
    char **names = NULL;
    size_t count = 0;
    aitk_str err = AITK_STR_INIT;
    if (aitk_dir_names(dir, &names, &count, &err) != AITK_OK)
        fail_msg("cannot list %s: %s", dir, aitk_str_cstr(&err));
    aitk_str all = AITK_STR_INIT;
    size_t pages = 0;
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(names[i]);
        if (len < 4 || strcmp(names[i] + len - 3, ".md") != 0)
            continue;
        aitk_str path = AITK_STR_INIT;
        aitk_path_join(&path, dir, names[i]);
        char *text = NULL;
        size_t text_len = 0;
        if (aitk_file_read(aitk_str_cstr(&path), 1 << 22, &text, &text_len, NULL) != AITK_OK)
            fail_msg("cannot read %s", aitk_str_cstr(&path));
        aitk_str_append(&all, text);
        aitk_str_appendc(&all, '\n');
        aitk_free(text);
        aitk_str_free(&path);
        pages++;
    }
    aitk_dir_names_free(names, count);
    aitk_str_free(&err);
    if (pages == 0)
        fail_msg("no *.md page in %s", dir);
    return aitk_str_steal(&all);
}

/* The subcommands, from the sources: validate/cmd_<name>.c. */
static size_t command_names(char ***names_out)
{
    char **names = NULL;
    size_t count = 0;
    aitk_str err = AITK_STR_INIT;
    if (aitk_dir_names(AITK_SOURCE_DIR "/validate", &names, &count, &err) != AITK_OK)
        fail_msg("cannot list validate/: %s", aitk_str_cstr(&err));
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(names[i]);
        if (len > 6 && strncmp(names[i], "cmd_", 4) == 0 && strcmp(names[i] + len - 2, ".c") == 0) {
            names[i][len - 2] = '\0';
            memmove(names[i], names[i] + 4, len - 5);
            names[kept++] = names[i];
        } else {
            aitk_free(names[i]);
        }
    }
    aitk_str_free(&err);
    *names_out = names;
    return kept;
}

/* Appends "COMMAND: --option" lines to `missing` for each option of that
 * command's --help that `docs` does not mention. */
static void check_command(const char *command, const char *help, const char *docs,
                          aitk_str *missing)
{
    aitk_str options = AITK_STR_INIT;
    collect_options(help, &options);
    if (options.len == 0)
        fail_msg("%s --help printed no long option:\n%s", command, help);
    char *list = aitk_str_steal(&options);
    for (char *opt = strtok(list, "\n"); opt; opt = strtok(NULL, "\n"))
        if (!mentions(docs, opt))
            aitk_str_appendf(missing, "%s: %s\n", command, opt);
    aitk_free(list);
}

/* The --help text of `command` (NULL: the main command). */
static char *help_of(const char *command)
{
    const char *main_args[] = {"--help", NULL};
    const char *cmd_args[] = {command, "--help", NULL};
    ran r = run(command ? cmd_args : main_args);
    if (r.rc != 0)
        fail_msg("aitk-validate %s --help exited %d: %s", command ? command : "", r.rc,
                 aitk_str_cstr(&r.err));
    char *out = aitk_str_steal(&r.out);
    assert_non_null(out);
    ran_free(&r);
    return out;
}

/* Every option of every command's --help in `docs`; the missing ones listed. */
static void check_all(const char *docs, aitk_str *missing)
{
    char *help = help_of(NULL);
    check_command("aitk-validate", help, docs, missing);
    aitk_free(help);
    char **names = NULL;
    size_t n = command_names(&names);
    if (n == 0)
        fail_msg("no validate/cmd_*.c found under %s", AITK_SOURCE_DIR);
    for (size_t i = 0; i < n; i++) {
        help = help_of(names[i]);
        aitk_str label = AITK_STR_INIT;
        aitk_str_appendf(&label, "aitk-validate %s", names[i]);
        check_command(aitk_str_cstr(&label), help, docs, missing);
        aitk_str_free(&label);
        aitk_free(help);
    }
    aitk_dir_names_free(names, n);
}

/* The matcher both ways: a whole option is found, a longer one is not. */
static void test_matcher(void **state)
{
    (void)state;
    assert_true(mentions("use `--load` to", "--load"));
    assert_true(mentions("--load", "--load"));
    assert_true(mentions("(--load)", "--load"));
    assert_false(mentions("use --load-timeout S", "--load"));
    assert_false(mentions("use --loaded", "--load"));
    assert_false(mentions("the load option", "--load"));
    assert_false(mentions("x--load", "--load"));

    aitk_str opts = AITK_STR_INIT;
    collect_options("  --json FILE  write\n  -o, --output-dir DIR\n --json again, ---- rule,"
                    " a--b, --load-timeout S, --format text|html\n",
                    &opts);
    assert_string_equal(aitk_str_cstr(&opts),
                        "--json\n--output-dir\n--load-timeout\n--format\n");
    aitk_str_free(&opts);
}

/* The real check: the built binary's help against the real pages. */
static void test_every_option_documented(void **state)
{
    (void)state;
    char *docs = read_docs(AITK_SOURCE_DIR "/docs");
    aitk_str missing = AITK_STR_INIT;
    check_all(docs, &missing);
    aitk_free(docs);
    if (missing.len) {
        /* One line each on stderr: cmocka cuts a long failure message short. */
        fprintf(stderr, "options in --help that no page of docs/ mentions:\n%s",
                aitk_str_cstr(&missing));
        fail_msg("%s", "every option above needs a mention in some docs/ page");
    }
    aitk_str_free(&missing);
}

/* The check can fail: the real pages with every mention of one real option
 * cut out must report that option, under the command that has it. (Other
 * gaps in the real pages are the previous test's to report.) */
static void test_removed_mention_is_reported(void **state)
{
    (void)state;
    char *docs = read_docs(AITK_SOURCE_DIR "/docs");
    const char *opt = "--load-timeout";
    for (char *p = strstr(docs, opt); p; p = strstr(p, opt))
        memset(p, 'x', strlen(opt));
    aitk_str missing = AITK_STR_INIT;
    check_all(docs, &missing);
    aitk_free(docs);
    if (!strstr(aitk_str_cstr(&missing), "aitk-validate deps: --load-timeout\n"))
        fail_msg("--load-timeout cut from the pages, yet not reported; reported:\n%s",
                 aitk_str_cstr(&missing));
    aitk_str_free(&missing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matcher),
        cmocka_unit_test(test_every_option_documented),
        cmocka_unit_test(test_removed_mention_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
