#!/usr/bin/env python3
"""Real-world corpus, Linux: a requirement from a repository's commit (the
diffusers line of ai-toolkit's requirements_base.txt) against real pip
installs.

ai-toolkit asks for diffusers as git+https://github.com/huggingface/
diffusers.git@<commit>; a diffusers from PyPI, or from an older commit,
lacks classes ai-toolkit imports at start-up ("Diffusers is out of date",
ostris/ai-toolkit issues #490 and #678). python.requirements says so from
the install's direct_url.json, where pip records where it came from.

The repository: diffusers' own source, the sdists of 0.41.0 and 0.42.1
from PyPI (pinned by sha256) committed in that order into a git
repository in the cache, and an empty commit after them (the same version
number as 0.42.1). Installed with the layout's own pip from
git+file://<repo>@<commit>, into hard-linked copies of the torch 2.5.1 +
diffusers layout (torch removed: diffusers then imports without it, so
its names can be asked for): one at the 0.41.0 commit, one at the 0.42.1
commit, and the layout's own diffusers 0.42.1 wheel from PyPI.

Checkouts: ai-toolkit's own requirements files at 27a03a9
(aitk-requirements/ai-toolkit), and one-line files naming the local
repository in the forms pip takes (full and short commit, #egg=, no
revision, another repository). PEP 508's "diffusers @ git+file:///..."
is left to the unit tests: pip 23.2.1 refuses a git+file URL there (no
host).

Oracles, none of them the tool's code:
  * pip's reading: each requirement parsed by pip's own parse_requirements,
    its URL and revision split by pip's VCS backend, set against the
    installs as pip's metadata layer reads them (dist.direct_url); the same
    install seen by `pip freeze`;
  * the consequence: `from diffusers import Flux3Transformer2DModel` (new
    in 0.42) fails at the 0.41.0 commit and works at 0.42.1;
  * pip's behaviour the remedy rests on: `pip install git+...@<empty
    commit>` over the 0.42.1 commit keeps the installed copy (the same
    version number), so uninstalling first is needed;
  * pip without git: `pip install --dry-run -r requirements.txt` with git
    off PATH stops with "Cannot find command 'git'" exactly where the tool
    says git is not on PATH, and gets past that line with git on PATH.

Exit 77 (CTest: skipped) when PyPI cannot be reached to fill the cache or
git is not installed.
"""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import realworld as rw  # noqa: E402  (the corpus's shared layouts and tool runner)

SDISTS = os.path.join(HERE, "requirements-diffusers-sdists.txt")
SETUPTOOLS = os.path.join(HERE, "requirements-setuptools.txt")
NEW_NAME = "Flux3Transformer2DModel"  # in diffusers 0.42.1's __init__, not in 0.41.0's
GIT_ENV = {"GIT_AUTHOR_NAME": "aitk-validate corpus", "GIT_AUTHOR_EMAIL": "corpus@example.org",
           "GIT_COMMITTER_NAME": "aitk-validate corpus",
           "GIT_COMMITTER_EMAIL": "corpus@example.org", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CONFIG_NOSYSTEM": "1"}

ORACLE = r"""
import json, sys
from pip._internal.metadata import get_default_environment
from pip._internal.network.session import PipSession
from pip._internal.req.constructors import install_req_from_parsed_requirement
from pip._internal.req.req_file import parse_requirements
from pip._internal.vcs import vcs
installed = []
for d in get_default_environment().iter_installed_distributions(local_only=False):
    du = d.direct_url
    if du is not None:
        info = getattr(du.info, "commit_id", None)
        installed.append((str(d.canonical_name), du.url, info,
                          getattr(du.info, "requested_revision", None)))
unmet = []
for pr in parse_requirements(sys.argv[1], session=PipSession()):
    ir = install_req_from_parsed_requirement(pr)
    link = ir.link
    if link is None or not link.is_vcs:
        continue
    backend = vcs.get_backend_for_scheme(link.scheme)
    url, rev, _ = backend.get_url_rev_and_auth(link.url_without_fragment)
    def same(u):
        return u.rstrip("/").removesuffix(".git") == url.rstrip("/").removesuffix(".git")
    met = False
    for name, u, commit, asked in installed:
        if commit is None or not same(u):
            continue
        if rev is None:
            met = True
        elif all(c in "0123456789abcdefABCDEF" for c in rev) and 7 <= len(rev) <= 40:
            met = met or commit.lower().startswith(rev.lower())
        else:
            met = met or asked == rev
    unmet.append([pr.comes_from, met])
print(json.dumps(unmet))
"""


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=900, **kw)


