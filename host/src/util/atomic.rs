//! Writing output files atomically: into a temporary file beside the target, then renamed
//! over it, so a reader never sees a half-written file and a failed write leaves the old one.
//!
//! An output replaces only a regular file that is not one of the command's own inputs
//! ([`check_destination`], given the command's [`Inputs`]); anything else at the destination (a
//! symbolic link, a FIFO, a device, a directory) is refused with a message naming it. The
//! temporary is created exclusively under a random name (never opened through a planted
//! file or link) and renamed onto the destination, which replaces a link *at* the
//! destination and never writes to its target. Temporaries of killed runs are removed
//! before each write (`remove_stale_temporaries`), and an interrupted command's own are
//! removed by the command line's Ctrl-C handler ([`remove_open_temporaries`]).

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Every ttprof temporary's name starts with this.
const PREFIX: &str = ".ttprof-";
/// ... and ends with this.
const SUFFIX: &str = ".tmp";
/// Random characters in a temporary's name.
const RANDOM: usize = 6;
/// At most this much of the destination's name goes into the temporary's.
const NAME_CHARS: usize = 64;

/// The temporaries this process has open (created, not yet renamed or removed), and
/// whether [`remove_open_temporaries`] ran (then no temporary may be created any more).
/// A temporary is created and listed under this lock, so the cleanup, which takes it too,
/// never misses one another thread is creating. Process-wide on purpose (unlike the input
/// guard, [`Inputs`]): its reader is the Ctrl-C handler, a signal handler that is handed no
/// value, and what it removes are this process's files whichever command made them.
static OPEN: Mutex<(Vec<PathBuf>, bool)> = Mutex::new((Vec::new(), false));

/// Removes every temporary this process has open (an interrupted command's unfinished
/// outputs; the destinations are left as they were) and refuses every later
/// [`AtomicFile::create`], so a writer thread still running cannot leave a new one behind
/// before the process ends. Returns how many were removed.
pub fn remove_open_temporaries() -> usize {
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    open.1 = true;
    std::mem::take(&mut open.0)
        .iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .count()
}

fn note_closed(path: &Path) {
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    open.0.retain(|p| p != path);
}

/// Whether an output may be written at `path`: nothing is there, or a regular file that is
/// not one of `inputs` (the command's input guard, [`Inputs`]). Links are not followed: a
/// link at the destination is refused, whatever it points to. Renaming over anything but a
/// regular file would replace the node itself (as root, `/dev/null` would become a regular
/// file); a command that offers a file option takes `-` for standard output instead.
pub fn check_destination(path: &Path, inputs: &Inputs) -> Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(path, "look at the output path", e)),
    };
    let t = meta.file_type();
    if t.is_file() {
        if let Some(input) = inputs.opened_as(&meta) {
            let same = if input == path {
                String::new()
            } else {
                format!(" (the same file as {})", input.display())
            };
            return Err(Error::BadFile {
                path: path.into(),
                what: format!(
                    "is an input of this command{same}: refusing to write an output over it (choose another output path)"
                ),
            });
        }
        return Ok(());
    }
    Err(Error::BadFile {
        path: path.into(),
        what: format!(
            "{}, not a regular file: ttprof writes an output only as a regular file and never replaces anything else \
             at its path (remove it or choose another path; `-` writes to standard output where an option offers it)",
            node_kind(&meta)
        ),
    })
}

/// Creates the directory `dir` inside `root` (which is created as given), one component at
/// a time, never following a symbolic link below `root`: a link planted in a directory ttprof
/// writes into (`--out/kernels` pointing elsewhere, `zones/host=h/chip=0` in a shared
/// dataset) would send the files outside it, so it is refused with a message naming it.
/// `root` itself may be reached through links: that is the user's choice of folder.
pub(crate) fn create_dir_within(root: &Path, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(root).map_err(|e| Error::io(root, "create output directory", e))?;
    let rel = dir.strip_prefix(root).unwrap_or(dir);
    let mut at = root.to_path_buf();
    for part in rel.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_dir() => continue,
            Ok(m) => return Err(not_a_directory(&at, root, &m)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&at, "look at the output directory", e)),
        }
        if let Err(e) = std::fs::create_dir(&at) {
            // Created by someone else meanwhile: fine if it is a directory, not a link.
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_dir() => {}
                Ok(m) => return Err(not_a_directory(&at, root, &m)),
                Err(_) => return Err(Error::io(&at, "create directory", e)),
            }
        }
    }
    Ok(())
}

