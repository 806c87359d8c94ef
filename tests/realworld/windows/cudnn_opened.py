#!/usr/bin/env python3
"""Real-world check of cuDNN's sub-DLLs, which cudnn64_9.dll loads by name
at run time and imports none of (validate/libdeps/opened.yaml).

The DLLs are PyPI's nvidia-cudnn-cu12 9.1.0.70 win_amd64 wheel, pinned by
sha256 and cached beside the torch wheels of run_corpus.py. Two folders
laid out as torch\\lib holds cuDNN: all eight DLLs, and the same without
cudnn_graph64_9.dll. Each is judged twice:

  * the oracle, Wine's loader in a child process: loadlib.exe (does
    cudnn64_9.dll load, as at import) and cudnn_probe.exe (every DLL of the
    folder loaded by path, as `import torch` does, then the first call into
    cuDNN, cudnnGetVersion);
  * the tool: `aitk-validate deps --json --windows-root PREFIX/drive_c`
    on cudnn64_9.dll.

Agreement: with every DLL, the call answers and the tool finds nothing
wrong; without the graph DLL, cudnn64_9.dll still loads and the tool
finds no problem (import works), the call fails naming
cudnn_graph64_9.dll, and the tool warns of exactly that link as opened at
run time. Exit 0 agree, 1 a disagreement, 77 skipped, as run_corpus.py.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import zipfile

import run_corpus as corpus

WHEEL = ("9.1.0.70", "nvidia_cudnn_cu12-9.1.0.70-py3-none-win_amd64.whl",
         "6278562929433d68365a07a4a1546c237ba2849852c0d4b2262a486e805b977a")
SHIM, GRAPH = "cudnn64_9.dll", "cudnn_graph64_9.dll"


def extract(cache, wheel, want):
    """nvidia/cudnn/bin/*.dll of the wheel under CACHE/x/cudnn-VERSION."""
    root = os.path.join(cache, "x", "cudnn-" + WHEEL[0])
    bin_dir = os.path.join(root, "nvidia", "cudnn", "bin")
    stamp = os.path.join(root, ".sha256")
    if os.path.exists(stamp) and open(stamp).read().strip() == want:
        return bin_dir
    shutil.rmtree(root, ignore_errors=True)
    with zipfile.ZipFile(wheel) as z:
        for m in z.namelist():
            if m.startswith("nvidia/cudnn/bin/") and m.lower().endswith(".dll"):
                z.extract(m, root)
    with open(stamp, "w") as f:
        f.write(want + "\n")
    return bin_dir


def layout(bin_dir, folder, leave_out):
    """The DLLs of bin_dir in folder (hard links where the file system allows)."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for d in sorted(os.listdir(bin_dir)):
        if d == leave_out:
            continue
        try:
            os.link(os.path.join(bin_dir, d), os.path.join(folder, d))
        except OSError:
            shutil.copy2(os.path.join(bin_dir, d), os.path.join(folder, d))


def probe(wine, exe, prefix, folder):
    dlls = [SHIM] + sorted(d for d in os.listdir(folder) if d != SHIM)
    r = subprocess.run([wine, exe, corpus.winpath(folder)] +
                       [corpus.winpath(os.path.join(folder, d)) for d in dlls],
                       capture_output=True, text=True, env=corpus.wine_env(prefix), timeout=600)
    return r.returncode, r.stdout + r.stderr


def judge(tool, winroot, dll):
    r = subprocess.run([tool, "deps", "--json", "--windows-root", winroot, dll],
                       capture_output=True, text=True, timeout=600)
    if r.returncode not in (0, 1):
        sys.exit(f"aitk-validate deps {dll}: exit {r.returncode}: {r.stderr.strip()}")
    root = json.loads(r.stdout)["roots"][0]
    return r.returncode, root


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--cache", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "aitk-validate", "realworld"))
    a = ap.parse_args()
    a.cache = os.path.join(a.cache, "windows")
    os.makedirs(a.work, exist_ok=True)
    wine, loadlib = corpus.tools(a.work, a.source_dir)
    probe_exe = os.path.join(a.work, "cudnn_probe.exe")
    src = os.path.join(a.source_dir, "cudnn_probe.c")
    if not os.path.exists(probe_exe) or os.path.getmtime(probe_exe) < os.path.getmtime(src):
        subprocess.run([shutil.which("x86_64-w64-mingw32-gcc"), "-municode", "-O1", "-o",
                        probe_exe, src], check=True)
    prefix = os.path.join(a.work, "wineprefix")
    subprocess.run([wine, "wineboot", "-i"], env=corpus.wine_env(prefix), capture_output=True,
                   timeout=600)
    winroot = os.path.join(prefix, "drive_c")
    version, name, want = WHEEL
    bin_dir = extract(a.cache, corpus.fetch(a.cache, version, name, want,
                                            package="nvidia-cudnn-cu12"), want)
    failures = []

    whole = os.path.join(a.work, "cudnn", "whole")
    layout(bin_dir, whole, None)
    rc, text = probe(wine, probe_exe, prefix, whole)
    if "version 90100" not in text:
        failures.append(f"every DLL present: cudnnGetVersion did not answer: {text[-600:]}")
    rc, root = judge(a.tool, winroot, os.path.join(whole, SHIM))
    if rc != 0 or root["problems"] or root["warnings"] or root["unknown"]:
        failures.append("every DLL present: the tool reports "
                        f"{[p['chain'] for p in root['problems'] + root['warnings']]}, "
                        f"unknown {[u['chain'] for u in root['unknown']]}")
    print(f"all eight DLLs: cudnnGetVersion answers; the tool: exit {rc}, "
          f"{len(root['warnings'])} warnings")

    gone = os.path.join(a.work, "cudnn", "graphgone")
    layout(bin_dir, gone, GRAPH)
    verdict, _ = corpus.oracle(wine, loadlib, prefix, os.path.join(gone, SHIM), gone)
    rc, text = probe(wine, probe_exe, prefix, gone)
    if verdict != "loaded":
        failures.append(f"without {GRAPH}: {SHIM} does not load ({verdict})")
    if "version " in text or f"Could not locate {GRAPH}" not in text:
        failures.append(f"without {GRAPH}: the call did not fail on it: {text[-600:]}")
    rc, root = judge(a.tool, winroot, os.path.join(gone, SHIM))
    links = {tuple(w["chain"][-2:]) for w in root["warnings"] if w.get("opened_at_run_time")}
    if rc != 0 or root["problems"] or root["unknown"]:
        failures.append(f"without {GRAPH}: the tool fails what imports: exit {rc}, "
                        f"{[p['chain'] for p in root['problems'] + root['unknown']]}")
    if (SHIM, GRAPH) not in links:
        failures.append(f"without {GRAPH}: the tool does not warn of {SHIM} -> {GRAPH} "
                        f"(opened at run time); it warns of {sorted(links)}")
    print(f"without {GRAPH}: {SHIM} {verdict}; the call: "
          f"{'fails naming it' if f'Could not locate {GRAPH}' in text else text[-200:]}; "
          f"the tool: exit {rc}, warns of {sorted(links)}")
    for f in failures:
        print(f"DISAGREE: {f}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
