/* Rank 0's side of an MPI launch, without MPI (mpi_fleet.h). */
#include "validate/mpi_fleet.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/cliopt.h"
#include "common/fileio.h"
#include "common/log.h"
#include "reports/fields.h"
#include "reports/report.h"
#include "validate/mpi_fleet_report.h"

aitk_status aitk_mpi_check_options(const aitk_options *o, aitk_str *err)
{
    if (!o->output_dir) {
        aitk_str_append(err, "--mpi needs --output-dir DIR: rank 0 writes the node reports and "
                             "the fleet report there");
        return AITK_E_INVAL;
    }
    /* Every rank would write these same files at once; the per-node
     * reports under DIR/nodes/ are what they would hold. */
    const char *single[] = {o->json_path, o->markdown_path, o->html_path, o->junit_path,
                            o->support_bundle};
    static const char *const names[] = {"--json", "--markdown", "--html", "--junit",
                                        "--support-bundle"};
    for (size_t i = 0; i < sizeof single / sizeof *single; i++)
        if (single[i]) {
            aitk_str_appendf(err, "--mpi cannot be combined with %s: every rank would write "
                                  "it; the node reports are in --output-dir's nodes/",
                             names[i]);
            return AITK_E_INVAL;
        }
    /* The node files are named after their hosts, which --redact hides. */
    if (o->redact) {
        aitk_str_append(err, "--mpi cannot be combined with --redact: the node reports are "
                             "named after their hosts");
        return AITK_E_INVAL;
    }
    return AITK_OK;
}

aitk_status aitk_mpi_slow_rank(const char *value, int size, int *rank, aitk_str *err)
{
    *rank = -1;
    if (!value || !*value)
        return AITK_OK;
    long r;
    aitk_status st = aitk_opt_long(AITK_MPI_SLOW_RANK_VAR, value, 0, size - 1L, &r, err);
    if (!st)
        *rank = (int)r;
    return st;
}

aitk_status aitk_mpi_node_path(const char *dir, int rank, const char *host, aitk_str *out)
{
    aitk_str name = AITK_STR_INIT;
    aitk_str_appendf(&name, "nodes/%d-", rank);
    for (const char *p = host && *host ? host : "unknown"; *p; p++) {
        const char c = *p;
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        aitk_str_appendc(&name, plain ? c : '_');
    }
    aitk_str_append(&name, ".json");
    aitk_status st = aitk_str_status(&name);
    if (!st)
        st = aitk_path_join(out, dir, aitk_str_cstr(&name));
    aitk_str_free(&name);
    return st;
}

int aitk_mpi_report_exit(const cJSON *report)
{
    aitk_verdict v;
    if (aitk_report_verdict(report, &v))
        return AITK_EXIT_INTERNAL;
    return v == AITK_VERDICT_FAIL ? AITK_EXIT_FAILED : AITK_EXIT_OK;
}

aitk_status aitk_mpi_outputs_prepare(const char *dir, aitk_dir_lock **lock, aitk_str *err)
{
    aitk_str nodes = AITK_STR_INIT;
    aitk_status st = aitk_dir_create(dir, err);
    if (!st)
        st = aitk_dir_check_writable(dir, err);
    if (!st)
        st = aitk_path_join(&nodes, dir, "nodes");
    if (!st)
        st = aitk_dir_create(aitk_str_cstr(&nodes), err);
    aitk_str_free(&nodes);
    return st ? st : aitk_dir_lock_take(dir, lock, err);
}

static int worst(int a, int b)
{
    return a > b ? a : b;
}

/* Reads and writes one node's report; its parsed tree in *tree (NULL when
 * the rank made none). Returns the node's exit code as rank 0 sees it. */
static int write_node(const char *dir, const aitk_mpi_node *node, cJSON **tree, bool quiet)
{
    *tree = NULL;
    if (!node->json) /* the rank said why on its own stderr */
        return worst(node->rc, AITK_EXIT_FAILED);
    aitk_str path = AITK_STR_INIT, err = AITK_STR_INIT, shown = AITK_STR_INIT;
    int rc = node->rc;
    if (aitk_mpi_node_path(dir, node->rank, node->host, &path)) {
        rc = AITK_EXIT_INTERNAL;
    } else if (aitk_report_parse(aitk_str_cstr(&path), node->json, node->len, tree, &err) ||
               aitk_file_write_atomic(aitk_str_cstr(&path), node->json, node->len, &err)) {
        aitk_log(AITK_LOG_ERROR, "rank %d: %s", node->rank, aitk_str_cstr(&err));
        rc = AITK_EXIT_INTERNAL;
    } else if (!quiet) {
        aitk_str_append_printable(&shown, aitk_str_cstr(&path), false);
        const char *verdict = aitk_field_str(aitk_field_obj(*tree, "summary"), "verdict");
        printf("Node %d: %s, %s\n", node->rank, verdict, aitk_str_cstr(&shown));
    }
    aitk_str_free(&path);
    aitk_str_free(&err);
    aitk_str_free(&shown);
    return rc;
}

int aitk_mpi_fleet_write(const char *dir, const aitk_mpi_node *nodes, size_t n, bool quiet)
{
    cJSON **trees = aitk_calloc(n ? n : 1, sizeof *trees);
    aitk_fleet_node *fleet = aitk_calloc(n ? n : 1, sizeof *fleet);
    aitk_str *names = aitk_calloc(n ? n : 1, sizeof *names);
    if (!trees || !fleet || !names) {
        aitk_log(AITK_LOG_ERROR, "out of memory while gathering the node reports");
        aitk_free(trees);
        aitk_free(fleet);
        aitk_free(names);
        return AITK_EXIT_INTERNAL;
    }
    int rc = AITK_EXIT_OK;
    size_t merged = 0;
    for (size_t i = 0; i < n; i++) {
        rc = worst(rc, write_node(dir, &nodes[i], &trees[i], quiet));
        if (!trees[i])
            continue;
        /* The fleet report names each node as its file does. */
        aitk_str_appendf(&names[merged], "rank %d (%s)", nodes[i].rank,
                         nodes[i].host && *nodes[i].host ? nodes[i].host : "unknown");
        fleet[merged] = (aitk_fleet_node){.name = aitk_str_cstr(&names[merged]),
                                          .report = trees[i]};
        merged++;
    }
    if (merged == 0)
        aitk_log(AITK_LOG_ERROR, "no rank delivered a report: no fleet report was written");
    else
        rc = worst(rc, aitk_mpi_fleet_report(dir, fleet, merged, quiet));
    for (size_t i = 0; i < n; i++) {
        cJSON_Delete(trees[i]);
        aitk_str_free(&names[i]);
    }
    aitk_free(trees);
    aitk_free(fleet);
    aitk_free(names);
    return rc;
}
