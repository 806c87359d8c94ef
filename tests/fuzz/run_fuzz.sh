#!/bin/sh
# Builds one libFuzzer target with clang and runs it for a bounded time.
#   run_fuzz.sh SOURCE_DIR WORK_DIR TARGET SECONDS SEED...
# TARGET is elf, pe, ldcache, report (the JSON report reader) or yaml.
# Seeds are copied into a fresh corpus folder
# (missing ones are ignored). Exit 77 (skipped) without clang or libFuzzer;
# a crash leaves its input in WORK_DIR and fails the test.
set -eu
src=$1 work=$2 target=$3 secs=$4
shift 4
command -v clang >/dev/null 2>&1 || { echo "clang not installed: skipping" >&2; exit 77; }
mkdir -p "$work/corpus-$target"
probe="$work/probe.c"
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' > "$probe"
clang -fsanitize=fuzzer "$probe" -o "$work/probe" 2>/dev/null ||
    { echo "clang has no libFuzzer here: skipping" >&2; exit 77; }
common="$src/common/alloc.c $src/common/str.c $src/common/status.c $src/common/fileio.c"
case $target in
    elf) files="$src/validate/libdeps/elf.c $src/validate/libdeps/elf_ident.c $src/validate/libdeps/elf_layout.c
                $src/validate/libdeps/elf_syms.c"; libs=-lelf ;;
    pe) files="$src/validate/libdeps/pe.c $src/validate/libdeps/pe_exports.c"; libs= ;;
    ldcache) files="$src/validate/libdeps/ldcache.c"; libs= ;;
    report) files="$src/reports/report.c $src/reports/compare.c $src/reports/markdown.c
                   $src/reports/metrics.c $src/reports/name_index.c $src/reports/xml_escape.c
                   $src/reports/markdown_text.c $src/reports/code_spans.c
                   $src/reports/check.c $src/reports/buyer.c $src/reports/identity.c
                   $src/reports/check_parts.c $src/reports/causes.c $src/common/clock.c"
            libs="-lcjson -lm" ;;
    yaml) files="$src/common/yaml.c"; libs=-lyaml ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
esac
bin="$work/fuzz_$target"
# shellcheck disable=SC2086
clang -std=c17 -D_XOPEN_SOURCE=700 -g -O1 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -I"$src" "$src/tests/fuzz/fuzz_$target.c" $files $common \
    $libs -o "$bin"
for seed in "$@"; do
    [ -f "$seed" ] && cp "$seed" "$work/corpus-$target/" || true
done
cd "$work"
rc=0
"$bin" -max_total_time="$secs" -max_len=1048576 -rss_limit_mb=4096 -print_final_stats=1 \
    "corpus-$target" > "fuzz-$target.log" 2>&1 || rc=$?
tail -25 "fuzz-$target.log"
exit $rc
