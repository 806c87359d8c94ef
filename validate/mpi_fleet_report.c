/* The fleet report of an MPI launch (mpi_fleet_report.h).
 *
 * PENDING: the fleet API (reports/fleet.h) is implemented on another branch;
 * until it lands this writes nothing and says so. */
#include "validate/mpi_fleet_report.h"

#include "common/log.h"
#include "validate/cli.h"

int aitk_mpi_fleet_report(const char *dir, const aitk_fleet_node *nodes, size_t n, bool quiet)
{
    (void)dir;
    (void)nodes;
    (void)quiet;
    aitk_log(AITK_LOG_WARN, "the fleet report of %zu node(s) is not written: this build has no "
                            "fleet merge yet", n);
    return AITK_EXIT_OK;
}
