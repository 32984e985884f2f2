//! `ttprof_lines.txt`: per op and kernel, the hottest source lines with their cycles, share
//! and causes, then the source around them with the cycles of every line (`perf annotate`
//! style).

use super::symbolize::{short, Names};
use super::{cause_name, Causes, KernelCycles, KernelKey, LineProfile, CAUSES};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Hottest lines listed per kernel.
const TOP_LINES: usize = 12;
/// Hottest lines listed per zone of a kernel.
const TOP_ZONE_LINES: usize = 5;
/// Hottest lines whose source is shown.
const ANNOTATED: usize = 4;
/// Source lines shown either side of an annotated line.
const CONTEXT: u32 = 3;

/// One source line of a kernel: its cycles and where it sits.
struct Line {
    causes: Causes,
    /// Innermost functions at this line.
    functions: BTreeSet<String>,
    /// Functions it was inlined into (outermost frames).
    inlined_into: BTreeSet<String>,
}

impl Default for Line {
    fn default() -> Line {
        Line {
            causes: [0; CAUSES],
            functions: BTreeSet::new(),
            inlined_into: BTreeSet::new(),
        }
    }
}

fn total(c: &Causes) -> u64 {
    c.iter().sum()
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// A row of the table: a source line, or, for code without line information (hand-written
/// assembly: the runtime's record routines, `_start`), its function, so that two such
/// functions are never one row.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct LineKey {
    file: String,
    line: u32,
    /// Empty when `file` is known.
    function: String,
}

/// The lines of one kernel, by (file, line), or by function where there is no file.
fn lines_of(
    key: &KernelKey,
    pcs: &BTreeMap<u32, Causes>,
    names: &Names,
) -> BTreeMap<LineKey, Line> {
    let mut lines: BTreeMap<LineKey, Line> = BTreeMap::new();
    for (&pc, c) in pcs {
        let info = names.get(&key.elf, pc);
        let leaf = info.source();
        let function = if leaf.file.is_empty() {
            leaf.function.clone()
        } else {
            String::new()
        };
        let row = LineKey {
            file: leaf.file.clone(),
            line: leaf.line,
            function,
        };
        let l = lines.entry(row).or_default();
        for (a, b) in l.causes.iter_mut().zip(c) {
            *a += b;
        }
        l.functions.insert(leaf.function.clone());
        if info.frames.len() > 1 && info.frames[0] != *leaf {
            l.inlined_into.insert(info.frames[0].function.clone());
        }
    }
    lines
}

