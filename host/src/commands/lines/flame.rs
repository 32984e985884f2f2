//! Folded stacks (`ttprof_cycles.folded`) and their flame graph (`ttprof_flame.svg`, made
//! by `inferno`). A stack is `op;RISC;zone Z;outer function;...;inlined function;file:line;cause`
//! (`zone Z`: the innermost zone, left out by profiles without the zone split) and its
//! count the cycles; the folded file is what `inferno-flamegraph`, `flamegraph.pl`
//! and speedscope read.

use super::symbolize::Names;
use super::{Flavour, LineProfile};
use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// A frame name safe in a folded line (`;` separates frames, the last space the count).
fn clean(s: &str) -> String {
    s.replace(';', ":").replace(['\n', '\r'], " ")
}

pub(super) fn folded(p: &LineProfile, names: &Names, flavour: &Flavour) -> String {
    let mut stacks: BTreeMap<String, u64> = BTreeMap::new();
    for (key, k) in &p.kernels {
        for (zone, pcs) in k.by_zone() {
            for (&pc, c) in pcs {
                let info = names.get(&key.elf, pc);
                let mut stack = format!("{};{}", clean(&key.op), key.risc);
                if let Some(zone) = zone {
                    stack.push_str(";zone ");
                    stack.push_str(&clean(zone));
                }
                for f in &info.frames {
                    stack.push(';');
                    stack.push_str(&clean(&f.function));
                }
                stack.push(';');
                stack.push_str(&clean(&info.leaf().location()));
                for (i, &n) in c.iter().enumerate() {
                    if n > 0 {
                        *stacks
                            .entry(format!("{stack};[{}]", (flavour.cause)(i)))
                            .or_default() += n;
                    }
                }
            }
        }
    }
    let mut s = String::new();
    for (stack, n) in stacks {
        s.push_str(&stack);
        s.push(' ');
        s.push_str(&n.to_string());
        s.push('\n');
    }
    s
}

pub(super) fn svg(folded: &str, flavour: &Flavour) -> Result<Vec<u8>> {
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = flavour.title.into();
    opt.subtitle =
        Some("op ; RISC ; zone ; functions (inlined frames included) ; file:line ; [cause]".into());
    opt.count_name = flavour.count.into();
    let mut out = Vec::new();
    if folded.trim().is_empty() {
        // inferno refuses an empty profile; a page that says so is still a valid SVG.
        out.extend_from_slice(
            b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"40\">\
              <text x=\"10\" y=\"25\">nothing recorded</text></svg>\n",
        );
        return Ok(out);
    }
    inferno::flamegraph::from_lines(&mut opt, folded.lines(), &mut out)
        .map_err(|e| Error::Internal(format!("flame graph: {e}")))?;
    Ok(out)
}
