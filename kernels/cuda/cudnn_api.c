/* cuDNN opened at run time, and the backend descriptors built from it (see
 * cudnn_api.h).
 *
 * Why dlopen and not a link: libcudnn is a separate download, often missing
 * or of another major version on the machines this tool diagnoses. Linked,
 * the whole plugin would fail to load and the report would lose the GPU
 * entirely; opened at run time, the plugin loads without it, probe reports
 * cudnn_version 0, and attention takes another path with the reason in the
 * report's paths. Only the header's types and constants are used at build
 * time; every function comes through runtime_lib.c. */
#include "kernels/cuda/cudnn_api.h"

#include <stdio.h>
#include <string.h>

#include "kernels/cuda/runtime_lib.h"

aitk_dnn_api aitk_dnn;

static bool tried;
static char load_error[256];

/* The handle attributes of the operation graph and the execution plan are
 * marked deprecated in cuDNN 9 headers but still accepted; their numeric
 * values keep the -Werror build free of deprecation warnings. */
#define ATTR_OPERATIONGRAPH_HANDLE ((cudnnBackendAttributeName_t)800)
#define ATTR_EXECUTION_PLAN_HANDLE ((cudnnBackendAttributeName_t)400)

/* cuDNN 9.22 gave the reshape operation a mode: a view that only relabels
 * strides, or a logical reshape that may move data. The composite attention
 * backward's P^T and dS^T are transposes written as views, so NVIDIA's
 * cudnn-frontend sets the view mode from 9.22 on (include/cudnn_frontend/
 * node/reshape.h) rather than trust the default; so does this file. The
 * values are cuDNN 9.26's (cudnn_graph.h of the nvidia-cudnn-cu13 9.26.0.51
 * wheel: CUDNN_ATTR_OPERATION_RESHAPE_MODE 2202, CUDNN_TYPE_RESHAPE_MODE 31,
 * CUDNN_RESHAPE_VIEW_ONLY 0), since the headers built against may be older. */
#define RESHAPE_MODE_SINCE 92200
#define ATTR_OPERATION_RESHAPE_MODE ((cudnnBackendAttributeName_t)2202)
#define TYPE_RESHAPE_MODE ((cudnnBackendAttributeType_t)31)
#define RESHAPE_VIEW_ONLY 0

bool aitk_dnn_load(void)
{
    if (tried)
        return aitk_dnn.lib != NULL;
    tried = true;
    static const char *const names[] = {"libcudnn.so.9", "libcudnn.so"};
    const aitk_lib_symbol symbols[] = {
        {"cudnnGetVersion", &aitk_dnn.GetVersion},
        {"cudnnGetErrorString", &aitk_dnn.GetErrorString},
        {"cudnnCreate", &aitk_dnn.Create},
        {"cudnnDestroy", &aitk_dnn.Destroy},
        {"cudnnSetStream", &aitk_dnn.SetStream},
        {"cudnnBackendCreateDescriptor", &aitk_dnn.CreateDescriptor},
        {"cudnnBackendDestroyDescriptor", &aitk_dnn.DestroyDescriptor},
        {"cudnnBackendFinalize", &aitk_dnn.Finalize},
        {"cudnnBackendSetAttribute", &aitk_dnn.SetAttribute},
        {"cudnnBackendGetAttribute", &aitk_dnn.GetAttribute},
        {"cudnnBackendExecute", &aitk_dnn.Execute},
    };
    aitk_dnn.lib = aitk_lib_open(names, sizeof names / sizeof *names, symbols,
                                 sizeof symbols / sizeof *symbols, load_error, sizeof load_error);
    return aitk_dnn.lib != NULL;
}

const char *aitk_dnn_load_error(void)
{
    return load_error;
}

void aitk_dnn_list_free(aitk_dnn_list *l)
{
    for (int i = l->n - 1; i >= 0; i--)
        if (l->d[i])
            aitk_dnn.DestroyDescriptor(l->d[i]);
    l->n = 0;
}

/* A new descriptor of `type`, kept in `l` so that it is freed with it. */
static cudnnStatus_t create(aitk_dnn_list *l, cudnnBackendDescriptorType_t type,
                            aitk_dnn_desc *out)
{
    *out = NULL;
    if (l->n >= AITK_DNN_MAX_DESCS)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t s = aitk_dnn.CreateDescriptor(type, out);
    if (!s)
        l->d[l->n++] = *out;
    return s;
}

