//! `ttprof_analysis.json` written an op at a time, as the analysis makes each op
//! ([`super::Analyzer::into_ops`]), so that memory does not grow with the ops' tiles (issue
//! 41: 1,000 ops on 64 tiles held 83 MB of tile analyses at once, which the file alone
//! needs).
//!
//! What the other sinks read of the analysis stays in memory ([`Kept`]): every op's own
//! fields (its RISCs summed over tiles, its verdict, critical path, counters), and its tiles
//! whole while the run's first [`KEPT_TILES`] tiles last. Past them an op keeps only the
//! tiles whose verdict disagrees with its own (their verdict, for the summary; no RISC
//! times) and counts the rest in [`OpAnalysis::tiles_left_out`]. The file has every tile
//! whole, the same bytes as the whole analysis serialised at once.
//!
//! Nor does memory grow with one op's tiles: an op comes with its first [`TILES_MADE`]
//! tiles made and the rest as the cells they are made of ([`LaterTiles`]), each made again
//! as it is written and let go (kept only as above). One op of 60,000 tiles held 76 MB of
//! tiles before it was written (issue 41).

use super::gather::LaterTiles;
use super::{Analysis, OpAnalysis, Stopped, TileAnalysis};
use crate::atomic::write_atomic;
use crate::error::Result;
use crate::inputs::Inputs;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, SerializeStruct, Serializer};
use std::cell::RefCell;
use std::path::Path;

/// Tiles an analysis written to its file keeps whole in memory, all ops together (about
/// 1.3 KB each): enough for any run of a few chips' ops, where a library caller reads them.
pub const KEPT_TILES: usize = 4_096;

/// Tiles of one op made before the op is written (about 1.3 KB each); an op's tiles past
/// them are made again one at a time as they are written ([`LaterTiles`]).
pub(crate) const TILES_MADE: usize = 1_024;

/// What the analysis keeps of the ops it wrote (module docs).
pub(crate) struct Kept {
    /// Tiles that may still be kept whole.
    room: usize,
    /// The ops so far, in op order.
    ops: Vec<OpAnalysis>,
}

impl Kept {
    /// Nothing kept yet, room for `room` tiles whole.
    pub(crate) fn new(room: usize) -> Kept {
        Kept {
            room,
            ops: Vec::new(),
        }
    }

    /// Whether an op of `tiles` tiles is kept whole: while there is room for them (taken),
    /// and never again once an op was not.
    fn whole(&mut self, tiles: usize) -> bool {
        let whole = tiles <= self.room;
        self.room = if whole { self.room - tiles } else { 0 };
        whole
    }

    /// Keeps `op` of `tiles` tiles in all, as [`Kept::whole`] said: whole, else its own
    /// fields and, of the tiles it holds, its disagreeing tiles' verdicts.
    fn keep(&mut self, mut op: OpAnalysis, tiles: usize, whole: bool) {
        if !whole {
            let v = op.verdict.as_ref();
            op.tiles.retain(|t| v.is_some_and(|v| v.disagrees(t)));
            op.tiles.iter_mut().for_each(strip);
            op.tiles.shrink_to_fit();
            op.tiles_left_out = tiles - op.tiles.len();
        }
        self.ops.push(op);
    }

    /// The analysis kept.
    pub(crate) fn into_analysis(self) -> Analysis {
        Analysis { ops: self.ops }
    }
}

/// A tile as an op not kept whole keeps it: its verdict, no RISC times.
fn strip(t: &mut TileAnalysis) {
    t.riscs = Vec::new();
    t.cbs = Vec::new();
}

/// Writes the analysis of `ops` (in op order, each with its tiles still to make) to `path`,
/// never over one of `inputs`, each op of `stopped` with its stop; `kept` keeps what it
/// keeps of each op once it is written. Gives `kept` back with the result (on an error, with
/// the ops written before it).
pub(crate) fn write<'p>(
    path: &Path,
    ops: impl Iterator<Item = (OpAnalysis, LaterTiles<'p>)>,
    stopped: &[Stopped],
    inputs: &Inputs,
    kept: Kept,
) -> (Result<()>, Kept) {
    let kept = RefCell::new(kept);
    let json = Json {
        ops: RefCell::new(Some(ops)),
        stopped,
        kept: &kept,
    };
    // Straight into the file: the text of a run of 300,000 tiles is 130 MB (issue 41).
    let written = write_atomic(path, inputs, |w| {
        serde_json::to_writer_pretty(w, &json).map_err(std::io::Error::from)
    });
    drop(json);
    (written, kept.into_inner())
}

/// The analysis as `ttprof_analysis.json` holds it: `{"ops": [...]}`, each op with `stopped`
/// after its own fields for an op a fault stopped. The ops are taken from the iterator as
/// they are written (a `Serialize` that consumes: it writes once).
struct Json<'a, I> {
    ops: RefCell<Option<I>>,
    stopped: &'a [Stopped],
    kept: &'a RefCell<Kept>,
}

