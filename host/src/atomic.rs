//! Writing output files atomically: into a temporary file beside the target, then renamed
//! over it, so a reader never sees a half-written file and a failed write leaves the old one.
//!
//! **Temporary files.** The temporary file is created exclusively (`O_CREAT | O_EXCL`, by the
//! `tempfile` crate) under a random name, so a file or symbolic link planted at a name
//! ttprof might use is never opened, let alone written through. The finished file is renamed
//! onto the destination; a rename replaces a symbolic link *at* the destination with the new
//! file and never writes to the link's target. Its name is
//! `.ttprof-<name>.<pid>-<space>.<random>.tmp`: `<name>` is the destination's file name (at
//! most 64 characters of it), `<pid>` the writing process, `<space>` 16 hex digits naming
//! the pid namespace it runs in on this boot of this machine (`pid_space`); without
//! `/proc` (not Linux) the name carries only `<pid>`. It is removed when the write fails
//! or panics; only a killed process leaves one behind.
//!
//! **Stale temporaries.** Before each write, the temporaries of killed runs in the
//! destination's directory are removed (`remove_stale_temporaries`). A file goes only when
//! all of these hold:
//!
//! 1. its name has the form above;
//! 2. its `<space>` is this process's, so its `<pid>` means the same process here as it did
//!    to its writer (a file written from another container or another machine on a shared
//!    directory, or before a reboot, is never judged);
//! 3. it is a regular file (a symbolic link is never removed or followed) owned by the same
//!    user as the temporary file this write just created;
//! 4. no process `<pid>` exists (`/proc/<pid>` is absent).
//!
//! A writer that is still running exists under its pid in its own namespace, and a process
//! of the same user is always visible in `/proc` (even with `hidepid`), so this rule cannot
//! remove a file that a live ttprof is writing, however long it takes. A reused pid only
//! keeps a stale file until that process ends too. The age of a file plays no part: a slow
//! write (or an idle capture) may leave its file untouched for hours. Without `/proc`
//! nothing is removed.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::OnceLock;

/// Every ttprof temporary's name starts with this.
const PREFIX: &str = ".ttprof-";
/// ... and ends with this.
const SUFFIX: &str = ".tmp";
/// Random characters in a temporary's name.
const RANDOM: usize = 6;
/// At most this much of the destination's name goes into the temporary's.
const NAME_CHARS: usize = 64;

/// Writes `path` through `fill`, atomically. The temporary file is removed on failure.
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
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
}

impl AtomicFile {
    /// Creates the temporary file beside `path` (exclusively, under a random name).
    pub fn create(path: &Path) -> Result<AtomicFile> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
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
        let tmp = builder.tempfile_in(dir).map_err(|e| Error::io(path, "create a temporary file to write", e))?;
        remove_stale_temporaries(dir, tmp.as_file());
        let (file, tmp) = tmp.into_parts();
        Ok(AtomicFile { path: path.to_path_buf(), out: BufWriter::with_capacity(1 << 20, file), tmp })
    }

    /// Where the bytes go.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        &mut self.out
    }

    /// The destination.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes, syncs and renames the file onto its path.
    pub fn commit(mut self) -> Result<()> {
        let path = self.path.clone();
        let synced = self.out.flush().and_then(|_| self.out.get_ref().sync_all());
        if let Err(e) = synced {
            return Err(Error::io(&path, "write", e));
        }
        self.tmp.persist(&path).map_err(|e| Error::io(&path, "rename temporary file onto", e.error))
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

/// `.ttprof-<name>.<owner>.`, to which the random part and [`SUFFIX`] are appended.
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
        Some(fnv1a(format!("{boot}\n{ns}").as_bytes()))
    })
}

/// FNV-1a, 64 bits: a hash that is the same in every build (unlike std's `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
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
        Some((pid, space)) if space.len() == 16 => (pid, Some(u64::from_str_radix(space, 16).ok()?)),
        Some(_) => return None,
        None => (owner, None),
    };
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((pid.parse().ok()?, space))
}

