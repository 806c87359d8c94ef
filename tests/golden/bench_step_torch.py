#!/usr/bin/env python3
"""Time the training step of models/step.h in PyTorch eager on the CPU.

The counterpart of tests/step/bench_step (C): the same MMDiT (FLUX-shaped)
model as gen_step_golden.py defines -- the golden generator's own forward, in
fp32 here -- with LoRA on every Linear in the blocks, the flow-matching loss,
autograd backward and torch.optim.AdamW, timed per step. Developer tool, not
run by CI (PyTorch from PyPI).

    OMP_NUM_THREADS=2 python3 tests/golden/bench_step_torch.py --threads 2 \\
        --hidden 256 --heads 4 --double 2 --single 4 --img 256 --txt 64 --rank 16

Checkpointing: off (the C run to compare with is `bench_step --ckpt 0`);
--ckpt 1 wraps the whole transformer forward in torch.utils.checkpoint is NOT
what ai-toolkit does per block, so it is not offered.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_step_golden as g  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="flux1-dev", choices=["flux1-dev", "chroma"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--mlp", type=int, default=0, help="default 4 x hidden")
    ap.add_argument("--double", type=int, default=2)
    ap.add_argument("--single", type=int, default=4)
    ap.add_argument("--img", type=int, default=256)
    ap.add_argument("--txt", type=int, default=64)
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--steps", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    g.DT = torch.float32
    d = g.tiny_dims(args.model)
    d.update(hidden=args.hidden, heads=args.heads, head_dim=args.hidden // args.heads,
             mlp=args.mlp or 4 * args.hidden, double_blocks=args.double,
             single_blocks=args.single)
    b, ti, tt, seed = args.batch, args.img, args.txt, 42
    chroma = args.model == "chroma"
    P = g.Params(seed, args.rank, float(args.rank))
    ch = d["in_channels"]
    x0 = g.draw(seed, "x0", b * ti * ch, 1.0).reshape(b, ti, ch)
    txt = g.tensor(g.draw(seed, "txt", b * tt * d["t5_dim"], 1.0).reshape(b, tt, d["t5_dim"]))
    pooled = None if chroma else g.tensor(
        g.draw(seed, "pooled", b * d["clip_dim"], 1.0).reshape(b, d["clip_dim"]))

    def loss_of(step):
        return g.mmdit_step(P, d, chroma, seed, step, x0, txt, pooled, b, ti, tt)

    loss_of(1)  # draws every tensor once (not timed)
    opt = torch.optim.AdamW([P.lora[n] for n in sorted(P.lora)], lr=1e-4, betas=(0.9, 0.999),
                            eps=1e-8, weight_decay=0.01)
    n_lora = sum(p.numel() for p in P.lora.values())
    print("torch %s, %d threads, model %s hidden %d heads %d double %d single %d img %d txt %d "
          "rank %d batch %d, %d LoRA params" % (torch.__version__, torch.get_num_threads(),
                                                args.model, args.hidden, args.heads,
                                                args.double, args.single, ti, tt, args.rank, b,
                                                n_lora))
    times = []
    for i in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        loss = loss_of(i + 1)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        print("step %d: %.2f ms loss %.5f%s" % (i + 1, dt * 1e3, float(loss.detach()),
                                               " warm-up" if i < args.warmup else ""))
        if i >= args.warmup:
            times.append(dt)
    print("median %.2f ms over %d steps (min %.2f, max %.2f)" % (
        statistics.median(times) * 1e3, len(times), min(times) * 1e3, max(times) * 1e3))


if __name__ == "__main__":
    np.seterr(over="ignore")
    main()
