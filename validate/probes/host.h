/* Host probe: OS, kernel, libc, CPU and its ISA, memory, free disk. */
#ifndef AITK_VALIDATE_PROBES_HOST_H
#define AITK_VALIDATE_PROBES_HOST_H

#include "validate/engine.h"

/* Fills ctx->env "host" and adds the host.* checks. */
aitk_status aitk_host_checks(aitk_run_ctx *ctx);

/* The Hugging Face home folder, as huggingface_hub's constants.py
 * resolves HF_HOME: $HF_HOME, else $XDG_CACHE_HOME/huggingface, else
 * ~/.cache/huggingface (its token file and hub cache default to folders in
 * it). `why` says which rule picked it; AITK_E_NOTFOUND without a home. */
aitk_status aitk_host_hf_home(aitk_str *dir, const char **why);

/* The Hugging Face hub cache folder, as huggingface_hub resolves it:
 * HUGGINGFACE_HUB_CACHE, else HF_HUB_CACHE, else $HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
 * `why` says which rule picked it. */
aitk_status aitk_host_model_cache_dir(aitk_str *dir, const char **why);

/* Compares dotted versions numerically ("2.36" vs "2.17"); -1, 0, 1. Text
 * that is no number reads as 0, so neither side may be unchecked text: the
 * matrix's versions are checked when compat.yaml loads (validate/compat.c),
 * the other side is what the machine reported. */
int aitk_version_compare(const char *a, const char *b);

#endif
