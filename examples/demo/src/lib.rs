//! The demo's scenario runner, shared by the `ttprof-demo` binary and the end-to-end tests:
//! build the example kernels, launch a sequence of ops on the emulator with a consumer
//! draining the rings while the kernels run, check every op's output, record the op log.
#![warn(missing_docs)]

pub mod bench;
pub mod ops;
pub mod scenario;
pub mod screen;

use std::path::PathBuf;

/// The workspace root (the demo lives in examples/demo): where the demo reads the example
/// kernels' sources from (the demo is part of the checkout it was built from).
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}

/// Where the demo and its benchmarks write what they build and, by default, their files: the
/// checkout's `target/` when run inside the checkout (from any of its folders, so one build
/// serves them all), else `target/` in the current directory: run from elsewhere, they write
/// nothing into the checkout.
pub fn target_root() -> PathBuf {
    let ws = workspace();
    match std::env::current_dir() {
        Ok(here) if here.canonicalize().is_ok_and(|h| h.starts_with(&ws)) => ws.join("target"),
        Ok(here) => here.join("target"),
        Err(_) => PathBuf::from("target"),
    }
}
