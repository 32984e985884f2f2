//! The op graph rendered to SVG from its DOT, in pure Rust: `layout-rs` parses the DOT,
//! lays the graph out top to bottom (ranks, crossing reduction, placement) and draws it.
//!
//! Layout is far from linear in the number of ops, so a graph of more than [`MAX_SVG_OPS`]
//! ops, or more than [`MAX_SVG_CELLS`] boxes and arrow bends to place, is drawn as its
//! critical path only (the legend and an issue say so; the DOT keeps
//! every op). The layout crate is not ours: should it panic on some graph, the panic is
//! caught and becomes an error naming the file, never an abort of the whole readout.

use super::{dot, OpGraph, MAX_SVG_CELLS, MAX_SVG_OPS};
use layout::backends::svg::SVGWriter;
use layout::gv::{DotParser, GraphBuilder};
use std::collections::HashSet;

/// The graph as an SVG document, and whether it draws only the critical path (the graph
/// had more than [`MAX_SVG_OPS`] ops or `MAX_SVG_CELLS` cells to place: then the path's
/// first [`MAX_SVG_OPS`] ops); an error says why it could not be drawn.
pub fn render_svg(g: &OpGraph) -> Result<(String, bool), String> {
    let only: Option<HashSet<usize>> = (g.nodes.len() > MAX_SVG_OPS
        || g.layout_cells() > MAX_SVG_CELLS)
        .then(|| g.critical.iter().take(MAX_SVG_OPS).copied().collect());
    let text = dot::to_dot_of(g, only.as_ref());
    let svg = dot_to_svg(&text)?;
    Ok((svg, only.is_some()))
}

/// Renders a DOT text with `layout-rs`.
pub(super) fn dot_to_svg(text: &str) -> Result<String, String> {
    let graph = DotParser::new(text)
        .process()
        .map_err(|e| format!("the op graph's DOT does not parse: {e}"))?;
    std::panic::catch_unwind(move || {
        let mut builder = GraphBuilder::new();
        builder.visit_graph(&graph);
        let mut visual = builder.get();
        let mut writer = SVGWriter::new();
        visual.do_it(false, false, false, &mut writer);
        writer.finalize()
    })
    .map_err(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        format!("the layout of the op graph failed ({why})")
    })
}
