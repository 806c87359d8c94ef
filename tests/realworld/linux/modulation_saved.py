#!/usr/bin/env python3
"""Real-world corpus, Linux: what a block keeps for its backward when its
modulation takes no gradient, against ci/autograd-saved.py run in
ai-toolkit's own environment (the aitk-startup layout: torch 2.15.0,
diffusers 0.39.0 and peft 0.18.1 from PyPI, pinned by hash).

Two figures of the cost model rest on it:
- models/flux1-dev.yaml's norm Linears (`modulates:`): left unadapted, the
  modulation takes no gradient and the stream keeps lora_saves (plain,
  under autocast) fewer hidden-sized tensors a token: the gap between
  diffusers' default targets with a frozen conditioning and with one that
  trains, in diffusers' FLUX blocks;
- models/trainers.yaml's SimpleTuner Chroma counts: diffusers' Chroma blocks
  with SimpleTuner's targets and a frozen conditioning, rounded as the file
  rounds them.
PyTorch's autograd does the keeping; the script only adds up what it kept.
A torch or diffusers whose blocks keep otherwise makes them disagree here.

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


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def lora_saves(text, module):
    """(lora_saves, lora_saves_autocast) of the Linear whose modules list
    `module`, from the spec's one-line entry."""
    m = re.search(r"modules: \[%s\], modulates: \w+, lora_saves: (\d+), lora_saves_autocast: (\d+)"
                  % re.escape(module), text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def simpletuner_chroma(text):
    """SimpleTuner's Chroma counts (value, autocast) by block group."""
    block = text[text.index("  simpletuner:"):]
    block = block[block.index("      chroma:"):]
    found = {}
    for group in ("double_stream", "single_stream"):
        m = re.search(r"%s: \{value: (\d+), autocast: (\d+)," % group, block)
        found[group] = (int(m.group(1)), int(m.group(2))) if m else None
    return found


def saved(python, *args):
    """{(block, autocast): tensors a token} from ci/autograd-saved.py."""
    r = subprocess.run([python, os.path.join(ROOT, "ci", "autograd-saved.py"), "--lora", "peft",
                        *args], capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        sys.exit("ci/autograd-saved.py %s exited %d: %s" % (" ".join(args), r.returncode,
                                                            r.stderr[-2000:]))
    print(r.stdout, end="")
    found = {}
    for m in re.finditer(r"^(double|single) block, (bf16, no autocast|autocast \(CUDA policy\))"
                         r" *: saved +([0-9.]+) per token", r.stdout, re.M):
        found[(m.group(1), m.group(2).startswith("autocast"))] = float(m.group(3))
    return found


def main():
    if not rw.corpus_args():
        return rw.SKIP
    python = os.path.join(aitk_startup.startup_venv(), "bin", "python")
    flux, trainers = read("models/flux1-dev.yaml"), read("models/trainers.yaml")
    frozen = saved(python, "--targets", "diffusers", "--modulation", "frozen")
    trained = saved(python, "--targets", "diffusers", "--modulation", "trained")
    # A double block has a norm Linear per stream, each counted by its own
    # stream's tokens: their lora_saves is the whole block's gap a token.
    for block, module in (("double", "norm1.linear"), ("double", "norm1_context.linear"),
                          ("single", "norm.linear")):
        want = lora_saves(flux, module)
        for cast in (False, True):
            gap = trained.get((block, cast), 0) - frozen.get((block, cast), 0)
            rw.check(want is not None and abs(gap - want[cast]) < 0.05,
                     "models/flux1-dev.yaml %s lora_saves%s %s; a frozen modulation keeps %.2f "
                     "fewer a token" % (module, "_autocast" if cast else "",
                                        want and want[cast], gap))
    want = simpletuner_chroma(trainers)
    got = saved(python, "--code", "diffusers-chroma", "--targets", "simpletuner",
                "--modulation", "frozen")
    for block in ("double", "single"):
        for cast in (False, True):
            figure = want.get(block + "_stream")
            measured = got.get((block, cast))
            rw.check(figure is not None and measured is not None
                     and figure[cast] == round(measured),
                     "models/trainers.yaml simpletuner chroma %s_stream %s %s; measured %s"
                     % (block, "autocast" if cast else "value", figure and figure[cast],
                        measured))
    return rw.finish(10, "PyTorch's autograd (ci/autograd-saved.py --modulation)")


if __name__ == "__main__":
    sys.exit(main())
