//! A file that an option names as an output (`diff --json FILE`, `snapshot -o FILE`): `-`
//! is standard output, streamed; anything else is written atomically as a regular file, and
//! refused when something else is at the path (a link, a FIFO, a device such as
//! `/dev/stdout`) or when it is one of the command's inputs
//! ([`ttprof::atomic::check_destination`]).

use std::io::{IsTerminal, Write};
use std::path::Path;
use ttprof::inputs::Inputs;
use ttprof::{atomic, Error, Result};

/// Whether `path` means standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Refuses an output path early, before any work (standard output is always fine), and one
/// of `inputs` (the command's guard): see [`ttprof::atomic::check_destination`]. The write
/// checks again.
pub fn check(path: &Path, inputs: &Inputs) -> Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    atomic::check_destination(path, inputs)
}

/// Writes `bytes` to `path` (`-`: standard output; `binary` output is refused on a
/// terminal; a file is never written over one of `inputs`).
pub fn write(path: &Path, bytes: &[u8], binary: bool, inputs: &Inputs) -> Result<()> {
    if !is_stdout(path) {
        return atomic::write_atomic(path, inputs, |w| w.write_all(bytes));
    }
    let mut out = std::io::stdout().lock();
    if binary && out.is_terminal() {
        return Err(Error::Argument { what: "-o -: standard output is a terminal: refusing to write binary data (a snapshot) to it; redirect it to \
             a file or a pipe, or give a file name"
                .into(), });
    }
    out.write_all(bytes)
        .and_then(|_| out.flush())
        .map_err(|e| Error::io("standard output", "write to", e))
}
