//! tt-metal's op report `ops_perf_results_<timestamp>.csv` (and `ttprof report`'s), read for
//! what names a device log's runs: per (`DEVICE ID`, `GLOBAL CALL COUNT`) the op code, op
//! type, attributes, math fidelity and tensors. The device columns are not read: they are
//! recomputed from the device log. Fields may be quoted (RFC 4180), so this reads with the
//! `csv` crate; the file is read whole, up to [`MAX_BYTES`].

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::oplog::TensorDesc;
use std::collections::HashMap;
use std::path::Path;

/// The largest op report read (one row per op: a million ops is well under this).
pub const MAX_BYTES: u64 = 1 << 30;

/// One op of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportOp {
    /// `DEVICE ID`.
    pub device: u32,
    /// `GLOBAL CALL COUNT`: the run id the device log's `run host ID` carries.
    pub run: u32,
    /// `OP CODE`.
    pub op_code: String,
    /// `OP TYPE`.
    pub op_type: String,
    /// `ATTRIBUTES` as a JSON object when it is one, else `{"attributes": TEXT}`; with
    /// `MATH FIDELITY` as `"math_fidelity"` when the cell is not empty.
    pub attributes: serde_json::Map<String, serde_json::Value>,
    /// `INPUT_n_*` columns.
    pub inputs: Vec<TensorDesc>,
    /// `OUTPUT_n_*` columns.
    pub outputs: Vec<TensorDesc>,
}

/// The ops of an op report, and how many signpost rows it has (not placed: their host
/// times are on the host's clock, which a device log does not relate to).
#[derive(Clone, Debug, Default)]
pub struct OpReportFile {
    /// Ops in file order.
    pub ops: Vec<ReportOp>,
    /// Rows whose `OP TYPE` is `signpost`.
    pub signposts: u64,
}

/// Reads `path` (see the module docs). A row without a numeric `DEVICE ID` or
/// `GLOBAL CALL COUNT` is an error naming its line. The file is noted in `inputs`.
pub fn read(path: &Path, inputs: &Inputs) -> Result<OpReportFile> {
    let bytes = crate::files::read_regular(
        path,
        "an op report (ops_perf_results.csv)",
        "read op report",
        MAX_BYTES,
        inputs,
    )?;
    let bad = |what: String| Error::BadFile {
        path: path.into(),
        what,
    };
    let mut r = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(bytes.as_slice());
    let header: Vec<String> = r
        .headers()
        .map_err(|e| bad(format!("line 1: {e}")))?
        .iter()
        .map(str::to_string)
        .collect();
    let col: HashMap<&str, usize> = header
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i))
        .collect();
    for need in ["OP CODE", "GLOBAL CALL COUNT", "DEVICE ID"] {
        if !col.contains_key(need) {
            return Err(bad(format!(
                "line 1: no `{need}` column: expected tt-metal's op report (OP CODE, OP TYPE, GLOBAL CALL COUNT, DEVICE ID, ...)"
            )));
        }
    }
    let mut out = OpReportFile::default();
    for rec in r.records() {
        let rec = rec.map_err(|e| bad(e.to_string()))?;
        let line = rec.position().map_or(0, |p| p.line());
        let get = |name: &str| col.get(name).and_then(|&i| rec.get(i)).unwrap_or("");
        let op_type = get("OP TYPE").to_string();
        if op_type == "signpost" {
            out.signposts += 1;
            continue;
        }
        let num = |name: &str| -> Result<u32> {
            let v = get(name);
            v.parse()
                .map_err(|_| bad(format!("line {line}: {name} {v:?} is not a number")))
        };
        let mut attributes = match serde_json::from_str::<serde_json::Value>(get("ATTRIBUTES")) {
            Ok(serde_json::Value::Object(m)) => m,
            _ if get("ATTRIBUTES").is_empty() => serde_json::Map::new(),
            _ => {
                let mut m = serde_json::Map::new();
                m.insert("attributes".into(), get("ATTRIBUTES").into());
                m
            }
        };
        if !get("MATH FIDELITY").is_empty() && !attributes.contains_key("math_fidelity") {
            attributes.insert("math_fidelity".into(), get("MATH FIDELITY").into());
        }
        let tensors = |kind: &str| -> Vec<TensorDesc> {
            (0..)
                .map_while(|n| {
                    let c = |s: &str| get(&format!("{kind}_{n}_{s}")).to_string();
                    let memory = c("MEMORY");
                    if memory.is_empty() && c("LAYOUT").is_empty() {
                        return None;
                    }
                    let dim = |s: &str| {
                        // `64[32]`: padded, then logical.
                        let v = c(s);
                        v.split('[')
                            .next()
                            .unwrap_or("")
                            .trim()
                            .parse()
                            .unwrap_or(0)
                    };
                    Some(TensorDesc {
                        id: None,
                        shape: [
                            dim("W_PAD[LOGICAL]"),
                            dim("Z_PAD[LOGICAL]"),
                            dim("Y_PAD[LOGICAL]"),
                            dim("X_PAD[LOGICAL]"),
                        ],
                        layout: c("LAYOUT"),
                        dtype: c("DATATYPE"),
                        memory,
                    })
                })
                .collect()
        };
        out.ops.push(ReportOp {
            device: num("DEVICE ID")?,
            run: num("GLOBAL CALL COUNT")?,
            op_code: get("OP CODE").to_string(),
            op_type: if op_type.is_empty() {
                "tt_dnn_device".into()
            } else {
                op_type
            },
            attributes,
            inputs: tensors("INPUT"),
            outputs: tensors("OUTPUT"),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_tensors_and_signposts() {
        let dir = crate::testing::temp_dir("op-report");
        let p = dir.join("ops_perf_results.csv");
        std::fs::write(
            &p,
            "OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,ATTRIBUTES,MATH FIDELITY,INPUT_0_W_PAD[LOGICAL],INPUT_0_Z_PAD[LOGICAL],INPUT_0_Y_PAD[LOGICAL],INPUT_0_X_PAD[LOGICAL],INPUT_0_LAYOUT,INPUT_0_DATATYPE,INPUT_0_MEMORY\n\
             start,signpost,,,,,,,,,,,\n\
             Matmul,tt_dnn_device,1024,0,\"{'a': 1, 'b': 2}\",HiFi4,1,1,64[60],32,TILE,BFLOAT16,DEV_0_DRAM_INTERLEAVED\n",
        )
        .unwrap();
        let f = read(&p, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!(f.signposts, 1);
        let op = &f.ops[0];
        assert_eq!(
            (op.device, op.run, op.op_code.as_str()),
            (0, 1024, "Matmul")
        );
        assert_eq!(op.attributes["attributes"], "{'a': 1, 'b': 2}");
        assert_eq!(op.attributes["math_fidelity"], "HiFi4");
        assert_eq!(op.inputs[0].shape, [1, 1, 64, 32]);
        assert!(op.outputs.is_empty());
        std::fs::write(&p, "OP CODE,GLOBAL CALL COUNT,DEVICE ID\nAdd,x,0\n").unwrap();
        let e = read(&p, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("line 2: GLOBAL CALL COUNT \"x\" is not a number"),
            "{e}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
