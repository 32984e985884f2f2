//! Ctrl-C and SIGTERM: every command removes the temporaries of the outputs it was writing
//! before it ends (exit 130), so an interrupted command leaves no hidden file behind; a
//! capture stops cleanly instead (it drains once more, detaches and writes its files).

use std::sync::OnceLock;
use ttprof::capture::Interrupt;
use ttprof::{Error, Result};

/// The running capture's interrupt: once set, the first Ctrl-C stops the capture cleanly.
static CAPTURING: OnceLock<Interrupt> = OnceLock::new();

/// Installs the handler (once, first thing in `main`).
pub fn install() -> Result<()> {
    ctrlc::set_handler(|| {
        if CAPTURING.get().is_some_and(|i| !i.interrupt()) {
            return;
        }
        let removed = ttprof::atomic::remove_open_temporaries();
        eprintln!(
            "interrupted: {removed} unfinished output(s) removed, the files already at their paths left as they were"
        );
        std::process::exit(130);
    })
    .map_err(|e| Error::Internal(format!("cannot install the Ctrl-C handler: {e}")))
}

/// Routes Ctrl-C and SIGTERM to `interrupt` (the capture's) from now on, so the capture
/// stops cleanly. A second Ctrl-C while that happens ends the process at once (exit code
/// 130), its unfinished outputs removed.
pub fn install_ctrl_c(interrupt: &Interrupt) -> Result<()> {
    CAPTURING
        .set(interrupt.clone())
        .map_err(|_| Error::Internal("Ctrl-C is routed to a capture already".into()))
}
