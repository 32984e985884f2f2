// BRISC, in C: every tt-metal profiler macro, as a tt-metal kernel writes them, on ttprof's runtime
// (tools/profiler/kernel_profiler.hpp). tests/tests/cxx_kernels.rs counts what it records.
//
// Runtime arguments: n (iterations), id (the classic DeviceRecordEvent's number). Per launch:
// n of two-per-scope-a, two-per-scope-b and multi-line zones, none of if-false, n / 2 of
// if-odd, n measurements of sum-1 and of sum-2 (one ZONE_TOTAL each), n data records, one
// named event, one numbered event.
#include <stdint.h>

#include "tools/profiler/kernel_profiler.hpp"

static inline __attribute__((always_inline)) void steps(uint32_t n) {
    for (uint32_t i = 0; i < n; i++) *(volatile uint32_t *)0x30080 = i;
}

void kernel_main(void) {
    uint32_t n = ttprof_arg(0);
    uint32_t id = ttprof_arg(1);
    for (uint32_t i = 0; i < n; i++) {
        DeviceZoneScopedN("two-per-scope-a"); DeviceZoneScopedN("two-per-scope-b");
        steps(5);
        {
            DeviceZoneScopedN(
                "multi-line"
            );
            steps(5);
        }
        {
            DeviceZoneScopedNIf("if-false", i > n);
            DeviceZoneScopedNIf("if-odd", i % 2 == 1);
            steps(5);
        }
        {
            DeviceZoneScopedSumN1("sum-1");
            steps(10);
        }
        {
            DeviceZoneScopedSumN2("sum-2");
            steps(20);
        }
        DeviceTimestampedData("data", (uint64_t)i << 32 | 7);
    }
    DeviceRecordEvent("named-event");
    DeviceRecordEvent(id);
    ttprof_publish();
}
