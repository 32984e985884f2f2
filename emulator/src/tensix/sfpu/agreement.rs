//! The MAD sub-unit's agreement with an external reference, measured on demand (not a CI
//! test): `TTSIM_MAD_CASES=<file> cargo test --release -p ttprof-emu --lib every_mad --
//! --ignored --nocapture` (with `TTSIM_NUMERICS=isa-doc` for the ISA documentation's
//! rules). Each line of the file, written by the comparison harness kept outside this
//! repository (docs/design/tensix-coprocessor.md, "Numerics"), is `a b c expected` in hex;
//! the test counts bit-exact results of `a * b + c` and fails unless all agree.

use super::arith::{mad, mad_isa_doc};

#[test]
#[ignore = "needs TTSIM_MAD_CASES from the external comparison harness"]
fn every_mad_agrees_with_the_reference_cases() {
    let path = std::env::var("TTSIM_MAD_CASES").expect("set TTSIM_MAD_CASES");
    let text = std::fs::read_to_string(path).expect("read TTSIM_MAD_CASES");
    let isa_doc = std::env::var("TTSIM_NUMERICS").as_deref() == Ok("isa-doc");
    let (mut n, mut ok, mut first) = (0u64, 0u64, None);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Vec<u32> = line
            .split_whitespace()
            .map(|t| u32::from_str_radix(t, 16).expect("hex"))
            .collect();
        let got = if isa_doc {
            mad_isa_doc(v[0], v[1], v[2])
        } else {
            mad(v[0], v[1], v[2])
        };
        n += 1;
        if got == v[3] {
            ok += 1;
        } else if first.is_none() {
            first = Some(format!(
                "{:08x} * {:08x} + {:08x}: ours {got:08x}, reference {:08x}",
                v[0], v[1], v[2], v[3]
            ));
        }
    }
    println!(
        "| SFPMAD | FP32 | {n} | {:.2} |",
        100.0 * ok as f64 / n.max(1) as f64
    );
    if let Some(f) = &first {
        println!("    first difference: {f}");
    }
    assert!(
        n > 0 && n == ok,
        "some results differ from the reference cases"
    );
}

/// The Vector Unit's other instructions, one word on random state per case:
/// `TTSIM_SFPU_CASES=<file> cargo test --release -p ttprof-emu --lib every_vector -- --ignored
/// --nocapture`. A case is `word cc_en cc | LReg[0..8] lanes | Dst rows 0-63 (raw 16-bit) |
/// LReg after | Dst after | cc_en cc after`, in hex (the harness skips words its reference
/// refuses). Prints, per opcode and `Mod`, the cases and the elements (every lane of
/// `LReg[0..8]`, every `Dst` cell of rows 0-63, every lane's flag and enable) bit-exact, and
/// fails unless all agree.
#[test]
#[ignore = "needs TTSIM_SFPU_CASES from the external comparison harness"]
fn every_vector_instruction_agrees_with_the_reference_cases() {
    use super::{Context, VectorUnit, LANES};
    use crate::tensix::counters::Rwc;
    use crate::tensix::dst::Dst;
    use std::collections::BTreeMap;
    let path = std::env::var("TTSIM_SFPU_CASES").expect("set TTSIM_SFPU_CASES");
    let text = std::fs::read_to_string(path).expect("read TTSIM_SFPU_CASES");
    let hex = |s: &str| -> Vec<u32> {
        s.split_whitespace()
            .map(|t| u32::from_str_radix(t, 16).expect("hex"))
            .collect()
    };
    let numerics = match std::env::var("TTSIM_NUMERICS").as_deref() {
        Ok("isa-doc") => crate::config::Numerics::IsaDoc,
        _ => crate::config::Numerics::Ttsim,
    };
    // (opcode, mod) -> (cases, elements, bit-exact, first difference, cases refused)
    type Tally = (u64, u64, u64, String, u64);
    let mut tally: BTreeMap<(u32, u32), Tally> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let p: Vec<&str> = line.split('|').collect();
        let (head, l0, d0, l1, d1, tail) = (
            hex(p[0]),
            hex(p[1]),
            hex(p[2]),
            hex(p[3]),
            hex(p[4]),
            hex(p[5]),
        );
        let w = head[0];
        let op = w >> 24;
        let m = if matches!(op, 0x70..=0x72) {
            (w >> 16) & 15
        } else {
            w & 15
        };
        let t = tally.entry((op, m)).or_default();
        t.0 += 1;
        let mut u = VectorUnit {
            numerics,
            ..VectorUnit::default()
        };
        for r in 0..8 {
            for l in 0..LANES {
                u.lreg[r][l] = l0[r * LANES + l];
                u.flags[l] = head[2] >> l & 1 != 0;
                u.use_flags[l] = head[1] != 0;
            }
        }
        let mut dst = Dst::default();
        for (i, &v) in d0.iter().enumerate() {
            dst.write16(i / 16, i % 16, v as u16);
        }
        let (mut rwc, thread_cfg, cfg) = (Rwc::default(), [0u16; 57], [0u32; 188]);
        let elements = (8 * LANES + d1.len() + 2 * LANES) as u64;
        let refused = super::unsupported(w).or_else(|| {
            let ctx = Context {
                dst: &mut dst,
                rwc: &mut rwc,
                thread_cfg: &thread_cfg,
                cfg: &cfg,
            };
            u.execute(w, 10, ctx).err()
        });
        // A word the model refuses by name (a mode it does not model) is counted apart.
        if let Some(why) = refused {
            t.4 += 1;
            if t.3.is_empty() {
                t.3 = format!("{w:08x} refused: {why}");
            }
            continue;
        }
        t.1 += elements;
        let mut ok = 0u64;
        let mut first = None;
        for r in 0..8 {
            for l in 0..LANES {
                if u.lreg[r][l] == l1[r * LANES + l] {
                    ok += 1;
                } else if first.is_none() {
                    first = Some(format!(
                        "{w:08x} LReg[{r}] lane {l}: was {:08x}, ours {:08x}, reference {:08x}",
                        l0[r * LANES + l],
                        u.lreg[r][l],
                        l1[r * LANES + l]
                    ));
                }
            }
        }
        for (i, &v) in d1.iter().enumerate() {
            if dst.read16(i / 16, i % 16) as u32 == v {
                ok += 1;
            } else if first.is_none() {
                first = Some(format!(
                    "{w:08x} Dst row {} col {}: ours {:04x}, reference {v:04x}",
                    i / 16,
                    i % 16,
                    dst.read16(i / 16, i % 16)
                ));
            }
        }
        for l in 0..LANES {
            ok += u64::from(u.flags[l] == (tail[1] >> l & 1 != 0));
            ok += u64::from(u.use_flags[l] == (tail[0] != 0));
        }
        if ok != elements && first.is_none() {
            first = Some(format!("{w:08x} lane flags or enables differ"));
        }
        t.2 += ok;
        if let Some(f) = first {
            if t.3.is_empty() {
                t.3 = f;
            }
        }
    }
    let mut all = true;
    println!("| opcode | mod | cases | refused | elements | bit-exact % |");
    for ((op, m), (n, e, ok, first, refused)) in &tally {
        all &= e == ok;
        println!(
            "| {op:#04x} | {m} | {n} | {refused} | {e} | {} |",
            if *e == 0 {
                "-".to_string()
            } else {
                format!("{:.2}", 100.0 * *ok as f64 / *e as f64)
            }
        );
        if e != ok || *refused > 0 {
            println!("    first: {first}");
        }
    }
    assert!(all, "some elements differ from the reference cases");
}
