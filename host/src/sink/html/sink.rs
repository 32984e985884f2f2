//! The HTML timeline (`ttprof_timeline.html`) as a sink. The page ranks zones across the
//! whole run (it embeds the longest [`crate::html::MAX_ZONES`] and at most
//! [`crate::html::MAX_MARKS`] marks), so it collects the rings into a [`Timeline`] and writes
//! the page at the end; whenever it holds a 32nd of its limit more than the page can show,
//! it drops what the page can no longer embed (`html::prune`), and a zone no longer than
//! the last one a prune kept is not added at all, so memory stays bounded however large the
//! run. A ring may come in pieces ([`Sink::takes_pieces`], when the analysis takes them
//! too): each piece's zones and marks are added in turn as a whole ring's slices are, and
//! all the page carries from piece to piece is the ring's lane (pushed on its first piece,
//! its depth updated on each), so what it holds does not grow with the ring's length.
//! Pruning keeps what the page could still embed in its own order (the longest zones, ties
//! in timeline order; sum zones, data, then events, the earliest first), and the pieces
//! give the timeline the same zones and marks in the same order, each in its own array: the
//! page is the same whether and where a ring is cut.
//! When the kernels mark typed waits, a panel per op gives the bottleneck verdict
//! ([`crate::sink::analysis`]).

use crate::error::Result;
use crate::html;
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::profile::{hull, Profile, RingView};
use crate::sink::analysis::{self, Shared};
use crate::sink::{exact, Finished, Sink};
use crate::timeline::Timeline;
use std::path::{Path, PathBuf};

/// Writes the HTML timeline.
pub(crate) struct HtmlPage {
    path: PathBuf,
    /// The command's input guard: the page is not written over one of its inputs.
    inputs: Inputs,
    /// Files holding every zone, named when the page leaves some out.
    complete: Vec<PathBuf>,
    timeline: Option<Timeline>,
    /// Most zones and marks the page embeds.
    limits: (usize, usize),
    /// Drawable zones and marks dropped on the way (left out of the page).
    pruned: (usize, usize),
    /// The key of the last zone kept by the last prune that dropped zones
    /// ([`html::prune`]): a zone not longer is never added.
    cut: Option<f64>,
    /// What the page shows (after [`Sink::finish`]).
    pub shown: html::Shown,
    /// Typed waits, for the bottleneck panel.
    waits: Option<Shared>,
    /// The op graph's SVG, linked from the page (a path relative to the page).
    op_graph: Option<String>,
}

impl HtmlPage {
    /// The page at `path`; `complete` are the outputs that hold every zone (named in the
    /// warning when the page leaves zones out); never written over one of `inputs`.
    pub(crate) fn new(path: &Path, complete: Vec<PathBuf>, inputs: &Inputs) -> HtmlPage {
        HtmlPage {
            path: path.to_path_buf(),
            inputs: inputs.clone(),
            complete,
            timeline: None,
            limits: (html::MAX_ZONES, html::MAX_MARKS),
            pruned: (0, 0),
            cut: None,
            shown: html::Shown::default(),
            waits: Some(Shared::default()),
            op_graph: None,
        }
    }

    /// The same page linking the op graph ([`crate::sink::graph`]) at `svg`, a path relative
    /// to the page (written beside it: its file name).
    pub(crate) fn with_op_graph(mut self, svg: &str) -> HtmlPage {
        self.op_graph = Some(svg.to_string());
        self
    }

    /// The same page, its bottleneck panel and arrows from `analysis` (shared with other
    /// sinks).
    pub(crate) fn with_analysis(mut self, analysis: &Shared) -> HtmlPage {
        self.waits = Some(analysis.clone());
        self
    }

    /// The room made for zones and marks so far (`None` before `begin`).
    #[cfg(test)]
    pub(super) fn room(&self) -> Option<(usize, usize)> {
        let t = self.timeline.as_ref()?;
        Some((t.zones.capacity(), t.marks.capacity()))
    }

    /// The same page embedding at most `zones` zones and `marks` marks.
    pub(crate) fn with_limits(mut self, zones: usize, marks: usize) -> HtmlPage {
        self.limits = (zones, marks);
        self
    }
}

