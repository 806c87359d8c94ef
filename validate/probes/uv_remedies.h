/* Remedies for an environment uv made without pip.
 *
 * `uv venv` seeds no pip unless asked (--seed; uv's CLI reference, "uv
 * venv"), and writes `uv = <version>` into pyvenv.cfg. In such an
 * environment `python -m pip` answers "No module named pip", and a plain
 * `pip` on PATH, even with the environment active, is another Python's,
 * installing where ai-toolkit never looks. So when the selected
 * environment is one, every remedy's `pip install` and `pip uninstall`
 * are said as uv's own, `uv pip install --python ENV` (uv's pip interface
 * takes the options the remedies use: checked with uv 0.13.10). Runs after
 * every provider that writes remedies (validate/registry.c). */
#ifndef AITK_PROBES_UV_REMEDIES_H
#define AITK_PROBES_UV_REMEDIES_H

#include "validate/engine.h"

aitk_status aitk_uv_remedies(aitk_run_ctx *ctx);

/* `remedy` with each pip command made uv's for the environment `env`
 * (exposed for tests); `out` is left empty when nothing changed. */
aitk_status aitk_uv_remedy_text(const char *remedy, const char *env, aitk_str *out);

#endif
