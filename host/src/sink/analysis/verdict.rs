//! The verdict: which stage bounds a tile or op and why (see the parent module's rules),
//! and the pipeline's CB links read off the waits.

use super::*;

/// A RISC's typed waits and held time by name (what `waits` holds).
pub(super) fn waits_by_name(t: &RiscTime) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = t
        .by_wait
        .iter()
        .map(|(w, ns)| (w.to_string(), *ns))
        .collect();
    for (what, ns) in &t.held {
        *out.entry(what.clone()).or_default() += ns;
    }
    out
}

/// reader, unpack, math, pack, writer: the order data flows through a Tensix tile.
pub(super) fn pipeline_order(risc: &str) -> u8 {
    match risc {
        "BRISC" => 0,
        "TRISC_0" => 1,
        "TRISC_1" => 2,
        "TRISC_2" => 3,
        "NCRISC" => 4,
        _ => 5,
    }
}

pub(super) fn pct(ns: f64, span: f64) -> f64 {
    if span > 0.0 {
        100.0 * ns / span
    } else {
        0.0
    }
}

/// The bounding stage of `times` over `span` (see the module docs).
pub(super) fn verdict(times: &[RiscTime], span: f64) -> Option<Verdict> {
    if span <= 0.0 || times.iter().all(|t| t.by_wait.is_empty()) {
        return None;
    }
    // Records lost: no share can be trusted, the profiler is the answer.
    let lost: Vec<&RiscTime> = times.iter().filter(|t| t.incomplete()).collect();
    let dropped = lost.iter().any(|t| t.records_lost > 0);
    if let Some(worst) = lost
        .iter()
        .copied()
        .filter(|_| dropped)
        .max_by_key(|t| (t.records_lost, t.missing_kernel_zone))
    {
        let what: Vec<String> = lost
            .iter()
            .map(|t| {
                let mut w = Vec::new();
                if t.records_lost > 0 {
                    w.push(format!(
                        "dropped {} record(s) on its full ring",
                        t.records_lost
                    ));
                }
                if t.missing_kernel_zone {
                    w.push("recorded no KERNEL zone".to_string());
                }
                format!("{} on {} {}", t.stage, t.risc, w.join(" and "))
            })
            .collect();
        return Some(Verdict {
            risc: worst.risc.to_string(),
            stage: worst.stage.clone(),
            active_pct: pct(worst.active_ns(), span),
            busy_pct: pct(worst.busy_ns, span),
            profiler_pct: pct(worst.profiler_stall_ns, span),
            bound_by: "profiler".to_string(),
            resource: None,
            unit: None,
            evidence: format!(
                "the profiler lost records, so these times are incomplete: {}; {PROFILER_ADVICE}",
                what.join(", ")
            ),
        });
    }
    // A RISC without a KERNEL zone (and no record lost: it did not finish) has no time to
    // rank; the evidence says it is missing.
    let bound = times
        .iter()
        .filter(|t| !t.missing_kernel_zone)
        .max_by(|a, b| a.held_ns().total_cmp(&b.held_ns()))?;
    let external = bound
        .by_wait
        .iter()
        .filter(|(w, _)| !bound.is_handover(**w))
        .max_by(|a, b| a.1.total_cmp(b.1));
    let external_ns = bound.active_ns() - bound.busy_ns;
    let stall = bound.profiler_stall_ns;
    let (bound_by, resource) = match external {
        _ if stall > bound.busy_ns && stall > external_ns => ("profiler", None),
        Some((w, ns)) if *ns > bound.busy_ns => (
            match w {
                Wait::Semaphore(_) | Wait::TensixSem(_) => "semaphore",
                Wait::TtSync => "coprocessor",
                _ => "noc",
            },
            Some(w.to_string()),
        ),
        _ if bound.is_compute() => ("compute", None),
        _ => ("data movement", None),
    };
    let mut evidence = if bound_by == "profiler" {
        format!(
            "{} on {}: stalled on the profiler's full ring {:.0}% (PROFILER-STALL: waiting for the host to drain it), \
             busy {:.0}%",
            bound.stage,
            bound.risc,
            pct(stall, span),
            pct(bound.busy_ns, span)
        )
    } else {
        let mut e = format!(
            "{} on {}: busy {:.0}%",
            bound.stage,
            bound.risc,
            pct(bound.busy_ns, span)
        );
        let units: Vec<String> = bound
            .coprocessor_busy
            .iter()
            .filter(|(_, ns)| pct(**ns, span) >= 1.0)
            .map(|(u, ns)| format!("{u} {:.0}%", pct(*ns, span)))
            .collect();
        if !units.is_empty() {
            e.push_str(&format!(
                " (held while {} busy: {})",
                if units.len() == 1 {
                    "its unit was"
                } else {
                    "its units were"
                },
                units.join(", ")
            ));
        }
        e
    };
    if let Some(r) = &resource {
        evidence.push_str(&format!(", waiting on {r} {:.0}%", pct(external_ns, span)));
    }
    if pct(bound.profiler_records_ns, span) >= 1.0 {
        evidence.push_str(&format!(
            ", its profiler records {:.0}% (not counted as busy)",
            pct(bound.profiler_records_ns, span)
        ));
    }
    if bound_by != "profiler" && pct(stall, span) >= 1.0 {
        evidence.push_str(&format!(
            ", stalled on the profiler {:.0}%",
            pct(stall, span)
        ));
    }
    let others: Vec<String> = times
        .iter()
        .filter(|t| t.risc != bound.risc)
        .flat_map(|t| {
            let typed = t.largest_wait().map(|(w, ns)| (w.to_string(), ns));
            let held = t
                .held
                .iter()
                .map(|(w, ns)| (format!("{w} (held)"), *ns))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let wait = typed
                .into_iter()
                .chain(held)
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .filter(|(_, ns)| pct(*ns, span) >= 1.0)
                .map(|(w, ns)| format!("{} waits on {w} {:.0}%", t.stage, pct(ns, span)));
            let stalled = (pct(t.profiler_stall_ns, span) >= 1.0).then(|| {
                format!(
                    "{} stalled on the profiler {:.0}%",
                    t.stage,
                    pct(t.profiler_stall_ns, span)
                )
            });
            wait.into_iter().chain(stalled)
        })
        .collect();
    if !others.is_empty() {
        evidence.push_str("; ");
        evidence.push_str(&others.join(", "));
    }
    let unfinished: Vec<String> = lost
        .iter()
        .map(|t| format!("{} on {}", t.stage, t.risc))
        .collect();
    if !unfinished.is_empty() {
        evidence.push_str(&format!(
            "; incomplete: {} recorded no KERNEL zone (it did not finish)",
            unfinished.join(", ")
        ));
    }
    // The profiler dominates a core: its stalls are at least half of that core's kernel time.
    if bound_by == "profiler"
        || times
            .iter()
            .any(|t| t.kernel_ns > 0.0 && 2.0 * t.profiler_stall_ns >= t.kernel_ns)
    {
        evidence.push_str(&format!(
            "; the profile measures the profiler: {PROFILER_ADVICE}"
        ));
    }
    Some(Verdict {
        risc: bound.risc.to_string(),
        stage: bound.stage.clone(),
        active_pct: pct(bound.active_ns(), span),
        busy_pct: pct(bound.busy_ns, span),
        profiler_pct: pct(stall, span),
        bound_by: bound_by.to_string(),
        resource,
        unit: None,
        evidence,
    })
}

