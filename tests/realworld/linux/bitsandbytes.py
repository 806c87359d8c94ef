#!/usr/bin/env python3
"""Real-world corpus, Linux: which native library bitsandbytes loads.

ai-toolkit's 8-bit optimizers (adamw8bit, its example configs' one) run in
bitsandbytes' CUDA library, which bitsandbytes picks by the CUDA version
torch is built with. With no build for it, bitsandbytes imports and the
first training step fails. python.bitsandbytes says that ahead, from files.

Three real bitsandbytes wheels from PyPI (0.45.5, 0.49.2, 0.50.2: three
rules, requirements-bnb-*.txt) are installed over the torch215 layout. For
each, torch's CUDA version is set in turn to what torch wheels are built
with and to versions no wheel of bitsandbytes has a build for (the overlay's
torch/version.py is replaced, never written through its hard link), with and
without BNB_CUDA_VERSION. The oracle is bitsandbytes' own selection,
bitsandbytes.cextension.get_cuda_bnb_library_path with the CUDASpecs torch's
version gives, run in the overlay's interpreter with the same environment:
the file it names, whether it exists, or the error it raises. The tool must
name the same file and fail, warn or pass accordingly.

Then, beyond --quick, whether that file loads after import torch: seven
cases with the real torch 2.15 (CUDA 13.2), overrides of torch's major and
of others (CUDA 12 and 11 builds, refused without their runtime, and a
CUDA 12 build loaded with the runtime of torch 2.5.1's nvidia wheels on
LD_LIBRARY_PATH), judged by bitsandbytes' own get_native_library.

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

BNB = ("0.45.5", "0.49.2", "0.50.2")
# torch's CUDA builds (cu118 ... cu132, cu129 among them), minors no
# bitsandbytes has a build for (12.0, 12.7, 13.1, 13.4) to reach the
# fallbacks, and a major none has (14.0).
CUDA = ("11.8", "12.0", "12.4", "12.6", "12.7", "12.8", "12.9", "13.0", "13.1", "13.2", "13.4",
        "14.0")
# BNB_CUDA_VERSION: unset; a build of another major than torch's; empty;
# not digits.
OVERRIDES = (None, "128", "", "12.8")

ORACLE = r"""
import json, os, sys
import bitsandbytes.cextension as ce
from bitsandbytes.cuda_specs import CUDASpecs
out = {}
for v in sys.argv[1:]:
    major, minor = (int(x) for x in v.split("."))
    specs = CUDASpecs(highest_compute_capability=(8, 9), cuda_version_string="%d%d" % (major, minor),
                      cuda_version_tuple=(major, minor))
    try:
        p = ce.get_cuda_bnb_library_path(specs)
        out[v] = {"name": os.path.basename(str(p)), "exists": p.exists()}
    except Exception as e:
        out[v] = {"error": "%s: %s" % (type(e).__name__, e)}
print(json.dumps(out))
"""


# Beyond --quick the tool also loads the build it picks after import torch.
# Judged here with the real torch 2.15 (CUDA 13.2) as installed, by
# bitsandbytes' own loading code: get_native_library, with get_cuda_specs
# answering torch's CUDA as a GPU would (this machine has none, and without
# one bitsandbytes loads its CPU library). A CUDA library object back means
# the 8-bit optimizers work; the CPU fallback (0.45) or an exception means
# they fail.
LOAD_ORACLE = r"""
import json, sys
import torch
import bitsandbytes.cextension as ce
from bitsandbytes.cuda_specs import CUDASpecs
major, minor = (int(x) for x in torch.version.cuda.split(".")[:2])
ce.get_cuda_specs = lambda: CUDASpecs(highest_compute_capability=(8, 9),
                                      cuda_version_string="%d%d" % (major, minor),
                                      cuda_version_tuple=(major, minor))
try:
    lib = ce.get_native_library()
    r = {"cuda_library": type(lib).__name__ == "CudaBNBNativeLibrary", "kind": type(lib).__name__}
except Exception as e:
    r = {"cuda_library": False, "error": "%s: %s" % (type(e).__name__, e)}
