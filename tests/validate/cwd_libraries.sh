#!/bin/sh
# The validator loads none of its own libraries from the folder it runs in.
# People run it from a conda environment's lib/ or from a library folder
# they are examining; a copy there of a library it links must not be the
# one it gets. The oracle is the real loader: a folder holding a file that
# is no library under the name of each library the executable lists
# (readelf -d, DT_NEEDED), and the executable started from there.
# Usage: cwd_libraries.sh EXE
set -eu
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
[ -n "$needed" ] || { echo "readelf lists no DT_NEEDED in $exe" >&2; exit 1; }
for lib in $needed; do
  printf 'not a library\n' > "$dir/$lib"
done
if ! (cd "$dir" && "$exe" --version > "$dir/out" 2> "$dir/err"); then
  echo "started from a folder holding $(echo $needed | wc -w) decoy libraries, it failed:" >&2
  cat "$dir/err" >&2
  readelf -d "$exe" | grep -E 'RPATH|RUNPATH' >&2 || true
  exit 1
fi
echo "ok: $(echo $needed | wc -w) decoys in the current folder, none loaded"
