#!/usr/bin/env python3
"""What PyTorch's autograd keeps for the backward of one FLUX block, counted
by PyTorch itself.

models/flux1-dev.yaml and models/chroma.yaml give `saved_per_token` and
`saved_per_token_autocast`: the activations a double-stream and a
single-stream block hold from the forward to the backward, in hidden-sized
bf16 tensors per token, counted by hand from diffusers' code. This script is
the oracle for those counts: it builds the real diffusers blocks at FLUX's
width (3072, 24 heads of 128), puts a LoRA on their Linear layers with peft
(as diffusers' train_dreambooth_lora_flux.py does; ai-toolkit's own LoRA
module saves the same tensors: the input of its down projection and the
low-rank output of it), runs one forward on the CPU under
torch.autograd.graph.saved_tensors_hooks and adds up the storage of every
tensor autograd saved, each storage once, leaving out the weights and the
rotary table (held anyway, and shared by every block). Two token counts are
run, and the difference per token is the figure, so terms that do not grow
with the tokens (the conditioning vector) drop out. The conditioning takes
no gradient of its own unless --modulation trained: a LoRA job's embedders
are frozen, so the block's modulation trains only through a LoRA on its
own norm Linear, and what the modulation's products keep depends on it.

Under mixed precision (accelerate's autocast, which diffusers' scripts use),
CUDA's autocast runs layer_norm in float32 and the Linear layers in bf16.
The CPU's autocast keeps layer_norm in bf16, so `--autocast` emulates CUDA's
policy for the ops these blocks call (PyTorch docs, "Automatic Mixed
Precision package - torch.amp", CUDA op-specific behavior: linear, matmul
and scaled_dot_product_attention autocast to the lower precision;
layer_norm, group_norm, pow and rsqrt to float32; others run in the widest
input type).

Nothing here is installed by the project: run it in a virtual environment
with torch and diffusers from PyPI (peft too, for peft's LoRA; without it,
or with --lora plain, a LoRA module as ai-toolkit computes it, which saves
the same tensors), e.g.
  python3 -m venv /tmp/v && /tmp/v/bin/pip install torch diffusers peft
  /tmp/v/bin/python ci/autograd-saved.py
It prints one line per block and precision: the saved tensors a token, and
what the block's own backward holds beyond them at its peak (the incoming
gradient and the gradients in flight), read from the allocator's events
under torch.profiler on the CPU, from torch.cuda's counters with --device
cuda (where autocast is CUDA's own, not emulated). models/flux1-dev.yaml
names the versions it ran with; ci/gpu-check.sh runs it on the GPU.
With --kernels it counts instead the kernels each block launches (aten ops
that are not views): FLUX's and Chroma's blocks as above, and OmniGen2's as
ai-toolkit runs them (--code aitk-omnigen2, kernels only), for the host
term of models/cost.c.
Exit codes: 0 measured; 77 --device cuda without a CUDA GPU (skipped).
"""

import argparse
import contextlib
import inspect
import os
import sys

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

HIDDEN = 3072
HEADS = 24
HEAD_DIM = 128

# What diffusers' train_dreambooth_lora_flux.py adapts when --lora_layers is
# not given (huggingface/diffusers examples/dreambooth, parse_args and main:
# target_modules); "all" adapts every nn.Linear of the block, as ai-toolkit's
# LoRASpecialNetwork does for the transformer blocks.
DIFFUSERS_TARGETS = [
    "attn.to_k", "attn.to_q", "attn.to_v", "attn.to_out.0",
    "attn.add_k_proj", "attn.add_q_proj", "attn.add_v_proj", "attn.to_add_out",
    "ff.net.0.proj", "ff.net.2", "ff_context.net.0.proj", "ff_context.net.2",
]

# What SimpleTuner adapts by default on FLUX.1 and Chroma (--flux_lora_target
# all): the attention projections, no MLP (bghira/SimpleTuner
# simpletuner/helpers/models/flux/model.py and chroma/model.py @bc8e6ab773,
# get_lora_target_layers).
SIMPLETUNER_TARGETS = [
    "to_k", "to_q", "to_v", "to_qkv", "add_qkv_proj", "add_k_proj", "add_q_proj",
    "add_v_proj", "to_out.0", "to_add_out",
]

