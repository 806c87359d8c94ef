#!/usr/bin/env python3
"""Real-world corpus, Linux: what PyTorch's memory-efficient attention keeps
of an attention mask for its backward, against models/cost.yaml, in
ai-toolkit's own environment (the aitk-startup layout: torch 2.15.0 from
PyPI, pinned by hash).

The cost model counts a masked call's converted mask as kept from the
forward to the backward, mask_bytes (flop_rules.attention_mask) an element:
the autograd node of _scaled_dot_product_efficient_attention, the kernel a
masked call runs on a GPU, must keep the bias it was given, whole and in
its dtype (bf16: 2 bytes), for a (batch, heads, L, L) mask and for a
(batch, 1, L, L) one broadcast over the heads. Meta tensors stand in for
the GPU's (no memory, no kernel, the same autograd graph), so no GPU is
needed.

Exit 77 (CTest: skipped) when PyPI cannot be reached to fill the cache.
"""
import json
import os
import re
import subprocess
import sys

import aitk_startup
import realworld as rw

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

PROBE = r"""
import json, torch
L = 1536
q = torch.empty(1, 24, L, 128, device="meta", dtype=torch.bfloat16, requires_grad=True)
k = torch.empty_like(q, requires_grad=True)
v = torch.empty_like(q, requires_grad=True)
found = {"torch": torch.__version__}
for name, shape in (("per_head", (1, 24, L, L)), ("pairwise", (1, 1, L, L))):
    bias = torch.empty(*shape, device="meta", dtype=torch.bfloat16)
    out = torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, bias, True)
    node = out[0].grad_fn
    kept = getattr(node, "_saved_attn_bias", None)
    found[name] = {"node": type(node).__name__,
                   "shape": list(kept.shape) if kept is not None else None,
                   "bytes": kept.element_size() if kept is not None else None,
                   "given": list(shape)}
print(json.dumps(found))
"""


def mask_bytes():
    """flop_rules.attention_mask.mask_bytes of models/cost.yaml."""
    with open(os.path.join(ROOT, "models", "cost.yaml"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^  attention_mask:\n(?:    .*\n)*?    mask_bytes: (\d+)\n", text, re.M)
    return int(m.group(1)) if m else None


def main():
    if not rw.corpus_args():
        return rw.SKIP
    python = os.path.join(aitk_startup.startup_venv(), "bin", "python")
    r = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("the probe exited %d: %s" % (r.returncode, r.stderr[-2000:]))
    found = json.loads(r.stdout)
    print("torch %s" % found["torch"])
    want = mask_bytes()
    rw.check(want is not None, "models/cost.yaml flop_rules.attention_mask.mask_bytes: %s" % want)
    for name in ("per_head", "pairwise"):
        f = found[name]
        rw.check(f["node"] == "ScaledDotProductEfficientAttentionBackward0",
                 "%s: the efficient attention's backward node (%s)" % (name, f["node"]))
        rw.check(f["shape"] == f["given"],
                 "%s: autograd keeps the bias whole (%s, given %s)" % (name, f["shape"],
                                                                    f["given"]))
        rw.check(f["bytes"] == want,
                 "%s: %s bytes an element kept; models/cost.yaml mask_bytes %s" % (
                     name, f["bytes"], want))
    return rw.finish(7, "PyTorch's autograd (the efficient attention's saved bias)")


if __name__ == "__main__":
    sys.exit(main())
