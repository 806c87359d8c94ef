/* One rank of an MPI launch (mpi_run.h): the only file that includes mpi.h.
 *
 * The order is the same on every rank, so no rank waits for one that has
 * gone: the refusals before the run are agreed on with one all-reduce; then
 * each rank builds its report in memory (validate/run.h) and every rank,
 * whether its run worked or not, reaches the two gathers, sending an empty
 * text when it has none. A failure that leaves a rank unable to take part
 * (rank 0 out of memory for the gathered texts) ends the whole launch with
 * MPI_Abort and one line naming the rank. Any MPI call that fails ends it
 * too: MPI_COMM_WORLD keeps its default handler, MPI_ERRORS_ARE_FATAL
 * (MPI 3.1 standard, section 8.3). */
#include "validate/mpi_run.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "bench/gpu_backend.h"
#include "bench/runner.h"
#include "common/alloc.h"
#include "common/log.h"
#include "reports/report.h"
#include "validate/mpi_fleet.h"
#include "validate/run.h"

typedef struct launch {
    int rank, size;
    int local_rank; /* among the ranks on this node: which of its GPUs */
    int slow_rank;  /* AITK_TEST_SLOW_RANK, -1 when unset */
    char host[MPI_MAX_PROCESSOR_NAME];
    aitk_dir_lock *lock; /* rank 0: --output-dir, held for the launch */
} launch;

/* What each rank sends rank 0 ahead of its report's text. */
typedef struct node_head {
    int len; /* bytes of JSON that follow in the second gather; 0: none */
    int rc;  /* the rank's own exit code */
    char host[MPI_MAX_PROCESSOR_NAME];
} node_head;

static _Noreturn void abort_launch(const launch *l, const char *why)
{
    aitk_log(AITK_LOG_ERROR, "--mpi: rank %d: %s; stopping every rank", l->rank, why);
    MPI_Abort(MPI_COMM_WORLD, AITK_EXIT_INTERNAL);
    exit(AITK_EXIT_INTERNAL); /* MPI_Abort does not return; should it, stop all the same */
}

/* Rank, size, host, and the local rank: the rank among those that share
 * this node's memory (MPI_COMM_TYPE_SHARED, MPI 3.1 section 6.4.2), which
 * is what OMPI_COMM_WORLD_LOCAL_RANK or SLURM_LOCALID would say, whichever
 * launcher started the job. */
static void launch_init(launch *l)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &l->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &l->size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, l->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &l->local_rank);
    MPI_Comm_free(&node);
    int len = 0;
    MPI_Get_processor_name(l->host, &len);
    l->host[sizeof l->host - 1] = '\0';
    l->slow_rank = -1;
}

/* This rank's refusals: the options (the same on every rank, so rank 0
 * says them), the test-only variable (each rank's own environment), and
 * rank 0's output folder. */
static int refusals(const aitk_options *o, launch *l)
{
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_mpi_check_options(o, &err);
    if (st) {
        if (l->rank == 0)
            aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
    } else if ((st = aitk_mpi_slow_rank(getenv(AITK_MPI_SLOW_RANK_VAR), l->size, &l->slow_rank,
                                        &err)) ||
               (l->rank == 0 && (st = aitk_mpi_outputs_prepare(o->output_dir, &l->lock, &err)))) {
        aitk_log(AITK_LOG_ERROR, "--mpi: rank %d: %s", l->rank, aitk_str_cstr(&err));
    }
    aitk_str_free(&err);
    return st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : st ? AITK_EXIT_USAGE : AITK_EXIT_OK;
}

/* Agreed on by every rank: a rank that stopped alone would leave the
 * others waiting for it in the gather. */
static int before_run(const aitk_options *o, launch *l)
{
    int mine = refusals(o, l), any = mine;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && !mine && l->rank == 0)
        aitk_log(AITK_LOG_ERROR, "--mpi: another rank refused to start (its message is above); "
                                 "no rank ran");
    return any;
}

/* The launch facts in the node's report: which rank, on which host, and
 * the test-only slowdown when this rank had it. */
static aitk_status add_launch_section(cJSON *report, const launch *l)
{
    cJSON *m = cJSON_CreateObject();
    bool ok = m && cJSON_AddNumberToObject(m, "rank", l->rank) &&
              cJSON_AddNumberToObject(m, "size", l->size) &&
              cJSON_AddNumberToObject(m, "local_rank", l->local_rank) &&
              cJSON_AddStringToObject(m, "host", l->host);
    if (ok && l->rank == l->slow_rank)
        ok = cJSON_AddNumberToObject(m, "test_only_slowdown", AITK_MPI_TEST_SLOWDOWN) != NULL;
    if (!ok) {
        cJSON_Delete(m);
        return AITK_E_NOMEM;
    }
    return aitk_report_set_section(report, "mpi", m);
}