/// Refuses `path` inside an output folder when it is a symbolic link (whatever it points
/// to): ttprof never writes through a link inside a directory it writes into.
pub(crate) fn refuse_link(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::BadFile {
            path: path.into(),
            what:
                "is a symbolic link inside the output folder: ttprof never writes through a link \
                   there (remove it or choose another folder)"
                    .into(),
        }),
        _ => Ok(()),
    }
}

fn not_a_directory(at: &Path, root: &Path, meta: &std::fs::Metadata) -> Error {
    Error::BadFile {
        path: at.into(),
        what: format!(
            "{} inside {}, where ttprof writes a directory of its own: it never follows a link (or writes \
             over anything) inside a folder it writes into (remove it or choose another folder)",
            node_kind(meta),
            root.display()
        ),
    }
}

/// What a node that is not a regular file is, for messages.
fn node_kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_symlink() {
        return "is a symbolic link";
    }
    if t.is_dir() {
        return "is a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "is a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "is a character device (a terminal, /dev/null, /dev/stdout?)";
        }
        if t.is_block_device() {
            return "is a block device";
        }
        if t.is_socket() {
            return "is a socket";
        }
    }
    "is not a regular file"
}

/// Writes `path` through `fill`, atomically, unless it is one of `inputs`. The temporary
/// file is removed on failure.
pub fn write_atomic(
    path: &Path,
    inputs: &Inputs,
    fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    let mut file = AtomicFile::create(path, inputs)?;
    if let Err(e) = fill(file.writer()) {
        return Err(Error::io(path, "write", e));
    }
    file.commit()
}

/// A file written in several steps (an output fed ring by ring), then renamed onto its
/// path by [`AtomicFile::commit`]. Dropped without a commit (an error, a panic), its
/// temporary file is removed and the path is left as it was.
pub struct AtomicFile {
    path: std::path::PathBuf,
    out: BufWriter<File>,
    tmp: tempfile::TempPath,
    /// The command's inputs, looked at again by [`AtomicFile::commit`].
    inputs: Inputs,
}

impl AtomicFile {
    /// Creates the temporary file beside `path` (exclusively, under a random name), after
    /// checking that an output may be written at `path` ([`check_destination`] with `inputs`).
    pub fn create(path: &Path, inputs: &Inputs) -> Result<AtomicFile> {
        AtomicFile::create_buffered(path, inputs, 1 << 20)
    }

    /// [`AtomicFile::create`] with a write buffer of `bytes` (one of a thousand files open
    /// at once, a dataset's partitions, takes less than the mebibyte a single output has).
    pub fn create_buffered(path: &Path, inputs: &Inputs, bytes: usize) -> Result<AtomicFile> {
        check_destination(path, inputs)?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".into());
        let prefix = temp_prefix(&name);
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(SUFFIX).rand_bytes(RANDOM);
        #[cfg(unix)]
        {
            // As `File::create` would: everyone may read unless the umask says otherwise
            // (the crate's default, 0600, would make outputs private).
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let (file, tmp) = {
            let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
            if open.1 {
                return Err(Error::Output {
                    path: path.to_path_buf(),
                    what: "not started: the command was interrupted".into(),
                });
            }
            let tmp = builder
                .tempfile_in(dir)
                .map_err(|e| Error::io(path, "create a temporary file to write", e))?;
            let (file, tmp) = tmp.into_parts();
            open.0.push(tmp.to_path_buf());
            (file, tmp)
        };
        remove_stale_temporaries(dir, &file);
        Ok(AtomicFile {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(bytes, file),
            tmp,
            inputs: inputs.clone(),
        })
    }

    /// Where the bytes go.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        &mut self.out
    }

