#!/usr/bin/env python3
"""Real-world corpus, Linux: an ai-toolkit checkout's requirements against
real environments.

python.requirements reads the checkout's requirements.txt (and what it
includes) and names what is not installed and what is not at its pin. Two
checkouts: ai-toolkit's own requirements files at commit 27a03a9
(aitk-requirements/ai-toolkit, copied unchanged from
github.com/ostris/ai-toolkit), and one written for this test with every
form of pip's requirements file format (aitk-requirements/syntax). Each is
judged by the tool against three layouts of the corpus (torch 2.15 alone,
torch 2.5.1 with diffusers, torch 2.15 with bitsandbytes); and, for the
healthy case, each layout against the pinned, hashed requirements file it
was installed from (requirements-*.txt here): nothing may be missing or
off its pin.

The oracle is pip's own reading, in the layout's interpreter: pip's
parse_requirements and install_req_from_parsed_requirement (the pip the
venv carries), importlib.metadata for what is installed, and the
requirement's SpecifierSet for a pin. Compared: the names not installed and
the names whose lone "==" pin the installed version does not satisfy, over
the requirements pip names without a marker (a URL with no #egg= has no
name until pip builds it; a marker's platform is not the tool's to know).

Exit 77 (CTest: skipped) when PyPI cannot be reached to fill the cache.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import realworld as rw  # noqa: E402  (the corpus's shared layouts and tool runner)

CHECKOUTS = ("ai-toolkit", "syntax")
MAIN = ("diffusers", "transformers", "peft", "accelerate", "optimum-quanto", "torchao",
        "bitsandbytes")

ORACLE = r"""
import importlib.metadata as md, json, sys
from pip._internal.network.session import PipSession
from pip._internal.req.constructors import install_req_from_parsed_requirement
from pip._internal.req.req_file import parse_requirements
from pip._vendor.packaging.utils import canonicalize_name
missing, unpinned, seen = [], [], set()
for pr in parse_requirements(sys.argv[1], session=PipSession()):
    try:
        ir = install_req_from_parsed_requirement(pr)
    except Exception:
        continue  # pip names it only once built (a VCS URL, an archive)
    if not ir.name or ir.markers is not None:
        continue
    name = canonicalize_name(ir.name)
    if name in seen:
        continue
    seen.add(name)
    try:
        version = md.version(ir.name)
    except md.PackageNotFoundError:
        missing.append(name)
        continue
    specs = list(ir.specifier)
    if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version \
            and not ir.specifier.contains(version, prereleases=True):
        unpinned.append(name)
print(json.dumps({"missing": sorted(missing), "unpinned": sorted(unpinned)}))
"""


def oracle(venv, requirements):
    r = subprocess.run([os.path.join(venv, "bin", "python"), "-c", ORACLE, requirements],
                       capture_output=True, text=True, timeout=300, cwd=venv)
    if r.returncode != 0:
        sys.exit("the oracle failed in %s: %s" % (venv, r.stderr[-1500:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def tool_says(exe, venv, checkout, out):
    c = rw.requirements_check(exe, venv, checkout, out)
    obs = c.get("observed", "")
    missing = set()
    for pattern in (r"(?:^|; )missing: ([^;]+)", r"not installed from [^:]+: ([^;]+)"):
        for m in re.finditer(pattern, obs):
            missing |= {n.strip() for n in m.group(1).split(",")}
    unpinned = set()
    m = re.search(r"not as pinned: (.*?)(?:; not from the commit asked for: |$)", obs)
    if m:
        unpinned = {part.split(" ")[0] for part in m.group(1).split("; ")}
    return c.get("status"), missing, unpinned, obs


def main():
    a = rw.corpus_args()
    if not a:
        return rw.SKIP
    torch215 = rw.ensure_layout("torch215", os.path.join(HERE, "requirements-torch215.txt"))
    # Built as realworld.linux.torch251-diffusers builds it: the same cache.
    torch251 = rw.ensure_layout("torch251", os.path.join(HERE, "requirements-torch251.txt"))
    diffusers = rw.ensure_overlay("torch251-diffusers", torch251, rw.add_diffusers,
                                  rw.DIFFUSERS_REQ)
    req = os.path.join(HERE, "requirements-bnb-0.50.2.txt")
    bnb = rw.ensure_overlay("torch215-bnb-0.50.2", torch215,
                            lambda v, s: rw.pip_install_no_deps(v, req), req)
    installed_from = {torch215: "requirements-torch215.txt",
                      diffusers: "requirements-diffusers.txt", bnb: "requirements-bnb-0.50.2.txt"}
    rows = []
    for venv in (torch215, diffusers, bnb):
        # The layout's own requirements file as a checkout's.
        own = os.path.join(a.out, "as-installed-" + os.path.basename(venv))
        os.makedirs(own, exist_ok=True)
        with open(os.path.join(HERE, installed_from[venv])) as f, \
                open(os.path.join(own, "requirements.txt"), "w") as g:
            g.write(f.read())
        for name in CHECKOUTS + ("as-installed",):
            checkout = own if name == "as-installed" else os.path.join(HERE, "aitk-requirements",
                                                                       name)
            o = oracle(venv, os.path.join(checkout, "requirements.txt"))
            status, missing, unpinned, obs = tool_says(
                a.exe, venv, checkout, os.path.join(a.out, "requirements.json"))
            # The tool names the main packages too (its own list): compared
            # where the file lists them.
            want_missing = set(o["missing"])
            listed_main = {m for m in MAIN if m in want_missing}
            tool_missing = {m for m in missing if m not in MAIN or m in listed_main}
            want_status = "pass" if not want_missing and not o["unpinned"] else "warn"
            where = "%s over %s" % (name, os.path.basename(venv))
            rw.check(tool_missing == want_missing,
                     "%s: not installed: tool %s, pip %s" % (where, sorted(tool_missing),
                                                            sorted(want_missing)))
            rw.check(unpinned == set(o["unpinned"]),
                     "%s: not as pinned: tool %s, pip %s" % (where, sorted(unpinned),
                                                            o["unpinned"]))
            # The main packages missing from the layout but not listed make
            # it a warning whatever the file says.
            main_missing = any(m in missing for m in MAIN)
            rw.check(status == want_status or (main_missing and status == "warn"),
                     "%s: status %s, expected %s (%s)" % (where, status, want_status, obs[:300]))
            if name == "as-installed":
                rw.check(not want_missing and not o["unpinned"],
                         "%s: pip finds the layout as it was installed" % where)
            rows.append((name, os.path.basename(venv), status, len(want_missing),
                         len(o["unpinned"])))
    print("\n%-12s %-22s %-6s %8s %9s" % ("checkout", "layout", "tool", "missing", "unpinned"))
    for row in rows:
        print("%-12s %-22s %-6s %8d %9d" % row)
    return rw.finish(len(rows), "pip's reading")


if __name__ == "__main__":
    sys.exit(main())
