/* Command-line option helpers shared by every command's getopt_long loop, so
 * that `aitk-validate`, predict, deps, render, trend, compare and gpus word
 * the same mistake the same way: one line that names the option, and end on
 * it the same way: exit code 2.
 *
 * Each command keeps its own option table and switch; these only turn
 * getopt_long's terse returns into messages, refuse what it lets through
 * (a value option given twice, whose first value would be lost) and say
 * the message (aitk_opt_usage_error). */
#ifndef AITK_COMMON_CLIOPT_H
#define AITK_COMMON_CLIOPT_H

#include <getopt.h>
#include <stdbool.h>

#include "common/status.h"
#include "common/str.h"

/* Strict whole number for an option: all of `text`, within [min, max].
 * Otherwise AITK_E_INVAL and "OPT: 'x' is not a whole number" or
 * "OPT: N is out of range (min..max)" in err. */
aitk_status aitk_opt_long(const char *opt, const char *text, long min, long max, long *out,
                          aitk_str *err);

/* The message for getopt_long's '?' or ':' return (opterr = 0, optstring
 * beginning with ':'). `arg` is argv[optind - 1], `optopt_value` is optopt,
 * `cmd` the command's name for the help hint ("see predict --help"; NULL for
 * the top level). The caller adds any "predict: " prefix. Tells apart
 * a value given to a flag that takes none ("--json=x"), an ambiguous
 * abbreviation (listing what it begins), an unknown option and a missing
 * value. */
void aitk_opt_error(const char *cmd, int code, const char *arg, int optopt_value,
                    const struct option *opts, aitk_str *err);

/* Once-only values: every option of `opts` that takes a value may be given
 * once, except those whose val is in `repeatable` (a 0-terminated list of
 * vals; NULL for none). `seen` holds one flag per entry of opts, zeroed by the
 * caller. Returns AITK_E_INVAL with "--NAME is given twice; give it once"
 * when `code` was seen before; options whose val is in `lists` get the hint
 * that they take a list. */
aitk_status aitk_opt_once(int code, const struct option *opts, bool *seen, const int *repeatable,
                          const int *lists, aitk_str *err);

/* The exit code of bad usage (validate/cli.h's AITK_EXIT_USAGE, which
 * validate/cli.c checks is this one: common/ cannot include validate/). */
enum { AITK_OPT_EXIT_USAGE = 2 };

/* How a command ends on a usage mistake, so that no command words or exits
 * differently: logs `err` as one error line, "CMD: message" (the message
 * alone when cmd is NULL: the top level, or a message that names its command
 * already), frees err and returns AITK_OPT_EXIT_USAGE. A loop reads
 * `return aitk_opt_usage_error("deps", &err);`. */
int aitk_opt_usage_error(const char *cmd, aitk_str *err);

#endif
