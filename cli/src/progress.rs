//! Progress display for long work: an `indicatif` bar or spinner on stderr when stderr is a
//! terminal, nothing at all when it is piped or redirected (so logs and CI output stay clean).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// Whether progress is drawn (stderr is a terminal).
pub fn visible() -> bool {
    std::io::stderr().is_terminal()
}

fn target() -> ProgressDrawTarget {
    if visible() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// A bar over `len` units of `unit` (e.g. "rings").
pub fn bar(len: u64, unit: &str) -> ProgressBar {
    let style = ProgressStyle::with_template(&format!(
        "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {unit} {{msg}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::with_draw_target(Some(len), target()).with_style(style)
}

/// A spinner with a message, for work of unknown length (a capture).
pub fn spinner() -> ProgressBar {
    let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let p = ProgressBar::with_draw_target(None, target()).with_style(style);
    p.enable_steady_tick(Duration::from_millis(200));
    p
}