impl Sink for HtmlPage {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        let mut t = Timeline::begin(p);
        // Room for what the page will ever hold, made once from the profile's counts: a
        // doubling vector moved its zones to a new block at each step, and the step to the
        // limit held both blocks at once (a 51 MB page made a 25 MB spike in `run`'s
        // resident set, issue 41). Room past what is written is not resident.
        let (most_zones, most_marks) = most(self.limits);
        let zones = p.readout.zones();
        let marks = p.readout.records().saturating_sub(zones);
        t.zones.reserve_exact(zones.min(most_zones));
        t.marks.reserve_exact(marks.min(most_marks));
        self.timeline = Some(t);
        Ok(())
    }

    fn ring(&mut self, p: &Profile, v: &RingView) -> Result<()> {
        if let Some(a) = self.waits.as_ref() {
            a.add(p, v);
        }
        if let Some(t) = self.timeline.as_mut() {
            // The ring's zones and marks are added a slice at a time and pruned in between:
            // what is held stays bounded however long one ring is (the whole ring was
            // cloned first, 64 bytes a zone). Pruning keeps only what the page could still
            // embed, in order, so the page is the same wherever it happens.
            //
            // A ring in pieces ([`Sink::takes_pieces`]) is added the same way a piece at a
            // time: its lane is pushed on its first piece and its depth (the levels used so
            // far) updated on every piece, the last giving the ring's; its zones and marks
            // are the whole ring's in turn, so the timeline gets the same zones and marks in
            // the same order, and pruning, wherever it happens, leaves the same page.
            let (zones, marks) = self.limits;
            let (zones, marks) = (zones.max(1), marks.max(1));
            if v.part().first {
                debug_assert_eq!(v.index, t.lanes.len());
                t.lanes.push(v.lane);
            }
            debug_assert_eq!(v.index + 1, t.lanes.len());
            if let Some(lane) = t.lanes.last_mut() {
                lane.depth = v.lane.depth;
            }
            // A 32nd of the zone limit at a time: at most 1.0625 times the limit held
            // (72 MB of zones at the default 1 M when it was a quarter, 1.5 times, issue
            // 41), and a prune (down to the limit) after at least that much was added. A
            // zone no longer than the last one a prune kept is not added at all (counted
            // as left out, its span kept for the page's time axis), so a long ring of
            // like zones is pruned about once. Room is made for at most that much
            // (doubling, a 1.5 times limit grew a vector of 2 times it).
            let step = zones.div_ceil(32);
            let (most_zones, most_marks) = most(self.limits);
            let clock = p.timebase.tile_clock(v.lane.chip, v.lane.tile);
            let limits = self.limits;
            let (pruned, cut) = (&mut self.pruned, &mut self.cut);
            let n = v.zones.len();
            let mut from = 0;
            while from < n {
                let mut added = 0;
                while from < n && added < step {
                    let z = v.zones.zone(from);
                    from += 1;
                    // Before the first prune that dropped zones, every zone is added.
                    let key = cut.map(|c| (c, html::zone_key(&z, clock.as_ref())));
                    match key {
                        Some((c, Some(k))) if html::zone_order(&k, &c).is_ge() => {
                            pruned.0 += 1;
                            let span = (z.start_ns(clock.as_ref()), z.end_ns(clock.as_ref()));
                            t.dropped_span = hull(t.dropped_span.into_iter().chain([span]));
                        }
                        Some((_, None)) => {}
                        _ => {
                            grow(&mut t.zones, 1, most_zones);
                            t.zones.push(z);
                            added += 1;
                        }
                    }
                }
                prune(t, limits, step, pruned, cut);
            }
            for slice in v.marks.chunks(marks.div_ceil(4)) {
                grow(&mut t.marks, slice.len(), most_marks);
                t.marks.extend_from_slice(slice);
                prune(t, limits, step, pruned, cut);
            }
        }
        Ok(())
    }

    fn takes_pieces(&self) -> bool {
        self.waits.as_ref().is_none_or(Shared::takes_pieces)
    }

    fn finish(&mut self, p: &Profile) -> Result<Finished> {
        let Some(t) = self.timeline.take() else {
            return Ok(Finished::default());
        };
        let (zones, marks) = self.limits;
        let a = self.waits.take().unwrap_or_default().finish(p);
        let a = &*a;
        let mut panel = analysis::html_panel(a);
        // The critical paths' hand-overs, drawn as arrows between lanes by the page.
        let arch = p.geometry().arch;
        let arrows: Vec<String> = analysis::arrows(p, a)
            .iter()
            .map(|w| {
                format!(
                    "[{},{},{},{},{},{}]",
                    html::js_str(&w.from.name(arch)),
                    w.from.chip,
                    exact::to_i64(w.from_ns),
                    html::js_str(&w.to.name(arch)),
                    w.to.chip,
                    exact::to_i64(w.to_ns)
                )
            })
            .collect();
        if !arrows.is_empty() {
            panel.push_str(&format!(
                "<script type=\"application/json\" id=\"ttprof-paths\">[{}]</script>\n",
                arrows.join(",")
            ));
        }
        if let Some(svg) = &self.op_graph {
            let href: String = svg
                .chars()
                .map(|c| match c {
                    '"' => "%22".to_string(),
                    '<' => "%3C".to_string(),
                    '>' => "%3E".to_string(),
                    '&' => "%26".to_string(),
                    c => c.to_string(),
                })
                .collect();
            panel.insert_str(
                0,
                &format!(
                    "<p id=\"op-graph\">Op graph (dependencies by tensor id, critical path in red): \
                     <a href=\"{href}\">{href}</a></p>\n"
                ),
            );
        }
        let shown = html::write_file_limited(
            &self.path,
            &t,
            (zones, marks),
            self.pruned,
            &panel,
            Some(html::Clocks {
                device: &p.device_ops,
            }),
            &self.inputs,
        )?;
        self.shown = shown;
        let page = self.path.display();
        let every: Vec<String> = self
            .complete
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let every = every.join(" and ");
        let mut issues = Vec::new();
        if shown.hidden > 0 {
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "{page} shows the {} longest zones; {} shorter than {:.0} ns are left out of it (every zone \
                         is in {every})",
                        shown.zones, shown.hidden, shown.shortest_shown_ns
                    ),
                )
                .with_count(shown.hidden as u64),
            );
        }
        if shown.marks_hidden > 0 {
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "{page} shows {} events, data and sum zones (sum zones first, then data, then events); {} \
                         more are left out of it (every one is in {every})",
                        shown.marks, shown.marks_hidden
                    ),
                )
                .with_count(shown.marks_hidden as u64),
            );
        }
        Ok(Finished {
            files: vec![self.path.clone()],
            issues,
        })
    }
}