    /// The destination.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes, syncs and renames the file onto its path (looking at the destination once
    /// more first: something may have appeared there while the file was written).
    /// `TTPROF_TEST_HOLD_COMMIT=1` (for tests only) makes it wait forever with its
    /// temporary in place, so a test can interrupt a write at a known point.
    pub fn commit(mut self) -> Result<()> {
        let path = self.path.clone();
        let synced = self.out.flush().and_then(|_| self.out.get_ref().sync_all());
        if let Err(e) = synced {
            return Err(Error::io(&path, "write", e));
        }
        check_destination(&path, &self.inputs)?;
        if std::env::var_os("TTPROF_TEST_HOLD_COMMIT").is_some() {
            loop {
                std::thread::park();
            }
        }
        let tmp = self.tmp.to_path_buf();
        let done = self
            .tmp
            .persist(&path)
            .map_err(|e| Error::io(&path, "rename temporary file onto", e.error));
        note_closed(&tmp);
        done
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.out.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// `.ttprof-<name>.<owner>.`, to which the random part and [`SUFFIX`] are appended: a
/// temporary is named `.ttprof-<name>.<pid>-<space>.<random>.tmp`, `<name>` the
/// destination's file name (at most [`NAME_CHARS`] characters of it), `<pid>` the writing
/// process, `<space>` 16 hex digits naming its pid namespace on this boot of this machine
/// ([`pid_space`]); without `/proc` (not Linux) the name carries only `<pid>`.
fn temp_prefix(name: &str) -> String {
    let name: String = name.chars().take(NAME_CHARS).collect();
    format!("{PREFIX}{name}.{}.", owner())
}

/// This process in temporary names: `<pid>-<space>`, or `<pid>` where the namespace is unknown.
fn owner() -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER.get_or_init(|| match pid_space() {
        Some(space) => format!("{}-{space:016x}", std::process::id()),
        None => std::process::id().to_string(),
    })
}

/// Names the pid namespace this process runs in, on this boot of this machine: a hash of the
/// kernel's boot id and the namespace's inode (`/proc/self/ns/pid`). `None` without `/proc`,
/// or when `/proc` shows another namespace than this process's (its `self` is not our pid),
/// so that pids read there would mean other processes.
fn pid_space() -> Option<u64> {
    static SPACE: OnceLock<Option<u64>> = OnceLock::new();
    *SPACE.get_or_init(|| {
        if !cfg!(target_os = "linux") {
            return None;
        }
        let me = std::fs::read_link("/proc/self").ok()?;
        if me.to_str()? != std::process::id().to_string() {
            return None;
        }
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        let ns = std::fs::read_link("/proc/self/ns/pid").ok()?;
        let boot = boot.trim();
        let ns = ns.to_str()?;
        if boot.is_empty() || ns.is_empty() {
            return None;
        }
        Some(crate::util::fnv::fnv1a(format!("{boot}\n{ns}").as_bytes()))
    })
}

/// The writer of a temporary named `file_name`: its pid and its namespace (`None` for a
/// name without one). `None` if the name is not a ttprof temporary's.
#[cfg_attr(not(unix), allow(dead_code))]
fn temp_owner(file_name: &str) -> Option<(u32, Option<u64>)> {
    let rest = file_name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    let (head, random) = rest.rsplit_once('.')?;
    if random.len() != RANDOM || !random.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let (_, owner) = head.rsplit_once('.')?;
    let (pid, space) = match owner.split_once('-') {
        Some((pid, space)) if space.len() == 16 => {
            (pid, Some(u64::from_str_radix(space, 16).ok()?))
        }
        Some(_) => return None,
        None => (owner, None),
    };
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((pid.parse().ok()?, space))
}

/// Removes from `dir` the temporaries of ttprof runs that were killed while writing there;
/// `ours` is the temporary this process just created there (its owner is the user whose
/// files may go). Returns how many went. Best effort: errors are ignored.
///
/// A file goes only when all of these hold:
///
/// 1. its name has the form of [`temp_prefix`];
/// 2. its `<space>` is this process's, so its `<pid>` means the same process here as it did
///    to its writer (a file written from another container or another machine on a shared
///    directory, or before a reboot, is never judged);
/// 3. it is a regular file (a symbolic link is never removed or followed) owned by the same
///    user as `ours`;
/// 4. no process `<pid>` exists (`/proc/<pid>` is absent).
///
/// A writer that is still running exists under its pid in its own namespace, and a process
/// of the same user is always visible in `/proc` (even with `hidepid`), so this rule cannot
/// remove a file that a live ttprof is writing, however long it takes; the age of a file
/// plays no part. Without `/proc` nothing is removed.
#[cfg(unix)]
fn remove_stale_temporaries(dir: &Path, ours: &File) -> usize {
    use std::os::unix::fs::MetadataExt;
    let Some(space) = pid_space() else { return 0 };
    let Ok(user) = ours.metadata().map(|m| m.uid()) else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, Some(their_space))) = name.to_str().and_then(temp_owner) else {
            continue;
        };
        if their_space != space || pid == std::process::id() {
            continue;
        }
        // Neither looks through a symbolic link.
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        let theirs = entry
            .metadata()
            .is_ok_and(|m| m.is_file() && m.uid() == user);
        if !regular || !theirs || process_exists(pid) {
            continue;
        }
        // `remove_file` unlinks the name itself, whatever it has become since.
        if std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(not(unix))]
