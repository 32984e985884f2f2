//! What a run that fails on unusable input after it began writing leaves behind: nothing
//! it created. Most unusable input is refused before the output folder is made (`plan`);
//! what only a launch can find (a DRAM output that cannot be written, a kernel the emulator
//! will not load, an I/O error) ends the run with exit 1 after the session created its
//! folder, the op log, the device image and the kernel copies. [`Undo`] notes, before each
//! is created, the paths that held nothing, and removes exactly those: files first, then
//! folders innermost first and only when empty. A path that existed before the run is never
//! removed (a file the run wrote over keeps the run's content: what was there is gone).
//! A run that produced data (`run::Run::finish`, a kernel fault among it) keeps
//! everything.

use crate::error::Error;
use std::path::{Path, PathBuf};

/// The paths a run created, to remove if it fails before it produced its outputs.
#[derive(Debug, Default)]
pub(crate) struct Undo {
    /// Files that did not exist when noted.
    files: Vec<PathBuf>,
    /// Folders that did not exist when noted, outermost first.
    dirs: Vec<PathBuf>,
    /// Folders that did not exist when noted and are removed with all they hold (a build
    /// folder the command fills with files it does not list).
    trees: Vec<PathBuf>,
}

/// Whether nothing is at `path` (not even a dangling link). An error other than "not
/// found" (a parent that is a file, no permission) counts as something there: never removed.
fn absent(path: &Path) -> bool {
    matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

impl Undo {
    /// Notes the folders of `dir` (it and its parents) that do not exist yet: call before
    /// creating it.
    pub(crate) fn note_dir(&mut self, dir: &Path) {
        let mut missing = Vec::new();
        let mut at = Some(dir);
        while let Some(d) = at.filter(|d| !d.as_os_str().is_empty() && absent(d)) {
            missing.push(d.to_path_buf());
            at = d.parent();
        }
        for d in missing.into_iter().rev() {
            if !self.dirs.contains(&d) {
                self.dirs.push(d);
            }
        }
    }

    /// Notes `file` if nothing is there yet (its folder too): call before writing it.
    pub(crate) fn note_file(&mut self, file: &Path) {
        if let Some(dir) = file.parent() {
            self.note_dir(dir);
        }
        if absent(file) && !self.files.contains(&file.to_path_buf()) {
            self.files.push(file.to_path_buf());
        }
    }

    /// Notes `dir` if nothing is there yet: it is removed with everything in it (the
    /// command made it, so all it holds is the command's), its parents as [`Undo::note_dir`].
    pub(crate) fn note_tree(&mut self, dir: &Path) {
        if !absent(dir) {
            return;
        }
        if let Some(parent) = dir.parent() {
            self.note_dir(parent);
        }
        if !self.trees.contains(&dir.to_path_buf()) {
            self.trees.push(dir.to_path_buf());
        }
    }

    /// Files the run created where nothing was before it (known to have held nothing).
    pub(crate) fn created_files(&mut self, files: &[PathBuf]) {
        for f in files {
            if !self.files.contains(f) {
                self.files.push(f.clone());
            }
        }
    }

    /// Removes what was noted, then returns `e`: as it is when everything went, else with
    /// what could not be removed, and why, added (each path named).
    pub(crate) fn undo(self, e: Error) -> Error {
        let mut left = Vec::new();
        for f in &self.files {
            match std::fs::remove_file(f) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => left.push(format!("{}: {err}", f.display())),
            }
        }
        for t in &self.trees {
            match std::fs::remove_dir_all(t) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => left.push(format!("{}: {err}", t.display())),
            }
        }
        for d in self.dirs.iter().rev() {
            match std::fs::remove_dir(d) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) if err.kind() == std::io::ErrorKind::DirectoryNotEmpty => {
                    left.push(format!(
                        "{}: kept, it holds files this run did not create",
                        d.display()
                    ))
                }
                Err(err) => left.push(format!("{}: {err}", d.display())),
            }
        }
        if left.is_empty() {
            return e;
        }
        Error::Other(format!(
            "{e}\n(the run stopped before writing its outputs; removing what it had created left: {})",
            left.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_was_absent_is_removed_and_a_folder_with_other_files_is_kept() {
        let root = tempfile::tempdir().unwrap();
        let mine = root.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("keep.txt"), "user's").unwrap();
        std::fs::write(mine.join("ops.jsonl"), "before").unwrap();
        let mut u = Undo::default();
        let new = root.path().join("a/b/out");
        u.note_dir(&new.join("kernels"));
        for f in [
            mine.join("ops.jsonl"),
            mine.join("new.bin"),
            new.join("ops.jsonl"),
        ] {
            u.note_file(&f);
        }
        std::fs::create_dir_all(new.join("kernels")).unwrap();
        std::fs::write(new.join("ops.jsonl"), "run").unwrap();
        std::fs::write(new.join("kernels/reader"), "elf").unwrap();
        std::fs::write(mine.join("ops.jsonl"), "run").unwrap();
        std::fs::write(mine.join("new.bin"), "run").unwrap();
        u.created_files(&[new.join("kernels/reader")]);
        let e = u.undo(Error::Other("bad input".into()));
        assert_eq!(e.to_string(), "bad input");
        assert!(
            !root.path().join("a").exists(),
            "every folder it made is gone"
        );
        let mut left: Vec<_> = std::fs::read_dir(&mine)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["keep.txt", "ops.jsonl"], "what was there stays");

        // A folder it made that now holds something else stays, and the error says so.
        let mut u = Undo::default();
        let out = root.path().join("out2");
        u.note_dir(&out);
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("other"), "").unwrap();
        let e = u.undo(Error::Other("bad input".into())).to_string();
        assert!(
            e.starts_with("bad input\n") && e.contains("out2: kept"),
            "{e}"
        );
        assert!(out.join("other").exists());

        // A tree it made goes with what it holds; one that was there stays as it is.
        let mut u = Undo::default();
        let build = root.path().join("out3/kernels");
        u.note_tree(&build);
        u.note_tree(&mine);
        std::fs::create_dir_all(build.join("reader/obj")).unwrap();
        std::fs::write(build.join("reader/obj/a.o"), "").unwrap();
        std::fs::write(mine.join("b.o"), "").unwrap();
        assert_eq!(u.undo(Error::Other("bad".into())).to_string(), "bad");
        assert!(!root.path().join("out3").exists());
        assert!(mine.join("b.o").exists() && mine.join("keep.txt").exists());
    }
}
