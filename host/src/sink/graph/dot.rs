//! The op graph as Graphviz DOT: one box per op (name, op and device, device duration), one
//! arrow per producer-consumer pair labelled with the tensor ids it carries, the critical
//! path in red and thick, and a legend node that says what the colours mean, the critical
//! path's total and how many ops have no tensor ids (so no edges). Comments at the top say
//! the same for a reader of the text.

use super::OpGraph;
use std::collections::HashSet;
use std::fmt::Write;

/// Colour of the critical path's boxes' and arrows' lines.
pub(super) const CRITICAL: &str = "#d62728";
/// Fill of the critical path's boxes.
pub(super) const CRITICAL_FILL: &str = "#fde0dd";

/// The whole graph as DOT.
pub fn to_dot(g: &OpGraph) -> String {
    to_dot_of(g, None)
}

/// The graph as DOT, drawing only the ops in `only` (part of the critical path) and the
/// critical path's edges between them when given; the legend says how many were left out.
pub(super) fn to_dot_of(g: &OpGraph, only: Option<&HashSet<usize>>) -> String {
    let shown = |i: usize| only.is_none_or(|s| s.contains(&i));
    let critical = g.critical_set();
    let critical_edges = g.critical_edges();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// ttprof op graph: {} ops, {} dependencies (producer -> consumer by tensor id)",
        g.nodes.len(),
        g.edges.len()
    );
    let _ = writeln!(
        s,
        "// critical path: {} ops, {} of device kernel time",
        g.critical.len(),
        duration(g.critical_ns)
    );
    if g.without_ids > 0 {
        let _ = writeln!(
            s,
            "// {} ops carry no tensor ids (an op log written without them): they have no edges",
            g.without_ids
        );
    }
    if g.in_cycles > 0 {
        let _ = writeln!(
            s,
            "// {} ops are caught in a dependency cycle: left out of the critical path",
            g.in_cycles
        );
    }
    if let Some(only) = only {
        let _ = writeln!(
            s,
            "// drawn: {} of the {} ops (the critical path)",
            only.len(),
            g.nodes.len()
        );
    }
    s.push_str("digraph ops {\n");
    for (i, n) in g.nodes.iter().enumerate().filter(|(i, _)| shown(*i)) {
        let time = match n.duration_ns {
            Some(d) => duration(d),
            None => "no device time".into(),
        };
        let label = format!(
            "{}\nop {} (device {})\n{time}",
            n.op_code, n.run_id, n.device
        );
        let look = if critical.contains(&i) {
            format!(", color=\"{CRITICAL}\", fillcolor=\"{CRITICAL_FILL}\", style=filled, width=3")
        } else {
            String::new()
        };
        let _ = writeln!(s, "  op{i} [shape=box, label={}{look}];", quote(&label));
    }
    // Drawing part of the graph (the critical path), only its own arrows: others between its
    // ops may cross many ranks, which is what made the whole too costly to lay out.
    let drawn = |from: usize, to: usize| match only {
        None => true,
        Some(_) => shown(from) && shown(to) && critical_edges.contains(&(from, to)),
    };
    for e in g.edges.iter().filter(|e| drawn(e.from, e.to)) {
        let ids: Vec<String> = e.tensors.iter().map(|t| format!("t{t}")).collect();
        let look = if critical_edges.contains(&(e.from, e.to)) {
            format!(", color=\"{CRITICAL}\", penwidth=3")
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "  op{} -> op{} [label={}{look}];",
            e.from,
            e.to,
            quote(&ids.join(", "))
        );
    }
    let mut legend = vec![
        format!(
            "critical path (red): {} ops, {}",
            g.critical.len(),
            duration(g.critical_ns)
        ),
        "box: op, op id, device kernel duration".to_string(),
        "arrow: consumer reads tensors (ids) the producer wrote".to_string(),
    ];
    if g.without_ids > 0 {
        legend.push(format!(
            "{} ops carry no tensor ids: no edges",
            g.without_ids
        ));
    }
    if g.in_cycles > 0 {
        legend.push(format!("{} ops in a dependency cycle", g.in_cycles));
    }
    if let Some(only) = only {
        legend.push(format!(
            "drawn: the critical path only ({} of {} ops: too many to lay out; the DOT has all)",
            only.len(),
            g.nodes.len()
        ));
    }
    let _ = writeln!(
        s,
        "  legend [shape=box, label={}, color=\"gray\"];",
        quote(&legend.join("\n"))
    );
    s.push_str("}\n");
    s
}

/// A DOT string: quotes and backslashes escaped, newlines as `\n`, other control
/// characters (a NUL would end the parser's string) as spaces.
fn quote(text: &str) -> String {
    let mut q = String::with_capacity(text.len() + 2);
    q.push('"');
    for c in text.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            c if c.is_control() => q.push(' '),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// `12.345 us` (ns below 1 us).
pub(super) fn duration(ns: f64) -> String {
    if ns < 1000.0 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.3} us", ns / 1e3)
    } else {
        format!("{:.3} ms", ns / 1e6)
    }
}
