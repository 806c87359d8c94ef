#!/usr/bin/env python3
"""Real-world corpus, Linux: python.aitk_startup (and python.torch_companions'
torchaudio verdict) against ai-toolkit's own run.py.

The checkout is ostris/ai-toolkit at 27a03a91f2, read from a git clone or
mirror named by AITK_GIT_DIR (the repository's source is not copied into
this one; blobs a partial mirror lacks, such as large weight files, are
left out and counted). The environments are ai-toolkit's requirements.txt
as pip resolves it beside torch 2.15.0, installed from PyPI pinned by hash
into a hard-linked copy of the torch215 layout:
  * aitk-startup: requirements.txt only, so no torchaudio (it does not list
    it; the README's torch line installs it);
  * aitk-startup-torchaudio: plus torchaudio 2.11.1;
  * aitk-startup-old-diffusers: that, with diffusers 0.32.2 in place of the
    one ai-toolkit asks for;
  * aitk-startup-partial-checkout: aitk-startup-torchaudio run with a copy of
    the checkout that lacks one of its own modules (LACKING).

The oracle is ai-toolkit itself: `python run.py <config>` with the
checkout's own config/examples/train_lora_flux_24gb.yaml (its dataset
folder pointed at an empty one), offline and with an empty Hugging Face
cache so that no model can load. A job that gets past ai-toolkit's
start-up prints "Running N process(es)" and then fails at the model; one
that does not ends in a traceback, whose exception and last frame inside
the checkout the tool must name. Without a GPU every environment stops at
the start-up: the OmniGen2 extension calls CUDA at import time.

Exit 77 (CTest: skipped) when AITK_GIT_DIR is not set or lacks the commit,
or when PyPI cannot be reached to fill the cache.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import realworld as rw

HERE = os.path.dirname(os.path.abspath(__file__))
COMMIT = "27a03a91f2"
STARTUP_REQ = os.path.join(HERE, "requirements-aitk-startup.txt")
TORCHAUDIO_REQ = os.path.join(HERE, "requirements-aitk-startup-torchaudio.txt")
OLD_DIFFUSERS_REQ = os.path.join(HERE, "requirements-aitk-startup-old-diffusers.txt")
LACKING = "extensions_built_in/audio_models/base_audio_model.py"


def checkout(git_dir, dest):
    """The tree of COMMIT written into dest: the number of files written
    and of blobs the repository does not hold."""
    shutil.rmtree(dest, ignore_errors=True)
    tree = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", COMMIT],
                          capture_output=True, check=True).stdout.split(b"\0")
    entries = []
    for line in filter(None, tree):
        meta, path = line.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((sha, os.path.join(dest, path.decode())))
    batch = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                           input=b"".join(sha + b"\n" for sha, _ in entries),
                           capture_output=True, check=True).stdout
    written = missing = 0
    pos = 0
    for sha, path in entries:
        end = batch.index(b"\n", pos)
        header = batch[pos:end].split()
        pos = end + 1
        if header[-1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(batch[pos:pos + size])
        pos += size + 1
        written += 1
    return written, missing


def job_config(root, out_dir):
    """ai-toolkit's FLUX.1 example config with its dataset and output
    folders in out_dir (the data folder empty)."""
    data = os.path.join(out_dir, "data")
    os.makedirs(data, exist_ok=True)
    text = open(os.path.join(root, "config", "examples", "train_lora_flux_24gb.yaml")).read()
    text = re.sub(r"folder_path: .*", 'folder_path: "%s"' % data, text)
    text = re.sub(r"training_folder: .*", 'training_folder: "%s"' % os.path.join(out_dir, "output"),
                  text)
    path = os.path.join(out_dir, "job.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def isolated_env(out_dir):
    """Offline, with an empty Hugging Face home: no model can load, so no job
    can train whatever the machine."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1",
               HF_HOME=os.path.join(out_dir, "hf-home"))
    env.pop("HF_TOKEN", None)
    return env


