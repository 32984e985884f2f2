//! The input guard: the files one command has read, so that none of its outputs replaces
//! one (`ttprof snapshot --device X -o X`, or an output that is a hard link to an input).
//!
//! An [`Inputs`] is a value its caller creates ([`Inputs::guarded`]; the `ttprof` command
//! line makes one per command) and passes to the library's openers, which note each file
//! they open for reading by device and inode, and to its writers, which refuse a
//! destination that is one of them ([`crate::atomic::check_destination`]). Clones share
//! one list, so the threads of a command see the same inputs; two guards never see each
//! other's. [`Inputs::none`] (the default) notes nothing and refuses nothing: a library
//! user whose program reads and then rewrites a file on purpose passes it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One input: its device, inode and the path it was opened by (for messages).
#[derive(Clone, Debug)]
struct Input {
    dev: u64,
    ino: u64,
    path: PathBuf,
}

/// The inputs of one command, or no guard at all ([`Inputs::none`]). Cheap to clone; clones
/// share the list.
#[derive(Clone, Debug, Default)]
pub struct Inputs(Option<Arc<Mutex<Vec<Input>>>>);

impl Inputs {
    /// A guard with no input yet: every file opened through it is remembered.
    pub fn guarded() -> Inputs {
        Inputs(Some(Arc::default()))
    }

    /// No guard: nothing is remembered and no output is refused as an input.
    pub fn none() -> Inputs {
        Inputs(None)
    }

    /// Remembers `path` (opened for reading; `meta` is what was opened) as an input, if this
    /// is a guard.
    pub(crate) fn note(&self, path: &Path, meta: &std::fs::Metadata) {
        let (Some(list), Some((dev, ino))) = (&self.0, file_id(meta)) else {
            return;
        };
        let mut list = list.lock().unwrap_or_else(|p| p.into_inner());
        if !list.iter().any(|i| (i.dev, i.ino) == (dev, ino)) {
            list.push(Input {
                dev,
                ino,
                path: path.to_path_buf(),
            });
        }
    }

    /// Forgets `path` as an input: for a command that updates a file in place on purpose
    /// (`ttprof clock --record` adds a window to the snapshot it read).
    pub fn release(&self, path: &Path) {
        let Some(list) = &self.0 else { return };
        let Some((dev, ino)) = std::fs::metadata(path).ok().as_ref().and_then(file_id) else {
            return;
        };
        let mut list = list.lock().unwrap_or_else(|p| p.into_inner());
        list.retain(|i| (i.dev, i.ino) != (dev, ino));
    }

    /// The path by which the file `meta` describes was opened as an input, if it was one.
    pub(crate) fn opened_as(&self, meta: &std::fs::Metadata) -> Option<PathBuf> {
        let list = self.0.as_ref()?;
        let (dev, ino) = file_id(meta)?;
        let list = list.lock().unwrap_or_else(|p| p.into_inner());
        list.iter()
            .find(|i| (i.dev, i.ino) == (dev, ino))
            .map(|i| i.path.clone())
    }
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomic::{check_destination, write_atomic};

    #[test]
    fn two_guards_in_one_process_do_not_see_each_others_inputs() {
        let dir = crate::testing::temp_dir("inputs-two-guards");
        let a_file = dir.join("a.img");
        let b_file = dir.join("b.img");
        std::fs::write(&a_file, b"a").unwrap();
        std::fs::write(&b_file, b"b").unwrap();
        let (a, b) = (Inputs::guarded(), Inputs::guarded());
        crate::files::read_regular(&a_file, "a test file", "read test file", 9, &a).unwrap();
        crate::files::read_regular(&b_file, "a test file", "read test file", 9, &b).unwrap();

        // Each guard refuses its own input, and only its own.
        let e = check_destination(&a_file, &a).unwrap_err().to_string();
        assert!(e.contains("a.img: is an input of this command"), "{e}");
        let e = check_destination(&b_file, &b).unwrap_err().to_string();
        assert!(e.contains("b.img: is an input of this command"), "{e}");
        check_destination(&b_file, &a).unwrap();
        check_destination(&a_file, &b).unwrap();
        // No guard refuses neither.
        check_destination(&a_file, &Inputs::none()).unwrap();

        // A clone (another thread of the same command) shares the list.
        let clone = a.clone();
        std::thread::spawn(move || {
            let e = check_destination(&a_file, &clone).unwrap_err().to_string();
            assert!(e.contains("is an input of this command"), "{e}");
        })
        .join()
        .unwrap();

        // The writers ask the guard they are given: b's input is written through a.
        write_atomic(&b_file, &a, |w| std::io::Write::write_all(w, b"new")).unwrap();
        assert_eq!(std::fs::read(&b_file).unwrap(), b"new");
        let e = write_atomic(&dir.join("a.img"), &a, |w| {
            std::io::Write::write_all(w, b"new")
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("is an input of this command"), "{e}");
        assert_eq!(std::fs::read(dir.join("a.img")).unwrap(), b"a");

        // Released, the input may be rewritten (`clock --record`).
        a.release(&dir.join("a.img"));
        check_destination(&dir.join("a.img"), &a).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_hard_link_to_an_input_is_refused_naming_the_input() {
        let dir = crate::testing::temp_dir("inputs-hard-link");
        let input = dir.join("in.img");
        std::fs::write(&input, b"in").unwrap();
        let hard = dir.join("hard.img");
        std::fs::hard_link(&input, &hard).unwrap();
        let guard = Inputs::guarded();
        crate::files::read_regular(&input, "a test file", "read test file", 9, &guard).unwrap();
        let e = check_destination(&hard, &guard).unwrap_err().to_string();
        assert!(
            e.contains(&format!("(the same file as {})", input.display())),
            "{e}"
        );
        check_destination(&hard, &Inputs::none()).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