def python_of(venv):
    return os.path.join(venv, "bin", "python")


def make_repository(tool_venv):
    """The git repository of the two sdists and an empty commit; its three
    commits, oldest first. Made once per cache."""
    root = rw.cache_root()
    # Named as the real one: a repository's last path segment names the
    # package until pip has built it.
    repo = os.path.join(root, "diffusers-vcs-repository", "diffusers")
    marker = os.path.join(repo, ".aitk-realworld-commits")
    if os.path.exists(marker):
        return repo, open(marker).read().split()
    shutil.rmtree(repo, ignore_errors=True)
    downloads = os.path.join(root, "diffusers-sdists")
    shutil.rmtree(downloads, ignore_errors=True)
    why = rw.registry_reachable()
    if why:
        print("SKIP: the diffusers sdists are not in the cache and the registry cannot be "
              "reached: %s" % why)
        sys.exit(rw.SKIP)
    # pip download, not a URL of our own: the configured index is used; one
    # version a call (pip takes one requirement per project).
    for line in re.findall(r"^diffusers==.*?(?=^\S|\Z)", open(SDISTS).read(), re.M | re.S):
        one = os.path.join(downloads, "one.txt")
        os.makedirs(downloads, exist_ok=True)
        with open(one, "w") as f:
            f.write(line)
        r = run([python_of(tool_venv), "-m", "pip", "download", "--no-deps",
                 "--no-binary=:all:", "--no-build-isolation", "--require-hashes",
                 "--disable-pip-version-check", "-r", one, "-d", downloads])
        if r.returncode != 0:
            sys.exit("pip download of %s failed: %s" % (line.split()[0], r.stderr[-1500:]))
    os.makedirs(repo)
    env = dict(os.environ, **GIT_ENV)
    commits = []
    git = ["git", "-C", repo]
    run(git[:1] + ["init", "-q", repo], env=env, check=True)
    for version, date in (("0.41.0", "2026-10-06T06:24:14Z"), ("0.42.1", "2026-10-27T07:22:26Z")):
        run(git + ["rm", "-rq", "--ignore-unmatch", "."], env=env, check=True)
        run(["tar", "xzf", os.path.join(downloads, "diffusers-%s.tar.gz" % version),
             "--strip-components=1", "-C", repo], check=True)
        run(git + ["add", "-A"], env=env, check=True)
        dated = dict(env, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
        run(git + ["commit", "-qm", "diffusers %s, its PyPI sdist" % version], env=dated,
            check=True)
        commits.append(run(git + ["rev-parse", "HEAD"], check=True).stdout.strip())
    dated = dict(env, GIT_AUTHOR_DATE="2026-10-28T00:00:00Z",
                 GIT_COMMITTER_DATE="2026-10-28T00:00:00Z")
    run(git + ["commit", "-q", "--allow-empty", "-m", "a commit that changes nothing"],
        env=dated, check=True)
    commits.append(run(git + ["rev-parse", "HEAD"], check=True).stdout.strip())
    with open(marker, "w") as f:
        f.write(" ".join(commits) + "\n")
    return repo, commits


def without_torch(venv):
    """torch 2.5.1 is older than these diffusers need (import diffusers asks
    for torch.accelerator): gone, diffusers imports without it, and pip can
    build in the copy."""
    r = run([python_of(venv), "-m", "pip", "uninstall", "-y", "-q", "torch"])
    if r.returncode != 0:
        sys.exit("pip uninstall torch in %s: %s" % (venv, r.stderr[-800:]))
    rw.pip_install_no_deps(venv, SETUPTOOLS)


def at_commit(repo, commit):
    """The copy's diffusers from the repository's commit. Uninstalled first:
    pip keeps the installed 0.42.1 wheel when asked for a commit of the same
    version (the remedy's reason, checked in pip_keeps_same_version)."""
    def change(venv, site):
        r = run([python_of(venv), "-m", "pip", "uninstall", "-y", "-q", "diffusers"])
        if r.returncode != 0:
            sys.exit("pip uninstall diffusers in %s: %s" % (venv, r.stderr[-800:]))
        r = run([python_of(venv), "-m", "pip", "install", "-q", "--no-deps",
                 "--no-build-isolation", "--disable-pip-version-check",
                 "git+file://%s@%s" % (repo, commit)])
        if r.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            sys.exit("pip install of %s in %s failed: %s" % (commit, venv, r.stderr[-1500:]))
    return change


def freeze_line(venv):
    r = run([python_of(venv), "-m", "pip", "freeze", "--disable-pip-version-check"])
    return next((l for l in r.stdout.splitlines() if l.lower().startswith("diffusers")), "")


def has_new_name(venv):
    r = run([python_of(venv), "-c", "from diffusers import %s" % NEW_NAME])
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]


