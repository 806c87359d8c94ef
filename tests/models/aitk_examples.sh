#!/bin/sh
# Runs `aitk-validate predict --config` on every file of ai-toolkit's
# config/examples at one commit of a local git mirror of ai-toolkit, and
# prints one line per file: the exit code and what was predicted or why it
# was refused. Works offline once the mirror exists.
#   tests/models/aitk_examples.sh GIT_DIR [EXE] [COMMIT]
# GIT_DIR: a clone or bare mirror of github.com/ostris/ai-toolkit;
# EXE: the aitk-validate binary (default build/release/aitk-validate);
# COMMIT: default HEAD.
set -eu
git_dir=${1:?usage: $0 GIT_DIR [EXE] [COMMIT]}
exe=${2:-build/release/aitk-validate}
commit=${3:-HEAD}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "ai-toolkit $(git --git-dir="$git_dir" rev-parse "$commit")"
git --git-dir="$git_dir" ls-tree -r --name-only "$commit" -- config/examples |
while IFS= read -r path; do
    file="$tmp/$(basename "$path")"
    git --git-dir="$git_dir" show "$commit:$path" >"$file"
    rc=0
    "$exe" predict --config "$file" --gpu "RTX 4090" >"$tmp/out" 2>"$tmp/err" || rc=$?
    if [ "$rc" -eq 0 ]; then
        what=$(head -n 1 "$tmp/out" | sed 's/, LoRA job from .*//')
        row=$(grep -m 1 'RTX 4090 ' "$tmp/out" | tr -s ' ')
        echo "$path | exit 0 | predicted: $what |$row"
    else
        why=$(sed -n 's/^aitk-validate: error: //p' "$tmp/err" | head -n 1 |
              sed "s|$tmp/||" | cut -c 1-220)
        echo "$path | exit $rc | refused: $why"
    fi
done
