/* Whether the CPU backend can measure at all, asked before any measurement.
 *
 * Its GEMMs open OpenBLAS on first use (kernels/cpu/blas.h). When that
 * cannot work -- an address-space limit with no room for OpenBLAS's
 * buffers, or no libopenblas.so.0 -- every CPU figure would fail the same
 * way, so the run stops with one message instead of a page of failed
 * checks that each repeat it. */
#ifndef AITK_BENCH_CPU_BACKEND_H
#define AITK_BENCH_CPU_BACKEND_H

#include "common/status.h"
#include "common/str.h"

/* AITK_OK when the CPU backend's BLAS is open; else its status (AITK_E_NOMEM
 * for the address-space limit) with the reason, one line, appended to why. */
aitk_status aitk_bench_cpu_ready(aitk_str *why);

#endif
