//! Op graph benchmark: how the op graph's build (edges by tensor id, topological order,
//! critical path) and its DOT scale with the number of ops, as a ratio in the same run: the
//! time per op at 100k ops over the time per op at 10k (1.0 is linear). Also the time to lay
//! out and draw the SVG at its cap, [`ttprof::sink::graph::MAX_SVG_OPS`] ops.
//!
//! `cargo run --release -p ttprof --features bench --bin graph-bench [-- --out FILE]`
//!
//! The graphs are random DAGs shaped like a model's: every op reads two tensors, each the
//! output of one of the previous 64 ops (or a fresh input), and writes one. Each size runs
//! 5 times; the best run counts. Writes `build_ns_per_op_{small,large}`, `large_vs_small`
//! (the ratio), `dot_ns_per_op_large`, `svg_ms_at_cap` and context as JSON, by default to
//! `target/bench/graph.json` in the workspace.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;
use ttprof::sink::graph::{render_svg, to_dot, OpGraph, OpNode, MAX_SVG_OPS};
use ttprof::testing::Rng;

const RUNS: usize = 5;
const SMALL: usize = 10_000;
const LARGE: usize = 100_000;

fn main() {
    // Under the current folder (run it from the checkout's root).
    let mut out = PathBuf::from("target/bench/graph.json");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--out", Some(v)) => out = v.into(),
            _ => fail(&format!(
                "unknown argument {a}; usage: graph-bench [--out FILE]"
            )),
        }
    }
    let (small, _) = build_ns_per_op(SMALL);
    let (large, graph) = build_ns_per_op(LARGE);
    let dot = best_of(|| {
        black_box(to_dot(black_box(&graph)));
    }) / LARGE as f64;
    let cap = OpGraph::build(ops(MAX_SVG_OPS, 2));
    let svg_ms = best_of(|| {
        black_box(render_svg(black_box(&cap)).unwrap_or_else(|e| fail(&e)));
    }) / 1e6;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "build: {small:.0} ns/op at {SMALL} ops, {large:.0} ns/op at {LARGE} ops: {:.2}x per op",
        large / small
    );
    println!(
        "DOT: {dot:.0} ns/op at {LARGE} ops; SVG of {MAX_SVG_OPS} ops ({} cells): {svg_ms:.1} ms; load average {}",
        cap.layout_cells(),
        load.trim()
    );
    let json = serde_json::json!({
        "build_ns_per_op_small": small,
        "build_ns_per_op_large": large,
        "large_vs_small": large / small,
        "small_ops": SMALL,
        "large_ops": LARGE,
        "edges_large": graph.edges.len(),
        "critical_path_ops_large": graph.critical.len(),
        "dot_ns_per_op_large": dot,
        "svg_ops": MAX_SVG_OPS,
        "svg_ms_at_cap": svg_ms,
        "svg_cells": cap.layout_cells(),
        "runs": RUNS,
        "loadavg": load.trim(),
    });
    if let Some(dir) = out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let text = serde_json::to_string_pretty(&json).unwrap_or_default();
    if let Err(e) = ttprof::atomic::write_atomic(&out, &ttprof::inputs::Inputs::none(), |w| {
        std::io::Write::write_all(w, text.as_bytes())
    }) {
        fail(&e.to_string());
    }
    println!("wrote {}", out.display());
}

/// Best build time per op over `RUNS` runs at `n` ops, and the last graph built.
fn build_ns_per_op(n: usize) -> (f64, OpGraph) {
    let nodes = ops(n, 1);
    let mut graph = OpGraph::default();
    let ns = best_of(|| graph = OpGraph::build(black_box(nodes.clone())));
    (ns / n as f64, graph)
}

/// `n` ops of a random DAG (seeded by `seed`): op `i` writes tensor `i`, reads two tensors
/// from the previous 64 ops' outputs, or fresh ones (ids past `n`).
fn ops(n: usize, seed: u64) -> Vec<OpNode> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let duration = 1000.0 + rng.below(10_000) as f64;
            let inputs = (0..2)
                .map(|_| {
                    let back = rng.below(65) as usize;
                    Some(if back == 0 || back > i {
                        (n + i) as u64
                    } else {
                        (i - back) as u64
                    })
                })
                .collect();
            OpNode {
                device: 0,
                run_id: i as u32 + 1,
                op_code: "Op".into(),
                duration_ns: Some(duration),
                inputs,
                outputs: vec![Some(i as u64)],
            }
        })
        .collect()
}

/// The best time in ns of `RUNS` runs of `f`.
fn best_of(mut f: impl FnMut()) -> f64 {
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e9
        })
        .fold(f64::MAX, f64::min)
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}