def tool_entries(exe, venv, checkout, out):
    """The tool's entries under 'not from the commit asked for', by the
    file and line each names, and the check's status."""
    c = rw.requirements_check(exe, venv, checkout, out)
    obs = c.get("observed", "")
    m = re.search(r"not from the commit asked for: (.*)$", obs)
    entries = {}
    for e in (m.group(1).split("; ") if m else []):
        w = re.search(r"\(([^()]+:\d+)\)$", e)
        entries[w.group(1) if w else e] = e
    return entries, c.get("status"), obs


def oracle_unmet(venv, requirements):
    r = run([python_of(venv), "-c", ORACLE, requirements], cwd=os.path.dirname(requirements))
    if r.returncode != 0:
        sys.exit("the oracle failed in %s: %s" % (venv, r.stderr[-1500:]))
    out = {}
    for comes_from, met in json.loads(r.stdout.strip().splitlines()[-1]):
        # "-r /x/requirements_base.txt (line 3)" -> "requirements_base.txt:3"
        m = re.search(r"([^/\s]+) \(line (\d+)\)$", comes_from)
        out["%s:%s" % (m.group(1), m.group(2))] = met
    return out


def checkouts(out_dir, repo, commits):
    old, new, _ = commits
    url = "git+file://" + repo
    lines = {
        "commit-new": "%s@%s" % (url, new),
        "commit-new-short": "%s@%s" % (url, new[:7]),
        "commit-old": "%s@%s" % (url, old),
        "egg-new": "%s@%s#egg=diffusers" % (url, new),
        "no-revision": url,
        "another-repository": "git+file:///nonexistent/fork/diffusers.git@%s" % new,
    }
    made = {"ai-toolkit": os.path.join(HERE, "aitk-requirements", "ai-toolkit")}
    for name, line in lines.items():
        d = os.path.join(out_dir, "checkout-" + name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "requirements.txt"), "w") as f:
            f.write(line + "\n")
        made[name] = d
    return made


def pip_keeps_same_version(repo, commits, new_venv, out_dir):
    """pip asked for the empty commit over the 0.42.1 one: it keeps the
    installed copy, which is why the remedy uninstalls first."""
    trial = os.path.join(rw.cache_root(), "diffusers-vcs-trial")
    shutil.rmtree(trial, ignore_errors=True)
    run(["cp", "-al", new_venv, trial], check=True)
    try:
        # The copy's scripts name the original venv; its interpreter is
        # still this copy's by its own path.
        r = run([os.path.join(trial, "bin", "python"), "-m", "pip", "install", "-q", "--no-deps",
                 "--no-build-isolation", "--disable-pip-version-check",
                 "git+file://%s@%s" % (repo, commits[2])])
        line = freeze_line(trial)
        rw.check(r.returncode == 0 and line.endswith("@" + commits[1]),
                 "pip install of the empty commit over the 0.42.1 one keeps %s (pip freeze: %s)"
                 % (commits[1][:12], line))
    finally:
        shutil.rmtree(trial, ignore_errors=True)