impl<'p, I: Iterator<Item = (OpAnalysis, LaterTiles<'p>)>> Serialize for Json<'_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut json = s.serialize_struct("Json", 1)?;
        json.serialize_field("ops", &Ops(self))?;
        json.end()
    }
}

/// The `ops` array of [`Json`].
struct Ops<'j, 'a, I>(&'j Json<'a, I>);

impl<'p, I: Iterator<Item = (OpAnalysis, LaterTiles<'p>)>> Serialize for Ops<'_, '_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let ops = self.0.ops.borrow_mut().take();
        for (mut op, later) in ops.into_iter().flatten() {
            let stopped = self
                .0
                .stopped
                .iter()
                .find(|s| (s.chip, s.run) == (op.chip, op.run));
            let tiles = op.tiles.len() + later.len();
            let whole = self.0.kept.borrow_mut().whole(tiles);
            let kept = RefCell::new(Vec::new());
            let tiles_json = Tiles {
                op: &op,
                later: &later,
                whole,
                kept: &kept,
            };
            seq.serialize_element(&OpJson {
                op: &op,
                tiles: &tiles_json,
                stopped,
            })?;
            op.tiles.extend(kept.into_inner());
            self.0.kept.borrow_mut().keep(op, tiles, whole);
        }
        seq.end()
    }
}

/// One op as the file holds it: its fields in [`OpAnalysis`]'s order (as `serde` writes
/// them), its tiles from [`Tiles`], then `stopped`.
struct OpJson<'a, 'p> {
    op: &'a OpAnalysis,
    tiles: &'a Tiles<'a, 'p>,
    stopped: Option<&'a Stopped>,
}

impl Serialize for OpJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let o = self.op;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("op", &o.op)?;
        m.serialize_entry("chip", &o.chip)?;
        m.serialize_entry("run", &o.run)?;
        m.serialize_entry("span_ns", &o.span_ns)?;
        m.serialize_entry("riscs", &o.riscs)?;
        m.serialize_entry("verdict", &o.verdict)?;
        m.serialize_entry("disagreeing_tiles", &o.disagreeing_tiles)?;
        m.serialize_entry("tiles", self.tiles)?;
        m.serialize_entry("critical_path", &o.critical_path)?;
        if !o.counters.is_empty() {
            m.serialize_entry("counters", &o.counters)?;
        }
        if !o.counted_zones.is_empty() {
            m.serialize_entry("counted_zones", &o.counted_zones)?;
        }
        if let Some(r) = &o.roofline {
            m.serialize_entry("roofline", r)?;
        }
        if let Some(st) = self.stopped {
            m.serialize_entry("stopped", st)?;
        }
        m.end()
    }
}

/// An op's tiles as the file holds them: those made, then each later one made as it is
/// written and let go, unless the op is kept whole or the tile disagrees with it (into
/// `kept`).
struct Tiles<'a, 'p> {
    op: &'a OpAnalysis,
    later: &'a LaterTiles<'p>,
    whole: bool,
    kept: &'a RefCell<Vec<TileAnalysis>>,
}

