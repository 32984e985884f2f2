//! The op report's columns, in tt-metal's order, and the CSV writer.
//!
//! The header is tt-metal's v2.1 one: [`HEAD`], then for each input and output tensor
//! `INPUT_<n>_W_PAD[LOGICAL]`, `_Z_`, `_Y_`, `_X_`, `_LAYOUT`, `_DATATYPE`, `_MEMORY`
//! (as many as the op with the most tensors has), then [`TAIL`]. Columns ttprof cannot
//! measure (dispatch times, performance-model and utilisation counters, kernel sizes, trace
//! ids) are present and empty. Like tt-metal, every `,` inside a cell becomes `;`; a cell
//! that holds `"` is quoted (RFC 4180), and line breaks become spaces.
//!
//! `DEVICE COMPUTE CB WAIT FRONT [ns]` / `RESERVE BACK [ns]` hold, per op, the mean over its
//! tiles of the time the TRISCs spent in typed CB waits (`wait!(.., cb_front(N))`,
//! `cb_back(N)`; see [`crate::sink::analysis`]); empty when the kernels mark none.
//!
//! Tensor dimensions are the padded shape the op log records; the logical shape is not
//! known to ttprof, so the cell holds the bare number (which tt-perf-report reads as both).

use super::{whole_ns, OpReport, OpRow, ReportRow};
use crate::oplog::TensorDesc;
use riscv_linker::Risc;
use std::collections::HashMap;
use std::io::{self, Write};

/// Columns before the tensor columns.
pub const HEAD: [&str; 34] = [
    "OP CODE",
    "OP TYPE",
    "GLOBAL CALL COUNT",
    "DEVICE ID",
    "DEVICE ARCH",
    "ATTRIBUTES",
    "MATH FIDELITY",
    "CORE COUNT",
    "AVAILABLE WORKER CORE COUNT",
    "PARALLELIZATION STRATEGY",
    "HOST START TS",
    "HOST END TS",
    "HOST DURATION [ns]",
    "DEVICE FW START CYCLE",
    "DEVICE FW END CYCLE",
    "OP TO OP LATENCY [ns]",
    "OP TO OP LATENCY BR/NRISC START [ns]",
    "DEVICE FW DURATION [ns]",
    "DEVICE KERNEL DURATION [ns]",
    "DEVICE KERNEL DURATION DM START [ns]",
    "DEVICE KERNEL DURATION PER CORE MIN [ns]",
    "DEVICE KERNEL DURATION PER CORE MAX [ns]",
    "DEVICE KERNEL DURATION PER CORE AVG [ns]",
    "DEVICE KERNEL FIRST TO LAST START [ns]",
    "DEVICE BRISC KERNEL DURATION [ns]",
    "DEVICE NCRISC KERNEL DURATION [ns]",
    "DEVICE TRISC0 KERNEL DURATION [ns]",
    "DEVICE TRISC1 KERNEL DURATION [ns]",
    "DEVICE TRISC2 KERNEL DURATION [ns]",
    "DEVICE ERISC KERNEL DURATION [ns]",
    "DEVICE COMPUTE CB WAIT FRONT [ns]",
    "DEVICE COMPUTE CB RESERVE BACK [ns]",
    "DISPATCH TOTAL CQ CMD OP TIME [ns]",
    "DISPATCH GO SEND WAIT TIME [ns]",
];

