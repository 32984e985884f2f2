//! When a capture ends: after a time, when a flag file disappears, or on Ctrl-C - capture
//! windows in the manner of a flag-file trace window or an on-demand capture.

use crate::error::{Error, Result};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// What ends a capture (Ctrl-C always does, once [`install_ctrl_c`] was called).
#[derive(Clone, Debug, PartialEq)]
pub enum StopWhen {
    /// Only Ctrl-C (or SIGTERM).
    Interrupted,
    /// This long after the capture started.
    After(Duration),
    /// When this file no longer exists (it must exist when the capture starts).
    FileGone(PathBuf),
}

/// Why a capture ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stopped {
    Interrupted,
    Elapsed,
    FileGone,
}

impl Stopped {
    pub fn describe(&self) -> &'static str {
        match self {
            Stopped::Interrupted => "interrupted (Ctrl-C / SIGTERM)",
            Stopped::Elapsed => "time elapsed",
            Stopped::FileGone => "flag file removed",
        }
    }
}

/// Routes Ctrl-C and SIGTERM to [`interrupted`] instead of ending the process, so a capture
/// stops cleanly: it drains once more, detaches and writes its files. A second Ctrl-C while
/// that happens ends the process at once (exit code 130).
pub fn install_ctrl_c() -> Result<()> {
    ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    })
    .map_err(|e| Error::Other(format!("cannot install the Ctrl-C handler: {e}")))
}

/// Whether Ctrl-C (or SIGTERM) was received since [`install_ctrl_c`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

impl StopWhen {
    /// Checks that the condition can be met (the flag file exists).
    pub fn check(&self) -> Result<()> {
        if let StopWhen::FileGone(p) = self {
            if !p.exists() {
                return Err(Error::Other(format!(
                    "flag file {} does not exist: create it before the capture starts; the capture stops when it is removed",
                    p.display()
                )));
            }
        }
        Ok(())
    }

    /// Whether the capture that started at `start` should stop now, and why.
    pub fn reached(&self, start: Instant) -> Option<Stopped> {
        if interrupted() {
            return Some(Stopped::Interrupted);
        }
        match self {
            StopWhen::Interrupted => None,
            StopWhen::After(d) => (start.elapsed() >= *d).then_some(Stopped::Elapsed),
            StopWhen::FileGone(p) => (!p.exists()).then_some(Stopped::FileGone),
        }
    }
}
