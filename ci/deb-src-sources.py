#!/usr/bin/env python3
"""Prints a deb-src list (deb822) for the Debian archive this machine's apt
already uses: the URIs, components and keyring of every configured `deb`
entry for RELEASE or RELEASE-updates, turned into `deb-src`. The machine's
own mirror is used as configured; no address is written here.

usage: deb-src-sources.py RELEASE [APT_ETC]   (APT_ETC default /etc/apt)
Reads APT_ETC/sources.list, APT_ETC/sources.list.d/*.list and *.sources
(see sources.list(5)). Exit 1 with a message when no entry matches."""
import glob
import os
import sys


def deb822_records(text):
    record, key = {}, None
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if record:
                yield record
            record, key = {}, None
        elif line[0] in " \t" and key:
            record[key] += " " + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            key = key.strip().lower()
            record[key] = value.strip()


def one_line_entries(text):
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words or words[0] != "deb":
            continue
        options = {}
        rest = words[1:]
        if rest and rest[0].startswith("["):
            opts = []
            while rest:
                opts.append(rest.pop(0))
                if opts[-1].endswith("]"):
                    break
            for o in " ".join(opts).strip("[] ").split():
                k, _, v = o.partition("=")
                options[k.lower()] = v
        if len(rest) >= 3:
            yield {"types": "deb", "uris": rest[0], "suites": rest[1],
                   "components": " ".join(rest[2:]), "signed-by": options.get("signed-by", "")}


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: deb-src-sources.py RELEASE [APT_ETC]")
    release = sys.argv[1]
    etc = sys.argv[2] if len(sys.argv) > 2 else "/etc/apt"
    wanted = {release, release + "-updates"}
    entries = []
    lists = [os.path.join(etc, "sources.list")] + sorted(glob.glob(os.path.join(etc, "sources.list.d", "*.list")))
    for path in lists:
        if os.path.isfile(path):
            entries += one_line_entries(open(path, encoding="utf-8", errors="replace").read())
    for path in sorted(glob.glob(os.path.join(etc, "sources.list.d", "*.sources"))):
        for r in deb822_records(open(path, encoding="utf-8", errors="replace").read()):
            if r.get("enabled", "yes").lower() != "no":
                entries.append(r)
    out = []
    for e in entries:
        if "deb" not in e.get("types", "").split():
            continue
        suites = [s for s in e.get("suites", "").split() if s in wanted]
        if not suites or not e.get("uris") or "main" not in e.get("components", "").split():
            continue
        block = ["Types: deb-src", "URIs: " + e["uris"], "Suites: " + " ".join(suites),
                 "Components: main"]
        if e.get("signed-by"):
            block.append("Signed-By: " + e["signed-by"])
        out.append("\n".join(block))
    if not out:
        sys.exit("deb-src-sources: no apt source for Debian %s (main) in %s" % (release, etc))
    print("\n\n".join(out))


main()
