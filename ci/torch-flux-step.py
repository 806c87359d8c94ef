#!/usr/bin/env python3
"""Measure a real FLUX.1-dev LoRA training step in PyTorch eager on this GPU,
and set the cost model's prediction for the same job beside it.

Why: `aitk-validate predict` counts a step's GEMMs, attention and elementwise
traffic from the code ai-toolkit runs (models/*.yaml, models/cost.yaml); the
training reports it is checked against (models/reported_speeds.yaml) come from
other people's machines and trainers. This script times the real stack, the
same diffusers FLUX blocks ai-toolkit trains, on the GPU in front of it, so
the model's error can be read term by term instead of guessed.

What runs (nothing is downloaded):
  - diffusers' FluxTransformer2DModel at FLUX.1-dev's shapes, random bf16
    weights (timing does not depend on the values);
  - every Linear inside the transformer blocks adapted the way ai-toolkit's
    LoRA module does it (toolkit/network_mixins.py): org(x) +
    (up(down(x)) * scale) * multiplier, rank 16, alpha 16;
  - gradient checkpointing, MSE loss on random latents, torch AdamW on the
    adapters (bitsandbytes' 8-bit AdamW is not assumed to be installed);
  - text embeddings as random tensors of T5-XXL's shape (cached embeddings);
  - one generation forward pass a step at 1024 px without LoRA, the run the
    generation rows of models/reported_speeds.yaml describe (--no-generation
    leaves it out);
  - the training step once more at --masked-resolution (1024 px; 0 leaves it
    out) with a T5 attention mask, as kohya's --apply_t5_attn_mask and every
    Chroma trainer run it: a key mask that keeps the prompt's first 78 text
    tokens (77 and the end token) and every image token. PyTorch cannot run a
    masked call on flash attention; what the mask costs, attention kernel by
    kernel, is what the cost model has no measured figure for yet;
  - with --dense-mask-resolution (default 0: not run), the training step with
    the mask ai-toolkit's Chroma builds (extensions_built_in/diffusion_models/
    chroma/src/model.py): the text mask with 8 padding tokens let through,
    joined to the image tokens, its outer product repeated over the heads, a
    (1, heads, L, L) boolean kept for the whole step (0.5 GB at 1024 px), which
    PyTorch turns into an additive mask on each call. Its memory and time are
    what predict would need to count ai-toolkit's Chroma attention;
  - with --efficient-resolution (default 0: not run), the unmasked training
    step with SDPA held to its memory-efficient kernel, the one PyTorch's
    Windows wheels run for every call (they have no flash attention:
    pytorch/pytorch issue #125070): that kernel's share of flash attention's
    without a mask to convert, what `predict --os windows` prices.
For each resolution: the median of --steps timed steps after --warmup, peak
memory (PyTorch's allocator; the CUDA context comes on top) and a profile of
one more step: GPU kernel time by kind (GEMM, attention, other) and how much
of the step the GPU was busy.

Usage:
  python3 ci/torch-flux-step.py --out DIR [--resolutions 512,768,1024]
          [--steps 5] [--warmup 2] [--no-generation] [--masked-resolution 1024]
          [--dense-mask-resolution 0] [--efficient-resolution 0] [--no-checkpointing]
          [--aitk PATH/aitk-validate]
          [--report REPORT.json]
  python3 ci/torch-flux-step.py --compare DIR/torch-flux.json
          [--aitk PATH] [--report REPORT.json]
With --aitk the measurement is set beside `predict` for the same job; with
--report beside aitk-validate's own measured FLUX.1-dev step (the report's
flux1-dev workload on a GPU, e.g. from `--config ci/flux-bf16-mfu.yaml`,
the same job): aitk's speed as a multiple of PyTorch eager's, torch s/step
over aitk s/step at each resolution both ran (issue #21's target: >= 1.1).
--compare makes either comparison alone on a saved measurement (no torch
needed). Both modes write DIR/torch-flux.json (the measurement, and the
comparisons made) and print a table.

Exit codes: 0 done; 2 bad usage or a bad input file; 77 no torch, no CUDA
GPU or no diffusers here (skipped: nothing was measured); 1 a measurement or
a prediction failed.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

SCHEMA = 1
# diffusers FluxTransformer2DModel config of black-forest-labs/FLUX.1-dev
# (https://huggingface.co/black-forest-labs/FLUX.1-dev, transformer/config.json).
FLUX_DEV = dict(patch_size=1, in_channels=64, num_layers=19, num_single_layers=38,
                attention_head_dim=128, num_attention_heads=24, joint_attention_dim=4096,
                pooled_projection_dim=768, guidance_embeds=True, axes_dims_rope=(16, 56, 56))
HEADS = FLUX_DEV["num_attention_heads"]
TEXT_TOKENS = 512      # ai-toolkit encodes T5 prompts to 512 tokens
RANK = ALPHA = 16      # ai-toolkit's FLUX example: network linear / linear_alpha
GENERATION_RES = 1024


def fail(code, message):
    print("torch-flux-step: " + message, file=sys.stderr)
    sys.exit(code)


def write_json(path, doc):
    """Atomically: a measurement is never left half written."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