def git_off_path(exe, venv, checkout, out):
    """The tool's word on git against pip's own run, with git off PATH and
    on it. The tool is asked with --python, and pip run by its
    interpreter's path, so neither needs PATH for anything but git."""
    requirements = os.path.join(checkout, "requirements.txt")
    with_git = os.path.dirname(shutil.which("git"))
    runs = (("git off PATH", "/nonexistent"), ("git on PATH", with_git))
    for label, path in runs:
        env = dict(os.environ, PATH=path)
        r = run([python_of(venv), "-m", "pip", "install", "--dry-run", "--no-deps",
                 "--no-build-isolation", "--disable-pip-version-check", "-r", requirements],
                env=env, cwd=checkout)
        pip_stops = "Cannot find command 'git'" in r.stdout + r.stderr
        c = rw.requirements_check(exe, venv, checkout, out, env=env)
        tool_says = "git not on PATH" in c.get("observed", "")
        remedy = c.get("remedy", "")
        rw.check(tool_says == pip_stops and (r.returncode == 0) == (not pip_stops),
                 "%s: pip %s (exit %d), the tool %s" % (
                     label, "stops at git" if pip_stops else "gets past the git line",
                     r.returncode, "says git is not on PATH" if tool_says else "says nothing"))
        rw.check(remedy.startswith("First install git") == tool_says,
                 "%s: the remedy %s" % (label, remedy[:80]))
    return len(runs)


def main():
    a = rw.corpus_args()
    if not a:
        return rw.SKIP
    if not shutil.which("git"):
        print("SKIP: git is not installed (pip installs a VCS requirement with it)")
        return rw.SKIP
    torch251 = rw.ensure_layout("torch251", os.path.join(HERE, "requirements-torch251.txt"))
    index = rw.ensure_overlay("torch251-diffusers", torch251, rw.add_diffusers, rw.DIFFUSERS_REQ)
    # Built without torch: from the diffusers layout, only what this test adds.
    plain = rw.ensure_overlay("diffusers-vcs-index", index, lambda v, s: without_torch(v),
                              SETUPTOOLS)
    repo, commits = make_repository(plain)
    layouts = {"index": plain}
    for at, commit in (("0.41.0", commits[0]), ("0.42.1", commits[1])):
        layouts["commit-" + at] = rw.ensure_overlay("diffusers-vcs-" + at, plain,
                                                    at_commit(repo, commit), recipe=commit)
    for name, venv in layouts.items():
        print("%-14s pip freeze: %s" % (name, freeze_line(venv)))
    ok_old, why_old = has_new_name(layouts["commit-0.41.0"])
    ok_new, why_new = has_new_name(layouts["commit-0.42.1"])
    rw.check(not ok_old and "cannot import name" in why_old,
             "the 0.41.0 commit lacks %s (%s)" % (NEW_NAME, why_old[:120]))
    rw.check(ok_new, "the 0.42.1 commit has %s (%s)" % (NEW_NAME, why_new[:120]))
    pip_keeps_same_version(repo, commits, layouts["commit-0.42.1"], a.out)

    rows = []
    made = checkouts(a.out, repo, commits)
    for cname, checkout in made.items():
        for lname, venv in layouts.items():
            want = oracle_unmet(venv, os.path.join(checkout, "requirements.txt"))
            entries, status, obs = tool_entries(a.exe, venv, checkout,
                                                os.path.join(a.out, "vcs.json"))
            unmet = {w for w, met in want.items() if not met}
            where = "%s over %s" % (cname, lname)
            rw.check(set(entries) == unmet,
                     "%s: not from the commit asked for: tool %s, pip %s (%s)"
                     % (where, sorted(entries), sorted(unmet), obs[-300:]))
            for w, e in entries.items():
                rw.check(e.startswith("diffusers 0.4"), "%s: %s names the install" % (where, e))
            if unmet:
                rw.check(status == "warn", "%s: status %s with %s" % (where, status, sorted(unmet)))
            rows.append((cname, lname, "%d of %d" % (len(entries), len(want)),
                         "%d of %d" % (len(unmet), len(want))))
    print("\n%-20s %-14s %-12s %s" % ("checkout", "layout", "tool: not", "pip: not met"))
    for row in rows:
        print("%-20s %-14s %-12s %s" % row)
    runs = git_off_path(a.exe, layouts["index"], made["commit-new"],
                        os.path.join(a.out, "vcs-git.json"))
    return rw.finish(len(rows) + runs, "pip's reading and pip's runs")


if __name__ == "__main__":
    sys.exit(main())
