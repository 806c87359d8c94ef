#!/usr/bin/env python3
"""Real-world corpus, Linux: hub.access against the libraries an ai-toolkit
job reads its Hugging Face token and cached model with.

Oracles, none of them the tool's code, run by the interpreter of the torch
2.5.1 + diffusers layout (huggingface_hub as diffusers pins it) with
python-dotenv added (pinned by hash):
  * the token: huggingface_hub.get_token() in the same environment
    variables and home folder the tool is given (HF_TOKEN,
    HUGGING_FACE_HUB_TOKEN, HF_HOME, HF_TOKEN_PATH, XDG_CACHE_HOME, HOME);
  * .env files: a run.py in the checkout that does what ai-toolkit's does
    (`from dotenv import load_dotenv; load_dotenv()`), then asks
    huggingface_hub.get_token(), started from another folder;
  * the cache: huggingface_hub.try_to_load_from_cache for each component's
    weights and every shard its index names, over cache folders laid out as
    huggingface_hub lays them out (refs/main, snapshots/, links into
    blobs/), complete, with a shard missing, with a link to a blob that
    never finished, and with refs/main naming a snapshot not there.

Exit 77 (CTest: skipped) when PyPI cannot be reached to fill the cache.
"""
import json
import os
import shutil
import subprocess
import sys

import realworld as rw

HERE = os.path.dirname(os.path.abspath(__file__))
SECRET = "hf_aitkRealworldSecret0123456789abcdefg"
REPO = "black-forest-labs/FLUX.1-dev"
COMMIT = "0ef5fff789c832c5c7f4e127f94c8b54bbcced44"

GET_TOKEN = "import huggingface_hub; print(huggingface_hub.get_token() is not None)"
RUN_PY = ("from dotenv import load_dotenv\nload_dotenv()\nimport huggingface_hub\n"
          "print(huggingface_hub.get_token() is not None)\n")
CACHED = r"""
import json, sys
from huggingface_hub import try_to_load_from_cache
cache, repo, files = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
print(all(isinstance(try_to_load_from_cache(repo, f, cache_dir=cache), str) for f in files))
"""
# .env texts: python-dotenv decides whether each sets the token.
DOTENV = ["HF_TOKEN=%s\n" % SECRET, "export HF_TOKEN=%s\n" % SECRET,
          "  HF_TOKEN = '%s'\r\n" % SECRET, 'HF_TOKEN="%s" # mine\n' % SECRET, "HF_TOKEN=\n",
          'HF_TOKEN=""\n', "HF_TOKEN= # set me\n", "# HF_TOKEN=%s\n" % SECRET,
          "HF_TOKENS=%s\n" % SECRET, "HF_TOKEN=%s\nHF_TOKEN=\n" % SECRET,
          "HF_TOKEN=\nHF_TOKEN=%s\n" % SECRET, "HF_TOKEN=abc#def\n",
          # a byte-order mark (Notepad's "UTF-8 with BOM"), no final newline, quoted spaces,
          # an unclosed quote, no '=', a comment line, two spaces after export, ':' for '='
          "\ufeffHF_TOKEN=%s\n" % SECRET, "HF_TOKEN=%s" % SECRET, "HF_TOKEN='   '\n",
          "HF_TOKEN='%s\n" % SECRET, "HF_TOKEN\n", "  # note\nHF_TOKEN=%s\n" % SECRET,
          "export  HF_TOKEN=%s\n" % SECRET, "HF_TOKEN: %s\n" % SECRET,
          "HF_TOKEN=${NOT_SET_ANYWHERE}\n", "HF_TOKEN=  %s  \n" % SECRET,
          "HF_TOKEN=${NOT_SET_ANYWHERE:-%s}\n" % SECRET, "HF_TOKEN='${NOT_SET_ANYWHERE}'\n",
          'HF_TOKEN="${NOT_SET_ANYWHERE}"\n', "HF_TOKEN=${HOME}\n",
          # names the same file set before (python-dotenv's resolve_variables: the
          # environment first, then the lines above; a name set blank keeps its default
          # out), after, or in a chain
          "MY_KEY=%s\nHF_TOKEN=${MY_KEY}\n" % SECRET, "HF_TOKEN=${MY_KEY}\nMY_KEY=%s\n" % SECRET,
          "MY_KEY=\nHF_TOKEN=${MY_KEY:-%s}\n" % SECRET, "MY_KEY\nHF_TOKEN=${MY_KEY:-%s}\n" % SECRET,
          "A_KEY=%s\nB_KEY=${A_KEY}\nHF_TOKEN=${B_KEY}\n" % SECRET,
          "MY_KEY='%s'\nHF_TOKEN=\"${MY_KEY}\"\n" % SECRET, "HOME=\nHF_TOKEN=${HOME}\n",
          "export MY_KEY=%s # mine\nHF_TOKEN=${MY_KEY}\n" % SECRET,
          "MY_KEY=%s\nMY_KEY=\nHF_TOKEN=${MY_KEY}\n" % SECRET]


