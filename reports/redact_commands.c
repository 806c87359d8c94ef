/* Secrets on command lines: the password options of known programs.
 *
 * "-p" is a port to docker run and ssh, "parents" to mkdir, "preserve" to
 * cp, and a password only to some programs, so an option here is judged by
 * the program it is given to: the nearest word before it, in the same
 * command (after the last newline, ';', '|', '&', '(' or '`'), that names
 * one of the table's programs. Each program's own rule says where its
 * password stands:
 * - mysql and its kin (mysqldump, mysqladmin, mariadb, mariadb-dump...)
 *   take it attached, -pSECRET: with a space, -p prompts and the next word
 *   is the database ("If you use the short option form (-p), you cannot
 *   have a space between the option and the password", MySQL Reference
 *   Manual, 6.2.1 "Command Options for Connecting to the Server");
 * - sshpass takes -p SECRET or -pSECRET, among its own options, which end
 *   at the command it runs (sshpass -p x ssh -p 2222 host: 2222 is ssh's);
 * - docker login, podman login and twine upload take -p SECRET;
 * - curl's -u and --user take USER:SECRET (curl's manual, -u).
 * Long options that name a password (--password=, --token) are matched by
 * their name in redact_secrets.c, whatever the program. */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "reports/redact_patterns.h"

enum {
    ATTACHED_ONLY = 1, /* -pSECRET only: "-p SECRET" prompts */
    OPTIONS_FIRST = 2, /* the program's options end at its first operand */
    AFTER_COLON = 4    /* the value is USER:SECRET */
};

static const struct tool_option {
    const char *program;    /* a program's name; "mysql*": any that starts so */
    const char *subcommand; /* the word right after the program, or NULL */
    const char *option;
    unsigned rule;
    const char *takes_value; /* OPTIONS_FIRST: its short options that take a word */
} tools[] = {
    {"mysql*", NULL, "-p", ATTACHED_ONLY, NULL},
    {"mariadb*", NULL, "-p", ATTACHED_ONLY, NULL},
    {"sshpass", NULL, "-p", OPTIONS_FIRST, "fdpP"},
    {"docker", "login", "-p", 0, NULL},
    {"podman", "login", "-p", 0, NULL},
    {"twine", "upload", "-p", 0, NULL},
    {"curl", NULL, "-u", AFTER_COLON, NULL},
    {"curl", NULL, "--user", AFTER_COLON, NULL},
};

static bool space(char c)
{
    return c == ' ' || c == '\t';
}

/* Where the command that in[i] is part of starts: after the last ';',
 * '|', '&', '(' or '`' of its line that no quote holds (bash -c "mysql
 * -pX; ls" is one command to bash, and a quoted URL's '&' ends nothing). */
static size_t command_start(const char *in, size_t i)
{
    size_t line = i;
    while (line > 0 && in[line - 1] != '\n')
        line--;
    size_t start = line;
    char quote = 0;
    for (size_t k = line; k < i; k++) {
        if (quote)
            quote = in[k] == quote ? 0 : quote;
        else if (in[k] == '"' || in[k] == '\'')
            quote = in[k];
        else if (strchr(";|&(`", in[k]))
            start = k + 1;
    }
    return start;
}

/* The word at in[*at] (skipping spaces first), before `end`; advances *at. */
static size_t next_word(const char *in, size_t *at, size_t end, size_t *start)
{
    while (*at < end && space(in[*at]))
        (*at)++;
    *start = *at;
    while (*at < end && !space(in[*at]))
        (*at)++;
    return *at - *start;
}

/* Whether w[0..n) names `program`: its last path component, without
 * quotes or Windows' ".exe", any case. */
