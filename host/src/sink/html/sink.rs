//! The HTML timeline (`ttprof_timeline.html`) as a sink. The page ranks zones across the
//! whole run (it embeds the longest [`crate::html::MAX_ZONES`]), so it collects every ring
//! into a [`Timeline`] and writes the page at the end.

use crate::sink::{Finished, Sink};
use crate::error::Result;
use crate::html;
use crate::issue::Issue;
use crate::profile::{Profile, RingView};
use crate::timeline::Timeline;
use std::path::{Path, PathBuf};

/// Writes the HTML timeline.
pub struct HtmlPage {
    path: PathBuf,
    /// Files holding every zone, named when the page leaves some out.
    complete: Vec<PathBuf>,
    timeline: Option<Timeline>,
    /// What the page shows (after [`Sink::finish`]).
    pub shown: html::Shown,
}

impl HtmlPage {
    /// The page at `path`; `complete` are the outputs that hold every zone (named in the
    /// warning when the page leaves zones out).
    pub fn new(path: &Path, complete: Vec<PathBuf>) -> HtmlPage {
        HtmlPage { path: path.to_path_buf(), complete, timeline: None, shown: html::Shown::default() }
    }
}

impl Sink for HtmlPage {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        self.timeline = Some(Timeline::begin(p));
        Ok(())
    }

    fn ring(&mut self, _: &Profile, v: &RingView) -> Result<()> {
        if let Some(t) = self.timeline.as_mut() {
            t.push_ring(v.clone());
        }
        Ok(())
    }

    fn finish(&mut self, _: &Profile) -> Result<Finished> {
        let Some(t) = self.timeline.take() else { return Ok(Finished::default()) };
        let shown = html::write_file(&self.path, &t)?;
        self.shown = shown;
        let page = self.path.display();
        let every: Vec<String> = self.complete.iter().map(|p| p.display().to_string()).collect();
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
        Ok(Finished { files: vec![self.path.clone()], issues })
    }
}
