#!/usr/bin/env python3
"""Real-world corpus, Linux: models/cost.yaml's per-Linear figures for the
base paths PyTorch's dispatcher sees (base_linear_kernels cast and torchao,
fp8_compute_backward_gemms, fp8_compute_cast_bytes), against
ci/base-linear-kernels.py run in ai-toolkit's own environment (the
aitk-startup layout: torch 2.15.0 and torchao 0.10.0 from PyPI, pinned by
hash). The ops counted are the ones PyTorch dispatches; the script only adds
them up. A torch or torchao whose ops change makes the figures disagree
here, and cost.yaml then says what the new versions do.

Exit 77 (CTest: skipped) when PyPI cannot be reached to fill the cache.
"""
import os
import re
import subprocess
import sys

import aitk_startup
import realworld as rw

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def cost_yaml():
    """The figures cost.yaml gives, read as text (the file's own layout)."""
    text = open(os.path.join(ROOT, "models", "cost.yaml")).read()
    figures = {}
    for path in ("cast", "torchao"):
        m = re.search(r"^  base_linear_kernels:\n(?:    .*\n|      .*\n)*?    %s:\n"
                      r"      forward: (\d+)\n      backward: (\d+)\n" % path, text, re.M)
        figures[path] = (int(m.group(1)), int(m.group(2))) if m else None
    for key in ("fp8_compute_backward_gemms", "fp8_compute_cast_bytes"):
        m = re.search(r"^  %s:\n    value: ([0-9.]+)\n" % key, text, re.M)
        figures[key] = float(m.group(1)) if m else None
    return figures


def measured(python):
    """What ci/base-linear-kernels.py counts with this environment's torch."""
    r = subprocess.run([python, os.path.join(ROOT, "ci", "base-linear-kernels.py")],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("ci/base-linear-kernels.py exited %d: %s" % (r.returncode, r.stderr[-2000:]))
    print(r.stdout, end="")
    found = {}
    for path in ("cast", "torchao"):
        m = re.search(r"^%s +forward \+(\d+) kernels, backward \+(\d+) \((\d+) GEMMs backward\)"
                      % path, r.stdout, re.M)
        found[path] = (int(m.group(1)), int(m.group(2))) if m else None
        if path == "torchao" and m:
            found["fp8_compute_backward_gemms"] = float(m.group(3))
    m = re.search(r"^torchao +one scaled cast to fp8: ([0-9.]+) B", r.stdout, re.M)
    found["fp8_compute_cast_bytes"] = float(m.group(1)) if m else None
    return found


def main():
    if not rw.corpus_args():
        return rw.SKIP
    venv = aitk_startup.startup_venv()
    want, got = cost_yaml(), measured(os.path.join(venv, "bin", "python"))
    for key in ("cast", "torchao", "fp8_compute_backward_gemms", "fp8_compute_cast_bytes"):
        rw.check(want[key] is not None and want[key] == got.get(key),
                 "cost.yaml %s %s; counted %s" % (key, want[key], got.get(key)))
    return rw.finish(4, "PyTorch's dispatcher (ci/base-linear-kernels.py)")


if __name__ == "__main__":
    sys.exit(main())
