#!/usr/bin/env bash
# The nightly job of a GPU runner: one validation into a dated folder of a
# history, the gate against a blessed baseline, the trend over the history.
#
#   ci/nightly.sh HISTORY [-- aitk-validate options]   # default options: --standard
#   ci/nightly.sh HISTORY --bless                      # the latest run becomes the baseline
#
# HISTORY/runs/<UTC time>/   report.json, report.md, report.html, junit.xml of each night
# HISTORY/baseline.json      the blessed report `compare` holds each night to (optional)
# HISTORY/compare.md         tonight against the baseline (when there is one)
# HISTORY/trend.html         every metric over the last $LAST nights, one chart each
# HISTORY/summary.md         the trend as Markdown, plus compare.md: the job summary
#                            (appended to $GITHUB_STEP_SUMMARY when that is set)
#
# Environment: AITK_VALIDATE (the binary; default build/release/aitk-validate),
# THRESHOLD (5%), WINDOW (7 nights of baseline for the trend), LAST (90 nights).
#
# Exit: 0 all good; 1 a check failed tonight, or a metric regressed against the
# baseline or the trend's rolling baseline; 2 bad usage, or a step could not
# read its input; 3 an internal error. Every step runs whatever an earlier one
# found, so the reports of a bad night are always written.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
AITK_VALIDATE=${AITK_VALIDATE:-$ROOT/build/release/aitk-validate}
THRESHOLD=${THRESHOLD:-5%}
WINDOW=${WINDOW:-7}
LAST=${LAST:-90}

usage() {
    echo "usage: ci/nightly.sh HISTORY [-- aitk-validate options] | ci/nightly.sh HISTORY --bless" >&2
    exit 2
}

[ $# -ge 1 ] || usage
HISTORY=$1
shift
if [ ! -x "$AITK_VALIDATE" ]; then
    echo "nightly: $AITK_VALIDATE is not an executable (build it, or set AITK_VALIDATE)" >&2
    exit 2
fi
mkdir -p "$HISTORY/runs" || exit 2

latest_run() { # the newest run folder that holds a report, or nothing
    local d
    for d in $(ls -1 "$HISTORY/runs" 2>/dev/null | sort -r); do
        if [ -f "$HISTORY/runs/$d/report.json" ]; then
            echo "$HISTORY/runs/$d"
            return
        fi
    done
}

if [ "${1:-}" = "--bless" ]; then
    [ $# -eq 1 ] || usage
    run=$(latest_run)
    if [ -z "$run" ]; then
        echo "nightly: no run in $HISTORY/runs to bless" >&2
        exit 2
    fi
    # Through a temporary name: a baseline is never half written.
    cp "$run/report.json" "$HISTORY/baseline.json.tmp" && mv "$HISTORY/baseline.json.tmp" \
        "$HISTORY/baseline.json" || exit 2
    echo "nightly: $run/report.json is the baseline now"
    exit 0
fi
if [ $# -gt 0 ]; then
    [ "$1" = "--" ] || usage
    shift
fi
[ $# -gt 0 ] || set -- --standard

# The folder's name is the UTC time, so names sort as nights do; a second run
# within the same second gets a suffix instead of overwriting the first.
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run=$HISTORY/runs/$stamp
n=1
while [ -e "$run" ]; do
    run=$HISTORY/runs/$stamp-$n
    n=$((n + 1))
done

worst=0
note() { # note NAME RC: the step's result, and the worst exit so far
    local name=$1 rc=$2 what
    case $rc in
        0) what="ok" ;;
        1) what="found a failure or a regression" ;;
        2) what="bad input or usage" ;;
        *) what="internal error" ;;
    esac
    echo "nightly: $name: exit $rc ($what)"
    # 1 < 2 < 3, except that a signal's 128+n counts as internal (3).
    [ "$rc" -gt 3 ] && rc=3
    [ "$rc" -gt "$worst" ] && worst=$rc
    return 0
}

"$AITK_VALIDATE" "$@" --output-dir "$run" --no-color
note "validate $*" $?

if [ -f "$HISTORY/baseline.json" ] && [ -f "$run/report.json" ]; then
    "$AITK_VALIDATE" compare "$HISTORY/baseline.json" "$run/report.json" --threshold "$THRESHOLD" \
        --format markdown --output "$HISTORY/compare.md"
    note "compare with the baseline" $?
else
    rm -f "$HISTORY/compare.md"
    echo "nightly: no baseline.json in $HISTORY: compare skipped (ci/nightly.sh $HISTORY --bless" \
        "makes tonight's report the baseline)"
fi

"$AITK_VALIDATE" trend "$HISTORY/runs" --last "$LAST" --window "$WINDOW" --threshold "$THRESHOLD" \
    --format html --output "$HISTORY/trend.html"
note "trend page" $?
"$AITK_VALIDATE" trend "$HISTORY/runs" --last "$LAST" --window "$WINDOW" --threshold "$THRESHOLD" \
    --format markdown --fail-on-regression --output "$HISTORY/summary.md"
note "trend gate" $?

if [ -f "$HISTORY/compare.md" ] && [ -f "$HISTORY/summary.md" ]; then
    { echo; cat "$HISTORY/compare.md"; } >>"$HISTORY/summary.md"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$HISTORY/summary.md" ]; then
    cat "$HISTORY/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
echo "nightly: reports in $run; trend in $HISTORY/trend.html; exit $worst"
exit "$worst"