/* This rank's own run: its report's text in `json`, and its exit code. */
static int run_rank(const aitk_options *o, const launch *l, aitk_str *json)
{
    aitk_bench_gpu_prefer(l->local_rank);
    if (l->rank == l->slow_rank)
        aitk_bench_set_test_slowdown(AITK_MPI_TEST_SLOWDOWN);
    cJSON *report = NULL;
    int rc = aitk_run_build(o, &report);
    if (rc)
        return rc;
    /* The host name may hold any bytes; the report must be UTF-8. */
    if (add_launch_section(report, l) || aitk_json_repair_utf8(report) ||
        aitk_report_to_json(report, json)) {
        aitk_log(AITK_LOG_ERROR, "--mpi: rank %d: out of memory while writing its report",
                 l->rank);
        rc = AITK_EXIT_INTERNAL;
        aitk_str_clear(json);
    } else if (json->len > INT_MAX) {
        aitk_log(AITK_LOG_ERROR, "--mpi: rank %d: its report (%zu bytes) is too large to send",
                 l->rank, json->len);
        rc = AITK_EXIT_INTERNAL;
        aitk_str_clear(json);
    } else {
        rc = aitk_mpi_report_exit(report);
    }
    cJSON_Delete(report);
    return rc;
}

/* Rank 0: the gathered heads and texts as nodes, then the files. */
static int write_all(const aitk_options *o, const launch *l, node_head *heads, const char *buf,
                     const int *displs)
{
    aitk_mpi_node *nodes = aitk_calloc((size_t)l->size, sizeof *nodes);
    if (!nodes)
        abort_launch(l, "out of memory for the node reports");
    for (int i = 0; i < l->size; i++) {
        heads[i].host[sizeof heads[i].host - 1] = '\0';
        nodes[i] = (aitk_mpi_node){.rank = i, .host = heads[i].host, .rc = heads[i].rc,
                                   .json = heads[i].len ? buf + displs[i] : NULL,
                                   .len = (size_t)heads[i].len};
    }
    int rc = aitk_mpi_fleet_write(o->output_dir, nodes, (size_t)l->size, o->verbosity < 0);
    aitk_free(nodes);
    return rc;
}

/* Every rank: its head, then its text, to rank 0 (MPI_Gather, then
 * MPI_Gatherv at the offsets the heads give). */
static int gather(const aitk_options *o, const launch *l, int rc, const aitk_str *json)
{
    node_head mine = {.len = (int)json->len, .rc = rc};
    memcpy(mine.host, l->host, sizeof mine.host);
    const bool root = l->rank == 0;
    node_head *heads = root ? aitk_calloc((size_t)l->size, sizeof *heads) : NULL;
    int *counts = root ? aitk_calloc((size_t)l->size, sizeof *counts) : NULL;
    int *displs = root ? aitk_calloc((size_t)l->size, sizeof *displs) : NULL;
    if (root && (!heads || !counts || !displs))
        abort_launch(l, "out of memory for the node reports");
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, heads, (int)sizeof mine, MPI_BYTE, 0,
               MPI_COMM_WORLD);
    long long total = 0;
    for (int i = 0; root && i < l->size; i++) {
        counts[i] = heads[i].len;
        displs[i] = (int)total;
        total += heads[i].len;
        if (total > INT_MAX)
            abort_launch(l, "the node reports together pass 2 GiB");
    }
    char *buf = root ? aitk_malloc((size_t)total + 1) : NULL;
    if (root && !buf)
        abort_launch(l, "out of memory for the node reports");
    static const char none[] = "";
    MPI_Gatherv(json->ptr ? json->ptr : none, mine.len, MPI_CHAR, buf, counts, displs, MPI_CHAR,
                0, MPI_COMM_WORLD);
    if (root)
        rc = write_all(o, l, heads, buf, displs);
    aitk_free(buf);
    aitk_free(heads);
    aitk_free(counts);
    aitk_free(displs);
    return rc;
}

int aitk_mpi_run(const aitk_options *o)
{
    /* MPI_Init with no arguments (MPI 3.1 section 8.7): the program's own
     * argv stays its own. */
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        aitk_log(AITK_LOG_ERROR, "--mpi: MPI_Init failed: is this run under mpirun or srun?");
        return AITK_EXIT_INTERNAL;
    }
    launch l = {0};
    launch_init(&l);
    int rc = before_run(o, &l);
    if (!rc) {
        aitk_str json = AITK_STR_INIT;
        rc = gather(o, &l, run_rank(o, &l, &json), &json);
        aitk_str_free(&json);
    }
    aitk_dir_lock_release(l.lock);
    MPI_Finalize();
    return rc;
}
