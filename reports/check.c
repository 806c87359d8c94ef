/* Names for check statuses, from the same X-macro as the enum. */
#include "reports/check.h"

#include <string.h>

static const char *const names[] = {
#define AITK_X_NAME(name, text) text,
    AITK_CHECK_STATUS_LIST(AITK_X_NAME)
#undef AITK_X_NAME
};

const char *aitk_check_status_name(aitk_check_status st)
{
    return (unsigned)st < AITK_CHECK_STATUS_COUNT ? names[st] : "unknown";
}

aitk_status aitk_check_status_parse(const char *text, aitk_check_status *out)
{
    for (int i = 0; i < AITK_CHECK_STATUS_COUNT; i++)
        if (text && strcmp(text, names[i]) == 0) {
            *out = (aitk_check_status)i;
            return AITK_OK;
        }
    return AITK_E_PARSE;
}
