//! Tests' check that a sink taking pieces ([`Sink::takes_pieces`]) writes what it writes of
//! whole rings: the same files, byte for byte, and the same issues, for rings cut into
//! pieces of many sizes and ordered with many windows ([`Cut`]); and a drive that cuts a
//! ring's opening order anywhere ([`drive_resliced`]), not only where
//! [`crate::ring_pieces::Openings`] ends a piece.

use super::{feed_piece, Finished, Sink};
use crate::profile::{Part, Profile};
use crate::ring_pieces::{self, LongZones, Openings};
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

/// The cuts of the opening order [`drive_resliced`] makes: every this many openings.
const RESLICED: [usize; 3] = [1, 2, 5];

/// How the rings are given to a sink taking pieces.
enum Drive {
    /// From a [`Cut`] through [`super::drive_rings`].
    Cut { window: usize, piece: usize },
    /// By [`drive_resliced`], cut every this many openings.
    Resliced(usize),
}

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
    written_by(dir, make, &mut |sinks| {
        super::drive_rings(p, rings, sinks).unwrap()
    })
}

/// [`written`], the sink fed by `drive`.
fn written_by(
    dir: &Path,
    make: &dyn Fn(&Path) -> Box<dyn Sink>,
    drive: &mut dyn FnMut(&mut [&mut dyn Sink]) -> Vec<Finished>,
) -> (BTreeMap<String, Vec<u8>>, Vec<String>) {
    std::fs::create_dir_all(dir).unwrap();
    let mut sink = make(dir);
    assert!(sink.takes_pieces(), "the sink takes pieces");
    let done: Vec<Finished> = drive(&mut [sink.as_mut()]);
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
    let cuts = CUTS.map(|(window, piece)| Drive::Cut { window, piece });
    for drive in cuts.into_iter().chain(RESLICED.map(Drive::Resliced)) {
        let (got, at) = match drive {
            Drive::Cut { window, piece } => {
                let dir = root.join(format!("cut-{window}-{piece}"));
                let mut cut = Cut {
                    profile: p,
                    window,
                    piece,
                };
                let at = format!("{name}: window {window}, pieces of {piece}");
                (written(p, &mut cut, &dir, make), at)
            }
            Drive::Resliced(every) => {
                let dir = root.join(format!("resliced-{every}"));
                let got = written_by(&dir, make, &mut |sinks| drive_resliced(p, every, sinks));
                (got, format!("{name}: cut every {every} openings"))
            }
        };
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

/// Feeds `p`'s rings to `sinks` as [`super::drive_rings`] feeds pieces, each ring's openings
/// (its zones and point records in opening order) cut after every `every` of them, the
/// ring's unmarked records with its last piece: a cut anywhere in the opening order, which
/// a sink taking pieces must take (the cuts [`Openings`] makes are some of them).
pub(crate) fn drive_resliced(
    p: &Profile,
    every: usize,
    sinks: &mut [&mut dyn Sink],
) -> Vec<Finished> {
    for s in sinks.iter_mut() {
        s.begin(p).unwrap();
    }
    for index in 0..p.ring_count() {
        let r = &p.readout.rings[index].records;
        // A window past the ring: no long zones, every opening given by `finish`.
        let long = LongZones::new(r.len() + 1, usize::MAX).finish().unwrap();
        let mut openings = Openings::new(index, long);
        // The ring's unmarked records, in ring order (no opening is final before `finish`).
        let unmarked = openings.push(r).unwrap();
        assert!(unmarked.rows.is_empty());
        let whole = openings.finish().unwrap();
        let n = whole.rows.len();
        assert_eq!(n, whole.records.len(), "openings only");
        let (mut from, mut zones, mut levels) = (0, 0, 0u16);
        loop {
            let to = (from + every.max(1)).min(n);
            let mut records = ring_pieces::slice(&whole.records, from, to);
            let last = to == n;
            if last {
                records.append(&unmarked.records);
            }
            let count = records.zones();
            let depth = &whole.depth[zones..zones + count];
            zones += count;
            levels = levels.max(depth.iter().map(|d| d + 1).max().unwrap_or(0));
            let part = Part {
                first: from == 0,
                last,
            };
            feed_piece(p, index, records, depth, levels, part, sinks).unwrap();
            if last {
                break;
            }
            from = to;
        }
    }
    sinks.iter_mut().map(|s| s.finish(p).unwrap()).collect()
}
