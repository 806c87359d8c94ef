/* The stop request (stop.h): one flag that holds the signal's number. */
#include "common/stop.h"

#include <signal.h>

/* 0: no request; -1: one without a known signal; else the signal. */
static volatile sig_atomic_t stop_sig = 0;

void aitk_stop_request(int sig)
{
    if (!stop_sig)
        stop_sig = sig > 0 ? sig : -1;
}

bool aitk_stop_requested(void)
{
    return stop_sig != 0;
}

int aitk_stop_signal(void)
{
    return stop_sig > 0 ? (int)stop_sig : 0;
}

void aitk_stop_reset(void)
{
    stop_sig = 0;
}

const char *aitk_stop_words(void)
{
    switch (aitk_stop_signal()) {
    case SIGINT: return "interrupted (Ctrl-C)";
    case SIGTERM: return "interrupted (SIGTERM)";
#ifdef SIGBREAK
    case SIGBREAK: return "interrupted (Ctrl-Break)";
#endif
#ifdef SIGHUP
    case SIGHUP: return "interrupted (SIGHUP)";
#endif
    default: return "interrupted";
    }
}
