// The C shim over Google Benchmark (see shim.h): the project's only C++.
// Every entry point catches exceptions, so a library failure becomes a
// status in C instead of terminating the validator.
// common/ headers are C without extern "C" guards: give them C linkage here,
// before shim.h includes them (their include guards then skip them).
extern "C" {
#include "common/status.h"
#include "common/str.h"
}
#include "bench/micro/shim.h"

#include <benchmark/benchmark.h>

#include <exception>
#include <sstream>
#include <string>

namespace {

benchmark::State *st(aitk_mb_state *s)
{
    return reinterpret_cast<benchmark::State *>(s);
}

const benchmark::State *st(const aitk_mb_state *s)
{
    return reinterpret_cast<const benchmark::State *>(s);
}

bool initialized = false;

void init_once()
{
    if (initialized)
        return;
    // Initialize only reads flags from argv; with the program name alone it
    // keeps every default and never exits.
    char name[] = "aitk-validate";
    char *argv[] = {name, nullptr};
    int argc = 1;
    benchmark::Initialize(&argc, argv);
    initialized = true;
}

}  // namespace

extern "C" {

aitk_status aitk_mb_register(const char *name, aitk_mb_fn fn, void *user,
                             const aitk_mb_options *opt)
{
    if (!name || !fn)
        return AITK_E_INVAL;
    try {
        auto *b = benchmark::RegisterBenchmark(name, [fn, user](benchmark::State &state) {
            fn(reinterpret_cast<aitk_mb_state *>(&state), user);
        });
        if (opt && opt->manual_time)
            b->UseManualTime();
        if (opt && opt->min_time_s > 0)
            b->MinTime(opt->min_time_s);
        if (opt && opt->iterations > 0)
            b->Iterations(opt->iterations);
        b->Unit(benchmark::kMillisecond);
        return AITK_OK;
    } catch (const std::bad_alloc &) {
        return AITK_E_NOMEM;
    } catch (...) {
        return AITK_E_INTERNAL;
    }
}

bool aitk_mb_keep_running(aitk_mb_state *s)
{
    return st(s)->KeepRunning();
}

void aitk_mb_pause(aitk_mb_state *s)
{
    st(s)->PauseTiming();
}

void aitk_mb_resume(aitk_mb_state *s)
{
    st(s)->ResumeTiming();
}

void aitk_mb_set_iteration_time(aitk_mb_state *s, double seconds)
{
    st(s)->SetIterationTime(seconds);
}

void aitk_mb_set_bytes_processed(aitk_mb_state *s, int64_t bytes)
{
    st(s)->SetBytesProcessed(bytes);
}

void aitk_mb_set_items_processed(aitk_mb_state *s, int64_t items)
{
    st(s)->SetItemsProcessed(items);
}

void aitk_mb_set_counter(aitk_mb_state *s, const char *name, double value, int flags)
{
    int f = benchmark::Counter::kDefaults;
    if (flags & AITK_MB_COUNTER_RATE)
        f |= benchmark::Counter::kIsRate;
    if (flags & AITK_MB_COUNTER_PER_ITERATION)
        f |= benchmark::Counter::kAvgIterations;
    try {
        st(s)->counters[name] =
            benchmark::Counter(value, static_cast<benchmark::Counter::Flags>(f));
    } catch (...) {
        st(s)->SkipWithError("out of memory while setting a counter");
    }
}

int64_t aitk_mb_iterations(const aitk_mb_state *s)
{
    return static_cast<int64_t>(st(s)->iterations());
}

void aitk_mb_skip_with_error(aitk_mb_state *s, const char *msg)
{
    st(s)->SkipWithError(msg ? msg : "failed");
}

aitk_status aitk_mb_run(const char *filter, aitk_str *json, aitk_str *err)
{
    try {
        init_once();
        std::ostringstream out, errs;
        benchmark::JSONReporter reporter;
        reporter.SetOutputStream(&out);
        reporter.SetErrorStream(&errs);
        size_t n = benchmark::RunSpecifiedBenchmarks(&reporter, filter ? filter : ".");
        if (n == 0) {
            aitk_str_appendf(err, "no microbenchmark matches '%s'", filter ? filter : ".");
            return AITK_E_NOTFOUND;
        }
        std::string text = out.str();
        return aitk_str_appendn(json, text.data(), text.size());
    } catch (const std::bad_alloc &) {
        return AITK_E_NOMEM;
    } catch (const std::exception &e) {
        aitk_str_appendf(err, "Google Benchmark failed: %s", e.what());
        return AITK_E_INTERNAL;
    } catch (...) {
        aitk_str_append(err, "Google Benchmark failed");
        return AITK_E_INTERNAL;
    }
}

void aitk_mb_clear(void)
{
    try {
        benchmark::ClearRegisteredBenchmarks();
    } catch (...) {
    }
}

}  // extern "C"