impl Serialize for Tiles<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let made = &self.op.tiles;
        let mut seq = s.serialize_seq(Some(made.len() + self.later.len()))?;
        for t in made {
            seq.serialize_element(t)?;
        }
        for mut t in self.later.make() {
            seq.serialize_element(&t)?;
            if self.whole {
                self.kept.borrow_mut().push(t);
            } else if self.op.verdict.as_ref().is_some_and(|v| v.disagrees(&t)) {
                strip(&mut t);
                self.kept.borrow_mut().push(t);
            }
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::super::gather::fed;
    use super::super::{in_pieces, render, TileAnalysis};
    use super::*;

    /// `a` as the file held it when the whole analysis was serialised at once.
    fn whole_file(a: &Analysis) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Whole<'a> {
            ops: Vec<Flat<'a>>,
        }
        #[derive(serde::Serialize)]
        struct Flat<'a> {
            #[serde(flatten)]
            op: &'a OpAnalysis,
        }
        let ops = a.ops.iter().map(|op| Flat { op }).collect();
        serde_json::to_vec_pretty(&Whole { ops }).unwrap()
    }

    fn json<T: serde::Serialize>(t: &T) -> String {
        serde_json::to_string(t).unwrap()
    }

    /// Written an op at a time, the file is the whole analysis's, byte for byte, whatever
    /// memory keeps; and memory keeps the ops whole while the room lasts.
    #[test]
    fn the_file_written_an_op_at_a_time_is_the_whole_analysis() {
        let p = in_pieces::waiting();
        let whole = fed(&p).finish(&p);
        assert!(whole.ops.len() >= 3 && whole.ops.iter().all(|o| o.tiles.len() >= 2));
        assert!(whole.ops.iter().all(|o| o.verdict.is_some()), "typed waits");
        assert!(
            whole.ops.iter().any(|o| !o.disagreeing_tiles.is_empty()),
            "a tile disagrees"
        );
        let want = whole_file(&whole);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ttprof_analysis.json");
        let tiles: usize = whole.ops.iter().map(|o| o.tiles.len()).sum();
        let first = whole.ops[0].tiles.len();
        let rooms = [0, 1, first, tiles - 1, tiles, usize::MAX];
        for (room, made) in rooms
            .into_iter()
            .flat_map(|r| [0, 1, first, usize::MAX].map(|m| (r, m)))
        {
            let ops = fed(&p).into_ops(&p, made);
            let (written, kept) = write(&path, ops, &[], &Inputs::none(), Kept::new(room));
            written.unwrap();
            assert_eq!(
                std::fs::read(&path).unwrap(),
                want,
                "room for {room} tile(s), {made} made at once"
            );
            let kept = kept.into_analysis();
            assert_eq!(kept.ops.len(), whole.ops.len());
            let mut left = room;
            for (k, w) in kept.ops.iter().zip(&whole.ops) {
                if w.tiles.len() <= left {
                    left -= w.tiles.len();
                    assert_eq!(json(k), json(w), "room for {room}: {} whole", w.op);
                    assert_eq!(k.tiles_left_out, 0);
                } else {
                    left = 0;
                    let names: Vec<&String> = k.tiles.iter().map(|t| &t.tile).collect();
                    assert_eq!(names, w.disagreeing_tiles.iter().collect::<Vec<_>>());
                    for t in &k.tiles {
                        let wt = w.tiles.iter().find(|x| x.tile == t.tile).unwrap();
                        assert_eq!(json(&t.verdict), json(&wt.verdict));
                        assert!(t.riscs.is_empty() && t.cbs.is_empty());
                    }
                    assert_eq!(k.tiles.len() + k.tiles_left_out, w.tiles.len());
                    assert_eq!(json(&k.riscs), json(&w.riscs));
                    assert_eq!(json(&k.verdict), json(&w.verdict));
                    assert_eq!(json(&k.critical_path), json(&w.critical_path));
                    assert_eq!(k.compute_cb_waits_ns(), w.compute_cb_waits_ns());
                }
            }
            assert_eq!(render(&kept), render(&whole), "the summary's verdicts");
        }
    }

    /// An op comes with at most `made` tiles made and the rest as cells; its own fields
    /// (sums over every tile, verdict, disagreeing tiles) are the whole op's, and its later
    /// tiles, made, are the whole op's too.
    #[test]
    fn an_op_holds_at_most_its_made_tiles() {
        let p = in_pieces::waiting();
        let whole = fed(&p).finish(&p);
        for made in [0, 1, 2] {
            let ops: Vec<_> = fed(&p).into_ops(&p, made).collect();
            assert_eq!(ops.len(), whole.ops.len());
            for ((op, later), w) in ops.into_iter().zip(&whole.ops) {
                assert_eq!(op.tiles.len(), made.min(w.tiles.len()), "{made} made");
                assert_eq!(later.len(), w.tiles.len() - op.tiles.len());
                let mut op = op;
                op.tiles.extend(later.make());
                assert_eq!(json(&op), json(w), "{made} made");
            }
        }
    }

    /// Past the room, an op keeps its disagreeing tiles' verdicts (what the summary prints
    /// of them) and no RISC times, and counts the rest.
    #[test]
    fn past_the_room_an_op_keeps_only_its_disagreeing_tiles_verdicts() {
        let p = in_pieces::waiting();
        let mut whole = fed(&p).finish(&p);
        // Tile 0 of every op names another RISC than the op's verdict, the others the same.
        for op in &mut whole.ops {
            let v = op.verdict.clone().unwrap();
            for (i, t) in op.tiles.iter_mut().enumerate() {
                let t: &mut TileAnalysis = t;
                let tv = t.verdict.get_or_insert_with(|| v.clone());
                tv.risc = if i == 0 {
                    format!("not {}", v.risc)
                } else {
                    v.risc.clone()
                };
                tv.evidence = format!("tile {} evidence", t.tile);
            }
            op.disagreeing_tiles = vec![op.tiles[0].tile.clone()];
        }
        let mut kept = Kept::new(whole.ops[0].tiles.len());
        for op in whole.ops.iter().cloned() {
            let tiles = op.tiles.len();
            let keep_whole = kept.whole(tiles);
            kept.keep(op, tiles, keep_whole);
        }
        let kept = kept.into_analysis();
        assert_eq!(json(&kept.ops[0]), json(&whole.ops[0]), "the first op fits");
        for (k, w) in kept.ops.iter().zip(&whole.ops).skip(1) {
            assert_eq!(k.tiles.len(), 1);
            assert_eq!(k.tiles_left_out, w.tiles.len() - 1);
            let (kt, wt) = (&k.tiles[0], &w.tiles[0]);
            assert_eq!((&kt.tile, kt.span_ns), (&wt.tile, wt.span_ns));
            assert_eq!(json(&kt.verdict), json(&wt.verdict));
            assert!(kt.riscs.is_empty() && kt.cbs.is_empty());
            assert!(!wt.riscs.is_empty());
        }
        let text = render(&kept);
        assert_eq!(text, render(&whole));
        assert_eq!(text.matches("disagrees: tile ").count(), whole.ops.len());
    }
}
