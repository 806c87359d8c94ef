#!/usr/bin/env python3
"""Measure PyTorch's allocated peak of the FLUX.1-dev LoRA step of a reported
job, and set the cost model's memory plan for the same job beside it.

Why: models/reported_speeds.yaml holds public reports of jobs that ran or ran
out of memory, and `predict --reported` judges the model's fit verdict on
them. Where a verdict is wrong, or right by a hair (diffusers #9156 is
predicted to fit an A100 40GB by 0.1 GB and ran out of memory), only a
measurement of the same job tells whether the model misses memory the step
holds or the report ran out elsewhere (validation, another process). This
script runs the job's transformer step for real, on the GPU in front of it,
and reads torch.cuda.max_memory_allocated.

What runs (nothing is downloaded): diffusers' FluxTransformer2DModel at
FLUX.1-dev's shapes with random bf16 weights (ci/torch-flux-step.py
build_model; memory does not depend on the values), a LoRA of the row's rank
on the Linears the row's trainer adapts (diffusers' train_dreambooth_lora_flux
default list, or the row's --lora_layers), the row's resolution, batch, text
tokens, gradient checkpointing and autocast, and one forward and backward
with an MSE loss. Not run: the optimizer step (its state is the plan's
"optimizer state" term), text encoders and the VAE (their own terms).

For each row it prints and writes (DIR/torch-peak.json):
  measured: allocated before the step (weights and adapters) and the step's
            peak over that (activations, gradients, workspaces);
  plan:     the model's terms for the same parts, from
            `aitk-validate predict --reported --json` (memory_plan).

Usage:
  python3 ci/torch-peak-check.py --aitk build/release/aitk-validate --out DIR
          [--rows ID,ID,...]
  python3 ci/torch-peak-check.py --aitk ... --out DIR --device cpu --layers 1,1
          (a smoke run on the CPU with one double and one single block: the
          plan is scaled to those blocks; the peak comes from the allocator's
          events under torch.profiler)

Exit codes: 0 measured; 2 bad usage or an unknown row; 77 no torch, no CUDA
GPU (without --device cpu) or no diffusers (skipped); 1 a failure.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

SCHEMA = 1
# The rows whose verdicts a measurement decides: the diffusers script's jobs
# without gradient checkpointing, and one with it (the blog's bf16 LoRA).
DEFAULT_ROWS = ["diffusers-9156-a100-40gb-oom", "diffusers-10994-a100-80gb-batch2-oom",
                "diffusers-11014-a100-40gb-oom", "hfblog-bf16-4090-26gb"]
# huggingface/diffusers examples/dreambooth/train_dreambooth_lora_flux.py,
# main(): target_modules when --lora_layers is not given.
DIFFUSERS_TARGETS = ["attn.to_k", "attn.to_q", "attn.to_v", "attn.to_out.0",
                     "attn.add_k_proj", "attn.add_q_proj", "attn.add_v_proj", "attn.to_add_out",
                     "ff.net.0.proj", "ff.net.2", "ff_context.net.0.proj", "ff_context.net.2"]
# The plan's terms a transformer step holds, by what the measurement covers.
BEFORE_TERMS = ["base weights", "LoRA parameters"]
STEP_TERMS = ["LoRA gradients", "checkpointed activations", "one block live (recompute + backward)",
              "workspaces (cuBLAS, dequantized weight)"]


def fail(code, message):
    print("torch-peak-check: " + message, file=sys.stderr)
    sys.exit(code)


def ci_module(name):
    """A sibling script of ci/ as a module (their names have hyphens)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    spec = importlib.util.spec_from_file_location(name[:-3].replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reported_rows(aitk, wanted):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "reported.json")
        run = subprocess.run([aitk, "predict", "--reported", "--json", out],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            fail(1, "%s predict --reported failed (exit %d): %s" % (aitk, run.returncode,
                                                                     run.stderr.strip()))
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
    by_id = {r["id"]: r for r in doc["memory_reports"]}
    missing = [w for w in wanted if w not in by_id]
    if missing:
        fail(2, "no such memory_reports row: %s (known: %s)" % (", ".join(missing),
                                                                ", ".join(sorted(by_id))))
    return [by_id[w] for w in wanted]


def attach_lora(torch, model, rank, targets, dtype):
    """A LoRA of `rank` on the Linears whose path ends in one of `targets`
    (peft's rule for a list of names), inside the transformer blocks: the
    input saved by the down projection, the low-rank output by the up one,
    as peft's and ai-toolkit's modules keep them."""

    class LoRALinear(torch.nn.Module):
        def __init__(self, base):
            super().__init__()
            self.base = base
            kw = dict(bias=False, device=base.weight.device, dtype=dtype)
            self.down = torch.nn.Linear(base.in_features, rank, **kw)
            self.up = torch.nn.Linear(rank, base.out_features, **kw)
            torch.nn.init.zeros_(self.up.weight)

        def forward(self, x):
            return self.base(x) + self.up(self.down(x))

    params = []
    for blocks in (model.transformer_blocks, model.single_transformer_blocks):
        for block in blocks:
            for name, linear in [(n, m) for n, m in block.named_modules()
                                 if isinstance(m, torch.nn.Linear) and n]:
                if not any(name == t or name.endswith("." + t) for t in targets):
                    continue
                parent = block.get_submodule(name.rpartition(".")[0]) if "." in name else block
                lora = LoRALinear(linear)
                setattr(parent, name.rpartition(".")[2], lora)
                params += [lora.down.weight, lora.up.weight]
    return params


def job_inputs(torch, device, res, batch, text_tokens):
    side = res // 16  # 8x VAE downsampling, 2x2 packing
    n = side * side
    bf16 = dict(device=device, dtype=torch.bfloat16)
    ys, xs = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
    img_ids = torch.stack([torch.zeros_like(ys), ys, xs], -1).reshape(n, 3)
    return dict(hidden_states=torch.randn(batch, n, 64, **bf16),
                encoder_hidden_states=torch.randn(batch, text_tokens, 4096, **bf16),
                pooled_projections=torch.randn(batch, 768, **bf16),
                timestep=torch.rand(batch, **bf16),
                guidance=torch.full((batch,), 3.5, **bf16),
                img_ids=img_ids.to(**bf16), txt_ids=torch.zeros(text_tokens, 3, **bf16),
                return_dict=False)


class CpuPeak:
    """max live bytes on the CPU, from the allocator's events (torch.profiler
    with profile_memory), relative to what was live when it started."""

    def __init__(self, torch):
        from torch.profiler import ProfilerActivity, profile
        self.prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)

    def __enter__(self):
        self.prof.__enter__()
        return self

    def __exit__(self, *exc):
        self.prof.__exit__(*exc)
        levels, _ = ci_module("autograd-saved.py").allocator_levels(self.prof)
        self.peak = max((level for _, level in levels), default=0)
        return False


