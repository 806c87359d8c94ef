/* The cuDNN library, opened at run time, and the backend-API descriptors
 * this backend builds from it: tensors, the pointwise, matmul, reduction
 * and reshape operations of an operation graph, and the path from an
 * operation graph to an execution plan.
 *
 * Plain C over cudnn_graph.h with no CUDA runtime, so a test can build the
 * same graphs and plans on a machine without a GPU: since cuDNN 9.8 a
 * device-properties descriptor stands in for the handle (NVIDIA's "Deviceless
 * Ahead-of-time Compilation", cuDNN frontend documentation). */
#ifndef AITK_KERNELS_CUDA_CUDNN_API_H
#define AITK_KERNELS_CUDA_CUDNN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cudnn_graph.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef cudnnBackendDescriptor_t aitk_dnn_desc;

/* The library's functions, resolved by aitk_dnn_load. */
typedef struct aitk_dnn_api {
    void *lib;
    size_t (*GetVersion)(void);
    const char *(*GetErrorString)(cudnnStatus_t);
    cudnnStatus_t (*Create)(cudnnHandle_t *);
    cudnnStatus_t (*Destroy)(cudnnHandle_t);
    cudnnStatus_t (*SetStream)(cudnnHandle_t, cudaStream_t);
    cudnnStatus_t (*CreateDescriptor)(cudnnBackendDescriptorType_t, aitk_dnn_desc *);
    cudnnStatus_t (*DestroyDescriptor)(aitk_dnn_desc);
    cudnnStatus_t (*Finalize)(aitk_dnn_desc);
    cudnnStatus_t (*SetAttribute)(aitk_dnn_desc, cudnnBackendAttributeName_t,
                                  cudnnBackendAttributeType_t, int64_t, const void *);
    cudnnStatus_t (*GetAttribute)(aitk_dnn_desc const, cudnnBackendAttributeName_t,
                                  cudnnBackendAttributeType_t, int64_t, int64_t *, void *);
    cudnnStatus_t (*Execute)(cudnnHandle_t, aitk_dnn_desc, aitk_dnn_desc);
} aitk_dnn_api;

extern aitk_dnn_api aitk_dnn;

/* Opens libcudnn.so.9 once; false with the reason in aitk_dnn_load_error(). */
bool aitk_dnn_load(void);
const char *aitk_dnn_load_error(void);

/* Every descriptor a graph is built from, destroyed together once its plan
 * is made (cuDNN copies what a finalized descriptor needs). */
enum { AITK_DNN_MAX_DESCS = 96 };
typedef struct aitk_dnn_list {
    aitk_dnn_desc d[AITK_DNN_MAX_DESCS];
    int n;
} aitk_dnn_list;
void aitk_dnn_list_free(aitk_dnn_list *l);

/* Tensor flags. */
enum { AITK_DNN_BY_VALUE = 1, AITK_DNN_VIRTUAL = 2 };

/* A finalized 4-d tensor, kept in `l`. */
cudnnStatus_t aitk_dnn_tensor(aitk_dnn_list *l, aitk_dnn_desc *out, int64_t uid,
                              cudnnDataType_t type, const int64_t dims[4],
                              const int64_t strides[4], unsigned flags);

/* Finalized operations, kept in `l` and appended to ops[*nops]: y = x (op) b
 * (b NULL for one-input modes), in fp32; c = a x b, accumulated in fp32;
 * y = the sum of x over the dimensions where y has size 1; y = x viewed with
 * y's dimensions and strides. */
cudnnStatus_t aitk_dnn_pointwise(aitk_dnn_list *l, aitk_dnn_desc *ops, int *nops,
                                 cudnnPointwiseMode_t mode, aitk_dnn_desc x, aitk_dnn_desc b,
                                 aitk_dnn_desc y);
cudnnStatus_t aitk_dnn_matmul(aitk_dnn_list *l, aitk_dnn_desc *ops, int *nops, aitk_dnn_desc a,
                              aitk_dnn_desc b, aitk_dnn_desc c);
cudnnStatus_t aitk_dnn_reduce_add(aitk_dnn_list *l, aitk_dnn_desc *ops, int *nops,
                                  aitk_dnn_desc x, aitk_dnn_desc y);
cudnnStatus_t aitk_dnn_reshape(aitk_dnn_list *l, aitk_dnn_desc *ops, int *nops, aitk_dnn_desc x,
                               aitk_dnn_desc y);

/* Whether a failed plan build is cuDNN's lasting answer for the graph: a
 * bad parameter (2xxx) or not supported (3xxx) comes back the same for the
 * same descriptors. Anything else is of the moment and worth another try:
 * an internal error such as a failed compile or allocation (4xxx), or a
 * kernel the driver could not load, e.g. on a nearly full device (5xxx).
 * cudnn_graph.h groups the codes by thousands (CUDNN_STATUS_CATEGORY). */
bool aitk_dnn_refusal_lasts(cudnnStatus_t s);

/* What a series of failed tries reports, one more failure `s` folded into
 * the answer so far (start from CUDNN_STATUS_NOT_SUPPORTED, the answer of
 * no try at all): the first failure that does not last, else the latest,
 * so a passing failure is never mistaken for the graph's refusal. */
cudnnStatus_t aitk_dnn_fold_failure(cudnnStatus_t so_far, cudnnStatus_t s);

/* Where the plans are for: a handle on a device, or (handle NULL) a
 * device-properties descriptor for deviceless planning. */
typedef struct aitk_dnn_target {
    cudnnHandle_t handle;
    aitk_dnn_desc device;
} aitk_dnn_target;

/* A device-properties descriptor from its JSON representation. */
cudnnStatus_t aitk_dnn_device_from_json(aitk_dnn_desc *out, const char *json);

/* The operation graph of ops[0..nops), heuristic mode A's engine
 * configurations best first, and the first whose execution plan
 * finalizes: in *plan with its workspace size. *what names the step that
 * failed; *configs says how many configurations the heuristic offered.
 * When every configuration fails, the status is their failures folded by
 * aitk_dnn_fold_failure. */
cudnnStatus_t aitk_dnn_plan(const aitk_dnn_target *target, aitk_dnn_desc *ops, int nops,
                            aitk_dnn_desc *plan, int64_t *workspace, int64_t *configs,
                            const char **what);

#ifdef __cplusplus
}
#endif

#endif
