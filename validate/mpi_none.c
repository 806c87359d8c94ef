/* `--mpi` in a build without MPI (mpi_run.h): CMake found no MPI library,
 * or this is the Windows build, which never has one. */
#include "validate/mpi_run.h"

#include "common/log.h"

int aitk_mpi_run(const aitk_options *o)
{
    (void)o;
    aitk_log(AITK_LOG_ERROR, "--mpi: this build has no MPI support (it was built without an MPI "
                             "library; on Debian install openmpi-bin and libopenmpi-dev and "
                             "build again)");
    return AITK_EXIT_USAGE;
}