LOWER = {F.linear, torch.matmul, torch.bmm, torch.mm, torch.addmm, torch.baddbmm,
         F.scaled_dot_product_attention}
FLOAT32 = {F.layer_norm, F.group_norm, torch.pow, torch.Tensor.pow, torch.rsqrt,
           torch.Tensor.rsqrt}


def _cast(value, dtype):
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != dtype:
        return value.to(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    return value


class CudaAutocastPolicy(TorchFunctionMode):
    """CUDA's bf16 autocast casts, for the ops these blocks call, on the CPU."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in LOWER:
            args, kwargs = _cast(args, torch.bfloat16), {k: _cast(v, torch.bfloat16) for k, v in kwargs.items()}
        elif func in FLOAT32:
            args, kwargs = _cast(args, torch.float32), {k: _cast(v, torch.float32) for k, v in kwargs.items()}
        return func(*args, **kwargs)


class PlainLoRA(torch.nn.Module):
    """A LoRA as ai-toolkit's module computes it (toolkit/network_mixins.py):
    base(x) + up(down(x)) * scale. It saves what peft's does: the input for
    the down projection's gradient, the low-rank output for the up one's."""

    def __init__(self, base, rank, dtype):
        super().__init__()
        self.base = base
        kw = dict(bias=False, device=base.weight.device, dtype=dtype)
        self.down = torch.nn.Linear(base.in_features, rank, **kw)
        self.up = torch.nn.Linear(rank, base.out_features, **kw)

    def forward(self, x):
        # ai-toolkit's module scales the low-rank output and then multiplies
        # it by the network's multiplier: two kernels that save nothing.
        return self.base(x) + (self.up(self.down(x)) * 1.0) * 1.0


def adapt(block, targets, lora_dtype, lora):
    """A rank-16 LoRA on the block's Linear layers (peft's, or PlainLoRA with
    lora="plain"); the base frozen."""
    block = block.to_empty(device=torch.get_default_device()).to(torch.bfloat16)
    with torch.no_grad():
        for p in block.parameters():
            p.normal_(0.0, 0.02)
    block.requires_grad_(False)
    linears = [n for n, m in block.named_modules() if isinstance(m, torch.nn.Linear)]
    if targets == "all":
        names = linears
    else:
        named = {"diffusers": DIFFUSERS_TARGETS, "simpletuner": SIMPLETUNER_TARGETS}
        wanted = named.get(targets) or targets.split(",")
        names = [t for t in wanted if any(n == t or n.endswith("." + t) for n in linears)]
    if lora == "plain":
        for name in [n for n in linears if n in names or any(n.endswith("." + t) for t in names)]:
            parent, _, leaf = name.rpartition(".")
            owner = block.get_submodule(parent) if parent else block
            setattr(owner, leaf, PlainLoRA(getattr(owner, leaf), 16, lora_dtype))
    else:
        from peft import LoraConfig, inject_adapter_in_model
        config = LoraConfig(r=16, lora_alpha=16, lora_dropout=0.0, target_modules=names)
        block = inject_adapter_in_model(config, block)
    for n, p in block.named_parameters():
        if "lora_" in n or ".down." in n or ".up." in n or n.startswith(("down.", "up.")):
            p.data = p.data.to(lora_dtype)
            p.requires_grad_(True)
    return block


def bf16(*shape):
    return torch.randn(*shape, dtype=torch.bfloat16, requires_grad=True)


class Diffusers:
    """diffusers' FluxTransformerBlock and FluxSingleTransformerBlock, which
    ai-toolkit, diffusers' scripts and SimpleTuner run for FLUX.1."""

    kinds = ("double", "single")

    def __init__(self, src):
        if src:
            sys.path.insert(0, src)
        import diffusers
        from diffusers.models.transformers import transformer_flux
        self.m = transformer_flux
        self.version = f"diffusers {diffusers.__version__}"

    def block(self, kind):
        with torch.device("meta"):
            if kind == "double":
                return self.m.FluxTransformerBlock(HIDDEN, HEADS, HEAD_DIM)
            return self.m.FluxSingleTransformerBlock(HIDDEN, HEADS, HEAD_DIM)

    def temb(self, kind):
        """The conditioning vector the block's norm Linears read."""
        return bf16(1, HIDDEN)

    def inputs(self, block, kind, img, txt):
        # The rotary table is made once per step and read by every block:
        # held whatever the block saves.
        table = (torch.randn(img + txt, HEAD_DIM), torch.randn(img + txt, HEAD_DIM))
        temb = self.temb(kind)
        # Before diffusers 0.33 the single-stream blocks took the text and
        # image tokens joined once, ahead of the first of them; later each
        # block joins them itself.
        params = inspect.signature(block.forward).parameters
        if kind == "double" or "encoder_hidden_states" in params:
            call = {"hidden_states": bf16(1, img, HIDDEN), "encoder_hidden_states": bf16(1, txt, HIDDEN)}
        else:
            call = {"hidden_states": bf16(1, txt + img, HIDDEN)}
        return dict(call, temb=temb, image_rotary_emb=table), list(table)


