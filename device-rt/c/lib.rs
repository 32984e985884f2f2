//! `libttprof_rt_c.a`: the runtime (`ttprof-rt` with its `capi` feature) for C and C++
//! kernels. Everything it exports is in `ttprof_rt::capi` (`ttprof_slow_close`,
//! `ttprof_run`, ...) and `_start`; `include/ttprof.h` declares them.
#![no_std]

extern crate ttprof_rt;
