//! The op graph as a sink: built from the model's ops and their device times in
//! [`Sink::begin`] (it needs no zones), written as `ttprof_ops.dot` and `ttprof_ops.svg`
//! at the end.

use super::{
    render_svg, to_dot, OpGraph, DOT_FILE_NAME, MAX_SVG_CELLS, MAX_SVG_OPS, SVG_FILE_NAME,
};
use crate::atomic::write_atomic;
use crate::error::Result;
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::profile::{Profile, RingView};
use crate::sink::{Finished, Sink};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes the op graph into a directory.
pub(crate) struct GraphSink {
    dir: PathBuf,
    /// The command's input guard: no file is written over one of its inputs.
    inputs: Inputs,
    /// The graph (after [`Sink::begin`]).
    pub graph: Option<OpGraph>,
}

impl GraphSink {
    /// The op graph's files in `dir`, never written over one of `inputs`.
    pub(crate) fn new(dir: &Path, inputs: &Inputs) -> GraphSink {
        GraphSink {
            dir: dir.to_path_buf(),
            inputs: inputs.clone(),
            graph: None,
        }
    }
}

impl Sink for GraphSink {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        self.graph = Some(OpGraph::of_profile(p));
        Ok(())
    }

    fn wants_zones(&self) -> bool {
        false
    }

    fn takes_pieces(&self) -> bool {
        true
    }

    fn ring(&mut self, _: &Profile, _: &RingView) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self, _: &Profile) -> Result<Finished> {
        let Some(g) = &self.graph else {
            return Ok(Finished::default());
        };
        let dot_path = self.dir.join(DOT_FILE_NAME);
        let svg_path = self.dir.join(SVG_FILE_NAME);
        write_atomic(&dot_path, &self.inputs, |w| {
            w.write_all(to_dot(g).as_bytes())
        })?;
        let mut issues = g.issues.clone();
        let mut files = vec![dot_path.clone()];
        match render_svg(g) {
            Ok((svg, partial)) => {
                if partial {
                    issues.push(Issue::warning(
                        None,
                        format!(
                            "{}: {} ops ({} cells with the arrows' bends) are more than the {MAX_SVG_OPS} ops or \
                             {MAX_SVG_CELLS} cells the SVG lays out: it draws the critical path only ({} of its {} \
                             ops); {} has every op",
                            svg_path.display(),
                            g.nodes.len(),
                            g.layout_cells(),
                            g.critical.len().min(MAX_SVG_OPS),
                            g.critical.len(),
                            dot_path.display()
                        ),
                    ));
                }
                write_atomic(&svg_path, &self.inputs, |w| w.write_all(svg.as_bytes()))?;
                files.push(svg_path);
            }
            Err(why) => issues.push(Issue::error(
                None,
                format!(
                    "{}: not written: {why}; {} has the graph",
                    svg_path.display(),
                    dot_path.display()
                ),
            )),
        }
        Ok(Finished { files, issues })
    }
}
