/* What an MPI launch (`aitk-validate --mpi`) does with what its ranks
 * sent: the options it accepts, each node's report written under nodes/,
 * the fleet report merged from them (reports/fleet.h) and rank 0's exit
 * code. No MPI here and no mpi.h: validate/mpi_run.c moves the bytes
 * between ranks, so this part is tested without a launch. */
#ifndef AITK_VALIDATE_MPI_FLEET_H
#define AITK_VALIDATE_MPI_FLEET_H

#include <stddef.h>

#include "common/dirlock.h"
#include "common/status.h"
#include "common/str.h"
#include "validate/cli.h"

typedef struct cJSON cJSON;

/* The test-only variable that makes one rank's workload steps slower. */
#define AITK_MPI_SLOW_RANK_VAR "AITK_TEST_SLOW_RANK"
/* How much slower: far beyond what load does to the other ranks, so the
 * outlier is certain. With three nodes the robust rule (reports/robust.h)
 * takes the middle value b as the median and, as the MAD, the gap between
 * the two others; a rank slowed f times scores 0.6745 (f - 1) b / gap, over
 * 3.5 while the two unslowed ranks differ by less than 0.19 (f - 1) b.
 * At 10 the test failed on a 2-core machine with a build running beside
 * it: the gap between the others grew to a good part of a step, and the
 * slowed rank, which may run its steps while the others wait idle, took
 * little wall time per step and so slept little. At 30 the gap may reach
 * 5.6 b, and the sleep follows the step's CPU time where that is more than
 * its wall time (bench/runner.c), so load cannot shrink it. */
#define AITK_MPI_TEST_SLOWDOWN 30.0

/* What one rank sent to rank 0. */
typedef struct aitk_mpi_node {
    int rank;
    const char *host; /* the rank's processor name (any bytes) */
    int rc;           /* the rank's own exit code */
    const char *json; /* its report as JSON text; NULL when it made none */
    size_t len;
} aitk_mpi_node;

/* Refuses what --mpi cannot honour, in one line: it needs --output-dir
 * (rank 0 writes there), and the single-file and redacted outputs, which
 * every rank would write at once, are not offered with it. */
aitk_status aitk_mpi_check_options(const aitk_options *o, aitk_str *err);

/* The rank that AITK_TEST_SLOW_RANK names (`value`; NULL or unset: -1),
 * between 0 and size - 1; AITK_E_INVAL with one line in err otherwise. */
aitk_status aitk_mpi_slow_rank(const char *value, int size, int *rank, aitk_str *err);

/* DIR/nodes/<rank>-<host>.json; a host character outside [A-Za-z0-9._-]
 * becomes '_', so no host name can leave the folder or hide a byte. */
aitk_status aitk_mpi_node_path(const char *dir, int rank, const char *host, aitk_str *out);

/* A rank's exit code from its report's verdict: 1 when it failed, else 0;
 * 3 when the report has no verdict. */
int aitk_mpi_report_exit(const cJSON *report);

/* Rank 0, before the run: creates --output-dir and holds it (the lock is
 * the caller's to release), so a launch that cannot save its result stops
 * before any rank spends minutes. */
aitk_status aitk_mpi_outputs_prepare(const char *dir, aitk_dir_lock **lock, aitk_str *err);

/* Rank 0, after the gather: writes each node's report, then the fleet
 * report, and prints where they are (unless quiet). Returns rank 0's exit
 * code: the worst of the nodes' own codes, the fleet's verdict, and 3 when
 * a file could not be written or a node's report could not be read. */
int aitk_mpi_fleet_write(const char *dir, const aitk_mpi_node *nodes, size_t n, bool quiet);

#endif
