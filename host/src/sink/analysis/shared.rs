//! One analysis per drive, shown by many sinks: the summary, the op report, the HTML page,
//! the Perfetto trace and `ttprof_analysis.json` each hold a [`Shared`] handle to the same
//! [`Analyzer`], so a run's per-tile cells are gathered once, not once per sink (issue 41:
//! five copies were most of the memory per ring on a run of many small rings).
//!
//! Every holder feeds each ring as if it were alone ([`Shared::add`]); the first to feed a
//! ring adds it and the others see it was added. A ring given in pieces
//! ([`crate::sink::Sink::takes_pieces`]) is the same: the driver gives piece k of a ring to
//! every sink before piece k + 1, so each view is known by its profile, its ring and its
//! piece's number in the ring (which each handle counts as it is fed), and the first holder
//! to feed a piece adds it. After the last ring, the first holder to
//! ask computes the [`Analysis`] ([`Shared::finish`]) and every later one gets the same.
//! A sink made on its own gets a handle of its own, so it works alone as before.
//!
//! When `ttprof_analysis.json` is among the sinks ([`Shared::write_to`]), the analysis is
//! written to it as it is computed, an op at a time, and the holders get what module
//! `write` keeps of it: memory holds one op's tiles at a time, not every op's.

use super::write::{self, Kept, KEPT_TILES, TILES_MADE};
use super::{stopped, Analysis, Analyzer, Stopped};
use crate::error::Result;
use crate::inputs::Inputs;
use crate::profile::{Profile, RingView};
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// A handle to one run's analysis (see the module docs); clones share it.
#[derive(Clone, Default)]
pub(crate) struct Shared {
    state: Rc<RefCell<State>>,
    /// The number in its ring of the last view this handle was fed (0: the ring's first
    /// piece, or the whole ring).
    piece: Cell<u64>,
}

/// A view as [`Shared::add`] knows it: its profile's address, its ring's index and its
/// piece's number in the ring.
type ViewKey = (usize, usize, u64);

enum State {
    /// Rings still coming: the analyzer, the last view added (so the next holder to be fed
    /// it does not add it again), and the file the analysis goes to, if any.
    Gathering {
        analyzer: Box<Analyzer>,
        last: Option<ViewKey>,
        file: Option<File>,
    },
    /// Computed, and what writing its file gave (taken by [`Shared::written`]).
    Done(Rc<Analysis>, Option<Result<()>>),
}

/// Where the analysis is written as it is computed.
struct File {
    path: PathBuf,
    inputs: Inputs,
    /// The ops a fault stopped (a session's), written with their ops.
    stopped: Vec<Stopped>,
}

impl Default for State {
    fn default() -> State {
        State::Gathering {
            analyzer: Box::default(),
            last: None,
            file: None,
        }
    }
}

impl Shared {
    /// Whether [`Shared::add`] can be given a ring a piece at a time
    /// ([`crate::sink::Sink::takes_pieces`]); a sink holding the analysis takes pieces only
    /// when it does. It does: the analyzer carries a ring from piece to piece.
    pub(crate) fn takes_pieces(&self) -> bool {
        true
    }

    /// Adds one ring or piece of a ring, unless a holder added it already. Views come in
    /// readout order to every holder (the driver feeds each ring, or each piece of it, to
    /// every sink before the next), so the last view added is the only one another holder
    /// can be fed again.
    pub(crate) fn add(&self, p: &Profile, v: &RingView) {
        let piece = if v.part().first {
            0
        } else {
            self.piece.get() + 1
        };
        self.piece.set(piece);
        let key = (p as *const Profile as usize, v.index, piece);
        if let State::Gathering { analyzer, last, .. } = &mut *self.state.borrow_mut() {
            if *last != Some(key) {
                analyzer.add(p, v);
                *last = Some(key);
            }
        }
    }

    /// Has the analysis written to `path` (never over one of `inputs`) as it is computed,
    /// each op of `stopped` with its stop (module `write`). Before any ring is added.
    pub(crate) fn write_to(&self, path: &Path, inputs: &Inputs, stopped: Vec<Stopped>) {
        if let State::Gathering { file, .. } = &mut *self.state.borrow_mut() {
            *file = Some(File {
                path: path.to_path_buf(),
                inputs: inputs.clone(),
                stopped,
            });
        }
    }

    /// The analysis of every ring added: computed once, by the first holder to ask (and
    /// written then, when it has a file).
    pub(crate) fn finish(&self, p: &Profile) -> Rc<Analysis> {
        let mut state = self.state.borrow_mut();
        let (analysis, written) =
            match std::mem::replace(&mut *state, State::Done(Rc::default(), None)) {
                State::Gathering {
                    analyzer,
                    file: None,
                    ..
                } => (Rc::new((*analyzer).finish(p)), None),
                State::Gathering {
                    analyzer,
                    file: Some(mut f),
                    ..
                } => {
                    stopped::prepare(p, &mut f.stopped);
                    let ops =
                        stopped::with_stopped((*analyzer).into_ops(p, TILES_MADE), p, &f.stopped);
                    let (written, kept) =
                        write::write(&f.path, ops, &f.stopped, &f.inputs, Kept::new(KEPT_TILES));
                    (Rc::new(kept.into_analysis()), Some(written))
                }
                State::Done(a, written) => (a, written),
            };
        *state = State::Done(Rc::clone(&analysis), written);
        analysis
    }

    /// What writing the analysis's file gave ([`Shared::write_to`]), once: `None` before
    /// [`Shared::finish`], without a file, or asked before.
    pub(crate) fn written(&self) -> Option<Result<()>> {
        match &mut *self.state.borrow_mut() {
            State::Done(_, written) => written.take(),
            State::Gathering { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture;

    /// Two holders fed every ring, as the driver feeds two sinks, get the analysis one
    /// analyzer makes alone: each ring added once, the analysis computed once.
    #[test]
    fn holders_share_one_analysis_and_each_ring_is_added_once() {
        let p = fixture::profile_at(0, fixture::ARCH, true);
        let alone = Shared::default();
        for v in p.rings() {
            alone.add(&p, &v);
        }
        let want = serde_json::to_string(&*alone.finish(&p)).unwrap();
        assert!(want.contains("\"kernel_ns\""), "{want}");
        let a = Shared::default();
        let b = a.clone();
        for v in p.rings() {
            a.add(&p, &v);
            b.add(&p, &v);
        }
        let first = b.finish(&p);
        let second = a.finish(&p);
        assert!(Rc::ptr_eq(&first, &second), "computed once");
        assert_eq!(serde_json::to_string(&*first).unwrap(), want);
    }
}
