/* The report's first section, "Can this machine train these LoRAs?": one
 * entry per reference model in the report's "buyer" array (validate/buyer.c
 * builds it), worded here once for every renderer (terminal, Markdown,
 * HTML), each escaping the sentence its own way. */
#ifndef AITK_REPORTS_BUYER_H
#define AITK_REPORTS_BUYER_H

#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

#define AITK_BUYER_HEADING "Can this machine train these LoRAs?"

/* One plain sentence for a "buyer" entry:
 * "FLUX.1-dev LoRA: fits; 41 min per 1000 steps, predicted for NVIDIA
 * GeForce RTX 4090. Target: 24 GB, RTX 4090, 45 min per 1000 steps." Every
 * figure is labelled with where it comes from; a missing field reads as
 * "not measured", never as a number. */
aitk_status aitk_buyer_sentence(const cJSON *entry, aitk_str *out);

#endif
