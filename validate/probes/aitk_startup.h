/* ai-toolkit's own start-up, run in the environment it would train in: the
 * top level of the checkout's run.py (not its main()), then what every job does
 * before it reads its model (ExtensionJob: jobs.ExtensionJob, and
 * toolkit.extension.get_all_extensions_process_dict(), which imports every
 * extension and each one's job module). Whatever stops a job there stops
 * every job, whatever its config: a module the requirements do not install
 * ("No module named 'torchaudio'", ostris/ai-toolkit issues #415, #436), a
 * diffusers older than the commit ai-toolkit asks for ("Diffusers is out of
 * date", issues #490, #678), a library that will not load, a CUDA call
 * made at import time. The check reports the exception as Python words it
 * and the line of the checkout it came from.
 *
 * It runs in the environment's interpreter, in the checkout's folder as
 * run.py runs; nothing is loaded into this process, no bytecode is written
 * into the checkout, and no job is started. */
#ifndef AITK_VALIDATE_PROBES_AITK_STARTUP_H
#define AITK_VALIDATE_PROBES_AITK_STARTUP_H

#include <cjson/cJSON.h>

#include "validate/engine.h"

/* Adds python.aitk_startup for the selected environment `sel` (standard and
 * full levels): skipped without an ai-toolkit checkout (--aitk-dir, or the
 * current folder) or when import torch failed. */
aitk_status aitk_startup_check(aitk_run_ctx *ctx, const cJSON *sel);

#endif
