/* The fleet report of an MPI launch: the one place where `--mpi` calls the
 * fleet API (reports/fleet.h) to merge the node reports and write
 * fleet.json, fleet.md and fleet.html. */
#ifndef AITK_VALIDATE_MPI_FLEET_REPORT_H
#define AITK_VALIDATE_MPI_FLEET_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "reports/fleet.h"

/* Merges `n` (>= 1) node reports and writes DIR/fleet.{json,md,html};
 * prints where they are unless `quiet`. Returns the fleet's exit code (0 no
 * node stands out, 1 one does), or 3 when the merge or a file failed
 * (logged). */
int aitk_mpi_fleet_report(const char *dir, const aitk_fleet_node *nodes, size_t n, bool quiet);

#endif