class DiffusersChroma(Diffusers):
    """diffusers' ChromaTransformerBlock and ChromaSingleTransformerBlock
    (diffusers 0.35 on), whose layout SimpleTuner's own Chroma blocks keep
    (bghira/SimpleTuner simpletuner/helpers/models/chroma/transformer.py:
    diffusers' FluxAttention and FeedForward under the same pruned
    AdaLayerNorm, with logging hooks that are off by default). The
    modulation comes in per block (temb: 12 or 3 vectors of the width), so
    no Linear reads it; run without the prompt's attention mask, whose
    (tokens x tokens) boolean does not grow by the token."""

    def __init__(self, src):
        super().__init__(src)
        from diffusers.models.transformers import transformer_chroma
        self.m = transformer_chroma

    def block(self, kind):
        with torch.device("meta"):
            if kind == "double":
                return self.m.ChromaTransformerBlock(HIDDEN, HEADS, HEAD_DIM)
            return self.m.ChromaSingleTransformerBlock(HIDDEN, HEADS, HEAD_DIM)

    def temb(self, kind):
        """The modulation itself, six vectors a stream (three in a single block)."""
        return bf16(1, 12 if kind == "double" else 3, HIDDEN)


class BflStyle:
    """Black Forest Labs' reference blocks as two trainers carry them:
    kohya-ss/sd-scripts library/flux_models.py (FLUX.1 under kohya) and
    ostris/ai-toolkit extensions_built_in/diffusion_models/chroma/src/layers.py
    (Chroma under ai-toolkit). --src names the folder that holds `library`
    (sd-scripts) or the chroma `src` folder (ai-toolkit)."""

    kinds = ("double", "single")

    def __init__(self, code, src):
        import importlib
        import types
        if not src:
            sys.exit(f"autograd-saved: --code {code} needs --src (see --help)")
        self.code = code
        if code == "kohya-flux":
            sys.path.insert(0, src)
            # flux_models imports the trainer's utilities (logging set-up,
            # torchvision, Intel GPU hooks); the blocks use none of them.
            for name, attrs in {"library.utils": {"setup_logging": lambda *a, **k: None},
                                "library.device_utils": {"clean_memory_on_device": lambda *a: None,
                                                         "init_ipex": lambda: None},
                                "library.custom_offloading_utils": {}}.items():
                stub = types.ModuleType(name)
                stub.__dict__.update(attrs)
                sys.modules[name] = stub
            self.m = importlib.import_module("library.flux_models")
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(src)))
            self.m = importlib.import_module(os.path.basename(os.path.abspath(src)) + ".layers")
        self.version = f"{code} from {src}"

    def block(self, kind):
        with torch.device("meta"):
            if kind == "double":
                return self.m.DoubleStreamBlock(HIDDEN, HEADS, mlp_ratio=4.0, qkv_bias=True)
            return self.m.SingleStreamBlock(HIDDEN, HEADS, mlp_ratio=4.0)

    def inputs(self, block, kind, img, txt):
        ids = torch.zeros(1, img + txt, 3)
        ids[0, txt:, 1] = torch.arange(img) // 32
        ids[0, txt:, 2] = torch.arange(img) % 32
        pe = self.m.EmbedND(dim=HEAD_DIM, theta=10000, axes_dim=[16, 56, 56])(ids)
        if self.code == "kohya-flux":
            vec = bf16(1, HIDDEN)
            if kind == "double":
                return {"img": bf16(1, img, HIDDEN), "txt": bf16(1, txt, HIDDEN), "vec": vec, "pe": pe}, [pe]
            return {"x": bf16(1, txt + img, HIDDEN), "vec": vec, "pe": pe}, [pe]

        def mod():
            return self.m.ModulationOut(shift=bf16(1, 1, HIDDEN), scale=bf16(1, 1, HIDDEN), gate=bf16(1, 1, HIDDEN))
        if kind == "double":
            return {"img": bf16(1, img, HIDDEN), "txt": bf16(1, txt, HIDDEN), "pe": pe,
                    "distill_vec": ((mod(), mod()), (mod(), mod())), "mask": None}, [pe]
        return {"x": bf16(1, txt + img, HIDDEN), "pe": pe, "distill_vec": mod(), "mask": None}, [pe]


