// ttprof_tt_metal.h - what `ttprof build --tt-metal` includes before a tt-metal dataflow kernel.
//
// tt-metal's JIT compiles a kernel inside the firmware's kernel wrapper (brisck.cc, ncrisck.cc),
// which includes the device API first, so kernels use `uint32_t`, `get_arg_val`,
// `noc_async_read_tile`, ... without including anything. This header includes the same
// headers of the pinned tt-metal, from TT_METAL_HOME or the cache of scripts/fetch-tt-metal.sh,
// in the firmware wrapper's order; the profiler header among them is ttprof's
// (api/debug/kernel_profiler.hpp here, first on the include path).
#pragma once

#include <cstdint>

#include "risc_common.h"
#include "tensix.h"
#include "tensix_types.h"
#include "noc.h"
#include "noc_overlay_parameters.h"
#include "ckernel_structs.h"
#include "stream_io_map.h"
#include "c_tensix_core.h"
#include "noc_nonblocking_api.h"
#include "internal/firmware_common.h"
#if defined(COMPILE_FOR_NCRISC)
#include "internal/tensix_functions.h"
#endif

#if defined(__GNUC__) && __GNUC__ < 13
// GCC before 13 rejects `static_assert(false, ..)` in a template even when the template is never
// instantiated (C++23's P2593, which tt-metal's own compiler, GCC 15, accepts in every mode).
// One header the dataflow API includes has one, in a member template of `CoreLocalMem<T, ..>`:
// include it here with `false` spelled as a condition on T, after everything it includes, so the
// macro reaches that one line only. A newer compiler includes it unchanged.
#include "api/dataflow/noc.h"
#include "api/lock.h"
#include "internal/profiler/noc_debugging_metadata.hpp"
#include "internal/profiler/noc_debugging_profiler.hpp"
#include "internal/debug/sanitize.h"
#include "internal/scoped_lock_cache_ops.h"
#include "api/dataflow/endpoints.h"
#include "api/tensor/noc_traits.h"
#define false (sizeof(T) == 0)
#include "api/core_local_mem.h"
#undef false
#endif

#include "api/dataflow/dataflow_api.h"
#include "api/debug/kernel_profiler.hpp"
#include "internal/debug/stack_usage.h"
