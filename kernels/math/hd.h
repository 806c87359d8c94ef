/* AITK_HD marks arithmetic shared by the CUDA kernels and host code.
 *
 * Each GPU kernel keeps its per-element or per-row arithmetic in a small
 * `AITK_HD static inline` function in kernels/math/. nvcc compiles it for
 * the device; a C compiler sees a plain static inline function, so CI runs
 * the very same arithmetic on machines without a GPU and compares it with
 * the CPU reference backend (tests/math/). Only C that both
 * languages accept goes in these headers: no CUDA intrinsics, no C99-only
 * syntax that C++ rejects (designated initializers, compound literals). */
#ifndef AITK_KERNELS_MATH_HD_H
#define AITK_KERNELS_MATH_HD_H

#ifdef __CUDACC__
#define AITK_HD __host__ __device__
#else
#define AITK_HD
#endif

#endif