# ---- measurement (needs torch, CUDA and diffusers) ----

def avoid_cudnn_sdpa(torch):
    """Keeps PyTorch's attention off its cuDNN backend. On the lent H200
    (2026-12-04: torch 2.11.0+cu130, its cuDNN 9.19, driver 580.159.04) the
    FLUX step's backward died with an illegal memory access, reported in
    the next cuBLAS call, at 1024 px with checkpointing and at 512 px
    without; with the cuDNN backend off the same steps ran, so the figures
    here are those of PyTorch's other fused attention kernels (flash or
    memory-efficient). Returns what was set."""
    fn = getattr(torch.backends.cuda, "enable_cudnn_sdp", None)
    if fn is None:
        return "PyTorch default attention backends (no cuDNN switch in this torch)"
    fn(False)
    return "PyTorch attention with its cuDNN backend off (flash or memory-efficient)"


def load_stack():
    try:
        import torch
    except ImportError as e:
        fail(77, "skipped: no torch here (%s)" % e)
    if not torch.cuda.is_available():
        fail(77, "skipped: torch %s sees no CUDA GPU" % torch.__version__)
    print(avoid_cudnn_sdpa(torch), flush=True)
    try:
        import diffusers
        from diffusers import FluxTransformer2DModel
    except Exception as e:  # an import can fail in many ways; all mean "not here"
        fail(77, "skipped: diffusers cannot be imported (%s: %s); carry its wheel "
                 "(bash ci/device-deps.sh fetch)" % (type(e).__name__, e))
    return torch, diffusers, FluxTransformer2DModel