static bool names_program(const char *w, size_t n, const char *program)
{
    while (n && (*w == '"' || *w == '\''))
        w++, n--;
    while (n && (w[n - 1] == '"' || w[n - 1] == '\''))
        n--;
    for (size_t k = n; k > 0; k--)
        if (w[k - 1] == '/' || w[k - 1] == '\\') {
            w += k;
            n -= k;
            break;
        }
    if (n > 4 && strncasecmp(w + n - 4, ".exe", 4) == 0)
        n -= 4;
    size_t len = strlen(program);
    if (program[len - 1] == '*')
        return n >= len - 1 && strncasecmp(w, program, len - 1) == 0;
    return n == len && strncasecmp(w, program, n) == 0;
}

/* Whether the words in[from..to) are all options of t's program, or the
 * words that its options in t->takes_value take (sshpass -f FILE). */
static bool only_options(const char *in, size_t from, size_t to, const struct tool_option *t)
{
    size_t at = from, start, n;
    bool value_next = false;
    while ((n = next_word(in, &at, to, &start)) > 0) {
        if (value_next) {
            value_next = false;
            continue;
        }
        if (in[start] != '-')
            return false;
        value_next = n == 2 && strchr(t->takes_value, in[start + 1]);
    }
    return true;
}

/* Whether the option at in[i] is given to t's program: the nearest word
 * before it in its command that names the program (with the subcommand
 * after it when t has one). */
static bool given_to(const char *in, size_t i, const struct tool_option *t)
{
    size_t from = command_start(in, i), at = from, start, n, after = 0;
    bool found = false;
    while ((n = next_word(in, &at, i, &start)) > 0) {
        if (!names_program(in + start, n, t->program))
            continue;
        size_t sub_at = at, sub_start, sub = 0;
        if (t->subcommand) {
            sub = next_word(in, &sub_at, i, &sub_start);
            if (sub != strlen(t->subcommand) || strncmp(in + sub_start, t->subcommand, sub) != 0)
                continue;
        }
        found = true;
        after = t->subcommand ? sub_at : at;
    }
    return found && (!(t->rule & OPTIONS_FIRST) || only_options(in, after, i, t));
}

/* The value at p: a quoted one to its closing quote (quotes excluded), a
 * bare one to a space, the end of the command or a quote. *quoted: it was
 * quoted. */
static size_t option_value(const char *p, bool *quoted)
{
    *quoted = p[0] == '"' || p[0] == '\'';
    if (*quoted) {
        const char *close = strchr(p + 1, p[0]);
        const char *line = strchr(p + 1, '\n');
        return close && (!line || close < line) ? (size_t)(close - p - 1) : 0;
    }
    size_t n = 0;
    while (p[n] && !isspace((unsigned char)p[n]) && !strchr(";|&<>`\"'", p[n]))
        n++;
    return n;
}

size_t aitk_redact_match_tool_password(const char *in, size_t i, size_t *keep)
{
    const char *p = in + i;
    if (p[0] != '-' || (i > 0 && !isspace((unsigned char)in[i - 1]) && in[i - 1] != '"' &&
                        in[i - 1] != '\''))
        return 0;
    for (size_t k = 0; k < sizeof tools / sizeof *tools; k++) {
        const struct tool_option *t = &tools[k];
        size_t o = strlen(t->option);
        if (strncmp(p, t->option, o) != 0)
            continue;
        size_t at = o;
        if (p[at] == '=' && o > 2)
            at++;
        else if (space(p[at]) && !(t->rule & ATTACHED_ONLY))
            while (space(p[at]))
                at++;
        else if (!p[at] || isspace((unsigned char)p[at]) || o > 2)
            continue;
        bool quoted;
        size_t n = option_value(p + at, &quoted);
        size_t v = at + quoted; /* where the secret starts */
        if (t->rule & AFTER_COLON) {
            const char *colon = memchr(p + v, ':', n);
            if (!colon)
                continue;
            n -= (size_t)(colon + 1 - (p + v));
            v = (size_t)(colon + 1 - p);
        }
        /* A placeholder, a variable ($MYSQL_PWD) or the next option. */
        if (!n || strchr("[<$%(-{", p[v]) || !given_to(in, i, t))
            continue;
        *keep = v;
        return v + n;
    }
    return 0;
}
