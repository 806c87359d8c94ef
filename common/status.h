/* One error vocabulary for the whole project (curl style).
 *
 * Every fallible function returns aitk_status; AITK_OK is 0 so `if (st)` reads
 * as "if it failed". The list is an X-macro so the enum, the text table and the
 * documentation test (tests/common/test_status_docs) cannot drift apart. */
#ifndef AITK_COMMON_STATUS_H
#define AITK_COMMON_STATUS_H

#define AITK_STATUS_LIST(X)                                                   \
    X(AITK_OK,             "no error")                                        \
    X(AITK_E_NOMEM,        "out of memory")                                   \
    X(AITK_E_INVAL,        "invalid argument")                                \
    X(AITK_E_IO,           "input/output error")                              \
    X(AITK_E_NOTFOUND,     "not found")                                       \
    X(AITK_E_PARSE,        "malformed input")                                 \
    X(AITK_E_RANGE,        "value out of range")                              \
    X(AITK_E_DLOPEN,       "library could not be loaded")                     \
    X(AITK_E_DLSYM,        "symbol missing from library")                     \
    X(AITK_E_EXEC,         "program could not be run")                        \
    X(AITK_E_TIMEOUT,      "timed out")                                       \
    X(AITK_E_INTERRUPTED,  "interrupted")                                     \
    X(AITK_E_UNSUPPORTED,  "not supported on this platform")                  \
    X(AITK_E_INTERNAL,     "internal error")

typedef enum aitk_status {
#define AITK_X_ENUM(name, text) name,
    AITK_STATUS_LIST(AITK_X_ENUM)
#undef AITK_X_ENUM
    AITK_STATUS_COUNT
} aitk_status;

/* Human text for a status; never NULL, also for out-of-range values. */
const char *aitk_strerror(aitk_status st);

/* The enum's own name ("AITK_E_IO"), for logs and the documentation test. */
const char *aitk_status_name(aitk_status st);

#endif
