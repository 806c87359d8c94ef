#!/usr/bin/env python3
"""How well could the cost model's default efficiencies fit the reported jobs?

Searches a grid of the five defaults of models/cost.yaml (GEMM, attention
forward and backward, bandwidth, per-step overhead), runs
`aitk-validate predict --reported` for each through AITK_DATA_DIR, and prints
the settings whose worst predicted/reported ratio is smallest. This is a
question about the data, not a calibration: fitting a handful of reports with five
numbers proves little, and docs/predict.md quotes the result only to say why the
sourced defaults are kept.

Usage: python3 ci/fit-reported.py [path/to/aitk-validate]   (about 10 s)
"""
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# GEMM and attention are fractions of each GPU's matmul rate (models/gpus.yaml),
# bandwidth of its datasheet bandwidth.
GRID = {
    "gemm": [0.25, 0.3, 0.4, 0.45, 0.6, 0.875],
    "attention_fwd": [0.35, 0.6, 0.85],
    "attention_bwd": [0.35, 0.6, 0.85],
    "bandwidth": [0.5, 0.7, 0.9],
    "step_overhead_s": [0.05, 0.2, 0.4],
}


def set_value(text, key, value):
    out, n = re.subn(r"(\n  %s:\n    value: )[0-9.]+" % key, r"\g<1>%g" % value, text)
    if n != 1:
        sys.exit("fit-reported: models/cost.yaml has no '%s: value:' entry" % key)
    return out


def without_attention_by_cc(text):
    """The grid's attention shares apply to every GPU: the shares by compute
    capability, which would override them on Ampere and Ada, are dropped."""
    out, n = re.subn(r"\n  attention_by_cc:\n(?:    .*\n)+", "\n", text)
    if n != 1:
        sys.exit("fit-reported: models/cost.yaml has no 'attention_by_cc:' block")
    return out


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "build/release/aitk-validate")
    with tempfile.TemporaryDirectory() as data:
        shutil.copytree(os.path.join(REPO, "models"), os.path.join(data, "models"),
                        ignore=shutil.ignore_patterns("*.c", "*.h", "*.txt"))
        cost_path = os.path.join(data, "models/cost.yaml")
        base = open(cost_path, encoding="utf-8").read()
        env = dict(os.environ, AITK_DATA_DIR=data)
        out_json = os.path.join(data, "out.json")

        def judge(text):
            """The worst |log ratio| over the reported rows, and the ratios."""
            with open(cost_path, "w", encoding="utf-8") as f:
                f.write(text)
            subprocess.run([exe, "predict", "--reported", "--json", out_json], env=env,
                           stdout=subprocess.DEVNULL, check=True)
            rows = json.load(open(out_json, encoding="utf-8"))["reported"]
            return (max(abs(math.log(r["ratio"])) for r in rows),
                    [round(r["ratio"], 2) for r in rows])

        # The sourced defaults, for comparison with the best of the grid.
        worst, ratios = judge(base)
        print("models/cost.yaml as it is: worst-case factor %.3fx  %s" % (math.exp(worst), ratios))
        results = []
        for values in itertools.product(*GRID.values()):
            text = without_attention_by_cc(base)
            for key, value in zip(GRID, values):
                text = set_value(text, key, value)
            worst, ratios = judge(text)
            results.append((worst, values, ratios))
        results.sort()
        print("%d settings tried; best worst-case factors (predicted/reported per report):"
              % len(results))
        for worst, values, ratios in results[:5]:
            setting = ", ".join("%s %g" % kv for kv in zip(GRID, values))
            print("  %.3fx  %s  %s" % (math.exp(worst), setting, ratios))


if __name__ == "__main__":
    main()
