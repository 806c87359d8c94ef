#!/usr/bin/env bash
# Starts one Windows test program under Wine, the way CTest would, with one
# fault of Wine's taken out of the verdict.
#
#   wine_test_start.sh WINE PROGRAM [ARGUMENT...]
#
# Why: in Windows CI (2026-12-07, models.reported_floor) a test program
# failed in 0.00 s without printing a line, where it takes 0.08 s and prints
# its cmocka header first; it passed in every other run and in 60 runs
# beside another test here. Wine's loader sometimes ends a process before
# the program's first instruction (tests/proc_start.h and the Windows
# corpus retry the same fault where a test starts a program itself).
#
# Every Windows test program writes its standard output unbuffered
# (tests/windows_stdio.c), so one that was started prints before it can
# fail or crash. A run that failed having printed nothing at all was
# therefore never started: it is run once more, said on stderr. A run that
# printed anything, passed, or skipped (77) is final, and so is the second.
set -uo pipefail
wine=${1:?usage: wine_test_start.sh WINE PROGRAM [ARGUMENT...]}
shift
log=$(mktemp "${TMPDIR:-/tmp}/wine-test-start.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT

# Streamed through tee so that a run CTest stops at its time limit still
# shows what it printed.
"$wine" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ ! -s "$log" ]; then
  echo "wine_test_start.sh: $1 exited $rc before printing anything, so Wine did not" \
       "start it; starting it once more" >&2
  sleep 0.5
  "$wine" "$@"
  rc=$?
fi
exit "$rc"