def measure_row(torch, cls, flux_step, row, device, layers):
    setup = row["setup"]
    res, batch, rank = setup["resolutions"][-1], setup["batch"], setup["rank"]
    tokens = setup.get("text_tokens", 512)
    targets = setup.get("lora_layers") or DIFFUSERS_TARGETS
    config = dict(flux_step.FLUX_DEV)
    if layers:
        config["num_layers"], config["num_single_layers"] = layers
    with torch.device("meta"):
        model = cls(**config)
    model = model.to(dtype=torch.bfloat16).to_empty(device=device)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.fill_(1.0 if "norm" in name else 0.0)
            else:
                p.normal_(0.0, 0.02)
    model.requires_grad_(False)
    lora_dtype = torch.float32 if setup.get("lora_dtype") == "fp32" else torch.bfloat16
    params = attach_lora(torch, model, rank, targets, lora_dtype)
    if setup.get("checkpointing"):
        model.enable_gradient_checkpointing()
    model.train()
    inputs = job_inputs(torch, device, res, batch, tokens)
    target = torch.randn_like(inputs["hidden_states"])

    def step():
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=bool(setup.get("autocast"))):
            pred = model(**inputs)[0]
        torch.nn.functional.mse_loss(pred.float(), target.float()).backward()

    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        try:
            step()
            torch.cuda.synchronize()
            peak, error = torch.cuda.max_memory_allocated() - before, None
        except torch.cuda.OutOfMemoryError as e:
            peak, error = torch.cuda.max_memory_allocated() - before, str(e).splitlines()[0]
    else:
        before = sum(p.numel() * p.element_size() for p in model.parameters())
        with CpuPeak(torch) as watch:
            step()
        peak, error = watch.peak, None
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    del model, inputs, target, params
    if device == "cuda":
        torch.cuda.empty_cache()
    return {"weights_and_adapters_bytes": weights, "allocated_before_bytes": before,
            "step_peak_over_before_bytes": peak, "error": error,
            "job": {"resolution": res, "batch": batch, "rank": rank, "text_tokens": tokens,
                    "checkpointing": bool(setup.get("checkpointing")),
                    "autocast": bool(setup.get("autocast")), "lora_targets": targets,
                    "layers": list(layers) if layers else [19, 38]}}


