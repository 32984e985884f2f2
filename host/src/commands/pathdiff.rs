//! `ttprof diff` on critical paths: which segment of each op's path grew. Reads each run
//! folder's `ttprof_analysis.json` (`ops[].critical_path`), matches ops as the zone diff
//! does (op code and position among the ops of that code), sums each path's cycles per
//! (core, kind, resource) and names the one that grew most.

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One op's path in both runs.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PathChange {
    /// `CODE` or `CODE #k`.
    pub op: String,
    /// The path's cycles in the base run.
    pub(crate) base_cycles: u64,
    /// In the new run.
    pub(crate) new_cycles: u64,
    /// The part of the path that grew most: (what, base cycles, new cycles); `None` when
    /// nothing grew.
    pub grew: Option<(String, u64, u64)>,
}

/// Per op label, the cycles of its path per part, and its total.
type Paths = Vec<(String, BTreeMap<String, u64>, u64)>;

/// What [`load`] reads of `ttprof_analysis.json`.
#[derive(serde::Deserialize)]
struct Analysis {
    ops: Vec<Op>,
}

/// What [`load`] reads of an op of `ttprof_analysis.json` (`Value`s: a field of another type
/// reads as missing, as it did when the whole file was one value).
#[derive(serde::Deserialize)]
struct Op {
    #[serde(default)]
    op: Value,
    #[serde(default)]
    critical_path: Value,
}

/// The critical paths of the run in `dir` (`None` without `ttprof_analysis.json` or paths).
pub fn load(dir: &Path) -> Option<Paths> {
    let path = dir.join(crate::sink::analysis::FILE_NAME);
    let (file, _) = crate::files::open_regular(
        &path,
        "an analysis",
        "read",
        false,
        &crate::inputs::Inputs::none(),
    )
    .ok()?;
    // Only each op's name and path are kept as they are read: the rest (every tile's
    // times, 1.4 KB a ring as a JSON value: 208 MB for 150,000 rings) is passed over.
    let a: Analysis = serde_json::from_reader(std::io::BufReader::new(file)).ok()?;
    let ops = &a.ops;
    let mut total: HashMap<&str, u32> = HashMap::new();
    for o in ops {
        *total.entry(o.op.as_str().unwrap_or("")).or_default() += 1;
    }
    let mut seen: HashMap<&str, u32> = HashMap::new();
    let mut out = Vec::new();
    for o in ops {
        let code = o.op.as_str().unwrap_or("");
        let k = seen.entry(code).or_default();
        *k += 1;
        let label = if total[code] > 1 {
            format!("{code} #{k}")
        } else {
            code.to_string()
        };
        let Some(c) = Some(&o.critical_path).filter(|c| c.is_object()) else {
            continue;
        };
        let mut parts: BTreeMap<String, u64> = BTreeMap::new();
        for s in c["segments"].as_array().into_iter().flatten() {
            let core = &s["core"];
            let mut what = format!(
                "{} ({} {}) {}",
                core["stage"].as_str().unwrap_or("?"),
                core["risc"].as_str().unwrap_or("?"),
                core["tile"].as_str().unwrap_or("?"),
                s["kind"].as_str().unwrap_or("?")
            );
            if let Some(r) = s["resource"].as_str() {
                what.push_str(&format!(" on {r}"));
            }
            let p = parts.entry(what).or_default();
            *p = p.saturating_add(s["cycles"].as_u64().unwrap_or(0));
        }
        out.push((label, parts, c["cycles"].as_u64().unwrap_or(0)));
    }
    (!out.is_empty()).then_some(out)
}

/// Each op in both runs with the part of its path that grew most.
pub fn compare(base: &Paths, new: &Paths) -> Vec<PathChange> {
    let mut out = Vec::new();
    for (op, nparts, ncycles) in new {
        let Some((_, bparts, bcycles)) = base.iter().find(|b| &b.0 == op) else {
            continue;
        };
        let grew = nparts
            .iter()
            .map(|(k, &n)| (k, bparts.get(k).copied().unwrap_or(0), n))
            .filter(|(_, b, n)| n > b)
            .max_by_key(|(k, b, n)| (n - b, std::cmp::Reverse(k.to_string())))
            .map(|(k, b, n)| (k.clone(), b, n));
        out.push(PathChange {
            op: op.clone(),
            base_cycles: *bcycles,
            new_cycles: *ncycles,
            grew,
        });
    }
    out
}

/// The changes as text: a line per op.
pub fn render(changes: &[PathChange]) -> String {
    crate::printable::printable(&render_raw(changes)).into_owned()
}

/// [`render`] before names are made printable.
fn render_raw(changes: &[PathChange]) -> String {
    let mut t = String::new();
    if changes.is_empty() {
        return t;
    }
    t.push_str("critical paths (ttprof_analysis.json):\n");
    for c in changes {
        let pct = if c.base_cycles > 0 {
            100.0 * (c.new_cycles as f64 - c.base_cycles as f64) / c.base_cycles as f64
        } else {
            0.0
        };
        t.push_str(&format!(
            "  {}: {} -> {} cycles ({pct:+.1}%)",
            c.op, c.base_cycles, c.new_cycles
        ));
        match &c.grew {
            Some((what, b, n)) => t.push_str(&format!(
                "; grew most: {what} {b} -> {n} cycles (+{})\n",
                n - b
            )),
            None => t.push_str("; no part of it grew\n"),
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_part_that_grew_most_is_named() {
        let p = |busy: u64, wait: u64| -> Paths {
            vec![(
                "Add".into(),
                BTreeMap::from([
                    ("math busy".to_string(), busy),
                    ("writer wait".to_string(), wait),
                ]),
                busy + wait,
            )]
        };
        let c = compare(&p(100, 50), &p(180, 60));
        assert_eq!(
            c,
            [PathChange {
                op: "Add".into(),
                base_cycles: 150,
                new_cycles: 240,
                grew: Some(("math busy".into(), 100, 180)),
            }]
        );
        assert!(render(&c).contains(
            "Add: 150 -> 240 cycles (+60.0%); grew most: math busy 100 -> 180 cycles (+80)"
        ));
        assert!(render(&compare(&p(100, 50), &p(90, 50))).contains("no part of it grew"));
    }
}
