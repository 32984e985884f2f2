//! Held is not busy: the stretches the emulator held a RISC on an access (a push into its
//! full Tensix instruction FIFO, a TTSync read, an empty mailbox), from the op log's `held`
//! lines ([`crate::oplog::CoreHolds`]), split by what held it.
//!
//! A stretch's cause names what the RISC's Tensix thread waited on then. When the thread was
//! working through its own instructions (issuing, in flight, its own unit busy: the Matrix
//! Unit for math, the unpackers for unpack, the packer for pack) the stage is busy: its
//! coprocessor is, and [`RiscTime::coprocessor_busy`] says which unit. When it waited on
//! another stage (`SrcA` data from unpack, a free bank from math, a Tensix semaphore, a
//! mailbox) the stretch is a wait, [`RiscTime::held`], and leaves busy time.
//! Only the part inside the RISC's KERNEL zone and outside its typed waits and profiler
//! stalls counts (those are already waits).

use super::RiscTime;
use crate::oplog::{CoreHolds, OpLog};
use riscv_linker::{NocCoord, Risc};
use std::collections::HashMap;

/// Stretches by (chip, run, tile, RISC).
pub(crate) type Index<'a> = HashMap<(u32, u32, NocCoord, Risc), Vec<&'a (u64, u32, String)>>;

/// Every `held` line of the op log with its core: (chip, run, tile, RISC), lines naming no
/// RISC left out.
fn lines(
    log: Option<&OpLog>,
) -> impl Iterator<Item = ((u32, u32, NocCoord, Risc), &CoreHolds)> + '_ {
    log.into_iter().flat_map(OpLog::holds).filter_map(|h| {
        let risc = Risc::from_name(&h.risc)?;
        let tile = NocCoord::new(h.core[0], h.core[1]);
        Some(((h.device, h.run_id, tile, risc), h))
    })
}

/// Every `held` line of the op log, by core.
pub(crate) fn index(log: Option<&OpLog>) -> Index<'_> {
    let mut out: Index<'_> = HashMap::new();
    for (key, h) in lines(log) {
        out.entry(key).or_default().extend(h.spans.iter());
    }
    out
}

/// A TRISC's Tensix thread in one run, from the op log's `held` lines: when its wait gate
/// held an instruction and why, and each `SEMPOST` it executed (wall clock, semaphore).
#[derive(Default)]
pub(crate) struct Thread<'a> {
    pub gate: Vec<&'a (u64, u32, String)>,
    pub posts: Vec<(u64, u32)>,
    pub gets: Vec<(u64, u32)>,
}

/// Every thread the op log's `held` lines describe, by (chip, run, tile, TRISC).
pub(crate) fn threads(log: Option<&OpLog>) -> HashMap<(u32, u32, NocCoord, Risc), Thread<'_>> {
    let mut out: HashMap<_, Thread<'_>> = HashMap::new();
    for (key, h) in lines(log) {
        if h.gate.is_empty() && h.posts.is_empty() && h.gets.is_empty() {
            continue;
        }
        let t = out.entry(key).or_default();
        t.gate.extend(h.gate.iter());
        t.posts.extend(h.posts.iter().copied());
        t.gets.extend(h.gets.iter().copied());
    }
    out
}

/// What held a RISC, as the analysis counts it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HeldOn {
    /// Its own coprocessor work: the unit named is busy for this stage.
    Own(&'static str),
    /// Another stage: a wait on what is named, and the TRISC whose work it waits for when
    /// one is known (the critical path crosses to it).
    Other(String, Option<Risc>),
}

/// The unit a TRISC's Tensix thread drives.
fn unit(risc: Risc) -> &'static str {
    match risc {
        Risc::Trisc0 => "the unpacker",
        Risc::Trisc1 => "the Matrix Unit",
        Risc::Trisc2 => "the packer",
        _ => "the coprocessor",
    }
}

/// Splits an emulator cause (`tensix-fifo: SrcA valid`, `ttsync: issuing`, `fifo-wait`).
pub(crate) fn classify(why: &str, risc: Risc) -> HeldOn {
    let Some(w) = why
        .strip_prefix("tensix-fifo: ")
        .or_else(|| why.strip_prefix("ttsync: "))
    else {
        return HeldOn::Other(format!("held ({why})"), None);
    };
    let own_or = |mine: Risc, name: &'static str, stage: &str| {
        if risc == mine {
            HeldOn::Own(name)
        } else {
            HeldOn::Other(format!("{name} ({stage})"), Some(mine))
        }
    };
    match w {
        "issuing"
        | "MOP expander"
        | "replay expander"
        | "in flight"
        | "wait gate lifting"
        | "Sync Unit busy"
        | "Configuration Unit busy"
        | "Scalar Unit busy"
        | "mutex" => HeldOn::Own(unit(risc)),
        "Matrix Unit busy" | "Dst read after write" => {
            own_or(Risc::Trisc1, "the Matrix Unit", "math")
        }
        "Vector Unit busy" => own_or(Risc::Trisc1, "the Vector Unit", "math"),
        "unpacker 0 busy" | "unpacker 1 busy" | "UNPACR setup" => {
            own_or(Risc::Trisc0, "the unpacker", "unpack")
        }
        "packer busy" => own_or(Risc::Trisc2, "the packer", "pack"),
        "SrcA valid" => HeldOn::Other("SrcA data from unpack".into(), Some(Risc::Trisc0)),
        "SrcB valid" => HeldOn::Other("SrcB data from unpack".into(), Some(Risc::Trisc0)),
        "SrcA bank free" => HeldOn::Other("a free SrcA bank from math".into(), Some(Risc::Trisc1)),
        "SrcB bank free" => HeldOn::Other("a free SrcB bank from math".into(), Some(Risc::Trisc1)),
        _ => match w.strip_prefix("semaphore ") {
            Some(n) => HeldOn::Other(format!("Tensix semaphore {n}"), None),
            None => HeldOn::Other(format!("the coprocessor ({w})"), None),
        },
    }
}

