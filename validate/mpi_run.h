/* `aitk-validate --mpi`: one rank of an MPI launch (mpirun, or srun under
 * Slurm). Every rank validates its own node and the GPU its local rank
 * picks; rank 0 gathers the reports and writes them, and the fleet report,
 * into --output-dir (validate/mpi_fleet.h). Built from mpi_run.c when CMake
 * finds MPI, else from mpi_none.c, which refuses --mpi; either is linked
 * into the executable only, so nothing else includes mpi.h. */
#ifndef AITK_VALIDATE_MPI_RUN_H
#define AITK_VALIDATE_MPI_RUN_H

#include "validate/cli.h"

/* Runs this rank. Rank 0 returns the worst of the nodes' exit codes and
 * the fleet's; the other ranks return their own. 2 when the options or the
 * test-only variable are refused, or when this build has no MPI. */
int aitk_mpi_run(const aitk_options *o);

#endif
