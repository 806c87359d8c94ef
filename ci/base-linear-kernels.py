#!/usr/bin/env python3
"""What one base Linear costs an eager step beyond a bf16 Linear, by the way a
trainer stores or computes its weight, counted by PyTorch itself.

models/cost.yaml `base_linear_kernels` gives, per path, the kernels a frozen
base Linear launches besides a bf16 Linear's one GEMM, forward and backward,
for the host term of models/cost.c; `fp8_compute_cast_bytes` gives what
torchao's float8 training moves per element it scales and casts. This script
counts the paths whose extra work is plain aten ops, on the CPU, with the
dispatch-mode counters of ci/autograd-saved.py (aten ops that are not views;
on a GPU each launches a kernel):

  bf16     nn.Linear in bf16, frozen: the baseline (one GEMM each way);
  cast     the weight stored as torch.float8_e4m3fn with no scale, run under
           autocast (kohya-ss/sd-scripts --fp8_base): autocast casts it to
           bf16 for its matmul;
  torchao  torchao's float8 training, as diffusers' --do_fp8_training calls
           it (convert_to_float8_training with Float8LinearConfig(
           pad_inner_dim=True)): dynamic tensorwise scaling of each GEMM
           operand, and, from its autograd Function's backward, a gradient
           GEMM for the frozen weight as well (printed: GEMMs backward).

optimum-quanto's and bitsandbytes' paths run inside a custom op or a tensor
subclass, whose inner ops a dispatch mode does not see; cost.yaml counts
those from their code.

Run it where torch and torchao come from PyPI, e.g.
  python3 -m venv /tmp/v && /tmp/v/bin/pip install torch torchao
  /tmp/v/bin/python ci/base-linear-kernels.py
Exit codes: 0 counted; 2 a package missing.
"""

import contextlib
import importlib.util
import os
import sys

try:
    import torch
    import torch.nn as nn
except ImportError as e:
    sys.exit(f"base-linear-kernels: {e} (install torch from PyPI)")

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("autograd_saved",
                                              os.path.join(HERE, "autograd-saved.py"))
saved = importlib.util.module_from_spec(spec)
spec.loader.exec_module(saved)

TOKENS, IN, OUT = 64, 256, 512


FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)
NAMES = {(OUT, IN): "W", (1, TOKENS, IN): "X", (TOKENS, IN): "X", (TOKENS, OUT): "dY"}


class Gemms(saved.KernelCount):
    """KernelCount that also counts the GEMMs among the kernels and names the
    tensors cast to fp8 (W the weight, X the input, dY the output's
    gradient)."""

    def __init__(self):
        super().__init__()
        self.gemms = 0
        self.fp8_casts = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        self.gemms += name in saved.GEMM_OPS
        out = super().__torch_dispatch__(func, types, args, kwargs)
        if name == "_to_copy" and isinstance(out, torch.Tensor) and out.dtype in FP8:
            self.fp8_casts.append(NAMES.get(tuple(out.shape), str(tuple(out.shape))))
        return out


def count(linear, autocast=False):
    """Kernels and GEMMs of one forward and one backward of a frozen Linear."""
    x = torch.randn(1, TOKENS, IN, dtype=torch.bfloat16, requires_grad=True)
    fwd, bwd = Gemms(), Gemms()
    amp = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
    with amp, fwd:
        y = linear(x)
    grad = torch.randn_like(y)
    with bwd:
        y.backward(grad)
    return fwd, bwd


def frozen_bf16():
    return nn.Linear(IN, OUT, bias=True).to(torch.bfloat16).requires_grad_(False)


def cast_fp8():
    linear = frozen_bf16()
    linear.weight.data = linear.weight.data.to(torch.float8_e4m3fn)
    return linear


def torchao_fp8():
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training
    model = nn.Sequential(frozen_bf16())
    convert_to_float8_training(model, config=Float8LinearConfig(pad_inner_dim=True))
    return model


def cast_bytes_per_element():
    """Bytes one dynamic scaled cast of a bf16 tensor to fp8 moves per element
    (the amax, the scale, the scaled and clamped cast), as ElementwiseTraffic
    counts an op's inputs and outputs."""
    # The module names the config class where it imports it from (torchao
    # renamed that module after 0.10); its defaults are an input, tensorwise.
    from torchao.float8 import float8_scaling_utils as scaling
    t = torch.randn(4096, 1024, dtype=torch.bfloat16)
    traffic = saved.ElementwiseTraffic()
    with traffic:
        scaling.hp_tensor_to_float8_dynamic(t, torch.float8_e4m3fn, scaling.LinearMMConfig())
    return traffic.bytes / t.numel()


def main():
    try:
        import torchao
    except ImportError as e:
        print(f"base-linear-kernels: {e} (install torchao from PyPI)", file=sys.stderr)
        return 2
    print(f"torch {torch.__version__}, torchao {torchao.__version__}; a Linear of {IN} -> {OUT}"
          f" with bias, {TOKENS} tokens, frozen")
    base_f, base_b = count(frozen_bf16())
    print(f"bf16     forward {base_f.kernels} kernels, backward {base_b.kernels}"
          f" ({base_b.gemms} GEMM)")
    for name, linear, autocast in (("cast", cast_fp8(), True), ("torchao", torchao_fp8(), False)):
        f, b = count(linear, autocast)
        print(f"{name:8s} forward +{f.kernels - base_f.kernels} kernels,"
              f" backward +{b.kernels - base_b.kernels} ({b.gemms} GEMMs backward);"
              f" cast to fp8: forward {' '.join(f.fp8_casts) or 'none'},"
              f" backward {' '.join(b.fp8_casts) or 'none'}")
    print(f"torchao  one scaled cast to fp8: {cast_bytes_per_element():.1f} B per bf16 element")
    return 0


if __name__ == "__main__":
    sys.exit(main())