def oracle_run_py(venv, root, config, env):
    """What ai-toolkit's run.py says: (started, exception text on one line,
    last frame inside the checkout as 'path:line')."""
    r = subprocess.run([os.path.join(venv, "bin", "python"), "run.py", config], cwd=root,
                       capture_output=True, text=True, timeout=900, env=env)
    started = re.search(r"Running +\d+ process", r.stdout) is not None
    tb = r.stderr[r.stderr.rfind("Traceback (most recent call last):"):]
    frames = re.findall(r'^  File "([^"]+)", line (\d+)', tb, re.M)
    mine = [(f, n) for f, n in frames
            if not f.startswith("<") and os.path.abspath(f).startswith(root + os.sep)]
    where = "%s:%s" % (os.path.relpath(mine[-1][0], root), mine[-1][1]) if mine else ""
    last = tb.rfind('\n  File "')
    rest = [line for line in tb[last + 1:].splitlines()[1:] if line and not line[0].isspace()]
    return started, " ".join(" ".join(rest).split()), where


def tool_checks(exe, venv, root, out, env):
    args = [exe, "--python", venv, "--aitk-dir", root, "--model", "flux1-dev", "--steps", "1",
            "--json", out, "--quiet", "--no-color"]
    r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=env)
    if r.returncode not in (0, 1):
        sys.exit("%s exited %d: %s" % (" ".join(args), r.returncode, r.stderr[-2000:]))
    with open(out) as f:
        return rw.checks(json.load(f))


def python_says(venv, code):
    """True when `code` runs in the environment without an exception."""
    return subprocess.run([os.path.join(venv, "bin", "python"), "-c", code], capture_output=True,
                          text=True, timeout=600).returncode == 0


def judge_follows(name, venv, startup, started, error):
    """The check python.aitk_startup says its failure follows
    (reports/causes.h), against what the interpreter itself says: torchaudio
    missing (python.torch_companions), no usable CUDA (python.import_torch),
    a diffusers that does not import (python.requirements), or nothing."""
    want = None
    if started:
        pass
    elif "No module named 'torchaudio'" in error:
        want = "python.torch_companions" if not python_says(venv, "import torchaudio") else None
    elif "NVIDIA driver" in error:
        cuda = python_says(venv, "import torch, sys; sys.exit(not torch.cuda.is_available())")
        want = None if cuda else "python.import_torch"
    elif "Failed to import diffusers" in error:
        flux = python_says(venv, "from diffusers import FluxPipeline")
        want = None if flux else "python.requirements"
    rw.check(startup.get("follows") == want,
             "%s: python.aitk_startup follows %r; the interpreter's answers call for %r"
             % (name, startup.get("follows"), want))
    return 1


def files_of(root):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)