/// The causes of `c` that hold cycles, largest first: `load-use 61% issue 30% ...`.
fn causes_text(c: &Causes) -> String {
    let t = total(c);
    // Causes under 0.5 % of the line are left out.
    let mut v: Vec<(u64, usize)> = (0..CAUSES)
        .map(|i| (c[i], i))
        .filter(|x| x.0 > 0 && share(x.0, t) >= 0.5)
        .collect();
    v.sort_by(|a, b| b.cmp(a));
    v.iter()
        .map(|&(n, i)| format!("{} {:.0}%", cause_name(i), share(n, t)))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn render(p: &LineProfile, names: &Names) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "ttprof --lines: every emulated cycle of every core, by source line (exact: per core the lines sum to its cycles)\n\
         line: the innermost source line outside Rust's core/alloc/std (its inlined frames are in ttprof_cycles.folded);\n\
         `?`: code without line information (hand-written assembly such as the runtime's record routines), a row per function\n\
         causes: issue (the instruction's own cycles), load-use (waiting for a register: a load's or mul/div's result),\n\
         store-port (a load/store waiting for the store queue or a load slot), mispredict, icache-miss,\n\
         fifo-wait (held on a mailbox / PCBuf until another core moved it), tensix-fifo: W (a TRISC's push held\n\
         by its full coprocessor instruction FIFO), ttsync: W (a TRISC held on a TTSync read); W: what the Tensix\n\
         thread waits on meanwhile (SrcA valid, semaphore n, packer busy, MOP expander, ... or issuing)\n"
    );
    if let Some(m) = p.zone_match {
        let _ = writeln!(
            s,
            "zones: every cycle also goes to the innermost zone its core had open (profiler records of this run);\n\
             {} of {} zones start and end at a clock read of their core (the zones' and the lines' clocks agree){}\n",
            m.on_clock_reads,
            m.zones,
            if m.dropped > 0 {
                format!(
                    "; {} core launch(es) read the clock too often to split: {}",
                    m.dropped,
                    super::SPLIT_DROPPED
                )
            } else {
                String::new()
            }
        );
    }
    for (key, k) in &p.kernels {
        let lines = lines_of(key, &k.pcs, names);
        let _ = writeln!(
            s,
            "== op {} (run {}) | {} | {} | {} core(s), {} cycles (= the cores' cycles) | {}",
            key.op,
            key.run_id,
            key.risc,
            key.elf
                .file_name()
                .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
            k.cores,
            k.cycles,
            causes_text(&k.pcs.values().fold([0; CAUSES], |mut a, c| {
                for (x, y) in a.iter_mut().zip(c) {
                    *x += y;
                }
                a
            }))
        );
        let hot = hottest(&lines);
        let _ = writeln!(
            s,
            "  {:>12} {:>6}  {:<40} {:<36} causes",
            "cycles", "share", "line", "function"
        );
        list(&mut s, &hot, TOP_LINES, k.cycles, "  ");
        zones(&mut s, key, k, names);
        annotate(&mut s, &hot, &lines, k.cycles);
        s.push('\n');
    }
    if p.kernels.is_empty() {
        s.push_str("no core ran in lines mode\n");
    }
    s
}

/// The lines, hottest first.
fn hottest(lines: &BTreeMap<LineKey, Line>) -> Vec<(&LineKey, &Line)> {
    let mut hot: Vec<(&LineKey, &Line)> = lines.iter().collect();
    hot.sort_by(|a, b| {
        total(&b.1.causes)
            .cmp(&total(&a.1.causes))
            .then(a.0.cmp(b.0))
    });
    hot
}

/// The first `top` of `hot` with cycles, share of `whole` and causes, then the rest summed.
fn list(s: &mut String, hot: &[(&LineKey, &Line)], top: usize, whole: u64, indent: &str) {
    for (LineKey { file, line, .. }, l) in hot.iter().take(top) {
        let loc = if file.is_empty() {
            "?".to_string()
        } else {
            format!("{}:{line}", short(file))
        };
        let mut func = l.functions.iter().next().cloned().unwrap_or_default();
        if let Some(outer) = l.inlined_into.iter().next() {
            if !l.functions.contains(outer) {
                func = format!("{func} (inlined into {outer})");
            }
        }
        let _ = writeln!(
            s,
            "{indent}{:>12} {:>5.1}%  {:<40} {:<36} {}",
            total(&l.causes),
            share(total(&l.causes), whole),
            loc,
            func,
            causes_text(&l.causes)
        );
    }
    if hot.len() > top {
        let rest: u64 = hot[top..].iter().map(|(_, l)| total(&l.causes)).sum();
        let _ = writeln!(
            s,
            "{indent}{:>12} {:>5.1}%  ({} more lines)",
            rest,
            share(rest, whole),
            hot.len() - top
        );
    }
}

/// Per innermost zone, largest first: its cycles and its hottest lines (shares of the zone).
fn zones(s: &mut String, key: &KernelKey, k: &KernelCycles, names: &Names) {
    if k.zones.is_empty() {
        return;
    }
    let mut zs: Vec<(&String, u64)> = k
        .zones
        .iter()
        .map(|(z, rows)| (z, rows.values().map(total).sum()))
        .collect();
    zs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let _ = writeln!(
        s,
        "  by innermost zone (a zone's own cycles: its children's are theirs; shares of the zone):"
    );
    for (zone, cycles) in zs {
        let _ = writeln!(
            s,
            "    zone {zone}: {cycles} cycles, {:.1}% of the kernel",
            share(cycles, k.cycles)
        );
        let lines = lines_of(key, &k.zones[zone], names);
        list(s, &hottest(&lines), TOP_ZONE_LINES, cycles, "    ");
    }
}

