//! The demo's scenario runner, shared by the `ttprof-demo` binary and the end-to-end tests:
//! build the example kernels, launch a sequence of ops on the emulator with a consumer
//! draining the rings while the kernels run, check every op's output, record the op log.
#![warn(missing_docs)]

pub mod bench;
pub mod ops;
pub mod scenario;
pub mod screen;

use std::path::PathBuf;

/// The workspace root (the demo lives in examples/demo).
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}
