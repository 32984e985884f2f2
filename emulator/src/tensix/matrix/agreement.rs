//! Element agreement with an external reference, measured on demand (not a CI test).
//!
//! `TTSIM_CASES=<file> cargo test --release -p ttprof-emulator --lib agreement -- --ignored
//! --nocapture` (with `TTSIM_NUMERICS=isa-doc` for [`Numerics::IsaDoc`]) reads cases written by a comparison harness kept outside this repository
//! (it runs the same instruction in Tenstorrent's functional simulator; see
//! `docs/design/tensix-coprocessor.md`, "Numerics"), runs each case's instruction here and
//! prints, per instruction and format, how many `Dst` elements are bit-exact. It fails
//! unless every element agrees. Nothing of the reference is stored in the repository.
//!
//! A case is one line: `opcode srca_fmt srcb_fmt fp32_dst phase word | SrcA rows 0-15 |
//! SrcB rows 0-7 | DstBits rows 0-15 before | DstBits rows 0-15 after`, all hex; Src data
//! as 19-bit Sign,Exp(8),Man(10) words, `Dst` as the raw 16-bit cells.

use super::*;
use crate::tensix::src_regs::Client;
use std::collections::BTreeMap;

fn hex(s: &str) -> Vec<u32> {
    s.split_whitespace()
        .map(|t| u32::from_str_radix(t, 16).expect("hex"))
        .collect()
}

#[test]
#[ignore = "needs TTSIM_CASES from the external comparison harness"]
fn every_element_agrees_with_the_reference_cases() {
    let path = std::env::var("TTSIM_CASES").expect("set TTSIM_CASES to the harness's output");
    let text = std::fs::read_to_string(&path).expect("read TTSIM_CASES");
    let numerics = match std::env::var("TTSIM_NUMERICS").as_deref() {
        Ok("isa-doc") => Numerics::IsaDoc,
        _ => Numerics::Ttsim,
    };
    println!("numerics: {numerics:?}");
    // (opcode, srca fmt, fp32 dst) -> (elements, bit-exact, first differing example)
    let mut tally: BTreeMap<(u32, u32, u32), (u64, u64, String)> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let parts: Vec<&str> = line.split('|').collect();
        let head = hex(parts[0]);
        let (op, fa, fp32, ph, w) = (head[0], head[1], head[3], head[4], head[5]);
        let (a, b, d0, d1) = (hex(parts[1]), hex(parts[2]), hex(parts[3]), hex(parts[4]));
        let mut cfg = BackendConfig::default();
        cfg.cfg[0][1] = (fa << 17) | (head[2] << 21) | (fp32 << 29);
        let mut src = SrcRegs::default();
        src.banks[A][0].allowed = Client::MatrixUnit;
        src.banks[B][0].allowed = Client::MatrixUnit;
        for (i, &v) in a.iter().enumerate().take(16 * 16) {
            src.banks[A][0].rows[i / 16][i % 16] = fl::write_src_tf32(v);
        }
        for (i, &v) in b.iter().enumerate().take(8 * 16) {
            src.banks[B][0].rows[i / 16][i % 16] = fl::write_src_tf32(v);
        }
        let mut dst = Dst::default();
        for (i, &v) in d0.iter().enumerate().take(16 * 16) {
            dst.write16(i / 16, i % 16, v as u16);
        }
        let mut rwc = Rwc {
            fidelity: ph,
            ..Rwc::default()
        };
        let mut x = Ctx {
            thread: 0,
            cfg: &cfg,
            rwc: &mut rwc,
            src: &mut src,
            dst: &mut dst,
            numerics,
        };
        let t = tally.entry((op, fa, fp32)).or_default();
        if let Err(e) = execute(w, &mut x) {
            t.0 += 128;
            if t.2.is_empty() {
                t.2 = format!("refused: {e}");
            }
            continue;
        }
        // The 8 result rows (in the 32-bit view each spans DstBits rows r and r + 8).
        for r in 0..8 {
            for c in 0..16 {
                let (ours, theirs) = if fp32 != 0 {
                    (
                        dst.read32(r, c),
                        (d1[r * 16 + c] << 16) | d1[(r + 8) * 16 + c],
                    )
                } else {
                    (dst.read16(r, c) as u32, d1[r * 16 + c])
                };
                t.0 += 1;
                if ours == theirs {
                    t.1 += 1;
                } else if t.2.is_empty() {
                    let dec = |v: u32| {
                        if fp32 != 0 {
                            fl::read_dst_fp32(v)
                        } else {
                            fl::read_dst_bf16(v as u16) as u32
                        }
                    };
                    let before = if fp32 != 0 {
                        (d0[r * 16 + c] << 16) | d0[(r + 8) * 16 + c]
                    } else {
                        d0[r * 16 + c]
                    };
                    t.2 = format!(
                        "word {w:08x} phase {ph} row {r} col {c}: a {:05x} b {:05x} dst {:x} -> ours {:x} ref {:x}",
                        a[r * 16 + c],
                        b[r * 16 + c],
                        dec(before),
                        dec(ours),
                        dec(theirs)
                    );
                }
            }
        }
    }
    let name = |op| match op as u8 {
        op::ELWADD => "ELWADD",
        op::ELWSUB => "ELWSUB",
        op::ELWMUL => "ELWMUL",
        op::MVMUL => "MVMUL",
        op::MOVA2D => "MOVA2D",
        op::MOVB2D => "MOVB2D",
        _ => "?",
    };
    let mut all = true;
    println!("| instruction | SrcA format | Dst | elements | bit-exact % |");
    for ((op, fa, fp32), (n, ok, ex)) in &tally {
        all &= n == ok;
        println!(
            "| {} | {} | {} | {n} | {:.2} |",
            name(*op),
            fl::fmt::name(*fa),
            if *fp32 != 0 {
                "FP32"
            } else if Style::of(*fa) == Style::Fp16 {
                "FP16"
            } else {
                "BF16"
            },
            100.0 * *ok as f64 / *n as f64
        );
        if n != ok {
            println!("    first difference: {ex}");
        }
    }
    assert!(all, "some elements differ from the reference cases");
}
