// tools/profiler/kernel_profiler.hpp - tt-metal's device-profiler macros on ttprof's runtime.
//
// Kernels that use only tt-metal's profiler macros include this path; with ttprof's include
// directory first (`ttprof build` puts it there) the macros record into ttprof's ring (see
// ../../ttprof.h). A kernel written against tt-metal's dataflow API (noc_async_read_tile,
// cb_reserve_back, ...) needs tt-metal's own headers: `ttprof build --tt-metal` compiles it
// unchanged against them, with ../../tt-metal/api/debug/kernel_profiler.hpp (these macros)
// in place of tt-metal's profiler header (docs/design/tt-metal.md). The macros:
//
//   DeviceZoneScopedN(name)            a zone over the enclosing scope
//   DeviceZoneScopedNIf(name, active)  the same when `active` is true (tt-metal's classic path
//                                      ignores `active`; here a false flag records nothing)
//   DeviceTimestampedData(name, data)  a 64-bit value with the current time (TS_DATA)
//   DeviceRecordEvent("name")          a point event (TS_EVENT), the streaming form
//   DeviceRecordEvent(id)              the classic form, a runtime number: a TS_DATA row named
//                                      DeviceRecordEvent whose data is the id
//   DeviceZoneScopedSumN1(name)        durations summed over the launch, one ZONE_TOTAL row
//   DeviceZoneScopedSumN2(name)        each; every name is its own total (tt-metal has two
//                                      slots; ttprof.h's TTPROF_SUM_ZONE takes any number)
//   kernel_profiler::quick_push()      publish what was recorded so far
//
// Unlike tt-metal: no 125-zone limit per launch (the ring is drained while the kernel runs),
// no name hashes (a site's id is its address in the ELF, its name the symbol's), several
// zones per scope and macro calls over several lines keep their names. Firmware-only macros
// (DeviceZoneScopedMainN, DeviceZoneScopedMainChildN: zones; DeviceValidateProfiler,
// DeviceZoneSetCounter, DeviceProfilerInit: nothing) compile too, and the streaming profiler's
// SYNC_WAIT(name, key) (a wait on `sync:key`) and SYNC_SIGNAL(name, key) (the signal that ends
// it), which ttprof matches into each op's critical path; key is a constant expression.
// Without PROFILE_KERNEL every macro expands to nothing.
#pragma once

#include "../../ttprof.h"

#ifdef PROFILE_KERNEL

#define DeviceZoneScopedN(name) TTPROF_ZONE(name)
#define DeviceZoneScopedNIf(name, active) TTPROF_ZONE_IF(name, active)
#define DeviceTimestampedData(name, data) TTPROF_DATA(name, data)
#define DeviceZoneScopedSumN1(name) TTPROF_SUM_ZONE(name)
#define DeviceZoneScopedSumN2(name) TTPROF_SUM_ZONE(name)
#define DeviceZoneScopedMainN(name) TTPROF_ZONE(name)
#define DeviceZoneScopedMainChildN(name) TTPROF_ZONE(name)
#define SYNC_WAIT(name, key) TTPROF_WAIT(name, TTPROF_SYNC(key))
#define SYNC_SIGNAL(name, key) TTPROF_SIGNAL(name, TTPROF_SYNC(key))

#ifdef __cplusplus
// A string literal is an event's name; anything else is tt-metal's classic runtime id.
#define DeviceRecordEvent(x)                                                                   \
    do {                                                                                       \
        if constexpr (::ttprof_detail::is_str<decltype((x))>::value) {                         \
            static_assert(!::ttprof_detail::is_str<decltype((x))>::value ||                    \
                              (sizeof(#x) == sizeof(x) + 2 && ::ttprof_detail::valid_name(x)),  \
                          "ttprof: an event name has no \", \\, % or control characters");      \
            TTPROF__EVENT_CALL(TTPROF__SITE(event, x, 0, ""));                                       \
        } else {                                                                               \
            TTPROF__DATA_CALL(TTPROF__SITE(data, "DeviceRecordEvent", 0, ""), (uint64_t)(uint32_t)(uintptr_t)(x)); \
        }                                                                                      \
    } while (0)
#else
#define DeviceRecordEvent(x)                                                                   \
    _Generic((x), char *: TTPROF__EVENT_CALL(TTPROF__SITE(event, x, 0, "")),                          \
             default: TTPROF__DATA_CALL(TTPROF__SITE(data, "DeviceRecordEvent", 0, ""), (uint64_t)(uint32_t)(uintptr_t)(x)))
#endif

#else  // !PROFILE_KERNEL

#define DeviceZoneScopedN(name)
#define DeviceZoneScopedNIf(name, active)
#define DeviceTimestampedData(name, data)
#define DeviceRecordEvent(x)
#define DeviceZoneScopedSumN1(name)
#define DeviceZoneScopedSumN2(name)
#define DeviceZoneScopedMainN(name)
#define DeviceZoneScopedMainChildN(name)
#define SYNC_WAIT(name, key)
#define SYNC_SIGNAL(name, key)

#endif  // PROFILE_KERNEL

#define DeviceValidateProfiler(condition)
#define DeviceZoneSetCounter(counter)
#define DeviceProfilerInit()

#ifdef __cplusplus
namespace kernel_profiler {
// Publishes the records written so far (tt-metal flushes its L1 buffer to DRAM). Nothing is
// lost without it here: the ring is drained while the kernel runs.
inline __attribute__((always_inline)) void quick_push() { ttprof_publish(); }
}  // namespace kernel_profiler
#endif
