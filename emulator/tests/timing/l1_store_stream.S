/* A stream of L1 stores: README.md, "Load/Store Unit": "Throughput of sustained stores to
 * L1 is at most one store every five cycles." (The spec: each store holds the L1 port 5
 * cycles; the 4-entry store queue fills and stalls issue. Blackhole: 1 cycle, store
 * merging.) Also run on two cores at once to test the port they share or not
 * (MemoryOrdering.md, "Interacting through L1").
 * Unit: 4 stores to consecutive words of the core's L1 data region. */
#include "timing.h"
    TIMING_START
    li s0, L1_DATA
    li a1, 0x5A5A5A5A
    TIMING_LOOP
    .rept REPS
    sw a1, 0(s0)
    sw a1, 4(s0)
    sw a1, 8(s0)
    sw a1, 12(s0)
    .endr
    TIMING_END