class TritonRMSNormFn(torch.autograd.Function):
    """What OmniGen2's fused RMSNorm launches on a GPU, on the CPU: its
    forward is one Triton kernel (ops/triton/layer_norm.py _layer_norm_fwd),
    its backward one Triton kernel and the sum of the weight's per-program
    partial gradients cast to the weight's dtype (_layer_norm_bwd: _dw.sum(0)
    .to(weight.dtype)), three in all, whether the weight trains or not. A
    clone stands in for each Triton kernel: one aten op, as the count needs;
    its values are not RMSNorm's, which no count here depends on."""

    @staticmethod
    def forward(ctx, x, weight):
        rows = x.reshape(-1, x.shape[-1])
        if rows.stride(-1) != 1:
            rows = rows.contiguous()
        ctx.save_for_backward(weight)
        return rows.clone().reshape(x.shape)

    @staticmethod
    def backward(ctx, dy):
        (weight,) = ctx.saved_tensors
        rows = dy.reshape(-1, dy.shape[-1])
        if rows.stride(-1) != 1:
            rows = rows.contiguous()
        dx = rows.clone().reshape(dy.shape)
        partial = torch.empty((8, weight.shape[0]), dtype=torch.float32)
        return dx, partial.sum(0).to(weight.dtype)


class TritonRMSNorm(torch.nn.Module):
    """The RMSNorm OmniGen2's blocks take where Triton imports (ai-toolkit's
    Linux install has it), as TritonRMSNormFn counts it."""

    def __init__(self, hidden_size, eps=1e-5, **_):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))

    def forward(self, x):
        return TritonRMSNormFn.apply(x, self.weight)