def build_model(torch, cls):
    """FLUX.1-dev on the GPU with random weights, built on the meta device first
    so that 12 B parameters are never initialised on the CPU."""
    with torch.device("meta"):
        model = cls(**FLUX_DEV)
    model = model.to(dtype=torch.bfloat16).to_empty(device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                # norm weights 1, biases 0: activations keep a sane scale
                p.fill_(1.0 if "norm" in name else 0.0)
            else:
                p.normal_(0.0, 0.02, generator=gen)
    buffers = [n for n, _ in model.named_buffers()]
    if buffers:
        # to_empty leaves buffers uninitialised; FLUX has none today
        fail(1, "the model has buffers this script does not initialise: %s" % buffers[:5])
    model.requires_grad_(False)
    return model


def attach_lora(torch, model):
    """ai-toolkit's LoRA on every Linear inside the blocks; returns the adapters'
    parameters."""

    class LoRALinear(torch.nn.Module):
        def __init__(self, base, multiplier):
            super().__init__()
            self.base = base
            kw = dict(bias=False, device=base.weight.device, dtype=base.weight.dtype)
            self.down = torch.nn.Linear(base.in_features, RANK, **kw)
            self.up = torch.nn.Linear(RANK, base.out_features, **kw)
            torch.nn.init.kaiming_uniform_(self.down.weight, a=math.sqrt(5))
            torch.nn.init.zeros_(self.up.weight)
            self.scale = ALPHA / RANK
            self.multiplier = multiplier

        def forward(self, x):
            org = self.base(x)
            lx = self.up(self.down(x)) * self.scale
            return org + lx * self.multiplier

    multiplier = torch.ones(1, device="cuda", dtype=torch.bfloat16)
    params = []
    for blocks in (model.transformer_blocks, model.single_transformer_blocks):
        for block in blocks:
            targets = [(n, m) for n, m in block.named_modules()
                       if isinstance(m, torch.nn.Linear) and n]
            for name, linear in targets:
                parent = block.get_submodule(name.rpartition(".")[0]) if "." in name else block
                lora = LoRALinear(linear, multiplier)
                setattr(parent, name.rpartition(".")[2], lora)
                params += [lora.down.weight, lora.up.weight]
    return params


def inputs(torch, res):
    side = res // 16  # 8x VAE downsampling, 2x2 packing
    n = side * side
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    ys, xs = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
    img_ids = torch.stack([torch.zeros_like(ys), ys, xs], -1).reshape(n, 3)
    return dict(
        hidden_states=torch.randn(1, n, 64, **bf16),
        encoder_hidden_states=torch.randn(1, TEXT_TOKENS, 4096, **bf16),
        pooled_projections=torch.randn(1, 768, **bf16),
        timestep=torch.rand(1, **bf16),
        guidance=torch.full((1,), 3.5, **bf16),
        img_ids=img_ids.to(**bf16),
        txt_ids=torch.zeros(TEXT_TOKENS, 3, **bf16),
        return_dict=False,
    )


def kernel_kind(name):
    """GEMM, attention forward / backward, or other (elementwise, reductions,
    norms, copies, the optimizer), from the kernel's name: cuBLAS (sm90_xmma,
    nvjet, cutlass), flash / cuDNN SDPA / memory-efficient (fmha_cutlassF/B)."""
    n = name.lower()
    if any(k in n for k in ("flash", "fmha", "attention", "sdpa", "attn")):
        backward = any(k in n for k in ("bwd", "backward", "bprop", "cutlassb", "dgrad"))
        return "attention_bwd" if backward else "attention_fwd"
    if any(k in n for k in ("gemm", "gemv", "nvjet", "cutlass", "xmma", "cublas", "matmul")):
        return "gemm"
    return "other"


def timed(torch, fn, warmup, steps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    kinds = {"gemm": 0.0, "attention_fwd": 0.0, "attention_bwd": 0.0, "other": 0.0}
    # Kernels a step launches: with the host's share of a host-bound step
    # (gpu_busy_fraction), the launch count turns the host time into a cost
    # per kernel that another model's count can use.
    launches = 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kinds[kernel_kind(e.name)] += e.time_range.elapsed_us() / 1e6
            # Copies and fills are device events too, not kernel launches.
            launches += not e.name.lower().startswith(("memcpy", "memset"))
    busy = sum(kinds.values())
    kinds["attention"] = kinds["attention_fwd"] + kinds["attention_bwd"]
    return {
        "seconds_per_step": statistics.median(times),
        "seconds_all": times,
        "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
        "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
        "kernel_seconds": kinds,
        "profiled_step_seconds": wall,
        "gpu_busy_fraction": busy / wall if wall > 0 else None,
        "kernels_per_step": launches,
    }


def measure(args):
    torch, diffusers, cls = load_stack()
    props = torch.cuda.get_device_properties(0)
    doc = {"schema": SCHEMA, "tool": "ci/torch-flux-step.py",
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "gpu": torch.cuda.get_device_name(0),
           "gpu_memory_bytes": props.total_memory,
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "diffusers": diffusers.__version__,
           "setup": {"model": "flux1-dev", "rank": RANK, "alpha": ALPHA, "batch": 1,
                     "base": "bf16", "text": "cached", "checkpointing": args.checkpointing,
                     "optimizer": "adamw (torch, bf16 states)", "weights": "random"},
           "generation": None, "training": []}
    t0 = time.perf_counter()
    model = build_model(torch, cls)
    print("model built on %s in %.1f s (%.2f GiB of weights)" % (
        doc["gpu"], time.perf_counter() - t0,
        sum(p.numel() * p.element_size() for p in model.parameters()) / 2**30), flush=True)

    if args.generation:
        # Generation first, on the base model alone (no adapters, no graph).
        gen_in = inputs(torch, GENERATION_RES)

        def forward():
            with torch.no_grad():
                model(**gen_in)

        doc["generation"] = run_or_oom(torch, "generation", lambda: dict(
            resolution=GENERATION_RES, **timed(torch, forward, args.warmup, args.steps)))
        del gen_in
        print("generation %d px: %s" % (GENERATION_RES, brief(doc["generation"])), flush=True)

    params = attach_lora(torch, model)
    if args.checkpointing:
        model.enable_gradient_checkpointing()
    model.train()
    opt = torch.optim.AdamW(params, lr=1e-4)
    doc["setup"]["lora_parameters"] = sum(p.numel() for p in params)
    for res in args.resolutions:
        step = training_step(torch, model, opt, inputs(torch, res))
        row = run_or_oom(torch, "training %d px" % res,
                         lambda: timed(torch, step, args.warmup, args.steps))
        row["resolution"] = res
        doc["training"].append(row)
        print("training %d px: %s" % (res, brief(row)), flush=True)
        del step
    if args.masked_resolution:
        doc["training_masked"] = masked_step(torch, model, opt, args, "key")
    if args.efficient_resolution:
        doc["training_efficient"] = efficient_step(torch, model, opt, args)
    if args.dense_mask_resolution:
        doc["training_dense_mask"] = masked_step(torch, model, opt, args, "dense")
    return doc


def run_or_oom(torch, what, fn):
    """fn(), or a row saying it ran out of GPU memory."""
    try:
        return fn()
    except torch.cuda.OutOfMemoryError as e:
        torch.cuda.empty_cache()
        print("%s: out of memory (%s)" % (what, str(e).splitlines()[0]), flush=True)
        return {"error": "out of memory"}


def training_step(torch, model, opt, batch):
    """One LoRA training step on `batch`: the MSE loss against a random
    target, its backward and the optimizer's step."""
    target = torch.randn_like(batch["hidden_states"])

    def step():
        pred = model(**batch)[0]
        loss = torch.nn.functional.mse_loss(pred.float(), target.float())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def timed_row(torch, args, res, what, step, errors, described):
    """The timed row of one extra training step (masked, or on another
    attention kernel): `errors` a call may raise become the row's error,
    `described` says what ran; the row is printed as it comes."""
    try:
        row = run_or_oom(torch, "training %d px, %s" % (res, what),
                         lambda: timed(torch, step, args.warmup, args.steps))
    except errors as e:
        row = {"error": "%s: %s" % (type(e).__name__, e)}
    row["resolution"] = res
    row.update(described)
    print("training %d px, %s: %s" % (res, what, brief(row)), flush=True)
    return row


def t5_key_mask(torch, res, kept=78):
    """(1, 1, 1, text + image tokens), True where a key may be attended: the
    first `kept` text tokens (diffusers' FLUX attention puts the text first)
    and every image token, as a T5 attention mask leaves them."""
    n = (res // 16) ** 2
    mask = torch.ones(1, 1, 1, TEXT_TOKENS + n, dtype=torch.bool, device="cuda")
    mask[..., kept:TEXT_TOKENS] = False
    return mask


def dense_mask(torch, res, kept=78, padding=8):
    """(1, heads, L, L) boolean, built as ai-toolkit's Chroma builds its
    attention mask: the text mask with `padding` more tokens let through
    (modify_mask_to_attend_padding), then the image tokens, the outer product
    of that row with itself, repeated over the heads. Text first, as in
    diffusers' FLUX attention."""
    n = (res // 16) ** 2
    row = torch.zeros(1, TEXT_TOKENS + n, device="cuda")
    row[:, :min(kept + padding, TEXT_TOKENS)] = 1
    row[:, TEXT_TOKENS:] = 1
    square = row.T @ row
    return square[None, None, ...].repeat(1, HEADS, 1, 1).int().bool()


def masked_step(torch, model, opt, args, form):
    """The LoRA training step with an attention mask on every call: `key`, a
    T5 key mask (--masked-resolution); `dense`, ai-toolkit's Chroma mask
    (--dense-mask-resolution)."""
    res = args.masked_resolution if form == "key" else args.dense_mask_resolution
    what = ("T5 attention mask" if form == "key"
            else "ai-toolkit's Chroma mask (1, %d, L, L)" % HEADS)
    batch = inputs(torch, res)
    mask = t5_key_mask(torch, res) if form == "key" else dense_mask(torch, res)
    batch["joint_attention_kwargs"] = {"attention_mask": mask}
    described = {"mask": ("T5 key mask, 78 of %d text tokens kept" % TEXT_TOKENS if form == "key"
                          else "dense (1, %d, L, L) boolean, %.2f GiB, 86 of %d text tokens kept"
                          % (HEADS, mask.numel() / 2**30, TEXT_TOKENS))}
    # TypeError: a diffusers whose FLUX attention takes no mask argument.
    return timed_row(torch, args, res, what, training_step(torch, model, opt, batch),
                     (TypeError, RuntimeError), described)


def efficient_step(torch, model, opt, args):
    """The unmasked LoRA training step at --efficient-resolution with SDPA
    held to its memory-efficient kernel, as PyTorch on Windows runs every
    call. The backward (and the recompute of checkpointed blocks in it) runs
    inside the same setting."""
    res = args.efficient_resolution
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:  # torch before 2.3
        return {"resolution": res, "error": "ImportError: %s" % e}
    inner = training_step(torch, model, opt, inputs(torch, res))

    def step():
        with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            inner()

    # RuntimeError: the kernel refused a call.
    return timed_row(torch, args, res, "memory-efficient attention", step, (RuntimeError,),
                     {"attention": "memory-efficient kernel, no mask (as PyTorch on Windows)"})


def brief(row):
    if "error" in row:
        return row["error"]
    k = row["kernel_seconds"]
    return ("%.3f s/step, peak %.1f GiB allocated; kernels: GEMM %.3f s, attention %.3f s, "
            "other %.3f s; GPU busy %.0f%%; %s kernel launches" % (
                row["seconds_per_step"], row["peak_allocated_bytes"] / 2**30, k["gemm"],
                k["attention"], k["other"], 100 * (row["gpu_busy_fraction"] or 0),
                row.get("kernels_per_step", "?")))


# ---- comparison with the cost model (no torch needed) ----

CONFIG = """\
# What ci/torch-flux-step.py ran, as an ai-toolkit config, for `predict --config`.
job: extension
config:
  name: torch-flux-step
  process:
    - type: sd_trainer
      network: {{type: lora, linear: {rank}, linear_alpha: {alpha}}}
      datasets:
        - folder_path: /dev/null
          resolution: [{res}]
      train:
        batch_size: 1
        gradient_checkpointing: {checkpointing}
        optimizer: adamw
        dtype: bf16
        cache_text_embeddings: true
      model:
        name_or_path: black-forest-labs/FLUX.1-dev
        is_flux: true
        quantize: false
"""


def predict(aitk, gpu, res, checkpointing, workdir, extra=()):
    """What `aitk-validate predict --config` says for the measured job, with
    `extra` options (--attention-mask SHAPE, --os windows) where it ran so."""
    cfg = os.path.join(workdir, "flux-%d.yaml" % res)
    out = os.path.join(workdir, "predict-%d.json" % res)
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(CONFIG.format(rank=RANK, alpha=ALPHA, res=res,
                              checkpointing="true" if checkpointing else "false"))
    p = subprocess.run([aitk, "predict", "--config", cfg, "--gpu", gpu, "--json", out, *extra],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail(1, "predict for %d px on '%s' failed (exit %d): %s" % (
            res, gpu, p.returncode, p.stderr.strip()))
    with open(out, encoding="utf-8") as f:
        g = json.load(f)["predictions"][0]["gpus"][0]
    return g


def number(row, key, where):
    v = row.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
        fail(2, "%s: '%s' must be a number greater than 0" % (where, key))
    return float(v)


def setup_checkpointing(doc, path):
    """Whether the measured step checkpointed its blocks (files from before
    the option say nothing: they did)."""
    ck = (doc.get("setup") or {}).get("checkpointing", True) if isinstance(doc, dict) else True
    if not isinstance(ck, bool):
        fail(2, "%s: setup.checkpointing must be true or false" % path)
    return ck


def beside(row, where, aitk, gpu, checkpointing, work, extra=()):
    """One measured step (a training row) and predict's answer for the same
    job, side by side: (the entry, predict's GPU row)."""
    res = int(number(row, "resolution", where))
    measured = number(row, "seconds_per_step", where)
    g = predict(aitk, gpu, res, checkpointing, work, extra)
    terms = g["seconds_at_largest_resolution"]
    kinds = row.get("kernel_seconds") or {}
    return {
        "resolution": res,
        "measured_seconds": measured,
        "predicted_seconds": g["step_seconds"],
        "ratio": g["step_seconds"] / measured,
        "measured_peak_bytes": row.get("peak_allocated_bytes"),
        "predicted_peak_bytes": g["peak_bytes"],
        # the model's GEMM term against GEMM kernels, attention against
        # attention kernels, memory traffic against all other kernels
        "terms": {k: {"predicted": terms[p], "measured": kinds.get(k)}
                  for k, p in (("gemm", "gemm"), ("attention", "attention"),
                               ("other", "memory"))},
    }, g


def compare(doc, aitk, path):
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        fail(2, "%s: not a torch-flux-step measurement (schema %s)" % (path, SCHEMA))
    gpu = doc.get("gpu")
    rows = doc.get("training")
    if not isinstance(gpu, str) or not isinstance(rows, list):
        fail(2, "%s: expected 'gpu' (a name) and 'training' (a list)" % path)
    table = []
    checkpointing = setup_checkpointing(doc, path)
    with tempfile.TemporaryDirectory() as work:
        for i, row in enumerate(rows):
            where = "%s: training[%d]" % (path, i)
            if not isinstance(row, dict):
                fail(2, "%s: expected an object" % where)
            if "error" in row:
                continue
            t, g = beside(row, where, aitk, gpu, checkpointing, work)
            # the model's count of the step's kernels (from the blocks'
            # kernels_forward and kernels_backward, on the CPU) against the
            # launches the profiler saw; the host's time it implies
            t["kernels"] = {"predicted": g.get("kernels_per_step"),
                            "measured": row.get("kernels_per_step")}
            t["predicted_host_seconds"] = g["seconds_at_largest_resolution"].get("host")
            table.append(t)
        masked = compare_masked(doc, aitk, gpu, checkpointing, work, path)
    doc["comparison"] = {"aitk": aitk, "gpu": gpu, "rows": table, "masked": masked,
                         "ratio": "predicted / measured seconds per step"}
    print("\npredicted (aitk-validate predict --config, %s) against measured, FLUX.1-dev LoRA "
          "rank %d, bf16 base, %s:" % (gpu, RANK, "checkpointing" if checkpointing
                                        else "no checkpointing"))
    print("  %5s %9s %9s %6s   %-28s %-28s %-28s %-15s" % (
        "px", "measured", "predicted", "ratio", "GEMM pred/meas s", "attention pred/meas s",
        "memory pred / other kernels s", "kernels pred/meas"))

    def count(v):
        return "%d" % v if isinstance(v, (int, float)) and not isinstance(v, bool) else "-"
    for t in table:
        cells = []
        for k in ("gemm", "attention", "other"):
            m = t["terms"][k]["measured"]
            cells.append("%.3f / %s" % (t["terms"][k]["predicted"],
                                        "%.3f" % m if isinstance(m, (int, float)) else "-"))
        k = t["kernels"]
        cells.append("%s / %s" % (count(k["predicted"]), count(k["measured"])))
        print("  %5d %8.3fs %8.3fs %6.2f   %-28s %-28s %-28s %-15s" % (
            t["resolution"], t["measured_seconds"], t["predicted_seconds"], t["ratio"], *cells))
    for t in masked:
        a, o = t["terms"]["attention"], t["terms"]["other"]
        print("  %5d %8.3fs %8.3fs %6.2f   attention pred/meas %.3f / %s s, memory pred / other "
              "kernels %.3f / %s s: %s (predict %s)" % (
                  t["resolution"], t["measured_seconds"], t["predicted_seconds"], t["ratio"],
                  a["predicted"], fmt(a["measured"]), o["predicted"], fmt(o["measured"]),
                  t["measured_as"], " ".join(t["predict_options"])))
    return doc


def fmt(v):
    return "%.3f" % v if isinstance(v, (int, float)) and not isinstance(v, bool) else "-"


# The steps off flash attention, as the cost model names them: the T5 key
# mask this script passes is a (1, 1, 1, L) row that the kernel broadcasts;
# the dense one, ai-toolkit's Chroma mask, is made once and kept; the
# unmasked step held to the memory-efficient kernel is PyTorch on Windows.
# (doc key, the mask's shape, the predict options for the same job)
MASKED_RUNS = (
    ("training_masked", "key_padding", ("--attention-mask", "key_padding")),
    ("training_efficient", "none", ("--os", "windows")),
    ("training_dense_mask", "per_head_kept", ("--attention-mask", "per_head_kept")),
)


def compare_masked(doc, aitk, gpu, checkpointing, work, path):
    """The steps off flash attention (torch-mask) beside predict for the same
    job with the same attention: what the model prices a mask, or the
    memory-efficient kernel alone, at against what it cost."""
    out = []
    for key, mask, options in MASKED_RUNS:
        row = doc.get(key)
        if row is None or (isinstance(row, dict) and "error" in row):
            continue
        where = "%s: %s" % (path, key)
        if not isinstance(row, dict):
            fail(2, "%s: expected an object" % where)
        t, _ = beside(row, where, aitk, gpu, checkpointing, work, options)
        t["mask"] = mask
        t["predict_options"] = list(options)
        t["measured_as"] = ("masked, " + row["mask"] if "mask" in row
                            else row.get("attention", key))
        out.append(t)
    return out


# ---- comparison with aitk-validate's own measured step (no torch needed) ----

def aitk_flux_steps(path, checkpointing=None):
    """Seconds per step of aitk-validate's FLUX.1-dev workload on a GPU, per
    resolution, from its report.json: each bucket's median (the report's
    buckets[].median_s), or the whole run's median when it ran one bucket.
    Returns (entry, {resolution: seconds})."""
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        fail(2, "%s: %s" % (path, e))
    entries = report.get("workloads") if isinstance(report, dict) else None
    if not isinstance(entries, list):
        fail(2, "%s: not an aitk-validate report (no 'workloads' list)" % path)
    flux = [w for w in entries if isinstance(w, dict) and w.get("name") == "flux1-dev"]
    if not flux:
        fail(2, "%s: no flux1-dev workload" % path)
    w = flux[0]
    if w.get("backend") == "cpu":
        fail(2, "%s: the flux1-dev workload ran on the CPU backend (small configuration), "
                "not a GPU step" % path)
    if w.get("status") not in ("completed", "interrupted", "timed_out"):
        fail(2, "%s: the flux1-dev workload has no timed steps (status '%s': %s)" % (
            path, w.get("status"), w.get("message", "")))
    batch = (w.get("configuration") or {}).get("batch")
    if batch != 1:
        fail(2, "%s: the flux1-dev workload ran batch %s; the PyTorch step is batch 1" % (
            path, batch))
    ck = (w.get("configuration") or {}).get("gradient_checkpointing")
    if checkpointing is not None and isinstance(ck, bool) and ck != checkpointing:
        fail(2, "%s: the flux1-dev workload ran %s gradient checkpointing, the PyTorch step "
                "%s" % (path, "with" if ck else "without", "with" if checkpointing else "without"))
    seconds = {}
    buckets = w.get("buckets") or []
    for b in buckets:
        if isinstance(b, dict) and b.get("steps"):
            seconds[int(number(b, "resolution", path + ": buckets[]"))] = number(
                b, "median_s", path + ": buckets[]")
    if not seconds:
        fail(2, "%s: the flux1-dev workload has no bucket with timed steps" % path)
    return w, seconds


def compare_aitk(doc, report_path, path):
    """aitk's measured step against the PyTorch step at each resolution both
    ran: speedup = torch s/step / aitk s/step."""
    rows = doc.get("training") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        fail(2, "%s: expected 'training' (a list)" % path)
    w, aitk = aitk_flux_steps(report_path, setup_checkpointing(doc, path))
    table = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or "error" in row:
            continue
        where = "%s: training[%d]" % (path, i)
        res = int(number(row, "resolution", where))
        torch_s = number(row, "seconds_per_step", where)
        if res not in aitk:
            continue
        table.append({"resolution": res, "torch_seconds": torch_s, "aitk_seconds": aitk[res],
                      "speedup": torch_s / aitk[res]})
    mfu = (w.get("throughput") or {}).get("mfu")
    doc["aitk_step"] = {"report": report_path, "device": w.get("device"),
                        "title": w.get("title"), "mfu": mfu, "rows": table,
                        "speedup": "torch s/step / aitk s/step (target >= 1.1)"}
    print("\naitk-validate's FLUX.1-dev step (%s, %s) against PyTorch eager:" % (
        report_path, w.get("device", "?")))
    if not table:
        print("  no resolution in common: aitk ran %s px, PyTorch %s px" % (
            sorted(aitk), [r.get("resolution") for r in rows if isinstance(r, dict)]))
    for t in table:
        print("  %5d px: aitk %.3f s/step, torch %.3f s/step: aitk x%.2f the speed of "
              "PyTorch eager (target >= 1.1)" % (t["resolution"], t["aitk_seconds"],
                                                  t["torch_seconds"], t["speedup"]))
    return doc


def compare_all(doc, args, path):
    if args.aitk:
        doc = compare(doc, args.aitk, path)
    if args.report:
        doc = compare_aitk(doc, args.report, path)
    return doc


def main():
    ap = argparse.ArgumentParser(
        description="Time a real FLUX.1-dev LoRA training step (PyTorch eager, diffusers "
                    "blocks, ai-toolkit's LoRA) on this GPU and compare it with "
                    "`aitk-validate predict`.",
        epilog="Exit codes: 0 done, 1 a measurement or prediction failed, 2 bad usage or "
               "input, 77 skipped (no torch, CUDA GPU or diffusers).")
    ap.add_argument("--out", help="folder for torch-flux.json (measure mode)")
    ap.add_argument("--resolutions", default="512,768,1024",
                    help="training resolutions in px, comma-separated (default 512,768,1024)")
    ap.add_argument("--steps", type=int, default=5, help="timed steps (default 5)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed steps first (default 2)")
    ap.add_argument("--no-generation", dest="generation", action="store_false",
                    help="leave out the 1024 px generation pass")
    ap.add_argument("--masked-resolution", type=int, default=1024, metavar="PX",
                    help="the training step again with a T5 attention mask at this "
                         "resolution (default 1024; 0 leaves it out)")
    ap.add_argument("--dense-mask-resolution", type=int, default=0, metavar="PX",
                    help="the training step again with ai-toolkit's Chroma attention mask "
                         "(a dense (1, heads, L, L) boolean) at this resolution "
                         "(default 0: not run)")
    ap.add_argument("--efficient-resolution", type=int, default=0, metavar="PX",
                    help="the unmasked training step again with SDPA held to its "
                         "memory-efficient kernel, as PyTorch on Windows runs it, at this "
                         "resolution (default 0: not run)")
    ap.add_argument("--no-checkpointing", dest="checkpointing", action="store_false",
                    help="train without gradient checkpointing (ai-toolkit's example configs "
                         "checkpoint; a GPU with room for every block's activations need not)")
    ap.add_argument("--aitk", help="aitk-validate binary: compare with its prediction")
    ap.add_argument("--report", metavar="JSON",
                    help="aitk-validate's report.json: compare with its measured FLUX step")
    ap.add_argument("--compare", metavar="JSON",
                    help="compare a saved torch-flux.json instead of measuring")
    args = ap.parse_args()
    try:
        args.resolutions = [int(r) for r in args.resolutions.split(",") if r.strip()]
    except ValueError:
        ap.error("--resolutions: expected whole numbers separated by commas (empty: none)")
    if any(r < 16 or r % 16 for r in args.resolutions):
        ap.error("--resolutions: each must be a multiple of 16 px")
    if args.masked_resolution < 0 or args.masked_resolution % 16:
        ap.error("--masked-resolution: a multiple of 16 px, or 0")
    for name in ("dense_mask_resolution", "efficient_resolution"):
        v = getattr(args, name)
        if v < 0 or v % 16:
            ap.error("--%s: a multiple of 16 px, or 0" % name.replace("_", "-"))
    if args.steps < 1 or args.warmup < 0:
        ap.error("--steps must be at least 1 and --warmup at least 0")
    if args.compare:
        if not args.aitk and not args.report:
            ap.error("--compare needs --aitk, --report or both")
        try:
            with open(args.compare, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            fail(2, "%s: %s" % (args.compare, e))
        write_json(args.compare, compare_all(doc, args, args.compare))
        return 0
    if not args.out:
        ap.error("give --out DIR (measure) or --compare JSON with --aitk PATH or --report JSON")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "torch-flux.json")
    doc = measure(args)
    write_json(path, doc)  # the measurement is kept even if the comparison fails
    if args.aitk or args.report:
        write_json(path, compare_all(doc, args, path))
    print("written: %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