/// The CBs the waits name, with who produces and consumes each.
pub(super) fn cb_links(times: &[RiscTime], span: f64) -> Vec<CbLink> {
    let mut cbs: BTreeMap<u32, CbLink> = BTreeMap::new();
    for t in times {
        for (w, ns) in &t.by_wait {
            let (cb, producer) = match *w {
                Wait::CbBack(i) => (i, true),
                Wait::CbFront(i) => (i, false),
                _ => continue,
            };
            let l = cbs.entry(cb).or_insert(CbLink {
                cb,
                producer: None,
                consumer: None,
                producer_wait_pct: 0.0,
                consumer_wait_pct: 0.0,
            });
            if producer {
                l.producer = Some(t.stage.clone());
                l.producer_wait_pct += pct(*ns, span);
            } else {
                l.consumer = Some(t.stage.clone());
                l.consumer_wait_pct += pct(*ns, span);
            }
        }
    }
    cbs.into_values().collect()
}

impl Verdict {
    /// Whether `tile`'s own verdict names another RISC than this one (the op's): a
    /// disagreeing tile ([`OpAnalysis::disagreeing_tiles`]).
    pub(crate) fn disagrees(&self, tile: &TileAnalysis) -> bool {
        tile.verdict.as_ref().is_some_and(|tv| tv.risc != self.risc)
    }

    /// "math (TRISC_1)", "NoC read barrier (reader on BRISC)", "the FPU (math on TRISC_1)"
    /// or "the profiler (reader on BRISC)".
    pub(crate) fn bound_by_stage(&self) -> String {
        if let Some(u) = &self.unit {
            return format!("the {u} ({} on {})", self.stage, self.risc);
        }
        match (&self.resource, self.bound_by.as_str()) {
            (Some(r), _) => format!("{r} ({} on {})", self.stage, self.risc),
            (None, "profiler") => format!("the profiler ({} on {})", self.stage, self.risc),
            _ => format!("{} ({})", self.stage, self.risc),
        }
    }
}