static cudnnStatus_t set_desc(aitk_dnn_desc d, cudnnBackendAttributeName_t a, aitk_dnn_desc v)
{
    return aitk_dnn.SetAttribute(d, a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

static cudnnStatus_t set_type(aitk_dnn_desc d, cudnnBackendAttributeName_t a,
                              cudnnDataType_t type)
{
    return aitk_dnn.SetAttribute(d, a, CUDNN_TYPE_DATA_TYPE, 1, &type);
}

cudnnStatus_t aitk_dnn_tensor(aitk_dnn_list *l, aitk_dnn_desc *out, int64_t uid,
                              cudnnDataType_t type, const int64_t dims[4],
                              const int64_t strides[4], unsigned flags)
{
    int64_t align = 16;
    bool yes = true;
    cudnnStatus_t s = create(l, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out);
    if (!s)
        s = set_type(*out, CUDNN_ATTR_TENSOR_DATA_TYPE, type);
    if (!s)
        s = aitk_dnn.SetAttribute(*out, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    if (!s)
        s = aitk_dnn.SetAttribute(*out, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    if (!s)
        s = aitk_dnn.SetAttribute(*out, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    if (!s)
        s = aitk_dnn.SetAttribute(*out, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1,
                                  &align);
    if (!s && (flags & AITK_DNN_BY_VALUE))
        s = aitk_dnn.SetAttribute(*out, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1,
                                  &yes);
    if (!s && (flags & AITK_DNN_VIRTUAL))
        s = aitk_dnn.SetAttribute(*out, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1,
                                  &yes);
    return s ? s : aitk_dnn.Finalize(*out);
}

/* Finalizes op and appends it to the graph's operations. */
static cudnnStatus_t append(aitk_dnn_desc op, aitk_dnn_desc *ops, int *nops)
{
    cudnnStatus_t s = aitk_dnn.Finalize(op);
    if (!s)
        ops[(*nops)++] = op;
    return s;
}

cudnnStatus_t aitk_dnn_pointwise(aitk_dnn_list *l, aitk_dnn_desc *ops, int *nops,
                                 cudnnPointwiseMode_t mode, aitk_dnn_desc x, aitk_dnn_desc b,
                                 aitk_dnn_desc y)
{
    aitk_dnn_desc pw = NULL, op = NULL;
    float one = 1.0f;
    cudnnStatus_t s = create(l, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw);
    if (!s)
        s = aitk_dnn.SetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1,
                                  &mode);
    if (!s)
        s = set_type(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_DATA_FLOAT);
    if (!s)
        s = aitk_dnn.Finalize(pw);
    if (!s)
        s = create(l, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &op);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (!s && b)
        s = set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    if (!s)
        s = aitk_dnn.SetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1,
                                  &one);
    if (!s)
        s = aitk_dnn.SetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1,
                                  &one);
    return s ? s : append(op, ops, nops);
}

cudnnStatus_t aitk_dnn_matmul(aitk_dnn_list *l, aitk_dnn_desc *ops, int *nops, aitk_dnn_desc a,
                              aitk_dnn_desc b, aitk_dnn_desc c)
{
    aitk_dnn_desc mm = NULL, op = NULL;
    cudnnStatus_t s = create(l, CUDNN_BACKEND_MATMUL_DESCRIPTOR, &mm);
    if (!s)
        s = set_type(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT);
    if (!s)
        s = aitk_dnn.Finalize(mm);
    if (!s)
        s = create(l, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, &op);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
    return s ? s : append(op, ops, nops);
}

cudnnStatus_t aitk_dnn_reduce_add(aitk_dnn_list *l, aitk_dnn_desc *ops, int *nops,
                                  aitk_dnn_desc x, aitk_dnn_desc y)
{
    aitk_dnn_desc red = NULL, op = NULL;
    cudnnReduceTensorOp_t add = CUDNN_REDUCE_TENSOR_ADD;
    cudnnStatus_t s = create(l, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, &red);
    if (!s)
        s = set_type(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT);
    if (!s)
        s = aitk_dnn.SetAttribute(red, CUDNN_ATTR_REDUCTION_OPERATOR,
                                  CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &add);
    if (!s)
        s = aitk_dnn.Finalize(red);
    if (!s)
        s = create(l, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, &op);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, red);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
    return s ? s : append(op, ops, nops);
}

cudnnStatus_t aitk_dnn_reshape(aitk_dnn_list *l, aitk_dnn_desc *ops, int *nops, aitk_dnn_desc x,
                               aitk_dnn_desc y)
{
    aitk_dnn_desc op = NULL;
    cudnnStatus_t s = create(l, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, &op);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x);
    if (!s)
        s = set_desc(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y);
    if (!s && aitk_dnn.GetVersion() >= RESHAPE_MODE_SINCE) {
        const int32_t view_only = RESHAPE_VIEW_ONLY;
        s = aitk_dnn.SetAttribute(op, ATTR_OPERATION_RESHAPE_MODE, TYPE_RESHAPE_MODE, 1,
                                  &view_only);
    }
    return s ? s : append(op, ops, nops);
}

