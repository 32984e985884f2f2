//! Ctrl-C and SIGTERM: every command removes the temporaries of the outputs it was writing
//! before it ends (exit 130), so an interrupted command leaves no hidden file behind; a
//! capture stops cleanly instead (it drains once more, detaches and writes its files).

use std::sync::atomic::{AtomicBool, Ordering};
use ttprof::{Error, Result};

/// A capture is running: the first Ctrl-C stops it cleanly.
static CAPTURING: AtomicBool = AtomicBool::new(false);

/// Installs the handler (once, first thing in `main`).
pub fn install() -> Result<()> {
    ctrlc::set_handler(|| {
        if CAPTURING.load(Ordering::SeqCst) && !ttprof::capture::interrupt() {
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

/// Routes Ctrl-C and SIGTERM to [`ttprof::capture::interrupt`] from now on, so a capture
/// stops cleanly. A second Ctrl-C while that happens ends the process at once (exit code
/// 130), its unfinished outputs removed.
pub fn install_ctrl_c() -> Result<()> {
    CAPTURING.store(true, Ordering::SeqCst);
    Ok(())
}