/// Removes from `dir` the temporaries of ttprof runs that were killed while writing there,
/// by the rule in the module docs; `ours` is the temporary this process just created there
/// (its owner is the user whose files may go). Returns how many went. Best effort: errors
/// are ignored.
#[cfg(unix)]
fn remove_stale_temporaries(dir: &Path, ours: &File) -> usize {
    use std::os::unix::fs::MetadataExt;
    let Some(space) = pid_space() else { return 0 };
    let Ok(user) = ours.metadata().map(|m| m.uid()) else { return 0 };
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, Some(their_space))) = name.to_str().and_then(temp_owner) else { continue };
        if their_space != space || pid == std::process::id() {
            continue;
        }
        // Neither looks through a symbolic link.
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        let theirs = entry.metadata().is_ok_and(|m| m.is_file() && m.uid() == user);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn failed_writes_leave_the_old_file_and_no_temporary() {
        let dir = crate::testing::temp_dir("atomic");
        let path = dir.join("out.txt");
        write_atomic(&path, |w| w.write_all(b"first")).unwrap();
        let e = write_atomic(&path, |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("disk full"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "temporary removed");
        let e = write_atomic(&dir.join("missing-dir/x.csv"), |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("missing-dir"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The names of `dir`'s entries, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
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
        write_atomic(&out, |w| w.write_all(b"new content")).unwrap();
        for target in &targets {
            assert_eq!(std::fs::read(target).unwrap(), b"precious", "{} written through a link", target.display());
        }
        let meta = std::fs::symlink_metadata(&out).unwrap();
        assert!(meta.file_type().is_file(), "the destination is a regular file, not a link: {meta:?}");
        assert_eq!(std::fs::read(&out).unwrap(), b"new content");
        // The planted temporary-name links are left alone, and no temporary is left.
        let mut expected: Vec<String> = planted[..2].to_vec();
        expected.push("out.csv".into());
        expected.sort();
        assert_eq!(names(&dir), expected);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&victims);
    }

    /// A temporary named as process `pid` in this namespace would name it, with `content`.
    fn plant_temporary(dir: &Path, name: &str, pid: u32, random: &str) -> PathBuf {
        let space = pid_space().expect("these tests need Linux's /proc");
        let path = dir.join(format!("{PREFIX}{name}.{pid}-{space:016x}.{random}{SUFFIX}"));
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
        let mut live = std::process::Command::new("sleep").arg("60").spawn().unwrap();
        assert!(!process_exists(dead_pid) && process_exists(live.id()));

        let stale = plant_temporary(&dir, "trace.tracy", dead_pid, "Ab12Cd");
        let stale_too = plant_temporary(&dir, "a.b.csv", dead_pid, "zzzzzz");
        let of_live = plant_temporary(&dir, "trace.tracy", live.id(), "Ef34Gh");
        let of_self = plant_temporary(&dir, "x.csv", std::process::id(), "Ij56Kl");
        // The same dead pid in another namespace (another container or machine), or in a
        // name without a namespace: not ours to judge.
        let foreign = dir.join(format!("{PREFIX}x.csv.{dead_pid}-{:016x}.Mn78Op{SUFFIX}", pid_space().unwrap() ^ 1));
        std::fs::write(&foreign, b"theirs").unwrap();
        let unspaced = dir.join(format!("{PREFIX}x.csv.{dead_pid}.Qr90St{SUFFIX}"));
        std::fs::write(&unspaced, b"theirs").unwrap();
        // Not regular files: a link (to a file elsewhere) and a directory with stale names.
        let target = elsewhere.join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.join(format!("{PREFIX}l.csv.{dead_pid}-{:016x}.Uv12Wx{SUFFIX}", pid_space().unwrap()));
        symlink(&target, &link).unwrap();
        let subdir = dir.join(format!("{PREFIX}d.csv.{dead_pid}-{:016x}.Yz34Ab{SUFFIX}", pid_space().unwrap()));
        std::fs::create_dir(&subdir).unwrap();
        // Only this directory: a stale temporary one level down stays.
        let deeper = plant_temporary(&subdir, "deep.csv", dead_pid, "Cd56Ef");
        // Look-alikes that are not ttprof temporaries.
        let other = dir.join(format!(".trace.tracy.tmp.{dead_pid}"));
        std::fs::write(&other, b"not ours").unwrap();

        write_atomic(&dir.join("out.csv"), |w| w.write_all(b"rows")).unwrap();
        let _ = live.kill();
        let _ = live.wait();

        assert!(!stale.exists() && !stale_too.exists(), "the dead writer's temporaries are removed: {:?}", names(&dir));
        for kept in [&of_live, &of_self, &foreign, &unspaced, &subdir, &deeper, &other] {
            assert!(kept.exists(), "{} kept", kept.display());
        }
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link kept");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::read(dir.join("out.csv")).unwrap(), b"rows");
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&elsewhere);
    }

    #[test]
    fn temporary_names_are_recognised_only_in_their_own_form() {
        let prefix = temp_prefix("out.csv");
        assert_eq!(temp_owner(&format!("{prefix}aB3dE9{SUFFIX}")), Some((std::process::id(), pid_space())));
        assert_eq!(temp_owner(".ttprof-x.12.aB3dE9.tmp"), Some((12, None)));
        assert_eq!(temp_owner(".ttprof-x.12-00000000000000ff.aB3dE9.tmp"), Some((12, Some(255))));
        for not in [".ttprof-x.12-ff.aB3dE9.tmp", ".ttprof-x.12.aB3dE.tmp", ".ttprof-x.1a.aB3dE9.tmp", ".ttprof-x.12.aB3dE9", ".x.12.aB3dE9.tmp", ".ttprof-x..aB3dE9.tmp", ".ttprof-x.12.aB-dE9.tmp"] {
            assert_eq!(temp_owner(not), None, "{not}");
        }
        let long = "n".repeat(300);
        assert!(temp_prefix(&long).len() < 120, "a long destination name is cut");
    }

    #[cfg(unix)]
    #[test]
    fn a_write_into_a_directory_that_is_not_writable_names_it_and_leaves_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let dir = crate::testing::temp_dir("atomic-readonly");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        // Root (CAP_DAC_OVERRIDE) writes anywhere; it cannot create files in sysfs.
        let root = std::fs::write(dir.join("probe"), b"").is_ok();
        let target = if root { PathBuf::from("/sys/kernel") } else { dir.clone() };
        let before = names(&target);
        let path = target.join("out.csv");
        let e = write_atomic(&path, |w| w.write_all(b"rows")).unwrap_err();
        let message = e.to_string();
        assert!(message.contains(&format!("cannot create a temporary file to write {}", path.display())), "{message}");
        assert!(message.contains("ermission denied"), "{message}");
        assert_eq!(names(&target), before, "nothing left in {}", target.display());
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
