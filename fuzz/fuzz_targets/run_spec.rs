//! `ttprof run`'s specs: `--l1 ADDR=V|@FILE`, `--dram-in ADDR=@FILE,..`,
//! `--dram-out ADDR=@FILE,bytes=N,..` and a manifest (`ops.toml` / `ops.json`), parsed and
//! checked as `ttprof run` does before it builds anything
//! (`ttprof::session::run::fuzzing`), never panic, whatever the text.
//!
//! Input: a first line `KIND [LEN]`, KIND one of `l1`, `dram-in`, `dram-out` (then one
//! spec per line) or `toml`, `json` (then the manifest's text). Every `@FILE` and
//! `expect=FILE` names one scratch file holding the whole input, extended (sparse) to LEN
//! bytes when LEN is larger (at most 2^33: past every cap).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttprof::session::run::fuzzing;

ttprof_fuzz::limit_allocations!();

/// Specs read from one input (a flag given many times).
const MAX_SPECS: usize = 64;

fuzz_target!(|data: &[u8]| ttprof_fuzz::run(|| {
    let (head, rest) = match data.iter().position(|&b| b == b'\n') {
        Some(n) => (&data[..n], &data[n + 1..]),
        None => (data, &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let mut words = head.split_whitespace();
    let kind = words.next().unwrap_or("");
    let len = words.next().and_then(|w| w.parse::<u64>().ok()).unwrap_or(0).min(1 << 33);
    let scratch = ttprof_fuzz::scratch();
    scratch.set(data, len);
    let file = scratch.path();
    let specs = || String::from_utf8_lossy(rest).lines().take(MAX_SPECS).map(str::to_string).collect::<Vec<_>>();
    match kind {
        "l1" => {
            for s in specs() {
                match fuzzing::l1(&s, file) {
                    Ok(input) => assert!(input.bytes.len() <= 2 << 20, "an L1 input is at most 2 MiB"),
                    Err(e) => drop(e.to_string()),
                }
            }
        }
        "dram-in" | "dram-out" => {
            for s in specs() {
                if let Err(e) = fuzzing::dram(&s, kind == "dram-out", file) {
                    let _ = e.to_string();
                }
            }
        }
        "toml" | "json" => {
            if let Err(e) = fuzzing::manifest(rest, kind == "json", file) {
                let _ = e.to_string();
            }
        }
        _ => {}
    }
}));
