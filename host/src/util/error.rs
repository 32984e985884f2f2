//! The one error type of the `ttprof` library. Every variant says what was expected and where.

use std::fmt;
use std::path::PathBuf;

/// Where on the device something was found: chip, tile (NoC0 x,y) and optionally a RISC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Chip (device) index.
    pub chip: u32,
    /// Tile's NoC0 x coordinate.
    pub x: u8,
    /// Tile's NoC0 y coordinate.
    pub y: u8,
    /// The RISC-V core of the tile, or `None` when the whole tile is meant.
    pub risc: Option<riscv_linker::Risc>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "chip {} tile ({},{})", self.chip, self.x, self.y)?;
        if let Some(r) = self.risc {
            write!(f, " {r}")?;
        }
        Ok(())
    }
}

/// Why a `ttprof` operation could not be done: an unusable input or a failed I/O (problems in
/// the device data itself that still leave a usable result are [`crate::issue::Issue`]s).
#[derive(Debug)]
pub enum Error {
    /// An I/O operation on a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done, as a verb phrase (`"read device image header"`).
        op: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A file exists but its content is not what it should be.
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// Device memory does not hold what the profiler protocol requires.
    Device {
        /// The chip, tile and RISC concerned.
        at: Location,
        /// What was found and what was expected.
        what: String,
    },
    /// An address outside the device or a tile that does not exist.
    Address {
        /// The address or tile and why it is invalid.
        what: String,
    },
    /// A kernel ELF cannot be used.
    Elf {
        /// The ELF file.
        path: PathBuf,
        /// Why it cannot be used.
        what: String,
    },
    /// The op log does not match the device run, or is malformed.
    OpLog {
        /// The op log file.
        path: PathBuf,
        /// 1-based line of the bad entry.
        line: usize,
        /// What is wrong.
        what: String,
    },
    /// A command-line argument, option value or manifest entry is invalid: which, and what
    /// was expected.
    Argument {
        /// The argument as given and what was expected.
        what: String,
    },
    /// A kernel or the runtime library could not be built: which, the tool that failed and
    /// what it said (a missing toolchain says how to install it).
    Build {
        /// What failed and why.
        what: String,
    },
    /// The emulator could not be built, load a kernel or run (its message says why).
    Emulator(String),
    /// A launch stopped on the emulator: a kernel faulted (the emulator's full diagnosis:
    /// chip, tile, RISC, pc, instruction, symbol, source line; for a deadlock one line per
    /// core) or the emulator failed.
    Fault {
        /// The op's name in the op log.
        op: String,
        /// Its run id.
        run: u32,
        /// What stopped it.
        what: String,
        /// For a kernel fault: the bytes of records the stopped cores had written since their
        /// last publication, published by the host (the fault is then also a data problem of
        /// the session, at its core).
        recovered: Option<u64>,
    },
    /// An output could not be produced for a reason other than I/O (the format library
    /// refused the data): the file, and what was said.
    Output {
        /// The output file.
        path: PathBuf,
        /// What went wrong.
        what: String,
    },
    /// The device clock could not be sampled or fitted: which window, chip or tile, and why.
    Clock {
        /// What failed and where.
        what: String,
    },
    /// A ring read a second time (the second pass of a two-pass write) held other records
    /// than on the first reading: the outputs would not agree, so none is written.
    Reread {
        /// What was read twice: `"device memory"` or `"the spool"`.
        what: &'static str,
        /// The ring, by index in readout order.
        ring: usize,
    },
    /// The capture spool failed before: what was drained since is only held in memory.
    Spool {
        /// The spool's directory.
        dir: PathBuf,
        /// Bytes of the drain that failed to reach the spool, kept in memory.
        kept: u64,
    },
    /// The Tracy stream cannot carry the profile (one of Tracy's limits: source locations,
    /// threads, lanes), or serving it failed.
    Tracy {
        /// What was over the limit, or what serving said.
        what: String,
    },
    /// A broken invariant of ttprof itself (a bug: please report it with the message).
    Internal(String),
    /// A capture's outputs could not be written at all: the zones it drained are lost (the
    /// rings were consumed, so they are nowhere else).
    CaptureLost {
        /// Why the outputs could not be written.
        source: Box<Error>,
        /// The zones the capture drained.
        zones: u64,
        /// The spool shared its disk with the outputs and that disk filled (a spool
        /// directory on another disk would have kept them).
        shared_disk: bool,
    },
    /// Something this build deliberately does not do (e.g. real hardware access), and why.
    Unsupported(String),
    /// Anything else, with its explanation (the library itself uses the typed variants; this
    /// is for callers' own errors).
    Other(String),
}

impl Error {
    /// The file an [`Error::Io`] could not write because its disk (or the user's quota) is
    /// full: not a problem of the input, and the files written before it are complete.
    pub fn disk_full(&self) -> Option<&std::path::Path> {
        match self {
            Error::Io { path, source, .. }
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
                ) || source.raw_os_error() == Some(27) =>
            {
                Some(path)
            }
            _ => None,
        }
    }

    /// An [`Error::Io`]: `op` (a verb phrase such as `"open op log"`) on `path` failed with `source`.
    pub fn io(path: impl Into<PathBuf>, op: &'static str, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            op,
            source,
        }
    }
}

impl fmt::Display for Error {
    /// The message with control and bidirectional characters escaped
    /// ([`crate::printable`]): names in it come from files ttprof does not control.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::printable::printable(&Raw(self).to_string()))
    }
}

/// An error's message as its parts give it.
struct Raw<'a>(&'a Error);

impl fmt::Display for Raw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Error::Io { path, op, source } => write!(f, "cannot {op} {}: {source}", path.display()),
            Error::BadFile { path, what } => write!(f, "{}: {what}", path.display()),
            Error::Device { at, what } => write!(f, "{at}: {what}"),
            Error::Address { what } => f.write_str(what),
            Error::Elf { path, what } => write!(f, "kernel ELF {}: {what}", path.display()),
            Error::OpLog { path, line, what } => {
                write!(f, "op log {}:{line}: {what}", path.display())
            }
            Error::Argument { what }
            | Error::Build { what }
            | Error::Clock { what }
            | Error::Tracy { what } => f.write_str(what),
            Error::Reread { what, ring } => write!(
                f,
                "{what} changed between its two readings (ring {ring}): the outputs are not written"
            ),
            Error::Spool { dir, kept } => write!(
                f,
                "the capture spool in {} failed before: {kept} more byte(s) kept in memory",
                dir.display()
            ),
            Error::Emulator(s) => write!(f, "emulator: {s}"),
            Error::Fault {
                op,
                run,
                what,
                recovered,
            } => {
                write!(f, "kernel fault: op {op:?} (run {run}): {what}")?;
                if let Some(n) = recovered {
                    write!(f, "; the cores stopped with it: {n} byte(s) of records they had written since their last \
                         publication were published by the host and are read")?;
                }
                Ok(())
            }
            Error::Unsupported(s) => write!(f, "not supported: {s}"),
            Error::Output { path, what } => write!(f, "{}: {what}", path.display()),
            Error::Internal(s) => write!(f, "internal error (a bug in ttprof): {s}"),
            Error::CaptureLost {
                source,
                zones,
                shared_disk,
            } => {
                let hint = if *shared_disk {
                    " (a spool whose disk filled shares it with --out: give --spool-dir another disk)"
                } else {
                    ""
                };
                write!(
                    f,
                    "{source}: the {zones} zone(s) this capture drained could not be written and are lost (the rings \
                     were consumed){hint}"
                )
            }
            Error::Other(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::CaptureLost { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// `std::result::Result` with the library's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
