#!/usr/bin/env python3
"""Real-world check of the cuDNN libraries opened at run time
(validate/libdeps/opened.yaml) on Linux, against cuDNN itself.

The cuDNN of the torch215-cudnn-newest layout (nvidia-cudnn-cu13 9.28.1.4,
which realworld.linux.torch215-cudnn-newest installs into the cache) is
judged whole and, in a copy of hard links, without
libcudnn_engines_tensor_ir.so.9, a library 9.1 did not have and 9.28's
libcudnn_graph.so.9 opens by name. The oracle is cuDNN planning the
plugin's attention graphs deviceless (test_cuda.cudnn_deviceless, in its
own process, on the CUDA stub driver): whole it plans them; without the
library it prints 'Unable to load any of {libcudnn_engines_tensor_ir...}'
and refuses with CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED. The tool,
`aitk-validate deps --json` on libcudnn.so.9, must then warn of exactly
that link as opened at run time (import works; the first call fails), and
of no opened library when whole. The cuDNN 9.1.0.70 of the torch251
layout, which names no such library, must get no such warning either
(when that layout is in the cache).

Exit 0 agree, 1 a disagreement, 77 skipped (the layout is not cached).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

IR = "libcudnn_engines_tensor_ir.so.9"
DRIVER = "libcuda.so.1"  # the driver's: the GPU checks judge it, and this VM has none


def cudnn_lib(cache, layout):
    hits = glob.glob(os.path.join(cache, layout, "lib", "python3.*", "site-packages", "nvidia",
                                  "cudnn", "lib", "libcudnn.so.9"))
    return os.path.dirname(hits[0]) if hits else None


def opened_warnings(tool, lib):
    """The (requester, library) links the tool finds wrong under a library
    opened at run time."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    r = subprocess.run([tool, "deps", "--json", os.path.join(lib, "libcudnn.so.9")],
                       capture_output=True, text=True, env=env, timeout=600)
    if r.returncode not in (0, 1):
        sys.exit(f"aitk-validate deps: exit {r.returncode}: {r.stderr.strip()}")
    root = json.loads(r.stdout)["roots"][0]
    # A second copy in ld.so.cache (this VM's CUDA toolkit has cuDNN 9.19) is
    # a warning of its own kind, not a missing library.
    return r.returncode, {tuple(w["chain"][-2:]) for w in root["warnings"] + root["problems"]
                          if w.get("opened_at_run_time") and w["kind"] != "duplicate"
                          and w["chain"][-1] != DRIVER}


def plan(planner, stub, lib, cu13):
    env = dict(os.environ, LD_LIBRARY_PATH=f"{stub}:{lib}:{cu13}",
               AITK_CUDNN_VERSION_AT_LEAST="92801")
    r = subprocess.run([planner], capture_output=True, text=True, env=env, timeout=600)
    return r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--planner", required=True)
    ap.add_argument("--stub", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cache", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "aitk-validate", "realworld", "linux"))
    a = ap.parse_args()
    newest = cudnn_lib(a.cache, "torch215-cudnn-newest")
    if not newest:
        print("skipped: no torch215-cudnn-newest layout in the cache "
              "(realworld.linux.torch215-cudnn-newest installs it)")
        sys.exit(77)
    cu13 = os.path.join(os.path.dirname(os.path.dirname(newest)), "cu13", "lib")
    failures = []

    text = plan(a.planner, a.stub, newest, cu13)
    if "SUBLIBRARY_LOADING_FAILED" in text:
        failures.append(f"whole cuDNN 9.28: the planner could not load a sub-library: {text[-600:]}")
    rc, links = opened_warnings(a.tool, newest)
    if links:
        failures.append(f"whole cuDNN 9.28: the tool warns of {sorted(links)}")
    print(f"cuDNN 9.28 whole: planned; the tool: exit {rc}, opened-library warnings {sorted(links)}")

    gone = os.path.join(a.work, "cudnn-928-no-tensor-ir")
    shutil.rmtree(gone, ignore_errors=True)
    os.makedirs(gone)
    for f in os.listdir(newest):
        if f != IR:
            try:
                os.link(os.path.join(newest, f), os.path.join(gone, f))
            except OSError:
                shutil.copy2(os.path.join(newest, f), os.path.join(gone, f))
    text = plan(a.planner, a.stub, gone, cu13)
    if "Unable to load any of {libcudnn_engines_tensor_ir" not in text or \
            "SUBLIBRARY_LOADING_FAILED" not in text:
        failures.append(f"without {IR}: cuDNN did not fail on it: {text[-600:]}")
    rc, links = opened_warnings(a.tool, gone)
    if links != {("libcudnn_graph.so.9", IR)}:
        failures.append(f"without {IR}: the tool warns of {sorted(links)}, not of "
                        f"libcudnn_graph.so.9 -> {IR} alone")
    if rc != 0:
        failures.append(f"without {IR}: the tool fails (exit {rc}) what imports")
    print(f"cuDNN 9.28 without {IR}: cuDNN refuses (SUBLIBRARY_LOADING_FAILED); the tool: "
          f"exit {rc}, warns of {sorted(links)}")
    shutil.rmtree(gone, ignore_errors=True)

    old = cudnn_lib(a.cache, "torch251")
    if old:
        rc, links = opened_warnings(a.tool, old)
        if links:
            failures.append(f"cuDNN 9.1 (torch251): the tool warns of {sorted(links)}")
        print(f"cuDNN 9.1 whole: the tool: exit {rc}, opened-library warnings {sorted(links)}")
    else:
        print("cuDNN 9.1: the torch251 layout is not in the cache; not judged")
    for f in failures:
        print(f"DISAGREE: {f}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
