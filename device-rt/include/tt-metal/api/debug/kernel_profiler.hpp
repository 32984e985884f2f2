// api/debug/kernel_profiler.hpp - ttprof's stand-in for tt-metal's profiler header.
//
// `ttprof build --tt-metal` puts this directory first on the include path, so tt-metal's
// dataflow_api.h (and any kernel) that includes "api/debug/kernel_profiler.hpp" gets ttprof's
// macros (../../../tools/profiler/kernel_profiler.hpp: DeviceZoneScopedN, DeviceRecordEvent,
// DeviceTimestampedData, DeviceZoneScopedSumN1/2, ...) recording into ttprof's ring instead of
// tt-metal's profiler buffers. The ring of each RISC lives in that RISC's part of the
// `profiler_msg_t` area of the core's mailboxes (see ttprof_tt_metal_entry.h).
#pragma once

#include "../../../tools/profiler/kernel_profiler.hpp"

// Under tt-metal the firmware's own wrapper zones (*-FW, *-KERNEL) are recorded by ttprof's
// entry around kernel_main (ttprof_tt_metal_entry.h), not by these firmware-side macros.
#undef DeviceZoneScopedMainN
#undef DeviceZoneScopedMainChildN
#define DeviceZoneScopedMainN(name)
#define DeviceZoneScopedMainChildN(name)

// tt-metal's dataflow API marks its circular-buffer and semaphore operations for the
// streaming profiler's critical-path events (SYNC_WAIT, SYNC_SIGNAL, SYNC_SIGNAL_NOC_ADDR),
// with keys known only at run time (a CB index argument, a NoC address); ttprof's wait and
// signal sites take a constant key. As in tt-metal's own build without its streaming sync
// events, they record nothing here (the key is still evaluated for its type only).
#undef SYNC_WAIT
#undef SYNC_SIGNAL
#define SYNC_WAIT(name, key) ((void)sizeof(key))
#define SYNC_SIGNAL(name, key) ((void)sizeof(key))
#define SYNC_SIGNAL_NOC_ADDR(name, addr, noc) ((void)sizeof(addr), (void)sizeof(noc))

// tt-metal's header ends with its NoC-event tracing macros (RECORD_NOC_EVENT*), which the
// dataflow API calls; without PROFILE_NOC_EVENTS they expand to nothing. Included as they are.
#include "hostdev/profiler_common.h"
#include "internal/profiler/noc_event_profiler.hpp"
