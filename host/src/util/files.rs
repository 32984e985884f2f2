//! Opening the files a user names (device images, snapshots, kernel ELFs) without trusting
//! them: only a regular file is opened, and no read goes past the size it should have.
//!
//! A FIFO named as an input would block `open` until something writes to it, and a device
//! such as `/dev/zero` never ends: so the path's metadata is looked at first, before it is
//! opened, and what was opened is checked again (the path may have been replaced between
//! the two looks). Reads are bounded by the file's size (and by a caller's limit), so a
//! file that grows while it is read, or a huge one, cannot exhaust memory.

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::path::Path;

/// Opens `path` for reading (and writing when `write`), refusing anything but a regular
/// file; returns the file and its size, and notes it in `inputs`. `kind` names what the file
/// should be in messages ("a snapshot"); `op` is the I/O operation for [`Error::Io`].
pub(crate) fn open_regular(
    path: &Path,
    kind: &str,
    op: &'static str,
    write: bool,
    inputs: &Inputs,
) -> Result<(File, u64)> {
    check_regular(
        path,
        kind,
        std::fs::metadata(path).map_err(|e| Error::io(path, op, e))?,
    )?;
    let file = OpenOptions::new()
        .read(true)
        .write(write)
        .open(path)
        .map_err(|e| Error::io(path, op, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, op, e))?;
    check_regular(path, kind, meta.clone())?;
    inputs.note(path, &meta);
    Ok((file, meta.len()))
}

/// Reads the whole of the regular file `path` (noted in `inputs`), refusing one larger than
/// `max` bytes before reading it, and never reading more than its size when it was opened.
pub fn read_regular(
    path: &Path,
    kind: &str,
    op: &'static str,
    max: u64,
    inputs: &Inputs,
) -> Result<Vec<u8>> {
    let (file, len) = open_regular(path, kind, op, false, inputs)?;
    if len > max {
        return Err(Error::BadFile {
            path: path.into(),
            what: format!("is {len} bytes: expected {kind} of at most {max} bytes"),
        });
    }
    let cap = usize::try_from(len).map_err(|_| Error::BadFile {
        path: path.into(),
        what: format!("is {len} bytes, too large to read on this host"),
    })?;
    let mut bytes = Vec::with_capacity(cap);
    file.take(len)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, op, e))?;
    Ok(bytes)
}

/// Lines of a text stream, each at most `max` bytes, read through the stream's buffer: a
/// longer line is an error naming its number as soon as `max` bytes of it have been seen,
/// so a file of one endless line (or no line ends at all) costs no more than `max` bytes.
pub(crate) struct BoundedLines<R> {
    r: R,
    max: usize,
    line: usize,
    buf: Vec<u8>,
}

/// Why [`BoundedLines::next_line`] failed.
#[derive(Debug)]
pub(crate) enum LineError {
    /// Line `line` (1-based) is longer than `max` bytes.
    TooLong {
        /// The line's number.
        line: usize,
        /// The limit.
        max: usize,
    },
    /// Reading failed.
    Io(std::io::Error),
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::TooLong { line, max } => write!(f, "line {line} is longer than {max} bytes"),
            LineError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl<R: std::io::BufRead> BoundedLines<R> {
    /// Lines of `r`, each at most `max` bytes (its end, `\n` or `\r\n`, not counted).
    pub(crate) fn new(r: R, max: usize) -> BoundedLines<R> {
        BoundedLines {
            r,
            max,
            line: 0,
            buf: Vec::new(),
        }
    }

    /// The next line (without its end) and its number, from 1; `None` at the end.
    pub(crate) fn next_line(&mut self) -> std::result::Result<Option<(usize, &[u8])>, LineError> {
        self.buf.clear();
        let mut any = false;
        loop {
            let available = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(LineError::Io(e)),
            };
            if available.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let (take, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (available.len(), false),
            };
            // One byte over the limit may be a `\r` before the `\n`: allowed for below.
            if self.buf.len() + take > self.max + 1 {
                return Err(LineError::TooLong {
                    line: self.line + 1,
                    max: self.max,
                });
            }
            self.buf.extend_from_slice(&available[..take]);
            self.r.consume(take + done as usize);
            if done {
                break;
            }
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if self.buf.len() > self.max {
            return Err(LineError::TooLong {
                line: self.line + 1,
                max: self.max,
            });
        }
        self.line += 1;
        Ok(Some((self.line, &self.buf)))
    }

    /// The line [`BoundedLines::next_line`] returned last (empty before the first).
    pub(crate) fn last_line(&self) -> &[u8] {
        &self.buf
    }
}

/// Refuses anything but a regular file (`meta` is the path's metadata, links followed).
pub(crate) fn check_regular(path: &Path, kind: &str, meta: Metadata) -> Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    let what = if meta.is_dir() {
        format!("is a directory, not {kind}")
    } else {
        format!(
            "is not a regular file (a FIFO, socket or device?): expected {kind}, a regular file; reading anything \
             else could block or never end"
        )
    };
    Err(Error::BadFile {
        path: path.into(),
        what,
    })
}