/// Prunes `t` ([`html::prune`] under `limits`) when it holds more than `step` zones or a
/// quarter of the mark limit past its limits, adding what it drops to `pruned` and keeping
/// the last cut in `cut`.
fn prune(
    t: &mut Timeline,
    limits: (usize, usize),
    step: usize,
    pruned: &mut (usize, usize),
    cut: &mut Option<f64>,
) {
    let (zones, marks) = (limits.0.max(1), limits.1.max(1));
    if t.zones.len() > zones + step || t.marks.len() > marks + marks.div_ceil(4) {
        let (z, m, c) = html::prune(t, limits.0, limits.1);
        pruned.0 += z;
        pruned.1 += m;
        *cut = c.or(*cut);
    }
}

/// The most zones and marks the timeline holds under `limits` (the page's): a limit and two
/// steps of adding between prunes (a 32nd of the zone limit, a quarter of the mark limit).
fn most(limits: (usize, usize)) -> (usize, usize) {
    let (zones, marks) = (limits.0.max(1), limits.1.max(1));
    (
        zones + 2 * zones.div_ceil(32),
        marks + 2 * marks.div_ceil(4),
    )
}

/// Makes room in `v` for `more` elements: doubling its capacity, but to no more than `most`
/// (what the page's pruning ever holds) unless `more` needs it.
fn grow<T>(v: &mut Vec<T>, more: usize, most: usize) {
    let need = v.len() + more;
    if need > v.capacity() {
        let target = (v.capacity() * 2).min(most).max(need);
        v.reserve_exact(target - v.len());
    }
}
