//! The input layer: reaching device memory and turning ring bytes into records.
//!
//! [`devmem`] (backends: the emulator's image, snapshots, tt-kmd), [`readout`] (control
//! blocks, live spans, draining), [`decode`] (the ring encoding), [`replay`] (a recorded
//! capture as a stream), [`capture`] (draining while kernels run, spooled), [`launch`] (the
//! launcher's side of the protocol), [`oplog`] (what the host program launched),
//! [`tt_metal`] (tt-metal's own capture files: its device log and op report).

pub mod capture;
pub mod decode;
pub mod devmem;
/// The launcher's side of the profiler protocol: tile control blocks, run ids.
pub mod launch;
pub mod oplog;
pub mod readout;
pub mod replay;
pub mod stamp;
pub mod tt_metal;