/// Columns after the tensor columns.
pub const TAIL: [&str; 37] = [
    "METAL TRACE ID",
    "METAL TRACE REPLAY SESSION ID",
    "COMPUTE KERNEL SOURCE",
    "COMPUTE KERNEL HASH",
    "DATA MOVEMENT KERNEL SOURCE",
    "DATA MOVEMENT KERNEL HASH",
    "TENSIX DM 0 MAX KERNEL SIZE [B]",
    "TENSIX DM 1 MAX KERNEL SIZE [B]",
    "TENSIX COMPUTE 0 MAX KERNEL SIZE [B]",
    "TENSIX COMPUTE 1 MAX KERNEL SIZE [B]",
    "TENSIX COMPUTE 2 MAX KERNEL SIZE [B]",
    "ACTIVE ETH DM 0 MAX KERNEL SIZE [B]",
    "ACTIVE ETH DM 1 MAX KERNEL SIZE [B]",
    "IDLE ETH DM 0 MAX KERNEL SIZE [B]",
    "IDLE ETH DM 1 MAX KERNEL SIZE [B]",
    "PM IDEAL [ns]",
    "PM COMPUTE [ns]",
    "PM BANDWIDTH [ns]",
    "PM REQ I BW",
    "PM REQ O BW",
    "PM FPU UTIL (%)",
    "NOC UTIL (%)",
    "DRAM BW UTIL (%)",
    "ETH BW UTIL (%)",
    "NPE CONG IMPACT (%)",
    "SFPU Util Min (%)",
    "SFPU Util Median (%)",
    "SFPU Util Max (%)",
    "Avg SFPU util on full grid (%)",
    "FPU Util Min (%)",
    "FPU Util Median (%)",
    "FPU Util Max (%)",
    "Avg FPU util on full grid (%)",
    "MATH Util Min (%)",
    "MATH Util Median (%)",
    "MATH Util Max (%)",
    "Avg Math util on full grid (%)",
];

/// Per-tensor column suffixes, in tt-metal's order.
const TENSOR_FIELDS: [&str; 7] = [
    "W_PAD[LOGICAL]",
    "Z_PAD[LOGICAL]",
    "Y_PAD[LOGICAL]",
    "X_PAD[LOGICAL]",
    "LAYOUT",
    "DATATYPE",
    "MEMORY",
];

/// The full header for a report whose ops have at most `inputs` / `outputs` tensors.
pub fn header(inputs: usize, outputs: usize) -> Vec<String> {
    let mut h: Vec<String> = HEAD.iter().map(|s| s.to_string()).collect();
    for (kind, n) in [("INPUT", inputs), ("OUTPUT", outputs)] {
        for i in 0..n {
            h.extend(TENSOR_FIELDS.iter().map(|f| format!("{kind}_{i}_{f}")));
        }
    }
    h.extend(TAIL.iter().map(|s| s.to_string()));
    h
}

