/* A check: one judgement about the machine (DCGM habit: judgements, not dumps).
 *
 * The report model defines what a check is, so both the engine that makes
 * checks (validate/) and the renderers that show them (reports/) agree
 * without reports ever including a probe. */
#ifndef AITK_REPORTS_CHECK_H
#define AITK_REPORTS_CHECK_H

#include "common/status.h"

#define AITK_CHECK_STATUS_LIST(X) \
    X(AITK_CHECK_PASS, "pass")    \
    X(AITK_CHECK_WARN, "warn")    \
    X(AITK_CHECK_FAIL, "fail")    \
    X(AITK_CHECK_SKIP, "skip")

typedef enum aitk_check_status {
#define AITK_X_ENUM(name, text) name,
    AITK_CHECK_STATUS_LIST(AITK_X_ENUM)
#undef AITK_X_ENUM
    AITK_CHECK_STATUS_COUNT
} aitk_check_status;

typedef struct aitk_check {
    const char *id;        /* stable, dotted: "host.libc" */
    const char *category;  /* host, gpu, cuda, python, env, deps, bench, workload */
    const char *title;     /* short, for people */
    aitk_check_status status;
    const char *observed;  /* what was found ("" when nothing applies) */
    const char *expected;  /* what the rule wants ("" for informational checks) */
    const char *message;   /* one or two sentences: what it means */
    const char *remedy;    /* what to do; required for warn and fail */
    const char *source;    /* where the rule's figure comes from */
    /* The id of another check whose failure this one comes from ("" or NULL:
     * none), or ids separated by commas, of which the first that failed
     * counts; said by the check that knows why it failed: a torch that
     * cannot use CUDA follows gpu.cuda_driver or gpu.driver_for_torch. The
     * report keeps the one that failed, if any (reports/causes.h). */
    const char *follows;
    double duration_ms;
} aitk_check;

const char *aitk_check_status_name(aitk_check_status st);
/* "pass" -> AITK_CHECK_PASS; AITK_E_PARSE for anything else. */
aitk_status aitk_check_status_parse(const char *text, aitk_check_status *out);

#endif
