/* What cuda_stack.c, cuda_version.c and cuda_wheels.c share: the CUDA
 * libraries probed, how a file name is told to be one of them, and how its
 * version and its owning pip wheel are read. */
#ifndef AITK_VALIDATE_PROBES_CUDA_LIB_H
#define AITK_VALIDATE_PROBES_CUDA_LIB_H

#include <stdbool.h>

#include "common/str.h"
#include "validate/engine.h"

typedef enum { VER_RUNTIME, VER_CUBLAS, VER_CUBLASLT, VER_CUDNN, VER_NCCL } aitk_cuda_ver_kind;

typedef struct aitk_cuda_lib {
    const char *key;      /* report key and check id suffix */
    const char *title;
    const char *stem;     /* "libcudart": file names start with stem + ".so" or stem + "-" */
    const char *pip;      /* pip distribution prefix: nvidia-cuda-runtime-cu12 ... */
    const char *pip_dir;  /* site-packages/nvidia/<dir>/lib */
    const char *header;   /* header holding the version */
    aitk_cuda_ver_kind kind;
} aitk_cuda_lib;

/* Does `name` (a file name) name this library and not another of the same
 * stem (libcublasLt vs libcublas)? */
int aitk_cuda_names_lib(const aitk_cuda_lib *l, const char *name);

/* The version a file name carries: "libcudart.so.13.0.96" -> "13.0.96",
 * "cudart64_12.dll" -> "12"; nothing for an unversioned name. */
void aitk_cuda_soname_version(const char *file, aitk_str *out);

/* The version at --quick, read without loading: the pip wheel that owns
 * the file, a header of the same installation, else the file name. Adds
 * "version" and "version_from" to `o`. */
void aitk_cuda_quick_version(const aitk_cuda_lib *l, const char *path, const char *why,
                             const cJSON *pyenv, cJSON *o);

/* The version the library itself reports, asked in a process of its own
 * (common/libload.h). Adds "loaded_version" to `o`; `err` gets the loader's
 * or the call's failure text. */
aitk_status aitk_cuda_loaded_version(const aitk_cuda_lib *l, const char *path, cJSON *o,
                                     aitk_str *err);

/* The pip wheel (an entry of pyenv's "packages") whose RECORD lists `path`;
 * false when none does. */
bool aitk_cuda_wheel_owner(const cJSON *pyenv, const char *path, aitk_str *pkg, aitk_str *ver);

/* The CUDA major version a nvidia-* wheel is for: its -cuNN suffix, else the
 * nvidia/cuNN/ folder its RECORD installs into (the cu13 wheels); 0 when
 * neither tells. */
int aitk_cuda_wheel_major(const char *name, const cJSON *pkg);

/* torch's own wheel of this library (a nvidia-* package of torch's CUDA
 * major) lists a file in its RECORD that is not there: `pkg`, `ver` and
 * `missing` (the path) say which. */
bool aitk_cuda_wheel_file_missing(const aitk_cuda_lib *l, const cJSON *pyenv, aitk_str *pkg,
                                  aitk_str *ver, aitk_str *missing);

/* cuda.nvidia_wheels: the nvidia-* wheels of one environment are for one
 * CUDA major version. Added only when the environment has such wheels. */
aitk_status aitk_cuda_wheel_check(aitk_run_ctx *ctx, const cJSON *pyenv);

#endif
