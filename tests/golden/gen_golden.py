#!/usr/bin/env python3
"""Write the kernel golden files: per-op reference tensors from PyTorch.

Run by developers, not by CI (PyTorch from PyPI: `pip install torch numpy`):

    python3 tests/golden/gen_golden.py --out tests/golden/data

Every op gets tiny shapes and inputs drawn from a seeded generator in fp32;
the reference is computed in float64 with PyTorch's own functions
(F.layer_norm, F.gelu(approximate="tanh"), F.scaled_dot_product_attention,
torch.optim.AdamW, autograd for every gradient), so the C kernels are
compared with an independent implementation, not with a transcription of
themselves. The C tests (tests/golden/test_golden.c) say what tolerance
they allow and why.

File format (little-endian), one file per op, "<op>.bin":
    8 bytes  magic "AITKGOLD"
    u32      version (1)
    u32      tensor count
    per tensor:
        u32      name length, then the name (UTF-8, no terminator)
        u32      ndim (1..8), then ndim u32 dimensions
        f32      prod(dims) values, row-major
Scalars are stored as 1-element tensors.
"""
import argparse
import os
import struct

import torch
import torch.nn.functional as F

MAGIC = b"AITKGOLD"
VERSION = 1


def write(path, tensors):
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<II", VERSION, len(tensors)))
        for name, t in tensors.items():
            t = t.detach().to(torch.float32).contiguous()  # exact for fp32 inputs
            if t.dim() == 0:
                t = t.reshape(1)
            raw = name.encode("utf-8")
            f.write(struct.pack("<I", len(raw)))
            f.write(raw)
            f.write(struct.pack("<I", t.dim()))
            f.write(struct.pack("<%dI" % t.dim(), *t.shape))
            f.write(t.numpy().astype("<f4").tobytes())


class Draw:
    """fp32 draws (so the C side sees the very same values), used in float64."""

    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)

    def __call__(self, *shape, lo=-1.0, hi=1.0):
        t = torch.rand(*shape, generator=self.g, dtype=torch.float32) * (hi - lo) + lo
        return t.to(torch.float64)


def leaf(t):
    return t.clone().requires_grad_(True)


def gen_lora_linear(d):
    n, fin, fout, r, alpha = 5, 7, 6, 3, 16.0
    x, w, b = leaf(d(n, fin)), d(fout, fin), d(fout)
    la, lb = leaf(d(r, fin)), leaf(d(fout, r))
    dy = d(n, fout)
    y = F.linear(x, w, b) + (alpha / r) * F.linear(F.linear(x, la), lb)
    y.backward(dy)
    return {"x": x, "w": w, "bias": b, "la": la, "lb": lb, "scale": torch.tensor(alpha / r),
            "dy": dy, "y": y, "dx": x.grad, "dla": la.grad, "dlb": lb.grad}


def gen_layernorm(d):
    x, dy = leaf(d(4, 24, lo=-1.0, hi=2.0)), d(4, 24)
    y = F.layer_norm(x, (24,), eps=1e-6)
    y.backward(dy)
    return {"x": x, "dy": dy, "y": y, "dx": x.grad}


def gen_rmsnorm(d):
    x, w, dy = leaf(d(4, 24, lo=-1.0, hi=2.0)), leaf(d(24, lo=0.5, hi=1.5)), d(4, 24)
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    y.backward(dy)
    return {"x": x, "weight": w, "dy": dy, "y": y, "dx": x.grad, "dweight": w.grad}


def gen_modulate(d):
    b, t, c = 2, 3, 5
    x, mod, resid = leaf(d(b, t, c)), leaf(d(b, 3 * c)), leaf(d(b, t, c))
    shift, scale, gate = mod[:, None, :c], mod[:, None, c:2 * c], mod[:, None, 2 * c:]
    dy, dout = d(b, t, c), d(b, t, c)
    y = x * (1 + scale) + shift
    out = resid + gate * x
    (y * dy).sum().add((out * dout).sum()).backward()
    # x feeds both: split its gradient by recomputing each branch alone.
    xm = leaf(x.detach())
    (xm * (1 + scale.detach()) + shift.detach()).backward(dy)
    xg = leaf(x.detach())
    (resid.detach() + gate.detach() * xg).backward(dout)
    return {"x": x, "mod": mod, "resid": resid, "dy": dy, "dout": dout, "y": y, "out": out,
            "dx_modulate": xm.grad, "dx_gate": xg.grad, "dmod": mod.grad,
            "dresid": resid.grad}


def rope_freqs(pos, axes, theta):
    """diffusers-style 3-axis table, real form, each frequency repeated twice."""
    cos, sin = [], []
    for a, dim in enumerate(axes):
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
        ang = pos[:, a:a + 1] * freqs[None, :]
        cos.append(ang.cos().repeat_interleave(2, dim=1))
        sin.append(ang.sin().repeat_interleave(2, dim=1))
    return torch.cat(cos, 1), torch.cat(sin, 1)


