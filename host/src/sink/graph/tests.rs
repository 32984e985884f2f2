use super::*;
use crate::issue::Severity;

fn op(run: u32, code: &str, ns: f64, inputs: &[u64], outputs: &[u64]) -> OpNode {
    OpNode {
        device: 0,
        run_id: run,
        op_code: code.into(),
        duration_ns: Some(ns),
        inputs: inputs.iter().map(|&i| Some(i)).collect(),
        outputs: outputs.iter().map(|&i| Some(i)).collect(),
    }
}

fn pairs(g: &OpGraph) -> Vec<(usize, usize)> {
    g.edges.iter().map(|e| (e.from, e.to)).collect()
}

/// All text of the SVG's `<text>` elements, lines joined by spaces.
fn svg_texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| {
            n.descendants()
                .filter(|d| d.is_text())
                .filter_map(|d| d.text())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn edges_link_each_producer_to_its_consumers_by_tensor_id() {
    // x(1) -> A -> t2 -> B -> t3 -> C, and C also reads t2 (two edges into C).
    let g = OpGraph::build(vec![
        op(1, "A", 10.0, &[1], &[2]),
        op(2, "B", 10.0, &[2], &[3]),
        op(3, "C", 10.0, &[3, 2, 2], &[4]),
    ]);
    assert_eq!(pairs(&g), [(0, 1), (0, 2), (1, 2)]);
    assert_eq!(
        g.edges[1].tensors,
        [2, 2],
        "one edge per pair, every tensor read named"
    );
    assert_eq!(g.edges[2].tensors, [3]);
    assert!(g.issues.is_empty(), "{:?}", g.issues);
    assert_eq!(g.without_ids, 0);
    assert_eq!(g.critical, [0, 1, 2]);
    assert_eq!(g.critical_ns, 30.0);
}

/// A run on two chips logs every op once per chip with the same tensor ids: each chip's
/// tensors are its own (no duplicate-writer warning, no edge across chips).
#[test]
fn each_device_has_its_own_tensors() {
    let on = |device, n: OpNode| OpNode { device, ..n };
    let g = OpGraph::build(vec![
        on(0, op(1, "A", 10.0, &[1], &[2])),
        on(1, op(1, "A", 10.0, &[1], &[2])),
        on(0, op(2, "B", 10.0, &[2], &[3])),
        on(1, op(2, "B", 10.0, &[2], &[3])),
        on(1, op(3, "A", 10.0, &[1], &[2])),
    ]);
    assert_eq!(pairs(&g), [(0, 2), (1, 3)]);
    let warned: Vec<&str> = g.issues.iter().map(|i| i.what.as_str()).collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains(
            "tensor 2 (device 1) is written by A (op 1, device 1) and again by A (op 3, device 1)"
        ),
        "{warned:?}"
    );
}

#[test]
fn the_critical_path_of_a_diamond_takes_the_longer_branch() {
    let g = OpGraph::build(vec![
        op(1, "Split", 10.0, &[], &[1, 2]),
        op(2, "Short", 5.0, &[1], &[3]),
        op(3, "Long", 20.0, &[2], &[4]),
        op(4, "Join", 1.0, &[3, 4], &[5]),
    ]);
    assert_eq!(pairs(&g), [(0, 1), (0, 2), (1, 3), (2, 3)]);
    assert_eq!(g.critical, [0, 2, 3]);
    assert_eq!(g.critical_ns, 31.0);
    // Make the other branch the longer one: the path follows.
    let mut nodes = g.nodes.clone();
    nodes[1].duration_ns = Some(25.0);
    let g = OpGraph::build(nodes);
    assert_eq!(g.critical, [0, 1, 3]);
    assert_eq!(g.critical_ns, 36.0);
    // An op without device time weighs nothing but still links the path.
    let mut nodes = g.nodes.clone();
    nodes[3].duration_ns = None;
    let g = OpGraph::build(nodes);
    assert_eq!((g.critical.clone(), g.critical_ns), (vec![0, 1, 3], 35.0));
    let dot = to_dot(&g);
    assert!(dot.contains("no device time"), "{dot}");
}

