/* Text for aitk_status, generated from the same X-macro as the enum. */
#include "common/status.h"

static const char *const status_text[] = {
#define AITK_X_TEXT(name, text) text,
    AITK_STATUS_LIST(AITK_X_TEXT)
#undef AITK_X_TEXT
};

static const char *const status_names[] = {
#define AITK_X_NAME(name, text) #name,
    AITK_STATUS_LIST(AITK_X_NAME)
#undef AITK_X_NAME
};

const char *aitk_strerror(aitk_status st)
{
    if ((unsigned)st >= AITK_STATUS_COUNT)
        return "unknown status code";
    return status_text[st];
}

const char *aitk_status_name(aitk_status st)
{
    if ((unsigned)st >= AITK_STATUS_COUNT)
        return "AITK_E_UNKNOWN";
    return status_names[st];
}
