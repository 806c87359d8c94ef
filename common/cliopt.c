#include "common/cliopt.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

aitk_status aitk_opt_long(const char *opt, const char *text, long min, long max, long *out,
                          aitk_str *err)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    /* strtol skips leading blanks; a number with them is as wrong as one
     * with trailing blanks, which it does not skip. */
    if (!*text || isspace((unsigned char)*text) || end == text || *end != '\0') {
        aitk_str_appendf(err, "%s: '%s' is not a whole number", opt, text);
        return AITK_E_INVAL;
    }
    if (errno == ERANGE || v < min || v > max) {
        aitk_str_appendf(err, "%s: %s is out of range (%ld..%ld)", opt, text, min, max);
        return AITK_E_INVAL;
    }
    *out = v;
    return AITK_OK;
}

static void see_help(const char *cmd, aitk_str *err)
{
    aitk_str_appendf(err, " (see %s%s--help)", cmd ? cmd : "", cmd ? " " : "");
}

static bool has_val(const int *list, int code)
{
    for (; list && *list; list++)
        if (*list == code)
            return true;
    return false;
}

/* The option an abbreviation `arg` ("--res", "--res=x") stands for, with the
 * val getopt_long reported; NULL when none does. */
static const struct option *named(const char *arg, int val, const struct option *opts)
{
    if (strncmp(arg, "--", 2) != 0 || !val)
        return NULL;
    size_t len = strcspn(arg + 2, "=");
    for (const struct option *lo = opts; lo->name; lo++)
        if (lo->val == val && strncmp(lo->name, arg + 2, len) == 0)
            return lo;
    return NULL;
}

/* getopt_long's '?' says little: optopt holds a long option's val (not a
 * character) when "--flag=value" gave a value to a flag that takes none, and
 * 0 for an unknown or ambiguous abbreviation. */
void aitk_opt_error(const char *cmd, int code, const char *arg, int optopt_value,
                    const struct option *opts, aitk_str *err)
{
    if (!arg)
        arg = "";
    const struct option *opt = named(arg, optopt_value, opts);
    /* "--flag=value" on a flag: glibc returns '?', BSD's getopt_long (and
     * so mingw-w64's) ':' as for a missing value. A value that is there is
     * never missing. */
    const bool given_value = strncmp(arg, "--", 2) == 0 && strchr(arg, '=') != NULL;
    if (code == ':' && !given_value) {
        if (opt)
            aitk_str_appendf(err, "--%s needs a value", opt->name);
        else
            aitk_str_appendf(err, "%s needs a value", arg);
        see_help(cmd, err);
        return;
    }
    /* An unknown short option: optopt is it. Inside a cluster ("-xh")
     * getopt has not moved on, so argv[optind - 1] is the word before. A
     * flag's own val with "--flag=value" names its long option instead. */
    if (code == '?' && !opt && optopt_value > ' ' && optopt_value < 127) {
        aitk_str_appendf(err, "unknown option '-%c'", optopt_value);
        see_help(cmd, err);
        return;
    }
    if (strncmp(arg, "--", 2) == 0) {
        size_t len = strcspn(arg + 2, "=");
        if (given_value && (opt || code == ':')) {
            if (opt)
                aitk_str_appendf(err, "--%s takes no value", opt->name);
            else
                aitk_str_appendf(err, "--%.*s takes no value", (int)len, arg + 2);
            see_help(cmd, err);
            return;
        }
        size_t hits = 0;
        for (const struct option *lo = opts; lo->name; lo++)
            hits += strncmp(lo->name, arg + 2, len) == 0;
        if (hits > 1) {
            aitk_str_appendf(err, "'%.*s' is ambiguous: it begins", (int)(len + 2), arg);
            const char *sep = " ";
            for (const struct option *lo = opts; lo->name; lo++)
                if (strncmp(lo->name, arg + 2, len) == 0) {
                    aitk_str_appendf(err, "%s--%s", sep, lo->name);
                    sep = ", ";
                }
            see_help(cmd, err);
            return;
        }
        aitk_str_appendf(err, "unknown option '%.*s'", (int)(len + 2), arg);
    } else {
        aitk_str_appendf(err, "unknown option '%s'", arg);
    }
    see_help(cmd, err);
}

aitk_status aitk_opt_once(int code, const struct option *opts, bool *seen,
                          const int *repeatable, const int *lists, aitk_str *err)
{
    if (has_val(repeatable, code))
        return AITK_OK;
    for (size_t i = 0; opts[i].name; i++) {
        if (opts[i].val != code || opts[i].has_arg == no_argument)
            continue;
        if (seen[i]) {
            aitk_str_appendf(err, "--%s is given twice; give it once", opts[i].name);
            if (has_val(lists, code))
                aitk_str_appendf(err, " (it takes a list: --%s a,b)", opts[i].name);
            return AITK_E_INVAL;
        }
        seen[i] = true;
        return AITK_OK;
    }
    return AITK_OK;
}

int aitk_opt_usage_error(const char *cmd, aitk_str *err)
{
    aitk_log(AITK_LOG_ERROR, "%s%s%s", cmd ? cmd : "", cmd ? ": " : "", aitk_str_cstr(err));
    aitk_str_free(err);
    return AITK_OPT_EXIT_USAGE;
}