/// Runs `f` on a fresh FIFO in a scratch directory, in another thread, for tests of code
/// that must refuse one without blocking. `None` (and a note) where `mkfifo` is missing.
/// Fails the test if `f` has not returned after a minute: then something is written to the
/// FIFO and it is closed, which unblocks an `open` or a read of it, so the test ends.
#[cfg(test)]
pub(crate) fn with_fifo<T: Send + 'static>(
    name: &str,
    f: impl FnOnce(&Path) -> T + Send + 'static,
) -> Option<T> {
    let dir = crate::testing::temp_dir(name);
    let fifo = dir.join("fifo");
    match std::process::Command::new("mkfifo").arg(&fifo).status() {
        Ok(s) if s.success() => {}
        _ => {
            eprintln!("SKIPPED: mkfifo failed: no FIFO to test with");
            return None;
        }
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(f(&path));
    });
    let out = match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(out) => out,
        Err(_) => {
            if let Ok(mut w) = OpenOptions::new().write(true).open(&fifo) {
                let _ = std::io::Write::write_all(&mut w, &[0u8; 4096]);
            }
            panic!(
                "blocked on the FIFO {} for a minute instead of refusing it",
                fifo.display()
            );
        }
    };
    let _ = std::fs::remove_dir_all(&dir);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read_and_never_past_the_limit() {
        let dir = crate::testing::temp_dir("files");
        let f = dir.join("a.bin");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(
            read_regular(&f, "a test file", "read test file", 10, &Inputs::none()).unwrap(),
            b"0123456789"
        );
        let e = read_regular(&f, "a test file", "read test file", 9, &Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a.bin: is 10 bytes: expected a test file of at most 9 bytes"),
            "{e}"
        );
        let e = read_regular(&dir, "a test file", "read test file", 9, &Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a directory, not a test file"), "{e}");
        let e = read_regular(
            Path::new("/dev/zero"),
            "a test file",
            "read test file",
            9,
            &Inputs::none(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("/dev/zero: is not a regular file") && e.contains("expected a test file"),
            "{e}"
        );
        let e = read_regular(
            &dir.join("missing"),
            "a test file",
            "read test file",
            9,
            &Inputs::none(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("cannot read test file") && e.contains("missing"),
            "{e}"
        );
        let e = with_fifo("files-fifo", |p| {
            read_regular(p, "a test file", "read test file", 9, &Inputs::none())
                .unwrap_err()
                .to_string()
        });
        if let Some(e) = e {
            assert!(
                e.contains("fifo: is not a regular file (a FIFO, socket or device?)"),
                "{e}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn lines_longer_than_the_limit_are_refused_with_their_number_before_they_are_held() {
        let lines = |text: &[u8], max: usize| {
            let mut r = BoundedLines::new(std::io::BufReader::with_capacity(4, text), max);
            let mut out = Vec::new();
            loop {
                match r.next_line() {
                    Ok(Some((n, l))) => out.push(format!("{n}:{}", String::from_utf8_lossy(l))),
                    Ok(None) => return Ok(out),
                    Err(e) => return Err((out, e.to_string())),
                }
            }
        };
        assert_eq!(
            lines(b"ab\r\ncdef\n\nxy", 4).unwrap(),
            ["1:ab", "2:cdef", "3:", "4:xy"]
        );
        assert_eq!(
            lines(b"abcd\r\n", 4).unwrap(),
            ["1:abcd"],
            "the line end is not counted"
        );
        assert_eq!(lines(b"", 4).unwrap(), Vec::<String>::new());
        let (before, e) = lines(b"ok\nabcdef\nmore\n", 4).unwrap_err();
        assert_eq!(
            (before, e.as_str()),
            (vec!["1:ok".to_string()], "line 2 is longer than 4 bytes")
        );
        // An endless line stops at the limit: the reader never gets to the end.
        let mut endless =
            BoundedLines::new(std::io::BufReader::new(std::io::repeat(b'x')), 1 << 16);
        assert!(matches!(
            endless.next_line(),
            Err(LineError::TooLong {
                line: 1,
                max: 65536
            })
        ));
    }
}
