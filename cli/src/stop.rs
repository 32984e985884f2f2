//! Ctrl-C and SIGTERM stop a capture cleanly instead of ending the process.

use ttprof::{Error, Result};

/// Routes Ctrl-C and SIGTERM to [`ttprof::capture::interrupt`] instead of ending the
/// process, so a capture stops cleanly: it drains once more, detaches and writes its files.
/// A second Ctrl-C while that happens ends the process at once (exit code 130).
pub fn install_ctrl_c() -> Result<()> {
    ctrlc::set_handler(|| {
        if ttprof::capture::interrupt() {
            std::process::exit(130);
        }
    })
    .map_err(|e| Error::Other(format!("cannot install the Ctrl-C handler: {e}")))
}
