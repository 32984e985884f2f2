//! The one error type of the `ttprof` library. Every variant says what was expected and where.

use std::fmt;
use std::path::PathBuf;

/// Where on the device something was found: chip, tile (NoC0 x,y) and optionally a RISC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub chip: u32,
    pub x: u8,
    pub y: u8,
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

#[derive(Debug)]
pub enum Error {
    /// An I/O operation on a file failed.
    Io { path: PathBuf, op: &'static str, source: std::io::Error },
    /// A file exists but its content is not what it should be.
    BadFile { path: PathBuf, what: String },
    /// Device memory does not hold what the profiler protocol requires.
    Device { at: Location, what: String },
    /// An address outside the device or a tile that does not exist.
    Address { what: String },
    /// A kernel ELF cannot be used.
    Elf { path: PathBuf, what: String },
    /// The op log does not match the device run, or is malformed.
    OpLog {
        path: PathBuf,
        line: usize,
        what: String,
    },
    /// The emulator could not be built, load a kernel or run (its message says why).
    Emulator(String),
    /// A kernel faulted on the emulator: the emulator's full diagnosis (chip, tile, RISC, pc,
    /// instruction, symbol, source line).
    Fault(String),
    /// Something this build deliberately does not do (e.g. real hardware access), and why.
    Unsupported(String),
    /// Anything else, with its explanation.
    Other(String),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, op: &'static str, source: std::io::Error) -> Error {
        Error::Io { path: path.into(), op, source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, op, source } => write!(f, "cannot {op} {}: {source}", path.display()),
            Error::BadFile { path, what } => write!(f, "{}: {what}", path.display()),
            Error::Device { at, what } => write!(f, "{at}: {what}"),
            Error::Address { what } => f.write_str(what),
            Error::Elf { path, what } => write!(f, "kernel ELF {}: {what}", path.display()),
            Error::OpLog { path, line, what } => {
                write!(f, "op log {}:{line}: {what}", path.display())
            }
            Error::Emulator(s) => write!(f, "emulator: {s}"),
            Error::Fault(s) => write!(f, "kernel fault: {s}"),
            Error::Unsupported(s) => write!(f, "not supported: {s}"),
            Error::Other(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