def gen_rope(d):
    b, h, axes = 2, 2, (4, 6, 6)
    # 2 text tokens at (0,0,0), then a 2x3 image grid at (0, row, col), as FLUX's ids.
    pos = torch.tensor([[0, 0, 0], [0, 0, 0]] + [[0, i, j] for i in range(2) for j in range(3)],
                       dtype=torch.float64)
    t, dh = pos.shape[0], sum(axes)
    x, dy = leaf(d(b, t, h, dh)), d(b, t, h, dh)
    cos, sin = rope_freqs(pos, axes, 10000.0)
    x_re, x_im = x.reshape(b, t, h, dh // 2, 2).unbind(-1)
    rot = torch.stack([-x_im, x_re], -1).flatten(3)
    y = x * cos[None, :, None, :] + rot * sin[None, :, None, :]
    y.backward(dy)
    return {"pos": pos, "axes": torch.tensor(axes, dtype=torch.float64), "x": x, "dy": dy,
            "y": y, "dx": x.grad}


def gen_pointwise(d):
    a, u, dy = leaf(d(64, lo=-3.0, hi=3.0)), leaf(d(64)), d(64)
    out = {"a": a, "u": u, "dy": dy}
    for name, fn in (("gelu", lambda v: F.gelu(v, approximate="tanh")), ("silu", F.silu)):
        v = leaf(a.detach())
        y = fn(v)
        y.backward(dy)
        out[name + "_y"], out[name + "_da"] = y, v.grad
    y = F.silu(a) * u
    y.backward(dy)
    out.update({"swiglu_y": y, "swiglu_da": a.grad, "swiglu_du": u.grad})
    return out


def gen_attention(d):
    b, t, hq, hkv, dh = 2, 7, 4, 2, 8
    q, k, v = leaf(d(b, t, hq, dh, lo=-2, hi=2)), leaf(d(b, t, hkv, dh, lo=-2, hi=2)), \
        leaf(d(b, t, hkv, dh))
    dy = d(b, t, hq, dh)
    rep = hq // hkv
    kk = k.transpose(1, 2).repeat_interleave(rep, dim=1)
    vv = v.transpose(1, 2).repeat_interleave(rep, dim=1)
    y = F.scaled_dot_product_attention(q.transpose(1, 2), kk, vv).transpose(1, 2)
    y.backward(dy)
    return {"q": q, "k": k, "v": v, "dy": dy, "y": y, "dq": q.grad, "dk": k.grad,
            "dv": v.grad}


def gen_mse(d):
    pred, target = leaf(d(3, 16)), d(3, 16)
    loss = F.mse_loss(pred, target)
    loss.backward()
    return {"pred": pred, "target": target, "loss": loss, "dpred": pred.grad}


def gen_adamw(d):
    p0 = d(300)
    grads = [d(300, lo=-0.1, hi=0.1) for _ in range(3)]
    p = leaf(p0)
    opt = torch.optim.AdamW([p], lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    for g in grads:
        p.grad = g.clone()
        opt.step()
    return {"p0": p0, "g1": grads[0], "g2": grads[1], "g3": grads[2], "p3": p}


def gen_fp8(d):
    """PyTorch's float8_e4m3fn cast (saturating in current releases) of every
    e4m3 value, every midpoint between neighbours (the ties) and the fp32
    values just beside them, random magnitudes from below the smallest
    subnormal to past 448, and +-inf. Codes are stored as floats (exact)."""
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    vals = codes.view(torch.float8_e4m3fn).to(torch.float32)
    finite = vals[~vals.isnan()]
    pos = torch.sort(finite[finite > 0]).values
    mids = torch.cat([torch.zeros(1), pos])
    mids = (mids[1:] + mids[:-1]) / 2
    up = torch.nextafter(mids, torch.full_like(mids, float("inf")))
    down = torch.nextafter(mids, torch.zeros_like(mids))
    g = torch.Generator().manual_seed(8)
    mag = torch.exp2(torch.rand(400, generator=g) * 23.0 - 13.0)
    sign = torch.where(torch.rand(400, generator=g) < 0.5, -1.0, 1.0)
    special = torch.tensor([448.0, 449.0, 464.0, 470.0, 480.0, 1e6, float("inf"), -float("inf")])
    x = torch.cat([finite, mids, up, down, -mids, -up, -down, mag * sign, special])
    q = x.to(torch.float8_e4m3fn).view(torch.uint8).to(torch.float32)
    return {"x": x, "code": q}


def gen_bf16(d):
    """PyTorch's fp32 -> bfloat16 cast of random bit patterns and of exact
    ties (low half 0x8000) and their neighbours; bits stored as floats."""
    g = torch.Generator().manual_seed(16)
    hi = torch.randint(0, 0x7F80, (300,), generator=g, dtype=torch.int64)
    hi = hi | (torch.randint(0, 2, (300,), generator=g) << 15)
    lo = torch.randint(0, 0x10000, (300,), generator=g, dtype=torch.int64)
    pats = torch.cat([(hi << 16) | lo, (hi << 16) | 0x8000, (hi << 16) | 0x7FFF,
                      (hi << 16) | 0x8001])
    x = pats.to(torch.int32).view(torch.float32)
    h = x.to(torch.bfloat16).view(torch.int16).to(torch.int64) & 0xFFFF
    return {"x": x, "bits": h.to(torch.float32)}


GENERATORS = {
    "lora_linear": gen_lora_linear, "layernorm": gen_layernorm, "rmsnorm": gen_rmsnorm,
    "modulate": gen_modulate, "rope": gen_rope, "pointwise": gen_pointwise,
    "attention": gen_attention, "mse": gen_mse, "adamw": gen_adamw, "fp8": gen_fp8,
    "bf16": gen_bf16,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "data"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for i, (name, gen) in enumerate(GENERATORS.items()):
        tensors = gen(Draw(1000 + i))
        path = os.path.join(args.out, name + ".bin")
        write(path, tensors)
        print("wrote %s (%d tensors, %d bytes)" % (path, len(tensors), os.path.getsize(path)))


if __name__ == "__main__":
    main()