/// Writes the report as CSV.
pub fn write(w: &mut impl Write, report: &OpReport) -> io::Result<()> {
    let inputs = report
        .ops()
        .map(|o| o.op.inputs.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let outputs = report
        .ops()
        .map(|o| o.op.outputs.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let header = header(inputs, outputs);
    let line = |w: &mut dyn Write, cells: &mut dyn Iterator<Item = String>| -> io::Result<()> {
        let mut first = true;
        for c in cells {
            if !first {
                w.write_all(b",")?;
            }
            first = false;
            w.write_all(escape(&c).as_bytes())?;
        }
        w.write_all(b"\n")
    };
    line(w, &mut header.iter().cloned())?;
    for row in &report.rows {
        let cells = match row {
            ReportRow::Op(o) => op_cells(report, o),
            ReportRow::Signpost(s) => HashMap::from([
                ("OP CODE".to_string(), s.name.clone()),
                ("OP TYPE".into(), "signpost".into()),
                ("HOST START TS".into(), s.host_ns.to_string()),
            ]),
        };
        line(
            w,
            &mut header
                .iter()
                .map(|h| cells.get(h).cloned().unwrap_or_default()),
        )?;
    }
    Ok(())
}

/// `,` -> `;`, line breaks -> spaces, quoted if it holds `"`.
fn escape(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| match c {
            ',' => ';',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect();
    if s.contains('"') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

fn op_cells(report: &OpReport, row: &OpRow) -> HashMap<String, String> {
    let op = &row.op;
    let mut c: HashMap<String, String> = HashMap::new();
    let mut put = |k: &str, v: String| {
        c.insert(k.to_string(), v);
    };
    put("OP CODE", op.op_code.clone());
    put("OP TYPE", op.op_type.clone());
    put("GLOBAL CALL COUNT", op.run_id.to_string());
    put("DEVICE ID", op.device.to_string());
    put("DEVICE ARCH", report.arch.name().to_string());
    put(
        "ATTRIBUTES",
        serde_json::Value::Object(op.attributes.clone()).to_string(),
    );
    if let Some(f) = &row.math_fidelity {
        put("MATH FIDELITY", f.clone());
    }
    put(
        "AVAILABLE WORKER CORE COUNT",
        report.worker_cores.to_string(),
    );
    if let Some(p) = op
        .attributes
        .get("parallelization_strategy")
        .and_then(|v| v.as_str())
    {
        put("PARALLELIZATION STRATEGY", p.to_string());
    }
    put("HOST START TS", op.host_start_ns.to_string());
    put("HOST END TS", op.host_end_ns.to_string());
    put(
        "HOST DURATION [ns]",
        op.host_end_ns.saturating_sub(op.host_start_ns).to_string(),
    );
    let ns = |x: f64| whole_ns(x).to_string();
    if let Some(v) = row.op_to_op_ns {
        put("OP TO OP LATENCY [ns]", ns(v));
    }
    if let Some(v) = row.op_to_op_dm_ns {
        put("OP TO OP LATENCY BR/NRISC START [ns]", ns(v));
    }
    if let Some(d) = &row.device {
        put("CORE COUNT", d.core_count().to_string());
        if let Some(fw) = d.fw {
            put("DEVICE FW START CYCLE", fw.start.cycles.to_string());
            put("DEVICE FW END CYCLE", fw.end.cycles.to_string());
            put("DEVICE FW DURATION [ns]", ns(fw.duration_ns()));
        }
        if let Some(k) = d.kernel {
            put("DEVICE KERNEL DURATION [ns]", ns(k.duration_ns()));
            put(
                "DEVICE KERNEL FIRST TO LAST START [ns]",
                ns(k.first_to_last_start_ns()),
            );
            if let Some(dm) = d.dm_kernel_start {
                put(
                    "DEVICE KERNEL DURATION DM START [ns]",
                    ns(k.end.since_ns(&dm)),
                );
            }
        }
        let per_core = d.per_core_kernel_ns();
        if !per_core.is_empty() {
            let min = per_core.iter().copied().fold(f64::INFINITY, f64::min);
            let max = per_core.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let avg = per_core.iter().sum::<f64>() / per_core.len() as f64;
            put("DEVICE KERNEL DURATION PER CORE MIN [ns]", ns(min));
            put("DEVICE KERNEL DURATION PER CORE MAX [ns]", ns(max));
            put("DEVICE KERNEL DURATION PER CORE AVG [ns]", ns(avg));
        }
        for risc in Risc::ALL {
            if let Some(s) = d.risc_kernel[risc.index()] {
                put(
                    &format!(
                        "DEVICE {} KERNEL DURATION [ns]",
                        risc.name().replace('_', "")
                    ),
                    ns(s.duration_ns()),
                );
            }
        }
    }
    if let Some((front, back)) = report.compute_cb_waits.get(&(op.device, op.run_id)) {
        put("DEVICE COMPUTE CB WAIT FRONT [ns]", ns(*front));
        put("DEVICE COMPUTE CB RESERVE BACK [ns]", ns(*back));
    }
    for (kind, tensors) in [("INPUT", &op.inputs), ("OUTPUT", &op.outputs)] {
        for (i, t) in tensors.iter().enumerate() {
            for (f, v) in TENSOR_FIELDS.iter().zip(tensor_cells(t)) {
                put(&format!("{kind}_{i}_{f}"), v);
            }
        }
    }
    let sources = |dm: bool| {
        let mut v: Vec<String> = Vec::new();
        for k in &op.kernels {
            let is_dm = matches!(k.risc(), Some(Risc::Brisc | Risc::Ncrisc));
            let s = format!("'{}'", k.elf.display());
            if is_dm == dm && !v.contains(&s) {
                v.push(s);
            }
        }
        format!("[{}]", v.join(", "))
    };
    if !op.kernels.is_empty() {
        put("COMPUTE KERNEL SOURCE", sources(false));
        put("DATA MOVEMENT KERNEL SOURCE", sources(true));
    }
    c
}

fn tensor_cells(t: &TensorDesc) -> [String; 7] {
    let [w, z, y, x] = t.shape;
    [
        w.to_string(),
        z.to_string(),
        y.to_string(),
        x.to_string(),
        t.layout.clone(),
        t.dtype.clone(),
        t.memory.clone(),
    ]
}