def judge(exe, name, venv, root, out_dir):
    """One environment: the tool's verdicts against run.py and Python's own
    import of torchaudio. The number of readings compared (each rw.check)."""
    env = isolated_env(out_dir)
    config = job_config(root, os.path.join(out_dir, name))
    started, error, where = oracle_run_py(venv, root, config, env)
    print("      oracle %s: %s%s" % (name, "started" if started else error[:200],
                                      " (at %s)" % where if where else ""))
    before = files_of(root)
    c = tool_checks(exe, venv, root, os.path.join(out_dir, name + ".json"), env)
    rw.check(files_of(root) == before, "%s: the checkout holds the same files after the "
                                       "tool ran (no bytecode written)" % name)
    s = c.get("python.aitk_startup", {})
    observed = s.get("observed", "")
    rw.check((s.get("status") == "pass") == started,
             "%s: python.aitk_startup %s; oracle run.py %s" % (
                 name, s.get("status"), "started the job" if started else "stopped: " + error))
    n = 3
    if not started:
        rw.check(error[:150] in observed, "%s: the tool names run.py's exception (%s | %s)"
                 % (name, error[:150], observed[:300]))
        rw.check(bool(where) and observed.endswith("(at %s)" % where),
                 "%s: the tool names run.py's last line in the checkout, %s (%s)"
                 % (name, where, observed[-200:]))
        n += 2
        missing_module = re.search(r"No module named '([^']+)'", error)
        if missing_module:
            top = missing_module.group(1).split(".")[0]
            own = os.path.isdir(os.path.join(root, top)) or os.path.isfile(
                os.path.join(root, top + ".py"))
            remedy = s.get("remedy", "")
            rw.check(own == ("is ai-toolkit's own code" in remedy),
                     "%s: '%s' is %sa folder of the checkout; the remedy: %s"
                     % (name, top, "" if own else "not ", remedy[:200]))
            n += 1
    n += judge_follows(name, venv, s, started, error)
    audio = subprocess.run([os.path.join(venv, "bin", "python"), "-c", "import torchaudio"],
                           capture_output=True, text=True, timeout=600)
    missing = "No module named 'torchaudio'" in audio.stderr
    companions = c.get("python.torch_companions", {})
    rw.check(missing == ("torchaudio not installed" in companions.get("observed", "")) and
             (companions.get("status") == "fail") == missing,
             "%s: python.torch_companions %s (%s); oracle import torchaudio: %s"
             % (name, companions.get("status"), companions.get("observed", ""),
                "missing" if missing else "ok" if audio.returncode == 0 else audio.stderr[-200:]))
    return n


def startup_venv():
    """The aitk-startup layout: ai-toolkit's requirements.txt over torch215."""
    torch215 = rw.ensure_layout("torch215", os.path.join(HERE, "requirements-torch215.txt"))
    return rw.ensure_overlay("aitk-startup", torch215, lambda v, s: rw.pip_install_no_deps(
        v, STARTUP_REQ, sdists=("lycoris-lora",)), STARTUP_REQ)


def main():
    a = rw.corpus_args()
    if not a:
        return rw.SKIP
    git_dir = os.environ.get("AITK_GIT_DIR", "")
    if not git_dir or subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e",
                                      COMMIT + "^{commit}"], capture_output=True).returncode:
        print("SKIP: set AITK_GIT_DIR to a clone or mirror of github.com/ostris/ai-toolkit that "
              "holds commit %s (now: %r)" % (COMMIT, git_dir))
        return rw.SKIP
    root = os.path.realpath(os.path.join(a.out, "ai-toolkit"))
    written, missing = checkout(git_dir, root)
    print("      checkout %s: %d files, %d blobs not in the repository"
          % (COMMIT, written, missing))
    base = startup_venv()
    audio = rw.ensure_overlay("aitk-startup-torchaudio", base,
                              lambda v, s: rw.pip_install_no_deps(v, TORCHAUDIO_REQ),
                              TORCHAUDIO_REQ)
    old = rw.ensure_overlay("aitk-startup-old-diffusers", audio,
                            lambda v, s: rw.pip_install_no_deps(v, OLD_DIFFUSERS_REQ),
                            OLD_DIFFUSERS_REQ)
    n = 0
    for name, venv in (("aitk-startup", base), ("aitk-startup-torchaudio", audio),
                       ("aitk-startup-old-diffusers", old)):
        n += judge(a.exe, name, venv, root, a.out)
    # A checkout that lacks one of its own modules, as ai-toolkit v0.13.12 did
    # (ostris/ai-toolkit issue #1044): a file every job imports, removed.
    partial = root + "-partial"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(root, partial, copy_function=os.link)
    os.unlink(os.path.join(partial, *LACKING.split("/")))
    n += judge(a.exe, "aitk-startup-partial-checkout", audio, partial, a.out)
    return rw.finish(n, "ai-toolkit's run.py and Python's import of torchaudio")


if __name__ == "__main__":
    sys.exit(main())