/// The source around the hottest lines, with each line's cycles and share.
fn annotate(
    s: &mut String,
    hot: &[(&LineKey, &Line)],
    lines: &BTreeMap<LineKey, Line>,
    whole: u64,
) {
    // Per file, the line ranges to show (merged).
    let mut ranges: BTreeMap<&str, Vec<(u32, u32)>> = BTreeMap::new();
    for (LineKey { file, line, .. }, _) in hot.iter().take(ANNOTATED) {
        if file.is_empty() || *line == 0 {
            continue;
        }
        ranges
            .entry(file.as_str())
            .or_default()
            .push((line.saturating_sub(CONTEXT).max(1), line + CONTEXT));
    }
    for (file, mut r) in ranges {
        let Ok(text) = std::fs::read_to_string(file) else {
            let _ = writeln!(s, "\n  {file}: source not readable here");
            continue;
        };
        let src: Vec<&str> = text.lines().collect();
        r.sort();
        let mut merged: Vec<(u32, u32)> = Vec::new();
        for (a, b) in r {
            match merged.last_mut() {
                Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        let _ = writeln!(s, "\n  {file}");
        for (a, b) in merged {
            let _ = writeln!(s, "  {:>12} {:>6} {:>6} |", "", "", "...");
            for n in a..=b.min(src.len() as u32) {
                let code = src[(n - 1) as usize];
                let row = LineKey {
                    file: file.to_string(),
                    line: n,
                    function: String::new(),
                };
                match lines.get(&row) {
                    Some(l) if total(&l.causes) > 0 => {
                        let _ = writeln!(
                            s,
                            "  {:>12} {:>5.1}% {:>6} | {}",
                            total(&l.causes),
                            share(total(&l.causes), whole),
                            n,
                            code
                        );
                    }
                    _ => {
                        let _ = writeln!(s, "  {:>12} {:>6} {:>6} | {}", "", "", n, code);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::symbolize::{Frame, PcInfo};
    use super::*;
    use riscv_linker::Risc;
    use std::path::Path;

    fn at(function: &str, file: &str, line: u32) -> PcInfo {
        PcInfo {
            frames: vec![Frame {
                function: function.into(),
                file: file.into(),
                line,
            }],
        }
    }

    /// Code without line information (hand-written assembly: the record routines, `_start`)
    /// is a row per function, never one `?` row under whichever name sorts first.
    #[test]
    fn code_without_lines_is_a_row_per_function() {
        let elf = Path::new("k.elf");
        let mut names = Names::default();
        names.insert(elf, 0x100, at("__ttprof_zone_end", "", 0));
        names.insert(elf, 0x104, at("__ttprof_zone_end", "", 0));
        names.insert(elf, 0x200, at("_start", "", 0));
        names.insert(elf, 0x300, at("main", "/k/src/main.rs", 7));
        names.insert(elf, 0x304, at("main", "/k/src/main.rs", 7));
        let cycles = |n: u64| {
            let mut c = [0; CAUSES];
            c[0] = n;
            c
        };
        let pcs: BTreeMap<u32, Causes> =
            [(0x100, 3), (0x104, 4), (0x200, 5), (0x300, 6), (0x304, 1)]
                .into_iter()
                .map(|(pc, n)| (pc, cycles(n)))
                .collect();
        let key = KernelKey {
            run_id: 1,
            op: "op".into(),
            risc: Risc::Brisc,
            elf: elf.to_path_buf(),
        };
        let rows: Vec<(String, u32, String, u64)> = lines_of(&key, &pcs, &names)
            .into_iter()
            .map(|(k, l)| (k.file, k.line, k.function, total(&l.causes)))
            .collect();
        assert_eq!(
            rows,
            [
                (String::new(), 0, "__ttprof_zone_end".into(), 7),
                (String::new(), 0, "_start".into(), 5),
                ("/k/src/main.rs".into(), 7, String::new(), 7),
            ]
        );
    }
}