#[test]
fn a_cycle_is_reported_with_its_ops_and_left_out_of_the_critical_path() {
    let g = OpGraph::build(vec![
        op(1, "A", 100.0, &[2], &[1]),
        op(2, "B", 100.0, &[1], &[2]),
        op(3, "Free", 7.0, &[9], &[10]),
        op(4, "AfterB", 1.0, &[2], &[11]),
    ]);
    assert_eq!(g.in_cycles, 3, "the cycle and the op behind it");
    let errors: Vec<&Issue> = g
        .issues
        .iter()
        .filter(|i| i.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{:?}", g.issues);
    let what = &errors[0].what;
    assert!(
        what.contains("cycle")
            && what.contains("A (op 1, device 0)")
            && what.contains("B (op 2, device 0)"),
        "{what}"
    );
    assert!(
        !what.contains("AfterB (op 4"),
        "only the cycle's ops are named: {what}"
    );
    assert_eq!(errors[0].count, 3);
    assert_eq!(g.critical, [2], "the longest path outside the cycle");
    assert_eq!(g.critical_ns, 7.0);
    assert!(to_dot(&g).contains("3 ops are caught in a dependency cycle"));
}

#[test]
fn an_op_reading_its_own_output_or_a_tensor_written_twice_is_named() {
    let g = OpGraph::build(vec![op(1, "InPlace", 5.0, &[1], &[1])]);
    assert!(g.edges.is_empty());
    assert_eq!(g.issues.len(), 1);
    assert!(
        g.issues[0]
            .what
            .contains("InPlace (op 1, device 0) reads its own output"),
        "{:?}",
        g.issues
    );
    assert_eq!(g.critical, [0]);

    let g = OpGraph::build(vec![
        op(1, "First", 5.0, &[], &[1]),
        op(2, "Second", 5.0, &[], &[1]),
        op(3, "Reader", 5.0, &[1], &[]),
    ]);
    assert_eq!(pairs(&g), [(0, 2)], "the first writer is the producer");
    assert_eq!(g.issues.len(), 1);
    let what = &g.issues[0].what;
    assert!(
        what.contains(
            "tensor 1 is written by First (op 1, device 0) and again by Second (op 2, device 0)"
        ),
        "{what}"
    );
}

#[test]
fn ops_without_tensor_ids_have_no_edges_and_the_dot_says_so() {
    let mut a = op(1, "Old", 5.0, &[], &[]);
    a.inputs = vec![None, None];
    a.outputs = vec![None];
    let mut b = op(2, "Older", 9.0, &[], &[]);
    b.inputs = vec![None];
    let c = op(3, "New", 1.0, &[], &[42]);
    let g = OpGraph::build(vec![a, b, c]);
    assert!(g.edges.is_empty());
    assert_eq!(g.without_ids, 2);
    assert_eq!(g.critical, [1], "without edges the path is the longest op");
    let dot = to_dot(&g);
    assert!(dot.contains("// 2 ops carry no tensor ids"), "{dot}");
    assert!(
        dot.contains("2 ops carry no tensor ids: no edges"),
        "the legend says it too: {dot}"
    );
    assert!(!dot.contains(" -> op"), "{dot}");
}

#[test]
fn the_dot_highlights_the_critical_path_and_the_svg_draws_every_op() {
    let g = OpGraph::build(vec![
        op(1, "Split", 10.0, &[], &[1, 2]),
        op(2, "Short", 5.0, &[1], &[3]),
        op(3, "Long", 20_000.0, &[2], &[4]),
        op(4, "Join", 1.0, &[3, 4], &[5]),
    ]);
    let dot = to_dot(&g);
    assert!(
        dot.contains("op0 -> op2 [label=\"t2\", color=\"#d62728\", penwidth=3];"),
        "{dot}"
    );
    assert!(dot.contains("op0 -> op1 [label=\"t1\"];"), "{dot}");
    assert!(
        dot.contains("op2 [shape=box, label=\"Long\\nop 3 (device 0)\\n20.000 us\", color="),
        "{dot}"
    );
    assert!(
        dot.contains("critical path (red): 3 ops, 20.011 us"),
        "{dot}"
    );
    let (svg, partial) = render_svg(&g).unwrap();
    assert!(!partial);
    let texts = svg_texts(&svg);
    for (name, run) in [("Split", 1), ("Short", 2), ("Long", 3), ("Join", 4)] {
        assert!(
            texts
                .iter()
                .any(|t| t.contains(name) && t.contains(&format!("op {run} (device 0)"))),
            "{name} is drawn: {texts:?}"
        );
    }
    assert!(svg.contains("#d62728"), "the critical path is drawn in red");
}

#[test]
fn a_tensor_read_across_many_ranks_makes_the_svg_draw_the_critical_path_only() {
    // A chain of 100 ops, each also reading the first op's output: few ops, but every arrow
    // from the first op crosses up to 99 ranks.
    let nodes: Vec<OpNode> = (0..100u64)
        .map(|i| {
            op(
                i as u32,
                "Chain",
                1.0,
                &(if i == 0 { vec![] } else { vec![i, 1] }),
                &[i + 1],
            )
        })
        .collect();
    let g = OpGraph::build(nodes);
    assert_eq!(g.depth[99], 99);
    assert_eq!(g.layout_cells(), 100 + (1..99).sum::<usize>());
    let (svg, partial) = render_svg(&g).unwrap();
    assert!(partial);
    assert_eq!(
        svg_texts(&svg)
            .iter()
            .filter(|t| t.contains("Chain"))
            .count(),
        100,
        "the path is every op"
    );
    assert!(svg_texts(&svg)
        .iter()
        .any(|t| t.contains("too many to lay out")));
    // The same chain without the long arrows is drawn whole.
    let nodes: Vec<OpNode> = (0..100u64)
        .map(|i| op(i as u32, "Chain", 1.0, &[i], &[i + 1]))
        .collect();
    let g = OpGraph::build(nodes);
    assert_eq!(g.layout_cells(), 100);
    assert!(!render_svg(&g).unwrap().1);
}

#[test]
fn hostile_op_names_stay_inside_their_labels() {
    let g = OpGraph::build(vec![
        op(1, "a\"b\\c\n<d>&\0e", 5.0, &[], &[1]),
        op(2, "}; digraph x {", 5.0, &[1], &[]),
    ]);
    let dot = to_dot(&g);
    let parsed = layout::gv::DotParser::new(&dot).process();
    assert!(parsed.is_ok(), "{dot}");
    let (svg, _) = render_svg(&g).unwrap();
    let texts = svg_texts(&svg).join(" ");
    assert!(
        texts.contains("a\"b\\c") && texts.contains("<d>& e"),
        "{texts}"
    );
    assert!(texts.contains("}; digraph x {"), "{texts}");
}

#[test]
fn a_hundred_thousand_ops_build_and_draw_the_critical_path_only() {
    // A chain of 100k ops with a side input every op: linear work, no recursion.
    let n = 100_000u64;
    let nodes: Vec<OpNode> = (0..n)
        .map(|i| op(i as u32, "Step", 1.0, &[i, 2 * n + i], &[i + 1]))
        .collect();
    let g = OpGraph::build(nodes);
    assert_eq!(g.edges.len(), n as usize - 1);
    assert_eq!(g.critical.len(), n as usize);
    assert_eq!(g.critical_ns, n as f64);
    let dot = to_dot(&g);
    assert_eq!(dot.matches(" -> op").count(), n as usize - 1);
    let (svg, partial) = render_svg(&g).unwrap();
    assert!(partial);
    assert_eq!(
        svg_texts(&svg)
            .iter()
            .filter(|t| t.contains("Step"))
            .count(),
        MAX_SVG_OPS
    );
    // A long cycle does not hang the cycle report either.
    let mut nodes: Vec<OpNode> = (0..n)
        .map(|i| op(i as u32, "Ring", 1.0, &[i], &[i + 1]))
        .collect();
    nodes[0].inputs = vec![Some(n)];
    let g = OpGraph::build(nodes);
    assert_eq!(g.in_cycles, n as usize);
    assert!(g.critical.is_empty());
    assert!(
        g.issues[0].what.contains("and 99992 more"),
        "{}",
        g.issues[0].what
    );
    // Every op writing the same tensors and reading its own: a few bounded issues, not 100k names.
    let nodes: Vec<OpNode> = (0..n)
        .map(|i| op(i as u32, "Same", 1.0, &[1], &[1, 2 + i % 7]))
        .collect();
    let g = OpGraph::build(nodes);
    assert_eq!(g.issues.len(), MAX_NAMED + 2, "{:?}", g.issues);
    assert!(
        g.issues.iter().all(|i| i.what.len() < 1000),
        "{:?}",
        g.issues
    );
    assert_eq!(
        g.issues[0].count,
        n - 1,
        "tensor 1: every op after the first rewrote it"
    );
    assert!(
        g.issues[MAX_NAMED]
            .what
            .starts_with("op graph: 3 more tensor ids"),
        "{}",
        g.issues[MAX_NAMED].what
    );
}
