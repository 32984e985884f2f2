//! Tests' check that a sink taking pieces ([`Sink::takes_pieces`]) writes what it writes of
//! whole rings: the same files, byte for byte, and the same issues, for rings cut into
//! pieces of many sizes and ordered with many windows ([`Cut`]).

use super::{Finished, Sink};
use crate::profile::Profile;
use crate::ring_source::{Cut, Held, RingSource};
use std::collections::BTreeMap;
use std::path::Path;

/// The windows and piece sizes every ring is cut with: a piece of one record cuts every
/// zone of the ring in the middle; a window of one makes every enclosing zone long.
const CUTS: [(usize, usize); 8] = [
    (1, 1),
    (1, 7),
    (2, 3),
    (5, 1),
    (5, 1_000),
    (64, 1),
    (64, 7),
    (1, 1_000),
];

/// Every file under `dir` (one level), by name, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        out.insert(name, std::fs::read(e.path()).unwrap());
    }
    out
}

/// What the sink `make` builds for a directory writes and finds, fed `p`'s rings from
/// `rings`.
fn written(
    p: &Profile,
    rings: &mut dyn RingSource,
    dir: &Path,
    make: &dyn Fn(&Path) -> Box<dyn Sink>,
) -> (BTreeMap<String, Vec<u8>>, Vec<String>) {
    std::fs::create_dir_all(dir).unwrap();
    let mut sink = make(dir);
    assert!(sink.takes_pieces(), "the sink takes pieces");
    let done: Vec<Finished> = super::drive_rings(p, rings, &mut [sink.as_mut()]).unwrap();
    let issues = done
        .iter()
        .flat_map(|f| &f.issues)
        .map(|i| format!("{i:?}").replace(&dir.display().to_string(), "<dir>"))
        .collect();
    (files(dir), issues)
}

/// Asserts that the sink `make` builds (for a directory to write into) writes the same
/// files and finds the same issues whether `p`'s rings come whole or in pieces; returns
/// the files written from whole rings and the issues found (`Debug`-formatted, the
/// directory written into as `<dir>`).
pub(crate) fn assert_pieces_write_what_whole_rings_do(
    name: &str,
    p: &Profile,
    make: &dyn Fn(&Path) -> Box<dyn Sink>,
) -> (BTreeMap<String, Vec<u8>>, Vec<String>) {
    let root = crate::testing::temp_dir(name);
    let whole = written(p, &mut Held(p), &root.join("whole"), make);
    assert!(!whole.0.is_empty(), "the sink writes a file");
    for (window, piece) in CUTS {
        let dir = root.join(format!("cut-{window}-{piece}"));
        let mut cut = Cut {
            profile: p,
            window,
            piece,
        };
        let got = written(p, &mut cut, &dir, make);
        let at = format!("{name}: window {window}, pieces of {piece}");
        assert_eq!(
            got.0.keys().collect::<Vec<_>>(),
            whole.0.keys().collect::<Vec<_>>(),
            "{at}"
        );
        for (file, bytes) in &whole.0 {
            assert!(got.0[file] == *bytes, "{at}: {file} differs");
        }
        assert_eq!(got.1, whole.1, "{at}: the issues differ");
    }
    std::fs::remove_dir_all(&root).unwrap();
    whole
}
