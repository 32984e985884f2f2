//! When a capture ends: after a time, when a flag file disappears, or on Ctrl-C - capture
//! windows in the manner of a flag-file trace window or an on-demand capture.

use crate::error::{Error, Result};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Ctrl-C for a capture: a flag its caller raises ([`Interrupt::interrupt`], the `ttprof`
/// command line does from its Ctrl-C and SIGTERM handler) and the capture holding a clone
/// of it sees. Clones share the flag.
#[derive(Clone, Debug, Default)]
pub struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// Asks the captures holding this flag to stop as after Ctrl-C: each drains once more,
    /// detaches and writes its files. Returns whether a stop had already been asked for (a
    /// second Ctrl-C, on which a command line ends the process at once).
    pub fn interrupt(&self) -> bool {
        self.0.swap(true, Ordering::SeqCst)
    }

    /// Whether [`Interrupt::interrupt`] was called.
    pub fn interrupted(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What ends a capture (its [`Interrupt`] always does).
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
    /// Ctrl-C or SIGTERM ([`Interrupt::interrupt`]).
    Interrupted,
    /// The `--seconds` elapsed.
    Elapsed,
    /// The `--until-file-gone` file was removed.
    FileGone,
    /// The capture could not go on (the device memory went away, the spool's disk filled):
    /// an error issue of its readout says why; what it drained before is kept.
    Failed,
}

impl Stopped {
    /// The reason in words, for messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Stopped::Interrupted => "interrupted (Ctrl-C / SIGTERM)",
            Stopped::Elapsed => "time elapsed",
            Stopped::FileGone => "flag file removed",
            Stopped::Failed => {
                "stopped early: the capture could not go on (the error below says why)"
            }
        }
    }
}

impl StopWhen {
    /// Checks that the condition can be met (the flag file exists).
    pub fn check(&self) -> Result<()> {
        if let StopWhen::FileGone(p) = self {
            if !p.exists() {
                return Err(Error::Argument {
                    what: format!(
                        "flag file {} does not exist: create it before the capture starts; the capture stops when it is removed",
                        p.display()
                    ),
                });
            }
        }
        Ok(())
    }

    /// Whether the capture that started at `start` and stops on `interrupt` too should stop
    /// now, and why.
    pub fn reached(&self, start: Instant, interrupt: &Interrupt) -> Option<Stopped> {
        if interrupt.interrupted() {
            return Some(Stopped::Interrupted);
        }
        match self {
            StopWhen::Interrupted => None,
            StopWhen::After(d) => (start.elapsed() >= *d).then_some(Stopped::Elapsed),
            StopWhen::FileGone(p) => (!p.exists()).then_some(Stopped::FileGone),
        }
    }
}
