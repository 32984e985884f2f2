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
