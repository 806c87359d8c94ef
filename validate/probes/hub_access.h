/* hub.access: whether the job can download the gated models it loads
 * (hub.yaml): a Hugging Face token where ai-toolkit's job reads one
 * (hub_token.h), or the model already in the cache. */
#ifndef AITK_VALIDATE_PROBES_HUB_ACCESS_H
#define AITK_VALIDATE_PROBES_HUB_ACCESS_H

#include <stdbool.h>

#include "common/str.h"
#include "validate/engine.h"

aitk_status aitk_hub_checks(aitk_run_ctx *ctx);

/* Whether the snapshot `refs/main` names in the hub cache `cache_dir`
 * holds the weights of every component of `repo` (space-separated
 * subfolders): in each, a *.safetensors file, and every shard its
 * *.safetensors.index.json names, as files that exist (a link into blobs/
 * that a download left unfinished does not). The snapshot's folder into
 * `snapshot` either way ("" without refs/main), what is missing into
 * `missing`. */
bool aitk_hub_cached(const char *cache_dir, const char *repo, const char *components,
                     aitk_str *snapshot, aitk_str *missing);

#endif