/// Sorted, merged copy of `v` (intervals `[start, end)`).
fn merged(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.retain(|(s, e)| e > s);
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Cycles of `[s, e)` inside the merged intervals `set`.
fn overlap(s: u64, e: u64, set: &[(u64, u64)]) -> u64 {
    let first = set.partition_point(|&(_, end)| end <= s);
    set[first..]
        .iter()
        .take_while(|&&(start, _)| start < e)
        .map(|&(a, b)| b.min(e).saturating_sub(a.max(s)))
        .sum()
}

/// The parts of `[s, e)` outside the sorted intervals `set` (they may overlap).
pub(crate) fn outside(s: u64, e: u64, set: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = s;
    let first = set.partition_point(|&(_, end)| end <= s);
    for &(a, b) in &set[first..] {
        if a >= e {
            break;
        }
        if a > at {
            out.push((at, a.min(e)));
        }
        at = at.max(b);
    }
    if at < e {
        out.push((at, e));
    }
    out
}

/// Intervals of cycles, `(start, end)`.
pub(crate) type Intervals = Vec<(u64, u64)>;

/// Adds the held stretches `spans` of `risc` to `t`, given its KERNEL zones `kernel` and the
/// intervals its typed waits and profiler stalls cover, `covered` (cycles), `cpn` cycles a
/// ns.
pub(crate) fn apply(
    t: &mut RiscTime,
    (kernel, covered): (Intervals, Intervals),
    risc: Risc,
    spans: &[&(u64, u32, String)],
    cpn: f64,
) {
    let kernel = merged(kernel);
    let covered = merged(covered);
    if cpn <= 0.0 || kernel.is_empty() {
        return;
    }
    for &&(start, cycles, ref why) in spans {
        let (s, e) = (start, start.saturating_add(cycles as u64));
        let inside: u64 = kernel
            .iter()
            .map(|&(ks, ke)| {
                let (a, b) = (s.max(ks), e.min(ke));
                if b <= a {
                    0
                } else {
                    (b - a) - overlap(a, b, &covered)
                }
            })
            .sum();
        if inside == 0 {
            continue;
        }
        let ns = inside as f64 / cpn;
        match classify(why, risc) {
            HeldOn::Own(u) => *t.coprocessor_busy.entry(u.to_string()).or_default() += ns,
            HeldOn::Other(what, _) => *t.held.entry(what).or_default() += ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_on_its_own_work_is_busy_and_on_another_stage_waits() {
        assert_eq!(
            classify("tensix-fifo: issuing", Risc::Trisc1),
            HeldOn::Own("the Matrix Unit")
        );
        assert_eq!(
            classify("ttsync: packer busy", Risc::Trisc2),
            HeldOn::Own("the packer")
        );
        assert_eq!(
            classify("tensix-fifo: SrcA valid", Risc::Trisc1),
            HeldOn::Other("SrcA data from unpack".into(), Some(Risc::Trisc0))
        );
        assert_eq!(
            classify("tensix-fifo: Matrix Unit busy", Risc::Trisc0),
            HeldOn::Other("the Matrix Unit (math)".into(), Some(Risc::Trisc1))
        );
        assert_eq!(
            classify("fifo-wait", Risc::Brisc),
            HeldOn::Other("held (fifo-wait)".into(), None)
        );
    }

    #[test]
    fn only_held_cycles_in_the_kernel_and_outside_typed_waits_count() {
        let mut t = RiscTime::default();
        let kernel = vec![(100, 1000)];
        // A typed wait 200..300 and a profiler stall 250..400 (overlapping).
        let covered = vec![(200, 300), (250, 400)];
        let spans = [
            (50, 100, "tensix-fifo: SrcA valid".to_string()), // 100..150 inside: 50
            (180, 300, "tensix-fifo: SrcA valid".to_string()), // 180..480 minus 200..400: 100
            (900, 200, "tensix-fifo: issuing".to_string()),   // 900..1000: 100
        ];
        let refs: Vec<&(u64, u32, String)> = spans.iter().collect();
        apply(&mut t, (kernel, covered), Risc::Trisc1, &refs, 2.0);
        assert_eq!(t.held["SrcA data from unpack"], 75.0);
        assert_eq!(t.coprocessor_busy["the Matrix Unit"], 50.0);
    }
}
