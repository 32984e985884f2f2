//! `ttprof run --counters`: Tensix's performance counters around every op. The host arms
//! one counter per chosen bank on every tile before a launch and reads each bank after it
//! (docs/design/perf-counters.md): the op's window on that tile, at no device cost (the
//! kernels do nothing). One counter per bank because a bank shows one select at a time;
//! a bank counts all of its signals at once, so choosing another needs no new build, only
//! another run.

use crate::error::{Error, Result};
use crate::oplog::{CounterValue, TileCounters};
use crate::sites::{COUNTED_BANKS, COUNTED_BANK_NAMES};
use riscv_linker::{Arch, NocCoord};
use ttprof_emu::Device;

/// The counter each group of `--counters` ([`COUNTED_BANKS`], the bank
/// [`COUNTED_BANK_NAMES`] names) reads unless one is named.
pub const DEFAULTS: [&str; 5] = [
    "FPU_COUNTER",
    "THREAD_STALLS_1",
    "UNPACK0_BUSY_THREAD0",
    "PACKER_BUSY",
    "L1_0_UNPACKER_0",
];

/// One armed counter: its bank, its select and its name (tt-llk's spelling).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterChoice {
    /// A bank of `ttprof_emu::PERF_COUNTER_BANKS`.
    pub bank: &'static str,
    /// Its counter select (256 up: the grant side).
    pub select: u32,
    /// The counter's name.
    pub name: String,
}

/// Parses `--counters`: groups separated by commas, each `GROUP` or `GROUP=COUNTER`
/// (e.g. `fpu,instrn=WAITING_FOR_SRCA_VALID`), at most once each, every counter one the
/// emulator counts on `arch` (else the error says why, in the emulator's words).
pub fn parse(spec: &str, arch: Arch) -> Result<Vec<CounterChoice>> {
    let bad = |what: String| Error::Argument {
        what: format!("--counters {spec:?}: {what}"),
    };
    let mut out: Vec<CounterChoice> = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (group, name) = match part.split_once('=') {
            Some((g, n)) => (g.trim(), Some(n.trim())),
            None => (part, None),
        };
        let i = COUNTED_BANKS
            .iter()
            .position(|g| g.eq_ignore_ascii_case(group))
            .ok_or_else(|| {
                bad(format!(
                    "no counter group {group:?} (groups: {})",
                    COUNTED_BANKS.join(", ")
                ))
            })?;
        let (bank, default) = (COUNTED_BANK_NAMES[i], DEFAULTS[i]);
        if out.iter().any(|c| c.bank == bank) {
            return Err(bad(format!(
                "{group} twice: a bank shows one counter at a time (run again for another)"
            )));
        }
        let name = name.unwrap_or(default).to_ascii_uppercase();
        let select = select_of(arch, bank, &name).map_err(bad)?;
        out.push(CounterChoice { bank, select, name });
    }
    if out.is_empty() {
        return Err(bad("names no counter group".into()));
    }
    Ok(out)
}

/// The select of counter `name` in `bank` on `arch`, or why the emulator cannot count it.
fn select_of(arch: Arch, bank: &str, name: &str) -> std::result::Result<u32, String> {
    let (mut refused, mut any_counted, mut bank_wide) = (None, false, None);
    for sel in 0..512 {
        match ttprof_emu::describe_perf_counter(arch, bank, sel) {
            Ok(n) if n == name => return Ok(sel),
            Ok(_) => any_counted = true,
            Err(why) if refused.is_none() && why.contains(&format!("counter {name} ")) => {
                refused = Some(why)
            }
            Err(why) if bank_wide.is_none() && why.contains("is not modelled") => {
                bank_wide = Some(why)
            }
            Err(_) => {}
        }
    }
    if let Some(why) = refused {
        return Err(why);
    }
    match bank_wide {
        Some(why) if !any_counted => Err(format!(
            "the emulator counts nothing in bank {bank} ({})",
            why.split_once(": ").map_or(why.as_str(), |w| w.1)
        )),
        _ => Err(format!(
            "{bank} has no counter {name} on {arch} the emulator counts (names as in tt-llk's perf_counters tables)"
        )),
    }
}

/// The NIU data counters of every tile a launch runs on, before it (they persist across
/// kernels: the op's traffic is the change).
pub(crate) struct NocBefore(Vec<(NocCoord, NocWords)>);