fn remove_stale_temporaries(_dir: &Path, _ours: &File) -> usize {
    0
}

/// Whether process `pid` exists (in this pid namespace). Only a definite "no such entry"
/// counts as absent.
#[cfg_attr(not(unix), allow(dead_code))]
fn process_exists(pid: u32) -> bool {
    match std::fs::symlink_metadata(format!("/proc/{pid}")) {
        Ok(_) => true,
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// Like [`write_atomic`], but `fill` runs on a second thread and hands its bytes over in
/// large buffers, so producing rows and writing them to the file overlap (on a busy disk
/// the writes block; the rows keep coming meanwhile).
pub fn write_atomic_threaded<F>(path: &Path, inputs: &Inputs, fill: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()> + Send,
{
    write_atomic(path, inputs, |file| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
        std::thread::scope(|s| {
            let producer = s.spawn(move || {
                let mut w = ChannelWriter {
                    tx,
                    buf: Vec::with_capacity(CHUNK),
                };
                fill(&mut w)?;
                w.flush()
            });
            let mut written = Ok(());
            for chunk in rx {
                if written.is_ok() {
                    written = file.write_all(&chunk);
                }
            }
            let produced = producer
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the row writer panicked")));
            written.and(produced)
        })
    })
}

/// Bytes per buffer handed to the file writer.
const CHUNK: usize = 4 << 20;

struct ChannelWriter {
    tx: std::sync::mpsc::SyncSender<Vec<u8>>,
    buf: Vec<u8>,
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > self.buf.capacity() {
            self.flush()?;
        }
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let full = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
            self.tx
                .send(full)
                .map_err(|_| io::Error::other("the file writer stopped"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn failed_writes_leave_the_old_file_and_no_temporary() {
        let dir = crate::testing::temp_dir("atomic");
        let path = dir.join("out.txt");
        write_atomic(&path, &Inputs::none(), |w| w.write_all(b"first")).unwrap();
        let e = write_atomic(&path, &Inputs::none(), |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("disk full"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "temporary removed"
        );
        let e =
            write_atomic(&dir.join("missing-dir/x.csv"), &Inputs::none(), |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("missing-dir"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The names of `dir`'s entries, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[cfg(unix)]
    #[test]
    fn planted_links_at_temporary_names_and_at_the_destination_are_never_followed() {
        use std::os::unix::fs::symlink;
        let dir = crate::testing::temp_dir("atomic-links");
        let victims = crate::testing::temp_dir("atomic-victims");
        let pid = std::process::id();
        let out = dir.join("out.csv");
        // Every name a temporary of `out.csv` could predictably have (the old
        // `.out.csv.tmp.<pid>`, and the new form with any random part guessed), and the
        // destination itself, are links to files the user can write.
        let planted = [
            format!(".out.csv.tmp.{pid}"),
            format!("{}AAAAAA{SUFFIX}", temp_prefix("out.csv")),
            "out.csv".to_string(),
        ];
        let mut targets = Vec::new();
        for (i, name) in planted.iter().enumerate() {
            let target = victims.join(format!("victim-{i}"));
            std::fs::write(&target, b"precious").unwrap();
            symlink(&target, dir.join(name)).unwrap();
            targets.push(target);
        }
        // A link at the destination is refused (a rename would replace it, and one to
        // /proc/self/fd/1 or a device is never a file the user meant to lose).
        let e = write_atomic(&out, &Inputs::none(), |w| w.write_all(b"new content"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("out.csv: is a symbolic link, not a regular file"),
            "{e}"
        );
        for target in &targets {
            assert_eq!(
                std::fs::read(target).unwrap(),
                b"precious",
                "{} written through a link",
                target.display()
            );
        }
        assert!(
            std::fs::symlink_metadata(&out)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link is left as it was"
        );
        // The planted temporary-name links are left alone, and no temporary is left.
        let mut expected: Vec<String> = planted[..2].to_vec();
        expected.push("out.csv".into());
        expected.sort();
        assert_eq!(names(&dir), expected);
        // Once the link is gone, the output is written (never through a temporary-name link).
        std::fs::remove_file(&out).unwrap();
        write_atomic(&out, &Inputs::none(), |w| w.write_all(b"new content")).unwrap();
        assert!(std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_file());
        assert_eq!(std::fs::read(&out).unwrap(), b"new content");
        for target in &targets {
            assert_eq!(std::fs::read(target).unwrap(), b"precious");
        }
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&victims);
    }

    /// A temporary named as process `pid` in this namespace would name it, with `content`.
    fn plant_temporary(dir: &Path, name: &str, pid: u32, random: &str) -> PathBuf {
        let space = pid_space().expect("these tests need Linux's /proc");
        let path = dir.join(format!(
            "{PREFIX}{name}.{pid}-{space:016x}.{random}{SUFFIX}"
        ));
        std::fs::write(&path, b"half a file").unwrap();
        path
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn temporaries_of_dead_writers_are_removed_and_those_of_live_ones_are_not() {
        use std::os::unix::fs::symlink;
        let dir = crate::testing::temp_dir("atomic-stale");
        let elsewhere = crate::testing::temp_dir("atomic-stale-elsewhere");
        // A writer that has exited (and been reaped), and one still running.
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        dead.wait().unwrap();
        let mut live = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        assert!(!process_exists(dead_pid) && process_exists(live.id()));

        let stale = plant_temporary(&dir, "trace.tracy", dead_pid, "Ab12Cd");
        let stale_too = plant_temporary(&dir, "a.b.csv", dead_pid, "zzzzzz");
        let of_live = plant_temporary(&dir, "trace.tracy", live.id(), "Ef34Gh");
        let of_self = plant_temporary(&dir, "x.csv", std::process::id(), "Ij56Kl");
        // The same dead pid in another namespace (another container or machine), or in a
        // name without a namespace: not ours to judge.
        let foreign = dir.join(format!(
            "{PREFIX}x.csv.{dead_pid}-{:016x}.Mn78Op{SUFFIX}",
            pid_space().unwrap() ^ 1
        ));
        std::fs::write(&foreign, b"theirs").unwrap();
        let unspaced = dir.join(format!("{PREFIX}x.csv.{dead_pid}.Qr90St{SUFFIX}"));
        std::fs::write(&unspaced, b"theirs").unwrap();
        // Not regular files: a link (to a file elsewhere) and a directory with stale names.
        let target = elsewhere.join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.join(format!(
            "{PREFIX}l.csv.{dead_pid}-{:016x}.Uv12Wx{SUFFIX}",
            pid_space().unwrap()
        ));
        symlink(&target, &link).unwrap();
        let subdir = dir.join(format!(
            "{PREFIX}d.csv.{dead_pid}-{:016x}.Yz34Ab{SUFFIX}",
            pid_space().unwrap()
        ));
        std::fs::create_dir(&subdir).unwrap();
        // Only this directory: a stale temporary one level down stays.
        let deeper = plant_temporary(&subdir, "deep.csv", dead_pid, "Cd56Ef");
        // Look-alikes that are not ttprof temporaries.
        let other = dir.join(format!(".trace.tracy.tmp.{dead_pid}"));
        std::fs::write(&other, b"not ours").unwrap();

        write_atomic(&dir.join("out.csv"), &Inputs::none(), |w| {
            w.write_all(b"rows")
        })
        .unwrap();
        let _ = live.kill();
        let _ = live.wait();

        assert!(
            !stale.exists() && !stale_too.exists(),
            "the dead writer's temporaries are removed: {:?}",
            names(&dir)
        );
        for kept in [
            &of_live, &of_self, &foreign, &unspaced, &subdir, &deeper, &other,
        ] {
            assert!(kept.exists(), "{} kept", kept.display());
        }
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link kept"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::read(dir.join("out.csv")).unwrap(), b"rows");
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&elsewhere);
    }

    #[test]
    fn temporary_names_are_recognised_only_in_their_own_form() {
        let prefix = temp_prefix("out.csv");
        assert_eq!(
            temp_owner(&format!("{prefix}aB3dE9{SUFFIX}")),
            Some((std::process::id(), pid_space()))
        );
        assert_eq!(temp_owner(".ttprof-x.12.aB3dE9.tmp"), Some((12, None)));
        assert_eq!(
            temp_owner(".ttprof-x.12-00000000000000ff.aB3dE9.tmp"),
            Some((12, Some(255)))
        );
        for not in [
            ".ttprof-x.12-ff.aB3dE9.tmp",
            ".ttprof-x.12.aB3dE.tmp",
            ".ttprof-x.1a.aB3dE9.tmp",
            ".ttprof-x.12.aB3dE9",
            ".x.12.aB3dE9.tmp",
            ".ttprof-x..aB3dE9.tmp",
            ".ttprof-x.12.aB-dE9.tmp",
        ] {
            assert_eq!(temp_owner(not), None, "{not}");
        }
        let long = "n".repeat(300);
        assert!(
            temp_prefix(&long).len() < 120,
            "a long destination name is cut"
        );
    }

    #[cfg(unix)]
    #[test]
    fn destinations_that_are_not_regular_files_are_refused_and_left_as_they_were() {
        use std::os::unix::fs::{symlink, FileTypeExt};
        // As root, a rename onto /dev/null, /dev/stdout or a FIFO replaced the node with a
        // regular file. Each kind of node, made here in a scratch directory:
        let dir = crate::testing::temp_dir("atomic-nodes");
        let link = dir.join("stdout");
        symlink("/proc/self/fd/1", &link).unwrap();
        let fifo = dir.join("fifo");
        let fifo_made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        let null = dir.join("null");
        let null_made = std::process::Command::new("mknod")
            .arg(&null)
            .args(["c", "1", "3"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !null_made {
            eprintln!("SKIPPED: mknod failed (not root): no character device to test with");
        }
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let mut cases = vec![
            (link.clone(), "is a symbolic link"),
            (sub.clone(), "is a directory"),
        ];
        if fifo_made {
            cases.push((fifo.clone(), "is a FIFO (named pipe)"));
        }
        if null_made {
            cases.push((null.clone(), "is a character device"));
        }
        for (path, what) in &cases {
            let before = std::fs::symlink_metadata(path).unwrap().file_type();
            for e in [
                write_atomic(path, &Inputs::none(), |w| w.write_all(b"rows"))
                    .unwrap_err()
                    .to_string(),
                AtomicFile::create(path, &Inputs::none())
                    .err()
                    .unwrap()
                    .to_string(),
                crate::oplog::OpLogWriter::create(path, &Inputs::none())
                    .err()
                    .unwrap()
                    .to_string(),
            ] {
                assert!(e.starts_with(&format!("{}: {what}", path.display())), "{e}");
                assert!(
                    e.contains("not a regular file") && e.contains("`-` writes to standard output"),
                    "{e}"
                );
            }
            let after = std::fs::symlink_metadata(path).unwrap().file_type();
            assert_eq!(before, after, "{} is left as it was", path.display());
            assert!(
                after.is_symlink() || after.is_dir() || after.is_fifo() || after.is_char_device()
            );
        }
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            Path::new("/proc/self/fd/1")
        );
        // A node that appears while the file is written is refused at the rename too.
        let late = dir.join("late.csv");
        let mut f = AtomicFile::create(&late, &Inputs::none()).unwrap();
        f.write_all(b"rows").unwrap();
        symlink("/proc/self/fd/1", &late).unwrap();
        let e = f.commit().unwrap_err().to_string();
        assert!(e.contains("late.csv: is a symbolic link"), "{e}");
        assert!(std::fs::symlink_metadata(&late)
            .unwrap()
            .file_type()
            .is_symlink());
        let mut left = names(&dir);
        left.retain(|n| n.starts_with(PREFIX));
        assert!(left.is_empty(), "no temporary left: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_write_into_a_directory_that_is_not_writable_names_it_and_leaves_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let dir = crate::testing::temp_dir("atomic-readonly");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        // Root (CAP_DAC_OVERRIDE) writes anywhere; it cannot create files in sysfs.
        let root = std::fs::write(dir.join("probe"), b"").is_ok();
        let target = if root {
            PathBuf::from("/sys/kernel")
        } else {
            dir.clone()
        };
        let before = names(&target);
        let path = target.join("out.csv");
        let e = write_atomic(&path, &Inputs::none(), |w| w.write_all(b"rows")).unwrap_err();
        let message = e.to_string();
        assert!(
            message.contains(&format!(
                "cannot create a temporary file to write {}",
                path.display()
            )),
            "{message}"
        );
        assert!(message.contains("ermission denied"), "{message}");
        assert_eq!(
            names(&target),
            before,
            "nothing left in {}",
            target.display()
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