print(json.dumps(r))
"""

# (bitsandbytes, BNB_CUDA_VERSION, CUDA 12 libraries on LD_LIBRARY_PATH):
# torch's own build; builds of another major, refused for want of their
# runtime (libcudart.so.12, .so.11.0) and, with CUDA 12's runtime libraries
# from torch 2.5.1's nvidia wheels on the path, loaded; a same-major
# override; and 0.45.5, which falls back to its CPU library.
LOAD_CASES = (("0.50.2", None, False), ("0.50.2", "128", False), ("0.50.2", "118", False),
              ("0.50.2", "128", True), ("0.49.2", "130", False), ("0.49.2", "128", False),
              ("0.45.5", "118", False))
CUDA12_WHEELS = ("cuda_runtime", "cublas", "cusparse", "nvjitlink")


def load_env(override, cuda12_dirs):
    env = env_with(override)
    if cuda12_dirs:
        env["LD_LIBRARY_PATH"] = ":".join(cuda12_dirs)
    return env


def judge_loads(exe, venvs, cuda12_dirs, out_dir):
    table = []
    for version, override, with12 in LOAD_CASES:
        venv = venvs[version]
        env = load_env(override, cuda12_dirs if with12 else None)
        r = subprocess.run([os.path.join(venv, "bin", "python"), "-c", LOAD_ORACLE],
                           capture_output=True, text=True, timeout=600, env=env, cwd=venv)
        if r.returncode != 0:
            sys.exit("the load oracle failed in %s: %s" % (venv, r.stderr[-1500:]))
        o = json.loads(r.stdout.strip().splitlines()[-1])
        report = rw.run_tool(exe, venv, "standard", os.path.join(out_dir, "bnb-load.json"), env)
        c = rw.checks(report).get("python.bitsandbytes", {})
        observed = c.get("observed", "")
        if o["cuda_library"]:
            ok = c.get("status") in ("pass", "warn") and "which loads beside torch" in observed
        else:
            ok = c.get("status") == "fail"
        where = " with CUDA 12 on LD_LIBRARY_PATH" if with12 else ""
        want = "CUDA library" if o["cuda_library"] else o.get("error") or o.get("kind")
        rw.check(ok, "bitsandbytes %s, BNB_CUDA_VERSION=%r%s: tool %s %s; oracle "
                 "get_native_library: %s" % (version, override, where, c.get("status"),
                                             observed[:200], want))
        table.append((version, override, with12, c.get("status"), want[:90]))
    return table


def site_of(venv):
    return os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")


def set_torch_cuda(venv, cuda):
    """torch/version.py with `cuda = '<cuda>'`, as a new file: the old one is
    a hard link into the torch215 layout."""
    path = os.path.join(site_of(venv), "torch", "version.py")
    text = open(path).read()
    new, n = re.subn(r"^cuda(: [^=]+)? = .*$", "cuda = '%s'" % cuda, text, count=1, flags=re.M)
    if n != 1:
        sys.exit("bitsandbytes.py: %s has no 'cuda = ' line" % path)
    tmp = path + ".aitk-tmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, path)
    return text


def env_with(override):
    env = dict(os.environ)
    env.pop("BNB_CUDA_VERSION", None)
    if override is not None:
        env["BNB_CUDA_VERSION"] = override
    return env


def oracle(venv, override):
    r = subprocess.run([os.path.join(venv, "bin", "python"), "-c", ORACLE] + list(CUDA),
                       capture_output=True, text=True, timeout=600, env=env_with(override),
                       cwd=venv)
    if r.returncode != 0:
        sys.exit("the oracle failed in %s: %s" % (venv, r.stderr[-1500:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def tool_says(exe, venv, out, override):
    report = rw.run_tool(exe, venv, "quick", out, env_with(override))
    return rw.checks(report).get("python.bitsandbytes", {})


def agree(c, o, cuda):
    """The tool's verdict against bitsandbytes' own answer: the file it
    names, failed when absent or refused (the example configs' adamw8bit
    needs it), passed when present and of torch's CUDA major, a warning
    when of another (BNB_CUDA_VERSION)."""
    text = c.get("observed", "") + " " + c.get("message", "")
    if "error" in o:
        return c.get("status") == "fail" and "refuses" in text
    if not o["exists"]:
        return c.get("status") == "fail" and ("no %s" % o["name"]) in text
    build = re.search(r"cuda(\d\d)\d+", o["name"])
    same_major = build is not None and build.group(1) == cuda.split(".")[0]
    return c.get("status") == ("pass" if same_major else "warn") and ("picks %s" % o["name"]) in text


def judge(exe, venv, version, out_dir):
    table = []
    original = None
    try:
        for override in OVERRIDES:
            answers = oracle(venv, override)
            for cuda in CUDA:
                text = set_torch_cuda(venv, cuda)
                original = original or text
                c = tool_says(exe, venv, os.path.join(out_dir, "bnb-%s.json" % version),
                              override)
                o = answers[cuda]
                said = "%s %s" % (c.get("status"), c.get("observed", "")[:140])
                want = o.get("error") or "%s%s" % (o["name"], "" if o["exists"] else " (absent)")
                rw.check(agree(c, o, cuda), "bitsandbytes %s, torch CUDA %s, BNB_CUDA_VERSION=%r: tool "
                         "%s; oracle get_cuda_bnb_library_path: %s"
                         % (version, cuda, override, said, want))
                table.append((version, cuda, override, c.get("status"), want))
    finally:
        if original:
            tmp = os.path.join(site_of(venv), "torch", "version.py.aitk-tmp")
            with open(tmp, "w") as f:
                f.write(original)
            os.replace(tmp, os.path.join(site_of(venv), "torch", "version.py"))
    return table


def main():
    a = rw.corpus_args()
    if not a:
        return rw.SKIP
    torch = rw.ensure_layout("torch215", os.path.join(HERE, "requirements-torch215.txt"))
    table, venvs = [], {}
    for version in BNB:
        req = os.path.join(HERE, "requirements-bnb-%s.txt" % version)
        venv = rw.ensure_overlay("torch215-bnb-" + version, torch,
                                 lambda v, s, r=req: rw.pip_install_no_deps(v, r), req)
        rw.check_pinned(venv, req)
        venvs[version] = venv
        table += judge(a.exe, venv, version, a.out)
    print("\n%-8s %-6s %-10s %-6s %s" % ("bnb", "CUDA", "override", "tool", "bitsandbytes loads"))
    for row in table:
        print("%-8s %-6s %-10r %-6s %s" % row)
    torch251 = rw.ensure_layout("torch251", os.path.join(HERE, "requirements-torch251.txt"))
    cuda12 = [os.path.join(site_of(torch251), "nvidia", w, "lib") for w in CUDA12_WHEELS]
    loads = judge_loads(a.exe, venvs, cuda12, a.out)
    print("\n%-8s %-10s %-8s %-6s %s" % ("bnb", "override", "CUDA 12", "tool",
                                         "get_native_library"))
    for row in loads:
        print("%-8s %-10r %-8s %-6s %s" % row)
    table += loads
    if rw.failures:
        print("\n%d disagreement(s) with the oracle" % len(rw.failures))
        return 1
    print("\nall %d verdicts agree with bitsandbytes' own choice" % len(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