def python_of(venv):
    return os.path.join(venv, "bin", "python")


def base_env(home):
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HOME", "HF_TOKEN_PATH",
                        "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME")}
    env["HOME"] = home
    env["HF_HUB_OFFLINE"] = "1"  # nothing here may reach the Hub
    return env


def tool(exe, venv, checkout, env, out):
    args = [exe, "--python", venv, "--aitk-dir", checkout, "--quick", "--model", "flux1-dev",
            "--json", out, "--quiet", "--no-color"]
    r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=env)
    if r.returncode not in (0, 1):
        sys.exit("%s exited %d: %s" % (" ".join(args), r.returncode, r.stderr[-2000:]))
    text = open(out).read()
    rw.check(SECRET not in text, "the report does not hold the token")
    return rw.checks(json.loads(text)).get("hub.access", {})


def oracle(venv, argv, env, cwd=None):
    """Whether the oracle command printed True as its last line."""
    r = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        sys.exit("the oracle failed: %s" % r.stderr[-1500:])
    return r.stdout.strip().splitlines()[-1] == "True"


def token_cases(root):
    """(label, extra environment, files to write under root) for a case
    whose scratch folder is `root` (its home folder root/home)."""
    return [
        ("nothing", {}, {}),
        ("HF_TOKEN", {"HF_TOKEN": SECRET}, {}),
        ("HF_TOKEN spaces hides the older name",
         {"HF_TOKEN": "   ", "HUGGING_FACE_HUB_TOKEN": SECRET}, {}),
        ("HUGGING_FACE_HUB_TOKEN", {"HUGGING_FACE_HUB_TOKEN": SECRET}, {}),
        ("HF_HOME/token", {"HF_HOME": os.path.join(root, "hf")}, {"hf/token": SECRET + "\n"}),
        ("HF_HOME/token blank", {"HF_HOME": os.path.join(root, "hf")}, {"hf/token": " \n"}),
        ("HF_TOKEN_PATH", {"HF_TOKEN_PATH": os.path.join(root, "t", "tok")}, {"t/tok": SECRET}),
        ("XDG_CACHE_HOME", {"XDG_CACHE_HOME": os.path.join(root, "xdg")},
         {"xdg/huggingface/token": SECRET}),
        ("~/.cache/huggingface/token", {}, {"home/.cache/huggingface/token": SECRET}),
    ]


def write(root, files):
    for rel, text in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)


def run_token_cases(exe, venv, out):
    n = 0
    for i in range(len(token_cases(""))):
        root = os.path.join(out, "tok-%d" % i)
        shutil.rmtree(root, ignore_errors=True)
        label, extra, files = token_cases(root)[i]
        write(root, files)
        home = os.path.join(root, "home")
        checkout = os.path.join(root, "ai-toolkit")
        os.makedirs(home, exist_ok=True)
        os.makedirs(checkout, exist_ok=True)
        env = dict(base_env(home), **extra)
        want = oracle(venv, [python_of(venv), "-c", GET_TOKEN], env)
        c = tool(exe, venv, checkout, env, os.path.join(out, "hub.json"))
        got = c.get("observed", "").startswith("token: ")
        rw.check(got == want, "%s: huggingface_hub %s, the tool %s (%s)" % (
            label, "has a token" if want else "has none", "found one" if got else "found none",
            c.get("observed", "")[:160]))
        n += 1
    return n


