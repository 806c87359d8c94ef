/* The workloads of the renderers' gemm_in_step tests (test_markdown.c,
 * test_html.c): one measured below its target (a problem never timed alone
 * among them, a message to escape), one not measured, one on the CPU. */
#ifndef AITK_TESTS_REPORTS_GEMM_IN_STEP_FIXTURE_H
#define AITK_TESTS_REPORTS_GEMM_IN_STEP_FIXTURE_H

#define GEMM_IN_STEP_WORKLOADS \
        "[{\"name\":\"flux1-dev\",\"status\":\"completed\",\"backend\":\"cuda\"," \
        "\"gemm_in_step\":{\"status\":\"warn\",\"ratio\":0.84,\"target\":0.85,\"calls\":140," \
        "\"ms_in_step\":110,\"tflops_in_step\":0.847,\"matched_share\":0.966," \
        "\"problems_total\":2,\"message\":\"a <note>\",\"problems\":[" \
        "{\"shape\":\"m=1000 n=2000 k=500\",\"calls\":40,\"ms_in_step\":80," \
        "\"tflops_in_step\":1.0,\"tflops_isolated\":1.25,\"ratio\":0.8}," \
        "{\"shape\":\"m=16 n=1000 k=1000\",\"calls\":100,\"ms_in_step\":10," \
        "\"tflops_in_step\":0.32}]}}," \
        "{\"name\":\"chroma\",\"status\":\"completed\",\"backend\":\"cuda\"," \
        "\"gemm_in_step\":{\"status\":\"skip\",\"target\":0.85,\"message\":\"not measured: set " \
        "AITK_TIME_OPS=1 (op timing adds CUDA events around every op)\"}}," \
        "{\"name\":\"omnigen2\",\"status\":\"completed\",\"backend\":\"cpu\"}]"

#endif
