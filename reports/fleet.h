/* The fleet report: many per-node reports merged into one view.
 *
 * Any scheduler can leave one report.json per node (a Slurm array, a
 * Kubernetes Job per node, Ansible); an MPI launch gathers them on rank 0.
 * Both end here. The fleet report is a cJSON tree of its own (a table of
 * nodes, the checks whose status or observed value differs between nodes,
 * and the outliers: a node whose step time or bandwidth is far from the
 * others by a robust rule, a node with another driver, CUDA or library
 * version). Markdown and HTML are pure functions of that tree, as for the
 * single-node report.
 *
 * Node reports are refused, not read leniently, when malformed: a number
 * read as missing could hide the outlier the merge exists to find. */
#ifndef AITK_REPORTS_FLEET_H
#define AITK_REPORTS_FLEET_H

#include <stddef.h>

#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

typedef struct aitk_fleet_node {
    const char *name;     /* where the report came from: a file name or "rank 2" */
    const cJSON *report;  /* a parsed report.json; not modified */
} aitk_fleet_node;

/* Builds the fleet report from `n` node reports (n >= 1) into *fleet
 * (caller frees with cJSON_Delete). AITK_E_PARSE with one line in `err`
 * naming the node when a report is malformed; AITK_E_NOMEM. */
aitk_status aitk_fleet_merge(const aitk_fleet_node *nodes, size_t n, cJSON **fleet, aitk_str *err);

/* The renderings of a fleet report, appended to `out`. */
aitk_status aitk_fleet_render_markdown(const cJSON *fleet, aitk_str *out);
aitk_status aitk_fleet_render_html(const cJSON *fleet, aitk_str *out);
/* The short form for a terminal: the verdict, the outliers, the versions
 * and the differences that matter. */
aitk_status aitk_fleet_render_text(const cJSON *fleet, aitk_str *out);

/* compare's discipline: 0 when no node stands out, 1 when an outlier or a
 * node-to-node difference that matters was found. */
int aitk_fleet_exit_code(const cJSON *fleet);

#endif