def run_dotenv_cases(exe, venv, out):
    n = 0
    for i, text in enumerate(DOTENV + ["parent"]):
        root = os.path.join(out, "env-%d" % i)
        shutil.rmtree(root, ignore_errors=True)
        checkout = os.path.join(root, "work", "ai-toolkit")
        os.makedirs(checkout)
        write(checkout, {"run.py": RUN_PY})
        if text == "parent":
            write(root, {"work/.env": "HF_TOKEN=%s\n" % SECRET})
        else:
            write(checkout, {".env": text})
        env = base_env(os.path.join(root, "home"))
        env["HF_HOME"] = os.path.join(root, "hf")
        want = oracle(venv, [python_of(venv), os.path.join(checkout, "run.py")], env, cwd=root)
        c = tool(exe, venv, checkout, env, os.path.join(out, "hub.json"))
        got = c.get("observed", "").startswith("token: ")
        rw.check(got == want, ".env %r: ai-toolkit's run.py %s, the tool %s" % (
            text, "has a token" if want else "has none", "found one" if got else "found none"))
        n += 1
    return n


def make_cache(root, case):
    """A hub cache of FLUX.1-dev's weights laid out as huggingface_hub does;
    the files a loaded job needs, as snapshot paths."""
    repo = os.path.join(root, "hub", "models--black-forest-labs--FLUX.1-dev")
    snap = os.path.join(repo, "snapshots", COMMIT)
    shards = {"transformer": ["diffusion_pytorch_model-0000%d-of-00003.safetensors" % k
                              for k in (1, 2, 3)],
              "text_encoder_2": ["model-00001-of-00002.safetensors",
                                 "model-00002-of-00002.safetensors"]}
    single = {"text_encoder": "model.safetensors", "vae": "diffusion_pytorch_model.safetensors"}
    files = []
    for comp, names in shards.items():
        index = ("diffusion_pytorch_model" if comp == "transformer" else "model") + \
            ".safetensors.index.json"
        files.append("%s/%s" % (comp, index))
        write(snap, {files[-1]: json.dumps({"weight_map": {"w%d" % k: n
                                                           for k, n in enumerate(names)}})})
        files += ["%s/%s" % (comp, n) for n in names]
    files += ["%s/%s" % (c, n) for c, n in single.items()]
    os.makedirs(os.path.join(repo, "blobs"), exist_ok=True)
    for k, f in enumerate(files):
        if f.endswith(".json"):
            continue
        blob = os.path.join(repo, "blobs", "%040x" % (k + 1))
        with open(blob, "w") as fh:
            fh.write("weights")
        dest = os.path.join(snap, f)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        os.symlink(os.path.relpath(blob, os.path.dirname(dest)), dest)
    write(repo, {"refs/main": COMMIT if case != "refs elsewhere" else "f" * 40})
    victim = os.path.join(snap, files[2])
    if case == "shard missing":
        os.unlink(victim)
    elif case == "blob unfinished":
        os.unlink(os.path.realpath(victim))
    return files


def run_cache_cases(exe, venv, out):
    n = 0
    for case in ("complete", "shard missing", "blob unfinished", "refs elsewhere"):
        root = os.path.join(out, "cache-" + case.replace(" ", "-"))
        shutil.rmtree(root, ignore_errors=True)
        files = make_cache(root, case)
        env = base_env(os.path.join(root, "home"))
        env["HF_HOME"] = root
        want = oracle(venv, [python_of(venv), "-c", CACHED, os.path.join(root, "hub"), REPO,
                             json.dumps(files)], env)
        checkout = os.path.join(root, "ai-toolkit")
        os.makedirs(checkout, exist_ok=True)
        c = tool(exe, venv, checkout, env, os.path.join(out, "hub.json"))
        got = " in the model cache (" in c.get("observed", "")
        rw.check(got == want, "cache %s: huggingface_hub %s, the tool %s (%s)" % (
            case, "finds every file" if want else "misses one", "says cached" if got else
            "says not", c.get("observed", "")[-200:]))
        rw.check(c.get("status") == ("pass" if want else "warn"),
                 "cache %s: status %s" % (case, c.get("status")))
        n += 1
    return n


def main():
    a = rw.corpus_args()
    if not a:
        return rw.SKIP
    torch251 = rw.ensure_layout("torch251", os.path.join(HERE, "requirements-torch251.txt"))
    index = rw.ensure_overlay("torch251-diffusers", torch251, rw.add_diffusers, rw.DIFFUSERS_REQ)
    req = os.path.join(HERE, "requirements-python-dotenv.txt")
    venv = rw.ensure_overlay("hub-dotenv", index, lambda v, s: rw.pip_install_no_deps(v, req), req)
    n = run_token_cases(a.exe, venv, a.out)
    n += run_dotenv_cases(a.exe, venv, a.out)
    n += run_cache_cases(a.exe, venv, a.out)
    return rw.finish(n, "huggingface_hub and python-dotenv")


if __name__ == "__main__":
    sys.exit(main())
