//! tt-metal's own capture files, as its device profiler writes them on a card: the device
//! log `profile_log_device.csv` ([`device_log`], one row per marker, streamed line by line)
//! and the op report `ops_perf_results_<timestamp>.csv` ([`op_report`], one row per op).
//! [`crate::import`] turns them into a [`crate::profile::Profile`].

pub mod device_log;
pub mod op_report;