class AitkOmniGen2:
    """OmniGen2's transformer block as ai-toolkit runs it on Linux
    (ostris/ai-toolkit extensions_built_in/diffusion_models/omnigen2/src:
    OmniGen2TransformerBlock with OmniGen2AttnProcessor, since ai-toolkit
    does not install flash_attn, and Triton's fused RMSNorm, counted by
    TritonRMSNorm). "modulated" is the block of the noise and reference
    refiners and of the 32 joint layers, "plain" the context refiner's. Its
    width: OmniGen2's config (hidden 2520, 21 heads, 7 key-value heads,
    multiple_of 256, norm_eps 1e-5). --src names that `src` folder; diffusers
    must import (PYTHONPATH)."""

    kinds = ("modulated", "plain")
    hidden, heads, kv_heads, cond = 2520, 21, 7, 1024

    def __init__(self, src):
        import importlib
        if not src:
            sys.exit("autograd-saved: --code aitk-omnigen2 needs --src (see --help)")
        sys.path.insert(0, os.path.dirname(os.path.abspath(src)))
        package = os.path.basename(os.path.abspath(src))
        flags = importlib.import_module(package + ".utils.import_utils")
        flags._triton_available = False       # the Triton kernels run on a GPU only
        flags._flash_attn_available = False   # not in ai-toolkit's requirements
        self.m = importlib.import_module(package + ".models.transformers.transformer_omnigen2")
        lumina = importlib.import_module(package + ".models.transformers.block_lumina2")
        self.m.RMSNorm = lumina.RMSNorm = TritonRMSNorm
        self.version = f"aitk-omnigen2 from {src}"

    def block(self, kind):
        with torch.device("meta"):
            return self.m.OmniGen2TransformerBlock(self.hidden, self.heads, self.kv_heads, 256, None, 1e-5,
                                                   modulation=kind == "modulated")

    def inputs(self, block, kind, img, txt):
        tokens = img + txt
        angles = torch.rand(1, tokens, self.hidden // self.heads // 2)
        table = torch.polar(torch.ones_like(angles), angles)
        call = {"hidden_states": bf16(1, tokens, self.hidden),
                "attention_mask": torch.ones(1, tokens, dtype=torch.bool),
                "image_rotary_emb": table}
        if kind == "modulated":
            call["temb"] = bf16(1, self.cond)
        return call, [table]


# Whether the conditioning a block reads (FLUX's temb, kohya's vec,
# Chroma's modulation vectors) takes a gradient of its own: --modulation.
# "frozen" (the default): it comes from frozen layers, as in diffusers',
# SimpleTuner's and kohya's LoRA jobs, so the block's modulation takes a
# gradient only through a LoRA on the block's own norm Linear; the products
# `norm(x) * (1 + scale)` and `gate * y` then keep their per-token operand
# only when that Linear is adapted. "trained": it takes one whatever the
# block's adapters, as in ai-toolkit's Chroma, whose forward marks the
# approximator's input requires_grad_(True) (ostris/ai-toolkit
# extensions_built_in/diffusion_models/chroma/src/model.py). ai-toolkit's
# FLUX LoRA adapts every Linear of the blocks (transformer_only, its
# default, keeps it to transformer_blocks), the norm Linears included.
MODULATION_TRAINED = False


def conditioning(value):
    """`value` (a tensor, a modulation record of tensors, or tuples of
    them) without a gradient of its own."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, tuple):
        return tuple(conditioning(v) for v in value)
    if all(hasattr(value, f) for f in ("shift", "scale", "gate")):
        return type(value)(shift=conditioning(value.shift), scale=conditioning(value.scale),
                           gate=conditioning(value.gate))
    return value


def training_inputs(code, block, kind, img, txt):
    """The block's inputs as a training step gives them: its conditioning
    with or without a gradient (MODULATION_TRAINED)."""
    call, shared = code.inputs(block, kind, img, txt)
    if not MODULATION_TRAINED:
        call = {k: conditioning(v) if k in ("temb", "vec", "distill_vec") else v
                for k, v in call.items()}
    return call, shared


def saved_bytes(code, block, kind, img, txt, autocast):
    call, shared = training_inputs(code, block, kind, img, txt)
    held = {p.untyped_storage().data_ptr() for p in block.parameters()}
    held |= {t.untyped_storage().data_ptr() for t in shared}
    seen = {}

    def pack(t):
        ptr = t.untyped_storage().data_ptr()
        if ptr not in held and ptr not in seen:
            seen[ptr] = (t.untyped_storage().nbytes(), tuple(t.shape), str(t.dtype))
        return t

    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t))
        if autocast:
            stack.enter_context(autocast_policy())
        out = block(**call)
    del out
    return sum(v[0] for v in seen.values()), seen


# Ops whose bytes the cost model counts elsewhere (GEMMs, attention) or that
# move none (views, metadata, allocation without a write; _conj only sets a
# complex tensor's conjugate bit, PyTorch docs "torch.conj").
GEMM_OPS = {"mm", "addmm", "bmm", "baddbmm", "linear", "matmul", "_addmm_activation"}
NO_TRAFFIC_OPS = {"view", "_unsafe_view", "reshape", "_reshape_alias", "transpose", "t", "permute",
                  "expand", "split", "split_with_sizes", "unbind", "slice", "select", "as_strided",
                  "detach", "alias", "unsqueeze", "squeeze", "unflatten", "flatten", "lift_fresh",
                  "empty", "empty_like", "new_empty", "empty_strided", "view_as_real",
                  "view_as_complex", "sym_size", "sym_stride", "sym_numel", "_local_scalar_dense",
                  "_conj"}


class ElementwiseTraffic(TorchDispatchMode):
    """Bytes the block's elementwise ops read and write: every aten op that is
    not a GEMM, attention or a view, its tensor inputs and outputs at their
    sizes (the cost model's `elementwise_per_token` counts the same way)."""

    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if name in GEMM_OPS or "scaled_dot_product" in name or name in NO_TRAFFIC_OPS:
            return out

        def tensors(x):
            if isinstance(x, torch.Tensor):
                return [x]
            if isinstance(x, (list, tuple)):
                return [t for v in x for t in tensors(v)]
            return []
        moved = tensors(list(args)) + tensors(list(kwargs.values())) + tensors(out)
        self.bytes += sum(t.numel() * t.element_size() for t in moved)
        return out


class KernelCount(TorchDispatchMode):
    """The aten ops a block dispatches that are not views or metadata: on a
    GPU each launches a kernel (an eager step's host time goes with them)."""

    def __init__(self):
        super().__init__()
        self.kernels = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.kernels += func.overloadpacket.__name__ not in NO_TRAFFIC_OPS
        return func(*args, **(kwargs or {}))


def forward_backward(call, block, forward, backward, autocast=False):
    """One forward of the block under the dispatch mode `forward`, then its
    backward from random output gradients under `backward`."""
    with autocast_policy() if autocast else contextlib.nullcontext():
        with forward:
            out = block(**call)
    outs = out if isinstance(out, tuple) else (out,)
    grads = [torch.randn_like(o) for o in outs]
    with backward:
        torch.autograd.backward(outs, grads)


def kernel_counts(code, block, kind, autocast, img=64, txt=16):
    """Kernels of the block's forward and of its backward (the recompute of
    gradient checkpointing apart: a checkpointed block runs its forward
    twice). FLUX's conditioning vector (temb) takes no gradient, as in a
    model whose embedders are frozen; the other codes' conditioning is left
    as models/*.yaml's kernel counts were made with it."""
    call, _ = code.inputs(block, kind, img, txt)
    call = {k: conditioning(v) if k == "temb" else v for k, v in call.items()}
    forward, backward = KernelCount(), KernelCount()
    forward_backward(call, block, forward, backward, autocast)
    return forward.kernels, backward.kernels


def frozen(code, kind):
    """The block with random bf16 weights, frozen, no adapters."""
    block = code.block(kind).to_empty(device=torch.get_default_device()).to(torch.bfloat16)
    with torch.no_grad():
        for p in block.parameters():
            p.normal_(0.0, 0.02)
    return block.requires_grad_(False)


def print_kernels(code, targets, lora_dtype, lora):
    """Kernels a block launches with no adapters, and what each adapted
    Linear adds (the difference over the count adapted), plain and under
    autocast: the figures of models/*.yaml `kernels` and models/cost.yaml
    `lora_kernels`."""
    for kind in code.kinds:
        adapted = adapt(code.block(kind), targets, lora_dtype, lora)
        n = sum(1 for m in adapted.modules()
                if isinstance(m, PlainLoRA) or hasattr(m, "lora_A"))
        for autocast in (False, True):
            f0, b0 = kernel_counts(code, frozen(code, kind), kind, autocast)
            f1, b1 = kernel_counts(code, adapted, kind, autocast)
            label = "autocast (CUDA policy)" if autocast else "bf16, no autocast"
            print(f"{kind:9} block, {label:22}: kernels without LoRA: forward {f0}, backward "
                  f"{b0}; {n} adapted Linears add forward {(f1 - f0) / n:.2f}, backward "
                  f"{(b1 - b0) / n:.2f} each")


def elementwise_traffic(code, kind, img, txt):
    """Forward and backward elementwise bytes of the block without adapters
    (the cost model counts the LoRA module's own traffic apart)."""
    block = frozen(code, kind)
    call, _ = code.inputs(block, kind, img, txt)
    forward, backward = ElementwiseTraffic(), ElementwiseTraffic()
    forward_backward(call, block, forward, backward)
    return forward.bytes, backward.bytes


def autocast_policy():
    """Autocast in bf16 as CUDA runs it: the real thing on a GPU, CUDA's
    policy emulated on the CPU."""
    if torch.get_default_device().type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return CudaAutocastPolicy()


def backward_extra_cuda(code, block, kind, img, txt, autocast):
    """As backward_extra, from the CUDA caching allocator's own counters."""
    call, _ = training_inputs(code, block, kind, img, txt)
    with autocast_policy() if autocast else contextlib.nullcontext():
        out = block(**call)
    outs = out if isinstance(out, tuple) else (out,)
    grads = [torch.randn_like(o) for o in outs]
    torch.cuda.synchronize()
    after_forward = torch.cuda.memory_allocated() - sum(g.numel() * g.element_size() for g in grads)
    torch.cuda.reset_peak_memory_stats()
    torch.autograd.backward(outs, grads)
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - after_forward


def allocator_levels(prof):
    """The bytes live after each allocator event a finished torch.profiler
    run (profile_memory=True) recorded, each allocation followed from its
    address to its free: [(timestamp, bytes live)], and the run's events."""
    import json
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".json") as trace:
        prof.export_chrome_trace(trace.name)
        with open(trace.name, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
    live, level, levels = {}, 0, []
    for e in sorted((e for e in events if e.get("name") == "[memory]"), key=lambda e: e["ts"]):
        a = e["args"]
        if a["Bytes"] > 0:
            live[a["Addr"]] = a["Bytes"]
            level += a["Bytes"]
        elif a["Addr"] in live:
            level -= live.pop(a["Addr"])
        levels.append((e["ts"], level))
    return levels, events


def backward_extra(code, block, kind, img, txt, autocast):
    """Bytes the block's backward holds at its peak beyond what the forward
    left (its saved tensors): the incoming gradient and the gradients in
    flight, from the allocator's own events (torch.profiler with
    profile_memory), each allocation followed from its address to its free."""
    from torch.profiler import ProfilerActivity, profile, record_function

    if torch.get_default_device().type == "cuda":
        return backward_extra_cuda(code, block, kind, img, txt, autocast)
    call, _ = training_inputs(code, block, kind, img, txt)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with contextlib.ExitStack() as stack:
            if autocast:
                stack.enter_context(autocast_policy())
            with record_function("forward"):
                out = block(**call)
            outs = out if isinstance(out, tuple) else (out,)
            with record_function("backward"):
                torch.autograd.backward(outs, [torch.randn_like(o) for o in outs])
    levels, events = allocator_levels(prof)
    spans = {e["name"]: (e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("name") in ("forward", "backward") and "dur" in e}
    after_forward = 0
    for ts, level in levels:
        if ts <= spans["forward"][1]:
            after_forward = level
    peak = max(level for ts, level in levels
               if spans["backward"][0] <= ts <= spans["backward"][1])
    return peak - after_forward


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", choices=["diffusers", "diffusers-chroma", "kohya-flux", "aitk-chroma",
                                           "aitk-omnigen2"],
                        default="diffusers",
                        help="whose block code to run (default: the installed diffusers' FLUX "
                             "blocks; diffusers-chroma its Chroma blocks, as SimpleTuner runs them)")
    parser.add_argument("--src", help="a checkout's folder for --code kohya-flux (the folder holding "
                        "library/), aitk-chroma (extensions_built_in/diffusion_models/chroma/src) or "
                        "aitk-omnigen2 (extensions_built_in/diffusion_models/omnigen2/src, --kernels only); "
                        "for diffusers, a folder to import diffusers from instead of the installed one")
    parser.add_argument("--targets", default="all",
                        help="all: LoRA on every Linear (ai-toolkit, kohya); diffusers: "
                             "train_dreambooth_lora_flux.py's default list; simpletuner: its "
                             "attention projections; or module names, "
                             "comma-separated (its --lora_layers: attn.to_q,attn.to_k,...)")
    parser.add_argument("--lora-dtype", choices=["bf16", "fp32"], default="bf16")
    parser.add_argument("--tokens", type=int, nargs=2, default=[384, 768],
                        help="two image-token counts; text tokens are a quarter of each")
    parser.add_argument("--list", action="store_true", help="list the saved tensors of the larger run")
    parser.add_argument("--lora", choices=["peft", "plain"], default=None,
                        help="peft's LoRA (default when peft imports) or a plain one as "
                             "ai-toolkit's module computes it (no peft needed)")
    parser.add_argument("--kernels", action="store_true",
                        help="count the kernels each block launches (aten ops that are not "
                             "views), without LoRA and per adapted Linear, instead of the "
                             "saved tensors")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                        help="where to run: on cuda, autocast is CUDA's own and the backward's "
                             "peak comes from torch.cuda's counters")
    parser.add_argument("--modulation", choices=["frozen", "trained"], default="frozen",
                        help="frozen (default): the conditioning the block reads takes no "
                             "gradient of its own (FLUX under every trainer); trained: it does "
                             "(ai-toolkit's Chroma, which marks the approximator's input as "
                             "requiring one)")
    args = parser.parse_args()
    global MODULATION_TRAINED
    MODULATION_TRAINED = args.modulation == "trained"
    if args.device == "cuda" and not torch.cuda.is_available():
        print("autograd-saved: skipped, torch %s sees no CUDA GPU" % torch.__version__, file=sys.stderr)
        return 77
    torch.set_default_device(args.device)
    lora_dtype = torch.bfloat16 if args.lora_dtype == "bf16" else torch.float32
    unit = HIDDEN * 2

    lora = args.lora
    if lora is None:
        try:
            import peft  # noqa: F401 (only whether it imports)
            lora = "peft"
        except ImportError:
            lora = "plain"
    if args.code == "diffusers":
        code = Diffusers(args.src)
    elif args.code == "diffusers-chroma":
        code = DiffusersChroma(args.src)
    elif args.code == "aitk-omnigen2":
        if not args.kernels:
            sys.exit("autograd-saved: --code aitk-omnigen2 counts kernels only (add --kernels)")
        code = AitkOmniGen2(args.src)
    else:
        code = BflStyle(args.code, args.src)
    if lora == "peft":
        import peft
        lora_name = f"peft {peft.__version__}"
    else:
        lora_name = "a plain LoRA module"
    units = "" if args.kernels else (f"; units: a {HIDDEN}-wide bf16 tensor per token ({unit} B)"
                                     f"; conditioning {args.modulation}")
    print(f"torch {torch.__version__} on {args.device}, {code.version}, {lora_name}; "
          f"LoRA r16 on {args.targets} Linear layers in {args.lora_dtype}{units}")
    if args.kernels:
        print_kernels(code, args.targets, lora_dtype, lora)
        return 0
    for kind in ("double", "single"):
        traffic = [elementwise_traffic(code, kind, img, img // 4) for img in args.tokens]
        t1, t2 = (img + img // 4 for img in args.tokens)
        fwd = (traffic[1][0] - traffic[0][0]) / (t2 - t1) / unit
        bwd = (traffic[1][1] - traffic[0][1]) / (t2 - t1) / unit
        print(f"{kind:6} block, elementwise traffic (no LoRA): forward {fwd:6.1f}, backward "
              f"{bwd:6.1f} per token ({bwd / fwd:.2f}x the forward)")
        block = adapt(code.block(kind), args.targets, lora_dtype, lora)
        for autocast in (False, True):
            sizes = []
            for img in args.tokens:
                txt = img // 4
                total, seen = saved_bytes(code, block, kind, img, txt, autocast)
                sizes.append((img + txt, total, seen))
            (t1, b1, _), (t2, b2, seen) = sizes
            per_token = (b2 - b1) / (t2 - t1) / unit
            extra = [backward_extra(code, block, kind, img, img // 4, autocast) for img in args.tokens]
            extra_per_token = (extra[1] - extra[0]) / (t2 - t1) / unit
            label = "autocast (CUDA policy)" if autocast else "bf16, no autocast"
            print(f"{kind:6} block, {label:22}: saved {per_token:6.2f} per token "
                  f"({len(seen)} tensors at {t2} tokens); its backward's peak holds "
                  f"{extra_per_token:5.2f} more")
            if args.list:
                for nbytes, shape, dtype in sorted(seen.values(), key=lambda v: -v[0]):
                    print(f"    {nbytes / t2 / unit:6.3f}  {dtype:15} {shape}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