cudnnStatus_t aitk_dnn_device_from_json(aitk_dnn_desc *out, const char *json)
{
    cudnnStatus_t s = aitk_dnn.CreateDescriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, out);
    if (!s)
        s = aitk_dnn.SetAttribute(*out, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION,
                                  CUDNN_TYPE_CHAR, (int64_t)strlen(json) + 1, json);
    if (!s)
        s = aitk_dnn.Finalize(*out);
    if (s && *out) {
        aitk_dnn.DestroyDescriptor(*out);
        *out = NULL;
    }
    return s;
}

/* The operation graph over ops, on the target's handle when it has one. */
static cudnnStatus_t make_graph(aitk_dnn_list *l, const aitk_dnn_target *t, aitk_dnn_desc *ops,
                                int nops, aitk_dnn_desc *graph)
{
    cudnnStatus_t s = create(l, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph);
    if (!s && t->handle)
        s = aitk_dnn.SetAttribute(*graph, ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                  &t->handle);
    if (!s)
        s = aitk_dnn.SetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, nops, ops);
    return s ? s : aitk_dnn.Finalize(*graph);
}

enum { MAX_CFGS = 8 };

/* Heuristic mode A's engine configurations, best first: *ncfg of cfg[]. */
static cudnnStatus_t make_configs(aitk_dnn_list *l, const aitk_dnn_target *t,
                                  aitk_dnn_desc graph, aitk_dnn_desc cfg[MAX_CFGS],
                                  int64_t *ncfg)
{
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    aitk_dnn_desc heur = NULL;
    cudnnStatus_t s = create(l, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
    if (!s)
        s = set_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    if (!s)
        s = aitk_dnn.SetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
                                  &mode);
    if (!s && t->device)
        s = set_desc(heur, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, t->device);
    if (!s)
        s = aitk_dnn.Finalize(heur);
    for (int i = 0; i < MAX_CFGS && !s; i++)
        s = create(l, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]);
    if (!s)
        s = aitk_dnn.GetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, MAX_CFGS, ncfg, cfg);
    return !s && *ncfg == 0 ? CUDNN_STATUS_NOT_SUPPORTED : s;
}

bool aitk_dnn_refusal_lasts(cudnnStatus_t s)
{
    return s / 1000 == 2 || s / 1000 == 3;
}

cudnnStatus_t aitk_dnn_fold_failure(cudnnStatus_t so_far, cudnnStatus_t s)
{
    return so_far && !aitk_dnn_refusal_lasts(so_far) ? so_far : s;
}

/* The first configuration whose execution plan finalizes; otherwise the
 * failures folded (aitk_dnn_fold_failure). The plan is the caller's (not
 * in any list). */
static cudnnStatus_t first_plan(const aitk_dnn_target *t, aitk_dnn_desc cfg[MAX_CFGS],
                                int64_t ncfg, aitk_dnn_desc *plan, int64_t *workspace)
{
    cudnnStatus_t failed = CUDNN_STATUS_NOT_SUPPORTED;
    for (int64_t i = 0; i < ncfg; i++) {
        aitk_dnn_desc p = NULL;
        int64_t got = 0;
        cudnnStatus_t s = aitk_dnn.CreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p);
        if (!s && t->handle)
            s = aitk_dnn.SetAttribute(p, ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                      &t->handle);
        if (!s && t->device)
            s = set_desc(p, CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, t->device);
        if (!s)
            s = set_desc(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg[i]);
        if (!s)
            s = aitk_dnn.Finalize(p);
        if (!s)
            s = aitk_dnn.GetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                      CUDNN_TYPE_INT64, 1, &got, workspace);
        if (!s) {
            *plan = p;
            return s;
        }
        if (p)
            aitk_dnn.DestroyDescriptor(p);
        failed = aitk_dnn_fold_failure(failed, s);
    }
    return failed;
}

cudnnStatus_t aitk_dnn_plan(const aitk_dnn_target *target, aitk_dnn_desc *ops, int nops,
                            aitk_dnn_desc *plan, int64_t *workspace, int64_t *configs,
                            const char **what)
{
    aitk_dnn_list l = {.n = 0};
    aitk_dnn_desc graph = NULL, cfg[MAX_CFGS] = {0};
    *plan = NULL;
    *workspace = 0;
    *configs = 0;
    *what = "operation graph";
    cudnnStatus_t s = make_graph(&l, target, ops, nops, &graph);
    if (!s) {
        *what = "engine heuristics";
        s = make_configs(&l, target, graph, cfg, configs);
    }
    if (!s) {
        *what = "execution plan";
        s = first_plan(target, cfg, *configs, plan, workspace);
    }
    aitk_dnn_list_free(&l);
    return s;
}
