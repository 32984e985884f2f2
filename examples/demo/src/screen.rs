//! What the demo prints on stdout after its run: the summary in one screen (or all of it,
//! verbose), the readout's figures, how the sampled profile agrees with the exact one, and
//! the files written. The progress lines before it (kernel builds, ops, the clock fit) go
//! to stderr as they happen.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use ttprof::session::FinishedSession;

/// The stdout text of a finished demo whose files are in `out`.
pub fn render(profile: &FinishedSession, out: &Path, verbose: bool) -> String {
    let mut t = String::new();
    t.push_str(if verbose {
        profile.summary_text()
    } else {
        profile.brief_text()
    });
    let r = &profile.readout;
    let dropped: u64 = r.rings().iter().map(|x| x.dropped as u64).sum();
    let stalls: u64 = r.rings().iter().map(|x| x.stalls as u64).sum();
    let _ = writeln!(
        t,
        "{} records from {} rings ({} zones), {} dropped, {} consumer waits; {:.3} bus bytes per payload byte",
        r.records(),
        r.rings().len(),
        r.zones(),
        dropped,
        stalls,
        r.bus_bytes_per_payload_byte().unwrap_or(0.0),
    );
    if let Some(a) = &profile.agreement {
        let _ = writeln!(t, "\n{a}");
    }
    if verbose {
        t.push_str("\nwrote:\n");
        for p in profile.files() {
            let _ = writeln!(t, "  {}", p.display());
        }
    } else {
        t.push_str(&files_line(out, &profile.files()));
    }
    t
}

/// "wrote N files in DIR (...)" wrapped at 100 columns.
fn files_line(dir: &Path, files: &[PathBuf]) -> String {
    let text = format!(
        "wrote {} files in {} (ttprof_summary.txt has every zone and wait; --verbose prints them)",
        files.len(),
        dir.display(),
    );
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.len() + 1 + word.len() > 100 {
            out.push_str(&line);
            out.push('\n');
            line = "  ".to_string();
        } else if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}
