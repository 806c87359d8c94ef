#!/usr/bin/env bash
# ci/deb-src-sources.py turns the machine's own apt entries into deb-src
# ones: a mirror configured in either format is the one used, third-party
# and security entries are left out, and a machine with no Debian entry is
# an error that says so. Expected lists are written here by hand.
set -uo pipefail
script=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0 passed=0
expect() { # NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); printf 'FAIL %s\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"; fi
}

# One-line format, a mirror that is not Debian's default, and a security line.
mkdir -p "$work/a/sources.list.d"
cat > "$work/a/sources.list" <<'L'
# a comment
deb [arch=amd64 signed-by=/usr/share/keyrings/mirror.gpg] http://mirror.example.org/debian bookworm main contrib
deb http://mirror.example.org/debian bookworm-updates main
deb http://security.example.org/debian-security bookworm-security main
L
expect one-line "Types: deb-src
URIs: http://mirror.example.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/mirror.gpg

Types: deb-src
URIs: http://mirror.example.org/debian
Suites: bookworm-updates
Components: main" "$(python3 "$script" bookworm "$work/a")"

# deb822 format, as Debian 12 installs it, beside a disabled and a
# third-party entry.
mkdir -p "$work/b/sources.list.d"
cat > "$work/b/sources.list.d/debian.sources" <<'S'
Types: deb
URIs: http://ftp.example.net/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://ftp.example.net/debian-security
Suites: bookworm-security
Components: main
S
cat > "$work/b/sources.list.d/other.sources" <<'S'
Types: deb
URIs: https://vendor.example.com/apt
Suites: nodistro
Components: main

Enabled: no
Types: deb
URIs: http://disabled.example.com/debian
Suites: bookworm
Components: main
S
expect deb822 "Types: deb-src
URIs: http://ftp.example.net/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" "$(python3 "$script" bookworm "$work/b")"

# Nothing for this release: exit 1 with a message naming it.
mkdir -p "$work/c/sources.list.d"
msg=$(python3 "$script" trixie "$work/b" 2>&1); rc=$?
expect no-entry-rc 1 "$rc"
expect no-entry-msg "deb-src-sources: no apt source for Debian trixie (main) in $work/b" "$msg"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