/// NoC words of read data received and of write data sent by a tile's two NIUs.
#[derive(Clone, Copy, Default)]
struct NocWords {
    read: u32,
    write: u32,
}

fn noc_words(dev: &mut Device, tile: NocCoord) -> Result<NocWords> {
    use riscv_linker::noc::counter::*;
    let mut w = NocWords::default();
    for noc in 0..2 {
        let mut at = |index| {
            dev.niu_counter(0, tile, noc, index)
                .map_err(|e| Error::Emulator(e.to_string()))
        };
        w.read = w.read.wrapping_add(at(RD_DATA_WORD_RECEIVED)?);
        w.write = w
            .write
            .wrapping_add(at(NONPOSTED_WR_DATA_WORD_SENT)?)
            .wrapping_add(at(POSTED_WR_DATA_WORD_SENT)?);
    }
    Ok(w)
}

/// Arms `choices` on every tile of `dev` and notes the NIU data counters of `tiles` (a
/// launch on them follows); `None` (nothing done) without choices.
pub(crate) fn arm(
    dev: &mut Device,
    choices: &[CounterChoice],
    tiles: &[NocCoord],
) -> Result<Option<NocBefore>> {
    if choices.is_empty() {
        return Ok(None);
    }
    let banks: Vec<(&str, u32)> = choices.iter().map(|c| (c.bank, c.select)).collect();
    dev.arm_perf_counters(&banks)
        .map_err(|e| Error::Emulator(e.to_string()))?;
    let noc = tiles
        .iter()
        .map(|&t| Ok((t, noc_words(dev, t)?)))
        .collect::<Result<_>>()?;
    Ok(Some(NocBefore(noc)))
}

/// Reads `choices` on each of `tiles` of chip 0 after a launch, and the NoC bytes each
/// moved since `before` ([`arm`]'s; `None`: nothing was armed, nothing is read).
pub(crate) fn read(
    dev: &mut Device,
    choices: &[CounterChoice],
    tiles: &[NocCoord],
    before: Option<&NocBefore>,
) -> Result<Vec<TileCounters>> {
    let Some(before) = before else {
        return Ok(Vec::new());
    };
    let word = riscv_linker::noc::flit_bytes(dev.arch()) as u64;
    let mut out = Vec::with_capacity(tiles.len());
    for &t in tiles {
        let mut cycles = 0;
        let mut values = Vec::with_capacity(choices.len());
        for c in choices {
            let (n, value) = dev
                .perf_counter(0, t, c.bank)
                .map_err(|e| Error::Emulator(e.to_string()))?;
            cycles = cycles.max(n);
            values.push(CounterValue {
                bank: c.bank.to_string(),
                name: c.name.clone(),
                value,
            });
        }
        let was = before
            .0
            .iter()
            .find(|(b, _)| *b == t)
            .map_or_else(NocWords::default, |b| b.1);
        let now = noc_words(dev, t)?;
        out.push(TileCounters {
            core: [t.x, t.y],
            cycles,
            values,
            noc_read_bytes: Some(now.read.wrapping_sub(was.read) as u64 * word),
            noc_write_bytes: Some(now.write.wrapping_sub(was.write) as u64 * word),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_default_and_name_their_counter() {
        let c = parse("fpu, instrn=waiting_for_srca_valid,pack", Arch::WormholeB0).unwrap();
        assert_eq!(
            c.iter()
                .map(|c| (c.bank, c.select, c.name.as_str()))
                .collect::<Vec<_>>(),
            [
                ("FPU", 0, "FPU_COUNTER"),
                ("INSTRN_THREAD", 33, "WAITING_FOR_SRCA_VALID"),
                ("TDMA_PACK", 18, "PACKER_BUSY"),
            ]
        );
        assert_eq!(
            parse("instrn=THREAD_INSTRUCTIONS_1", Arch::Blackhole).unwrap()[0].select,
            264
        );
    }

    #[test]
    fn bad_choices_say_why() {
        let e = |s: &str| parse(s, Arch::WormholeB0).unwrap_err().to_string();
        assert!(e("l1").contains("L1's ports"), "{}", e("l1"));
        assert!(e("fpu,fpu=SFPU_COUNTER").contains("twice"));
        assert!(e("gpu").contains("groups: fpu, instrn"));
        assert!(e("unpack=SRCA_WRITE_REQ").contains("not modelled"));
        assert!(e("fpu=NOPE").contains("no counter NOPE"));
        assert!(e(",").contains("names no counter group"));
    }
}
