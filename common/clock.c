/* Clocks. CLOCK_MONOTONIC on POSIX, QueryPerformanceCounter on Windows. */
#include "common/clock.h"

#include <stdio.h>
#include <time.h>

#ifdef _WIN32
#include <windows.h>

uint64_t aitk_clock_ns(void)
{
    static LARGE_INTEGER freq;
    LARGE_INTEGER now;
    if (!freq.QuadPart)
        QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    return (uint64_t)((double)now.QuadPart * 1e9 / (double)freq.QuadPart);
}

void aitk_sleep_ms(long ms) { Sleep((DWORD)ms); }
#else
uint64_t aitk_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void aitk_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}
#endif

double aitk_clock_ms(void) { return (double)aitk_clock_ns() / 1e6; }

void aitk_utc_iso8601(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
#ifdef _WIN32
    gmtime_s(&tm, &now);
#else
    gmtime_r(&now, &tm);
#endif
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
