#!/usr/bin/env bash
# Builds the .deb with cpack from the finished build tree, installs it with
# dpkg into a scratch root, and checks what a user gets:
#   - dpkg-deb -I: Depends names the libraries the executable links
#     (expected list written here, by hand, from readelf -d of the program),
#     Recommends names libopenblas0 (dlopened, invisible to dpkg-shlibdeps);
#   - the files: /usr/bin/aitk-validate, the man page, the CUDA plugin in
#     /usr/lib/aitk-validate when this build made one;
#   - <root>/usr/bin/aitk-validate --version prints this project's version;
#   - the man page renders (man -l, else groff) without warnings and holds
#     the sections the generator makes.
#
# Every step that fails says which and why: a check by its own message, any
# other command by the ERR trap (line, command, exit code), never by a bare
# exit of set -e. A pipe is not ended early by its reader (grep -q, head,
# awk's exit): under pipefail the writer's SIGPIPE would fail a step that
# succeeded, and only when the writer is slower than the reader (a busy
# machine), so text is captured first and then searched.
# usage: test_deb.sh CPACK BUILD_DIR VERSION SCRATCH        exit 77: no dpkg
#   SCRATCH: each run works in a new folder of its own under it, removed
#   when the run passes and kept (and named) when it fails.
set -euo pipefail
trap 'rc=$?; echo "FAIL: test_deb.sh line $LINENO exited $rc: $BASH_COMMAND" >&2' ERR
cpack=$1 build=$2 version=$3
# dpkg looks for ldconfig and start-stop-daemon on PATH and refuses to run
# without them; a non-login shell may lack the sbin folders.
export PATH=$PATH:/usr/sbin:/sbin
for tool in dpkg dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not found (Debian's dpkg, dpkg-dev)"; exit 77; }
done
fail() { echo "FAIL: $*" >&2; echo "the run's files: $scratch" >&2; exit 1; }

mkdir -p "$4"
scratch=$(mktemp -d "$4/run.XXXXXX")
trap 'rc=$?; [ "$rc" -ne 0 ] || rm -rf "$scratch"' EXIT
mkdir "$scratch/out"
# -B: the staging tree (_CPack_Packages) and the package go to this run's
# own folder, not the build tree: other tests run beside this one, and so
# may another run of this test on the same build tree.
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$scratch/out" >"$scratch/cpack.log" 2>&1 ||
  { cat "$scratch/cpack.log" >&2; fail "cpack -G DEB failed"; }
debs=("$scratch"/out/aitk-validate_"$version"_*.deb)
[ -f "${debs[0]}" ] || fail "no aitk-validate_${version}_*.deb in $scratch/out: $(ls "$scratch/out")"
deb=${debs[0]}

# ---- the control data ----
info=$(dpkg-deb -I "$deb")
echo "$info"
field() { printf '%s\n' "$info" | sed -n "s/^ $1: //p"; }
[ "$(field Package)" = aitk-validate ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', expected $version"
depends=$(field Depends)
for lib in libc6 libyaml-0-2 libcjson1 libelf1 libgomp1; do
  grep -Eq "(^|, )$lib( |,|$)" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
recommends=$(field Recommends)
grep -Eq '(^|, )libopenblas0( |,|$)' <<<"$recommends" || fail "Recommends lacks libopenblas0: $recommends"
# The package must install where CUDA is absent: when the CUDA runtime the
# plugin links belongs to no package here (a runfile or tarball install,
# or no CUDA at all), no CUDA package may appear in Depends. (Where NVIDIA's
# own .deb packages installed it, dpkg-shlibdeps may name them: not checked.)
# (ldconfig -p is read whole: awk leaving at the first match would end
# ldconfig by SIGPIPE while it still writes, and pipefail made that a
# silent failure of this whole test under load.)
cache=$(/sbin/ldconfig -p 2>"$scratch/ldconfig.err") ||
  fail "/sbin/ldconfig -p exited $?: $(cat "$scratch/ldconfig.err")"
cudart=$(awk '/libcudart\.so\./ {print $NF; exit}' <<<"$cache")
if [ -z "$cudart" ] || ! dpkg -S "$(readlink -f "$cudart")" >/dev/null 2>&1; then
  if grep -Eiq 'cuda|cublas' <<<"$depends"; then fail "Depends names CUDA: $depends"; fi
fi
description=$(dpkg-deb -f "$deb" Description)
[ "$(head -1 <<<"$description")" = "tells whether a machine can train FLUX, Chroma and OmniGen2 LoRAs with ai-toolkit" ] ||
  fail "the synopsis line is '$(head -1 <<<"$description")'"
grep -q 'is in /usr/lib/aitk-validate: it needs' <<<"$description" || fail "the description lost text: $description"

# ---- the files ----
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/aitk-validate ./usr/share/man/man1/aitk-validate.1.gz \
         ./usr/share/doc/aitk-validate/README.md; do
  grep -q " $f\$" <<<"$contents" || fail "$f is not in the package"
done
if [ -f "$build/libaitk_cuda.so" ]; then
  grep -q ' ./usr/lib/aitk-validate/libaitk_cuda.so$' <<<"$contents" ||
    fail "this build made the CUDA plugin, but the package lacks usr/lib/aitk-validate/libaitk_cuda.so"
fi

# ---- install into a scratch root ----
# --root: install under $root with its own admin folder $root/var/lib/dpkg,
# never touching this machine's package database.
# --force-depends: that fresh database knows no libc6 or libyaml, so every
#   Depends is "not installed" there; the libraries are on the machine.
# --force-not-root: lets a non-root CI user run dpkg at all (a no-op as root).
# --force-script-chrootless: CPack gives any package with a library under
#   /usr/lib a postinst and postrm that run ldconfig (CPackDeb.cmake,
#   "add ldconfig call in default postrm and postinst"; here for the CUDA
#   plugin in /usr/lib/aitk-validate). dpkg would chroot into $root to run
#   it, which needs root and a shell inside $root; chrootless, it runs here
#   with DPKG_ROOT=$root. The ldconfig it calls is a stub put first on PATH,
#   so the host's /etc/ld.so.cache is never rebuilt by a test; the stub
#   records the call, and the test checks the script ran to the end.
root=$scratch/root stub=$scratch/stub-bin
mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info" "$stub"
: >"$root/var/lib/dpkg/status"
printf '#!/bin/sh\necho "ldconfig $*" >>"%s/ldconfig.calls"\n' "$scratch" >"$stub/ldconfig"
chmod +x "$stub/ldconfig"
PATH=$stub:$PATH dpkg --root="$root" --log="$scratch/dpkg.log" --force-depends --force-not-root \
  --force-script-chrootless -i "$deb" >"$scratch/dpkg-install.log" 2>&1 ||
  { cat "$scratch/dpkg-install.log" >&2; fail "dpkg -i failed"; }
cat "$scratch/dpkg-install.log"
if [ -f "$root/var/lib/dpkg/info/aitk-validate.postinst" ] && [ ! -f "$scratch/ldconfig.calls" ]; then
  fail "the package's postinst did not run"
fi
status=$(dpkg --root="$root" -s aitk-validate 2>&1) || fail "dpkg -s aitk-validate exited $?: $status"
grep -q '^Status: install ok installed' <<<"$status" ||
  fail "dpkg does not list aitk-validate as installed in $root: $status"

# ---- run what was installed ----
exe=$root/usr/bin/aitk-validate
out=$("$exe" --version) || fail "$exe --version exited $?"
echo "$out"
[[ "$out" == "aitk-validate $version "* ]] || fail "--version printed '$out', expected 'aitk-validate $version (...)'"
if [ -f "$build/libaitk_cuda.so" ]; then
  [ -f "$root/usr/lib/aitk-validate/libaitk_cuda.so" ] || fail "plugin not installed"
fi

# ---- the man page ----
page=$root/usr/share/man/man1/aitk-validate.1.gz
roff=$(zcat "$page") || fail "zcat $page exited $?"
grep -q '^\.TH AITK\\-VALIDATE 1 ' <<<"$(head -3 <<<"$roff")" || fail "the man page has no .TH header"
if command -v man >/dev/null; then
  text=$(MANWIDTH=80 man -l "$page" 2>"$scratch/man.err" | sed 's/.\x08//g') ||
    fail "man -l exited $?"
  renderer="man -l"
elif command -v groff >/dev/null; then
  text=$(zcat "$page" | groff -man -Tascii -P-c -P-b -P-u 2>"$scratch/man.err")
  renderer=groff
else
  echo "neither man nor groff: only the roff header was checked"
  exit 0
fi
zcat "$page" | groff -man -Tutf8 -ww -z 2>>"$scratch/man.err" || true
[ ! -s "$scratch/man.err" ] || { cat "$scratch/man.err" >&2; fail "$renderer reported problems"; }
for want in NAME SYNOPSIS DESCRIPTION OPTIONS "COMMAND: deps" "COMMAND: predict" \
            "--full" "--output-dir DIR" "aitk-validate $version"; do
  grep -qF -- "$want" <<<"$text" || fail "the rendered man page lacks '$want'"
done
echo "PASS: $(basename "$deb") installs, runs and has its man page"
