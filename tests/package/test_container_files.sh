#!/usr/bin/env bash
# The Dockerfile and compose.yaml at the repository's top, as far as they
# can be checked without pulling an image: every COPY source the Dockerfile
# names exists, both FROM lines pin a tag of nvidia/cuda, and the compose
# file reserves the GPUs. `docker compose config` validates it where the
# compose plugin is installed; that part is skipped otherwise.
# usage: test_container_files.sh SOURCE_DIR
set -euo pipefail
src=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
df=$src/Dockerfile compose=$src/compose.yaml
[ -f "$df" ] || fail "no Dockerfile"
[ -f "$compose" ] || fail "no compose.yaml"

# COPY <src>... <dest>, not COPY --from=<stage> (those copy between stages).
n=0
while read -r -a words; do
  [ ${#words[@]} -gt 0 ] && [ "${words[0]}" = COPY ] || continue
  case "${words[1]}" in --from=*) continue ;; esac
  args=("${words[@]:1}")
  while [[ "${args[0]}" == --* ]]; do args=("${args[@]:1}"); done
  for s in "${args[@]:0:${#args[@]}-1}"; do
    [ -e "$src/$s" ] || fail "Dockerfile copies '$s', which is not in the repository"
    n=$((n + 1))
  done
done < <(sed -e 's/#.*//' "$df")
[ "$n" -gt 0 ] || fail "the Dockerfile copies nothing from the repository"
# Every path the build stage copies must be tracked, or a fresh clone lacks it.
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  while read -r -a words; do
    [ ${#words[@]} -gt 0 ] && [ "${words[0]}" = COPY ] && [[ "${words[1]}" != --from=* ]] || continue
    for s in "${words[@]:1:${#words[@]}-2}"; do
      [ -n "$(git -C "$src" ls-files -- "$s" | head -1)" ] || fail "'$s' is not tracked by git"
    done
  done < <(sed -e 's/#.*//' "$df")
fi

froms=$(grep -E '^FROM ' "$df")
[ "$(grep -c . <<<"$froms")" -ge 2 ] || fail "expected a build stage and a runtime stage: $froms"
grep -Eq '^FROM nvidia/cuda:\$\{CUDA_VERSION\}-cudnn-devel-\$\{CUDA_OS\} AS build$' <<<"$froms" ||
  fail "the build stage is not nvidia/cuda's devel image at the pinned version: $froms"
grep -Eq '^FROM nvidia/cuda:\$\{CUDA_VERSION\}-cudnn-runtime-\$\{CUDA_OS\} AS runtime$' <<<"$froms" ||
  fail "the runtime stage is not nvidia/cuda's runtime image at the pinned version: $froms"
grep -Eq '^ARG CUDA_VERSION=[0-9]+\.[0-9]+\.[0-9]+$' "$df" || fail "no pinned ARG CUDA_VERSION=x.y.z"
grep -Eq '^ARG CUDA_OS=[a-z]+[0-9.]+$' "$df" || fail "no pinned ARG CUDA_OS"

for want in "driver: nvidia" "count: all" "capabilities: [gpu]"; do
  grep -qF "$want" "$compose" || fail "compose.yaml lacks '$want'"
done
if docker compose version >/dev/null 2>&1; then
  docker compose -f "$compose" config --quiet || fail "docker compose config rejects compose.yaml"
  echo "docker compose config: valid"
else
  echo "docker compose plugin not installed: the compose file was checked by its text only"
fi
echo "PASS: $n COPY sources exist; FROM lines pinned; GPU reservation present"