def plan_parts(row, layers):
    plan = {t["term"]: t["gb"] * 1e9 for t in row["predicted"]["memory_plan"]}
    parts = {"before": sum(plan.get(t, 0) for t in BEFORE_TERMS),
             "step": sum(plan.get(t, 0) for t in STEP_TERMS)}
    if layers:
        # Per-block terms scale with the blocks run; this is a smoke run's
        # rough comparison only (embedders and the output layer do not scale).
        share = (layers[0] + layers[1]) / 57.0
        parts = {k: v * share for k, v in parts.items()}
    return parts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--aitk", required=True, help="the aitk-validate binary")
    parser.add_argument("--out", required=True, help="folder for torch-peak.json")
    parser.add_argument("--rows", default=",".join(DEFAULT_ROWS),
                        help="memory_reports row ids (default: %(default)s)")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--layers", help="DOUBLE,SINGLE blocks instead of FLUX's 19,38 (smoke runs)")
    args = parser.parse_args()
    layers = None
    if args.layers:
        try:
            layers = tuple(int(x) for x in args.layers.split(","))
            assert len(layers) == 2 and min(layers) >= 0
        except (ValueError, AssertionError):
            fail(2, "--layers wants DOUBLE,SINGLE, two counts: %r" % args.layers)
    rows = reported_rows(args.aitk, [r for r in args.rows.split(",") if r])
    try:
        import torch
        import diffusers
        from diffusers import FluxTransformer2DModel
    except Exception as e:  # an import can fail in many ways; all mean "not here"
        fail(77, "skipped: torch or diffusers cannot be imported (%s: %s)" % (type(e).__name__, e))
    if args.device == "cuda" and not torch.cuda.is_available():
        fail(77, "skipped: torch %s sees no CUDA GPU" % torch.__version__)
    flux_step = ci_module("torch-flux-step.py")
    if args.device == "cuda":
        print(flux_step.avoid_cudnn_sdpa(torch), flush=True)
    doc = {"schema": SCHEMA, "tool": "ci/torch-peak-check.py",
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "device": torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu",
           "torch": torch.__version__, "diffusers": diffusers.__version__, "rows": []}
    print("%-38s %10s %10s %10s %10s  %s" % ("row", "before GB", "plan", "step GB", "plan", "note"))
    for row in rows:
        got = measure_row(torch, FluxTransformer2DModel, flux_step, row, args.device, layers)
        plan = plan_parts(row, layers)
        got.update(id=row["id"], plan_before_bytes=plan["before"], plan_step_bytes=plan["step"],
                   predicted=row["predicted"], reported=row["reported"])
        doc["rows"].append(got)
        print("%-38s %10.2f %10.2f %10.2f %10.2f  %s" % (
            row["id"], got["allocated_before_bytes"] / 1e9, plan["before"] / 1e9,
            got["step_peak_over_before_bytes"] / 1e9, plan["step"] / 1e9,
            got["error"] or ""), flush=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "torch-peak.json")
    flux_step.write_json(path, doc)
    print("written: %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
