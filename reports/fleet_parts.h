/* Internal to the fleet merge (fleet.c, fleet_diff.c, fleet_metrics.c): the
 * state one merge builds, and the sections each file adds. Not for other
 * modules. */
#ifndef AITK_REPORTS_FLEET_PARTS_H
#define AITK_REPORTS_FLEET_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "reports/fleet.h"
#include "reports/name_index.h"
#include "reports/robust.h"

/* What a node's value is shown as when the node does not have it. */
#define AITK_FLEET_ABSENT "(absent)"

typedef struct aitk_fleet_merge_ctx {
    const aitk_fleet_node *nodes;
    size_t n;
    aitk_robust_rule rule;
    cJSON *outliers;    /* fleet.outliers, appended to by each section */
    size_t differences; /* entries of fleet.differences */
    size_t differences_that_matter;
    size_t version_differences;
} aitk_fleet_merge_ctx;

/* One index per node of a report list ("checks" by "id", "workloads" by
 * "name", ...), so a subject is looked up on every node in O(log n). */
typedef struct aitk_fleet_lists {
    aitk_name_index *ix; /* ctx->n of them */
    size_t n;
} aitk_fleet_lists;

aitk_status aitk_fleet_lists_build(aitk_fleet_lists *l, const aitk_fleet_merge_ctx *c,
                                   const char *list, const char *key);
void aitk_fleet_lists_free(aitk_fleet_lists *l);
/* True when a node before `node` has an entry named `name`: the subject was
 * handled when it was first seen. */
bool aitk_fleet_seen_before(const aitk_fleet_lists *l, size_t node, const char *name);

/* Appends {"node", "kind", "subject", "value", "reference", "detail"} to
 * ctx->outliers. */
aitk_status aitk_fleet_add_outlier(aitk_fleet_merge_ctx *c, size_t node, const char *kind,
                                   const char *subject, const char *value,
                                   const char *reference, const char *detail);

/* fleet.differences: checks, workloads and microbenchmarks whose status,
 * observed value or unit differs between nodes. */
aitk_status aitk_fleet_add_differences(aitk_fleet_merge_ctx *c, cJSON *fleet);
/* fleet.metrics: every workload metric and microbenchmark value across the
 * nodes, judged by the robust rule; outliers appended. */
aitk_status aitk_fleet_add_metrics(aitk_fleet_merge_ctx *c, cJSON *fleet);

#endif
