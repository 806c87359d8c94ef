#!/usr/bin/env python3
"""Write the whole-model golden files of the training step (models/step.h).

Run by developers, not by CI (PyTorch from PyPI: `pip install torch numpy`):

    python3 tests/golden/gen_step_golden.py --out tests/golden/data

For each architecture (FLUX.1-dev, Chroma, OmniGen2) this script builds the
tiny configuration of models/<id>.yaml (tiny_dims) in PyTorch, written from
the architecture's description (diffusers' modules, the published configs), not
from the C code: frozen base weights, LoRA adapters on every Linear inside
the blocks, the flow-matching loss, autograd for every LoRA gradient and
torch.optim.AdamW for three steps.

The weights and inputs are not stored: both sides draw them from the same
counter-based generator (`draw` below, models/step.h aitk_step_draw), keyed
by (seed, tensor name, element index). Tensor names are the contract between
the two sides; a name the C model lacks or spells differently fails the C
test. Values are drawn in fp32 (exactly the C values) and the reference is
computed in float64, so the C side is compared with an independent, more
precise computation.

File "step_<id>.bin" (the format of gen_golden.py):
    config     [B, img_tokens, txt_tokens, rank, alpha, lr, weight_decay, seed]
    loss.1 .. loss.3               the loss of steps 1-3 (before each update)
    grad.<lora tensor>             its gradient in step 1
    after3.<lora tensor>           its value after three AdamW steps
"""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

from gen_golden import write

# Compute dtype: float64 for the goldens; bench_step_torch.py sets float32.
DT = torch.float64


def tensor(a):
    """numpy fp32/fp64 values as a torch tensor of the compute dtype."""
    return torch.from_numpy(np.asarray(a, dtype=np.float64)).to(DT)


def fnv1a64(name):
    h = 0xCBF29CE484222325
    for c in name.encode("utf-8"):
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def draw(seed, name, n, scale, start=0):
    """Values start..start+n-1 of stream `name`, fp32, as aitk_step_draw."""
    with np.errstate(over="ignore"):
        j = np.arange(start + 1, start + n + 1, dtype=np.uint64)
        z = np.uint64((seed ^ fnv1a64(name)) & 0xFFFFFFFFFFFFFFFF) + j * np.uint64(
            0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)
    return (np.float32(2.0) * u - np.float32(1.0)) * np.float32(scale)


def sinusoid(value, dim):
    """[cos(v f_i), sin(v f_i)], f_i = 10000^(-i/half), double then fp32."""
    half = dim // 2
    args = [value * math.exp(-math.log(10000.0) * i / half) for i in range(half)]
    return np.array([math.cos(a) for a in args] + [math.sin(a) for a in args],
                    dtype=np.float32)


class Params:
    """Lazily drawn tensors, float64; LoRA ones are leaves with gradients."""

    def __init__(self, seed, rank, alpha):
        self.seed, self.r, self.scale = seed, rank, alpha / rank
        self.base, self.lora = {}, {}

    def get(self, name, shape, scale, one_plus=False, lora=False):
        store = self.lora if lora else self.base
        if name not in store:
            v = draw(self.seed, name, int(np.prod(shape)), scale)
            if one_plus:
                v = np.float32(1.0) + v
            t = tensor(v.reshape(shape))
            store[name] = t.requires_grad_(True) if lora else t
        return store[name]

    def norm(self, name, c):
        return self.get(name, (c,), 0.125, one_plus=True)

    def linear(self, name, x, fin, fout, lora, bias=True):
        s = np.float32(1.0 / math.sqrt(fin))
        y = x @ self.get(name + ".w", (fout, fin), s).T
        if bias:
            y = y + self.get(name + ".b", (fout,), s)
        if lora:
            a = self.get(name + ".lora_a", (self.r, fin), s, lora=True)
            b = self.get(name + ".lora_b", (fout, self.r), np.float32(0.25 / math.sqrt(self.r)),
                         lora=True)
            y = y + self.scale * ((x @ a.T) @ b.T)
        return y


def layer_norm(x):
    return F.layer_norm(x, (x.shape[-1],), eps=1e-6)


def rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def gelu(x):
    return F.gelu(x, approximate="tanh")


def positions(tt, ti, text_diagonal):
    cols = max(1, math.ceil(math.sqrt(ti)))
    pos = [[float(i)] * 3 if text_diagonal else [0.0] * 3 for i in range(tt)]
    pos += [[float(tt) if text_diagonal else 0.0, float(i // cols), float(i % cols)]
            for i in range(ti)]
    return torch.tensor(pos, dtype=torch.float64)


def rope_axes(d, flux):
    a0 = round(d * 16.0 / 128.0) if flux else d // 3
    a0 -= a0 % 2
    a1 = (d - a0) // 2
    a1 -= a1 % 2
    return (a0, a1, d - a0 - a1)


def rope_tables(pos, axes, theta=10000.0):
    angles = []
    for a, n in enumerate(axes):
        j = torch.arange(n // 2, dtype=torch.float64)
        freq = theta ** (-2.0 * j / n)
        angles.append(pos[:, a:a + 1] * freq[None, :])
    ang = torch.cat(angles, dim=1)
    return torch.cos(ang).to(DT), torch.sin(ang).to(DT)


def rope(x, cos, sin):
    """x (B,T,H,D); pairs (2p, 2p+1) rotated by the angle of pair p."""
    b, t, h, d = x.shape
    x0, x1 = x.reshape(b, t, h, d // 2, 2).unbind(-1)
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack([x0 * c - x1 * s, x0 * s + x1 * c], -1).reshape(b, t, h, d)


def attention(q, k, v):
    """q (B,T,Hq,D), k v (B,T,Hkv,D): unmasked softmax attention, GQA."""
    rep = q.shape[2] // k.shape[2]
    k = k.repeat_interleave(rep, dim=2)
    v = v.repeat_interleave(rep, dim=2)
    o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    return o.transpose(1, 2)


def flow_inputs(seed, step, x0, b, ti, ch):
    """t per sample, x_t and the target, in fp32 as the C side computes them."""
    s = step - 1
    t = (np.float32(0.5) * (draw(seed, "t", b, 1.0, start=s * b) + np.float32(1.0)))
    n = b * ti * ch
    noise = draw(seed, "noise", n, np.float32(math.sqrt(3.0)), start=s * n).reshape(b, ti, ch)
    tt = t.reshape(b, 1, 1)
    xt = (np.float32(1.0) - tt) * x0 + tt * noise
    target = noise - x0
    return t, tensor(xt), tensor(target)


def mmdit_step(P, d, chroma, seed, step, x0, txt, pooled, b, ti, tt):
    """FLUX.1-dev / Chroma forward and loss (see models/step_flux.c)."""
    C, H, D, M, ch = d["hidden"], d["heads"], d["head_dim"], d["mlp"], d["in_channels"]
    nd, ns = d["double_blocks"], d["single_blocks"]
    t, xt, target = flow_inputs(seed, step, x0, b, ti, ch)
    T = ti + tt
    lin = P.linear
    if chroma:
        ain, ahid, alayers = d["approx_in"], d["approx_hidden"], d["approx_layers"]
        V = 12 * nd + 3 * ns + 2
        q = ain // 4
        rows = [np.concatenate([sinusoid(float(t[i]) * 1000.0, q), sinusoid(0.0, q),
                                sinusoid(float(v), 2 * q)]) for i in range(b) for v in range(V)]
        a = tensor(np.stack(rows)).reshape(b, V, ain)
        a = lin("approx.in", a, ain, ahid, False)
        for l in range(alayers):
            n = rms_norm(a, P.norm("approx.%d.norm" % l, ahid))
            a = a + lin("approx.%d.out" % l, F.silu(lin("approx.%d.in" % l, n, ahid, ahid, False)),
                        ahid, ahid, False)
        mods = lin("approx.out", a, ahid, C, False)  # (B, V, C)

        def rows_of(v0, k):
            return [mods[:, v0 + i, None, :] for i in range(k)]
    else:
        fr, clip = d["freq_dim"], d["clip_dim"]
        ts = tensor(np.stack([sinusoid(float(t[i]) * 1000.0, fr) for i in range(b)]))
        gs = tensor(np.stack([sinusoid(1000.0, fr)] * b))
        vec = lin("time_2", F.silu(lin("time_1", ts, fr, C, False)), C, C, False)
        vec = vec + lin("guidance_2", F.silu(lin("guidance_1", gs, fr, C, False)), C, C, False)
        vec = vec + lin("text_2", F.silu(lin("text_1", pooled, clip, C, False)), C, C, False)
        svec = F.silu(vec)

        def own_rows(name, k):
            m = lin(name, svec, C, k * C, True)
            return [m[:, None, i * C:(i + 1) * C] for i in range(k)]

    cos, sin = rope_tables(positions(tt, ti, False), rope_axes(D, True))
    img = lin("x_embedder", xt, ch, C, False)
    tx = lin("context_embedder", txt, d["t5_dim"], C, False)

    def qkv(prefix, x, n):
        q = lin(prefix + "q", x, C, C, True).reshape(b, n, H, D)
        k = lin(prefix + "k", x, C, C, True).reshape(b, n, H, D)
        v = lin(prefix + "v", x, C, C, True).reshape(b, n, H, D)
        return q, k, v

    for i in range(nd):
        streams = {"img": img, "txt": tx}
        ms, parts = {}, {}
        for si, s in enumerate(("img", "txt")):
            p = "double.%d.%s_" % (i, s)
            ms[s] = rows_of(12 * i + 6 * si, 6) if chroma else own_rows(p + "mod", 6)
            x = layer_norm(streams[s]) * (1 + ms[s][1]) + ms[s][0]
            q, k, v = qkv(p, x, streams[s].shape[1])
            q = rms_norm(q, P.norm(p + "norm_q", D))
            k = rms_norm(k, P.norm(p + "norm_k", D))
            parts[s] = (q, k, v)
        q = torch.cat([parts["txt"][0], parts["img"][0]], 1)
        k = torch.cat([parts["txt"][1], parts["img"][1]], 1)
        v = torch.cat([parts["txt"][2], parts["img"][2]], 1)
        o = attention(rope(q, cos, sin), rope(k, cos, sin), v).reshape(b, T, C)
        att = {"txt": o[:, :tt], "img": o[:, tt:]}
        for s in ("img", "txt"):
            p = "double.%d.%s_" % (i, s)
            m = ms[s]
            h = streams[s] + m[2] * lin(p + "out", att[s], C, C, True)
            x = layer_norm(h) * (1 + m[4]) + m[3]
            f = lin(p + "mlp_out", gelu(lin(p + "mlp_in", x, C, M, True)), M, C, True)
            streams[s] = h + m[5] * f
        img, tx = streams["img"], streams["txt"]

    h = torch.cat([tx, img], 1)
    for j in range(ns):
        p = "single.%d." % j
        m = rows_of(12 * nd + 3 * j, 3) if chroma else own_rows(p + "mod", 3)
        x = layer_norm(h) * (1 + m[1]) + m[0]
        q, k, v = qkv(p, x, T)
        q = rope(rms_norm(q, P.norm(p + "norm_q", D)), cos, sin)
        k = rope(rms_norm(k, P.norm(p + "norm_k", D)), cos, sin)
        a = attention(q, k, v).reshape(b, T, C)
        u = gelu(lin(p + "mlp_in", x, C, M, True))
        h = h + m[2] * lin(p + "out", torch.cat([a, u], -1), C + M, C, True)

    if chroma:
        scale, shift = rows_of(V - 2, 2)
    else:
        fm = lin("norm_out_mod", svec, C, 2 * C, False)
        scale, shift = fm[:, None, :C], fm[:, None, C:]
    x = layer_norm(h[:, tt:]) * (1 + scale) + shift
    pred = lin("proj_out", x, C, ch, False)
    return F.mse_loss(pred, target)



def omnigen2_step(P, d, seed, step, x0, txt, b, ti, tt):
    """OmniGen2 forward and loss (see models/step_omnigen2.c)."""
    C, Hq, Hkv, D, Fd = d["hidden"], d["heads"], d["kv_heads"], d["head_dim"], d["ffn"]
    ch, feat, cond, fr = d["in_channels"], d["text_feat"], d["cond_dim"], d["freq_dim"]
    t, xt, target = flow_inputs(seed, step, x0, b, ti, ch)
    T = ti + tt
    lin = P.linear
    ts = tensor(np.stack([sinusoid(float(t[i]) * 1000.0, fr) for i in range(b)]))
    temb = lin("time_2", F.silu(lin("time_1", ts, fr, cond, False)), cond, cond, False)
    stemb = F.silu(temb)
    cos, sin = rope_tables(positions(tt, ti, True), rope_axes(D, False))

    def block(p, h, mod, cs, sn):
        n = h.shape[1]
        if mod:
            m = lin(p + "mod", stemb, cond, 4 * C, True)
            sc_msa, g_msa, sc_mlp, g_mlp = [m[:, None, i * C:(i + 1) * C] for i in range(4)]
        a = rms_norm(h, P.norm(p + "norm1", C))
        if mod:
            a = a * (1 + sc_msa)
        q = lin(p + "q", a, C, Hq * D, True, bias=False).reshape(b, n, Hq, D)
        k = lin(p + "k", a, C, Hkv * D, True, bias=False).reshape(b, n, Hkv, D)
        v = lin(p + "v", a, C, Hkv * D, True, bias=False).reshape(b, n, Hkv, D)
        q = rope(rms_norm(q, P.norm(p + "norm_q", D)), cs, sn)
        k = rope(rms_norm(k, P.norm(p + "norm_k", D)), cs, sn)
        o = lin(p + "out", attention(q, k, v).reshape(b, n, Hq * D), Hq * D, C, True, bias=False)
        o = rms_norm(o, P.norm(p + "norm2", C))
        h = h + (g_msa * o if mod else o)
        f = rms_norm(h, P.norm(p + "ffn_norm1", C))
        if mod:
            f = f * (1 + sc_mlp)
        y = lin(p + "ffn_w2", F.silu(lin(p + "ffn_w1", f, C, Fd, True, bias=False)) *
                lin(p + "ffn_w3", f, C, Fd, True, bias=False), Fd, C, True, bias=False)
        y = rms_norm(y, P.norm(p + "ffn_norm2", C))
        return h + (g_mlp * y if mod else y)

    c = lin("caption_embedder", rms_norm(txt, P.norm("caption_norm", feat)), feat, C, False)
    x = lin("x_embedder", xt, ch, C, False)
    for i in range(d["refiner_layers"]):
        c = block("context_refiner.%d." % i, c, False, cos[:tt], sin[:tt])
    for i in range(d["refiner_layers"]):
        x = block("noise_refiner.%d." % i, x, True, cos[tt:], sin[tt:])
    h = torch.cat([c, x], 1)
    for i in range(d["layers"]):
        h = block("layers.%d." % i, h, True, cos, sin)
    scale = lin("norm_out_mod", stemb, cond, C, False)[:, None, :]
    pred = lin("proj_out", layer_norm(h[:, tt:]) * (1 + scale), C, ch, False)
    return F.mse_loss(pred, target)


def unused_adapters(P, d):
    """OmniGen2's ref_image_refiner: no reference image in text-to-image
    training, so it never runs, but its adapters exist (zero gradient; AdamW's
    weight decay still moves them, as the C optimizer steps every adapter)."""
    C, Hq, Hkv, D, Fd, cond = (d["hidden"], d["heads"], d["kv_heads"], d["head_dim"], d["ffn"],
                               d["cond_dim"])
    shapes = {"mod": (cond, 4 * C), "q": (C, Hq * D), "k": (C, Hkv * D), "v": (C, Hkv * D),
              "out": (Hq * D, C), "ffn_w1": (C, Fd), "ffn_w3": (C, Fd), "ffn_w2": (Fd, C)}
    for i in range(d["refiner_layers"]):
        for name, (fin, fout) in shapes.items():
            p = "ref_image_refiner.%d.%s" % (i, name)
            P.get(p + ".lora_a", (P.r, fin), np.float32(1.0 / math.sqrt(fin)), lora=True)
            P.get(p + ".lora_b", (fout, P.r), np.float32(0.25 / math.sqrt(P.r)), lora=True)

# The golden configuration (the C test reads it back from "config").
BATCH, IMG_TOKENS, TXT_TOKENS, RANK, ALPHA, LR, WD, SEED = 2, 16, 8, 2, 4.0, 1e-3, 0.01, 7


def tiny_dims(model_id):
    """models/<id>.yaml's tiny_dims: a flat map of `  name: integer` lines
    (read by hand so the script needs no YAML package)."""
    here = os.path.dirname(os.path.abspath(__file__))
    dims, inside = {}, False
    with open(os.path.join(here, "..", "..", "models", model_id + ".yaml")) as f:
        for line in f:
            text = line.split("#", 1)[0].rstrip()
            if not text:
                continue
            if not text.startswith(" "):
                inside = text == "tiny_dims:"
                continue
            if inside:
                key, value = text.strip().split(":", 1)
                dims[key.strip()] = int(value)
    if not dims:
        raise SystemExit("%s.yaml has no tiny_dims" % model_id)
    return dims


def run(model_id, out_dir):
    d = tiny_dims(model_id)
    b, ti, tt = BATCH, IMG_TOKENS, TXT_TOKENS
    P = Params(SEED, RANK, ALPHA)
    if model_id == "omnigen2":
        feat = d["text_feat"]
        x0 = draw(SEED, "x0", b * ti * d["in_channels"], 1.0).reshape(b, ti, d["in_channels"])
        txt = torch.from_numpy(draw(SEED, "txt", b * tt * feat, 1.0).reshape(b, tt, feat)
                               .astype(np.float64))

        def step(s):
            return omnigen2_step(P, d, SEED, s, x0, txt, b, ti, tt)
    else:
        ch = d["in_channels"]
        x0 = draw(SEED, "x0", b * ti * ch, 1.0).reshape(b, ti, ch)
        txt = torch.from_numpy(draw(SEED, "txt", b * tt * d["t5_dim"], 1.0)
                               .reshape(b, tt, d["t5_dim"]).astype(np.float64))
        chroma = model_id == "chroma"
        pooled = None if chroma else torch.from_numpy(
            draw(SEED, "pooled", b * d["clip_dim"], 1.0).reshape(b, d["clip_dim"])
            .astype(np.float64))

        def step(s):
            return mmdit_step(P, d, chroma, SEED, s, x0, txt, pooled, b, ti, tt)

    out = {"config": torch.tensor([b, ti, tt, RANK, ALPHA, LR, WD, SEED], dtype=torch.float64)}
    step(1)  # draws every LoRA tensor, so the optimizer sees them all
    if model_id == "omnigen2":
        unused_adapters(P, d)
    names = sorted(P.lora)
    opt = torch.optim.AdamW([P.lora[n] for n in names], lr=LR, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=WD)
    for s in (1, 2, 3):
        opt.zero_grad()
        loss = step(s)
        loss.backward()
        for n in names:  # adapters that did not run: zero gradient, as the C side
            if P.lora[n].grad is None:
                P.lora[n].grad = torch.zeros_like(P.lora[n])
        out["loss.%d" % s] = loss.detach()
        if s == 1:
            for n in names:
                out["grad." + n] = P.lora[n].grad.detach().clone()
        opt.step()
    for n in names:
        out["after3." + n] = P.lora[n].detach()
    path = os.path.join(out_dir, "step_%s.bin" % model_id.replace("-", "_"))
    write(path, out)
    print("%s: %d LoRA tensors, loss %.6f, %d bytes" % (path, len(names), float(out["loss.1"]),
                                                       os.path.getsize(path)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "data"))
    ap.add_argument("--models", default="flux1-dev,chroma,omnigen2")
    args = ap.parse_args()
    torch.set_default_dtype(torch.float64)
    os.makedirs(args.out, exist_ok=True)
    for model_id in args.models.split(","):
        run(model_id, args.out)


if __name__ == "__main__":
    main()
