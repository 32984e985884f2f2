//! `ttprof_lines.parquet`: one row per (run, op, RISC, kernel, zone, pc, cause) that took
//! cycles, summed over the op's tiles.
//!
//! | column | type | meaning |
//! | --- | --- | --- |
//! | `run` | uint32 | run (launch) id |
//! | `op` | string | the op's name |
//! | `risc` | string | `BRISC` .. `TRISC2` |
//! | `kernel` | string | the kernel ELF's file name |
//! | `zone` | string | the innermost zone open at those cycles (`(no zone)` outside every zone; empty for a sampled profile) |
//! | `pc` | uint32 | the instruction's address |
//! | `function` | string | the innermost function outside Rust's core/alloc/std |
//! | `file`, `line` | string, uint32 | its source line (empty, 0 when unknown) |
//! | `stack` | string | every frame, outermost first, `;`-separated |
//! | `cause` | string | the cause's name as in `ttprof_lines.txt`: `issue`, `load-use`, `store-port`, `mispredict`, `icache-miss`, `fifo-wait`, `tensix-fifo: <wait>`, `ttsync: <wait>` |
//! | `cycles` | uint64 | cycles, over the op's cores |

use super::symbolize::Names;
use super::{Flavour, LineProfile};
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt32Array, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use std::path::Path;
use std::sync::Arc;

pub(super) fn write(
    p: &LineProfile,
    names: &Names,
    path: &Path,
    flavour: &Flavour,
    inputs: &Inputs,
) -> Result<()> {
    let (mut run, mut op, mut risc, mut kernel, mut pc) = (vec![], vec![], vec![], vec![], vec![]);
    let mut zone_col: Vec<String> = vec![];
    let (mut function, mut file, mut line, mut stack, mut cause, mut cycles) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for (key, k) in &p.kernels {
        let elf_name = key
            .elf
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
        for (zone, pcs) in k.by_zone() {
            for (&addr, c) in pcs {
                let info = names.get(&key.elf, addr);
                let leaf = info.source().clone();
                let frames: Vec<String> = info
                    .frames
                    .iter()
                    .map(|f| format!("{} ({})", f.function, f.location()))
                    .collect();
                for (i, &n) in c.iter().enumerate() {
                    if n == 0 {
                        continue;
                    }
                    run.push(key.run_id);
                    op.push(key.op.clone());
                    risc.push(key.risc.name().to_string());
                    kernel.push(elf_name.clone());
                    zone_col.push(zone.unwrap_or_default().to_string());
                    pc.push(addr);
                    function.push(leaf.function.clone());
                    file.push(leaf.file.clone());
                    line.push(leaf.line);
                    stack.push(frames.join(";"));
                    cause.push((flavour.cause)(i));
                    cycles.push(n);
                }
            }
        }
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("run", DataType::UInt32, false),
        Field::new("op", DataType::Utf8, false),
        Field::new("risc", DataType::Utf8, false),
        Field::new("kernel", DataType::Utf8, false),
        Field::new("zone", DataType::Utf8, false),
        Field::new("pc", DataType::UInt32, false),
        Field::new("function", DataType::Utf8, false),
        Field::new("file", DataType::Utf8, false),
        Field::new("line", DataType::UInt32, false),
        Field::new("stack", DataType::Utf8, false),
        Field::new("cause", DataType::Utf8, false),
        Field::new(flavour.count, DataType::UInt64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from(run)),
        Arc::new(StringArray::from(op)),
        Arc::new(StringArray::from(risc)),
        Arc::new(StringArray::from(kernel)),
        Arc::new(StringArray::from(zone_col)),
        Arc::new(UInt32Array::from(pc)),
        Arc::new(StringArray::from(function)),
        Arc::new(StringArray::from(file)),
        Arc::new(UInt32Array::from(line)),
        Arc::new(StringArray::from(stack)),
        Arc::new(StringArray::from(cause)),
        Arc::new(UInt64Array::from(cycles)),
    ];
    let err = |what: String| Error::Output {
        path: path.to_path_buf(),
        what,
    };
    let batch = RecordBatch::try_new(schema, columns).map_err(|e| err(e.to_string()))?;
    crate::sink::parquet::write_batch(path, inputs, batch)
}
