/* The checks engine: a registry of check providers, run in a fixed order at a
 * chosen depth, each adding judgements to one list and facts to one
 * environment record.
 *
 * A provider is a probe plus its rules: it observes (never prints, never
 * writes files), records facts under ctx->env, and adds checks. */
#ifndef AITK_VALIDATE_ENGINE_H
#define AITK_VALIDATE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/yaml.h"
#include "reports/check.h"

typedef struct cJSON cJSON;

typedef enum aitk_level {
    AITK_LEVEL_QUICK,    /* environment only, loads nothing, seconds */
    AITK_LEVEL_STANDARD, /* + loads libraries, microbenchmarks, short workloads */
    AITK_LEVEL_FULL,     /* + the 1000-step reference workloads */
} aitk_level;

const char *aitk_level_name(aitk_level level);

/* Checks as owned copies, in the order they were added. */
typedef struct aitk_checklist {
    aitk_check *items;
    size_t count, cap;
    uint64_t stamp_ns; /* when the previous check was added: its duration base */
} aitk_checklist;

/* Copies every string of `c`. A zero duration_ms is replaced by the time
 * since the previous add (or since the provider started). */
aitk_status aitk_checklist_add(aitk_checklist *list, const aitk_check *c);
void aitk_checklist_free(aitk_checklist *list);

typedef struct aitk_compat aitk_compat;

typedef struct aitk_run_ctx {
    aitk_level level;
    const char *profile_name;
    const aitk_compat *compat;   /* the loaded matrix, profile selected */
    const char *output_dir;      /* where reports go (for the disk check); may be NULL */
    const char *models;          /* comma list from --model, NULL for all */
    long steps;                  /* --steps, 0 for the default */
    bool cpu_only;               /* --cpu */
    const char *python;          /* --python PATH (interpreter or environment), NULL: search */
    const char *aitk_dir;        /* --aitk-dir DIR (an ai-toolkit checkout), NULL if not given */
    const struct aitk_train_config *train_config; /* --config FILE, read; NULL if not given */
    /* models/cost.yaml when main.c loaded it (for --config's optimizer
     * check), lent to the workloads so it is read once; NULL: they load it. */
    const struct aitk_cost_params *cost_params;
    cJSON *env;                  /* environment record: providers add sections */
    aitk_checklist checks;
} aitk_run_ctx;

typedef aitk_status (*aitk_provider_fn)(aitk_run_ctx *ctx);

typedef struct aitk_provider {
    const char *category;  /* also the id prefix of its checks */
    aitk_level min_level;  /* runs at this level and deeper */
    aitk_provider_fn run;
} aitk_provider;

/* The registry, in report order (validate/registry.c). */
extern const aitk_provider aitk_providers[];
extern const size_t aitk_provider_count;

/* Runs every provider that applies to ctx->level, in order. A provider that
 * returns an error other than AITK_E_NOMEM becomes a failed check
 * "<category>.probe" and the run goes on; AITK_E_NOMEM stops the run. */
aitk_status aitk_engine_run(aitk_run_ctx *ctx, const aitk_provider *providers, size_t count);

#endif
