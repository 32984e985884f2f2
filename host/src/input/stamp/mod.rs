//! The timestamper backend's host side: drain every tile's debug timestamper
//! ([`drain`]), rebuild zones per RISC ([`rebuild`]), and merge them into the ring's records
//! (`merge_payload`) so that the readout, the model and every output see exactly what a
//! ring backend would have written. Format of the events: `ttprof_rt::stamp`; the reasons:
//! docs/design/timestamper.md.

pub mod drain;
pub mod rebuild;

use crate::devmem::DeviceMemory;
use crate::error::{Error, Location, Result};
use crate::issue::Issue;
use crate::readout::RingId;
use drain::TileDrain;
use rebuild::{risc_of, RiscZones};
use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::BTreeMap;
use ttprof_rt::wire::{self, Decoded, Record};

/// The timestamper backend's default drain interval (device cycles), sized to what a
/// tile's buffers hold: a zone is two 12-byte events (24 bytes), and a kernel can record
/// one every 4 cycles (runtime-bench's dense loop on Wormhole B0), 6 bytes a cycle; buffer
/// 0 (32 KiB) then fills in 32,768 / 6 = 5,461 cycles and both (64 KiB) in 10,922. A
/// drain every 2,048 cycles takes at most 12 KiB a time, with buffer 0 never more than
/// ~40 % full, which also leaves a card's drain (the device writing meanwhile) time to
/// finish before buffer 0 could fill again (module `drain`). The ring backend's interval
/// (250,000 cycles) would let a dense kernel overflow both buffers ~23 times over.
pub const DRAIN_EVERY_CYCLES: u64 = 2_048;

/// Where a kernel's zones, events and data go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The per-RISC ring in L1 (`ttprof-rt` default).
    #[default]
    Ring,
    /// The tile's debug timestamper (`ttprof-rt`'s `timestamper` feature, C/C++
    /// `TTPROF_BACKEND_TIMESTAMPER`); run ids, wrapper zones and sum zones stay in the ring.
    Timestamper,
}

impl Backend {
    /// As users spell it: `ring` or `timestamper`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Ring => "ring",
            Backend::Timestamper => "timestamper",
        }
    }

    /// Parses [`Backend::name`]; the error says what is accepted.
    pub fn parse(s: &str) -> Result<Backend> {
        match s {
            "ring" => Ok(Backend::Ring),
            "timestamper" => Ok(Backend::Timestamper),
            _ => Err(Error::Argument {
                what: format!("unknown backend {s:?}: use ring or timestamper"),
            }),
        }
    }

    /// The kernel-crate feature that builds kernels for this backend (none for the ring).
    pub fn kernel_feature(self) -> Option<&'static str> {
        match self {
            Backend::Ring => None,
            Backend::Timestamper => Some("ttprof-rt/timestamper"),
        }
    }
}

/// Every tile's timestamper, drained and rebuilt.
#[derive(Debug)]
pub struct Stamps {
    tiles: Vec<TileDrain>,
    zones: BTreeMap<RingId, RiscZones>,
    /// Events of a RISC index past NCRISC (none in a valid stream).
    bad_risc: u64,
}

impl Stamps {
    /// Takes the timestamper of every tile of chip 0..`chips` ([`drain::init_tile`]).
    pub fn attach(mem: &dyn DeviceMemory, arch: Arch, enable: bool) -> Result<Stamps> {
        let mut tiles = Vec::new();
        for chip in 0..mem.geometry().chips {
            for tile in mem.tiles(chip) {
                drain::init_tile(mem, chip, tile, arch, enable)?;
                tiles.push(TileDrain::new(chip, tile, arch));
            }
        }
        Ok(Stamps {
            tiles,
            zones: BTreeMap::new(),
            bad_risc: 0,
        })
    }

    /// Drains every tile once.
    pub fn drain(&mut self, mem: &dyn DeviceMemory) -> Result<()> {
        let mut events = Vec::new();
        for t in &mut self.tiles {
            events.clear();
            t.drain(mem, &mut events)?;
            for e in &events {
                let Some(risc) = risc_of(e) else {
                    self.bad_risc += 1;
                    continue;
                };
                let id = RingId {
                    chip: t.chip,
                    tile: t.tile,
                    risc,
                };
                self.zones.entry(id).or_default().event(*e);
            }
        }
        Ok(())
    }

    /// Ends the streams: returns each RISC's records, the problems found (loss counted
    /// from the overflow bits and from what could not be paired) and the bytes read.
    pub fn finish(mut self) -> (BTreeMap<RingId, Vec<Record>>, Vec<Issue>, u64) {
        let bus = self.bus_bytes();
        let mut issues = Vec::new();
        for t in &self.tiles {
            let at = Location {
                chip: t.chip,
                x: t.tile.x,
                y: t.tile.y,
                risc: None,
            };
            if t.overflows > 0 {
                issues.push(Issue::error(
                    Some(at),
                    format!(
                        "the debug timestamper overflowed (both buffers full) before {} drain(s): at least one 16-byte \
                         unit (a unit holds parts of 2 or 3 events) was lost each time; the zones that lost an end are \
                         counted per RISC, those that lost both events cannot be (the timestamper does not count what \
                         it drops): drain more often (ttprof run --drain-every-cycles, default 2048 on this backend)",
                        t.overflows
                    ),
                ));
            }
            if t.parser.skipped_words > 0 {
                issues.push(Issue::error(
                    Some(at),
                    format!(
                        "{} word(s) of the timestamper stream were not events and were skipped",
                        t.parser.skipped_words
                    ),
                ));
            }
        }
        let mut out = BTreeMap::new();
        for (id, mut z) in std::mem::take(&mut self.zones) {
            z.end();
            if z.lost() > 0 {
                issues.push(Issue::error(
                    Some(id.location()),
                    format!(
                        "timestamper backend: {} zone(s) lost an end ({} open(s) without a close, {} close(s) without \
                         an open) and {} value or data record(s) lost payloads",
                        z.unpaired_opens + z.unpaired_closes,
                        z.unpaired_opens,
                        z.unpaired_closes,
                        z.broken_payloads
                    ),
                ));
            }
            out.insert(id, z.records);
        }
        if self.bad_risc > 0 {
            issues.push(Issue::error(
                None,
                format!(
                    "{} timestamper event(s) named no RISC and were skipped",
                    self.bad_risc
                ),
            ));
        }
        (out, issues, bus)
    }

    /// Bytes read from every tile's timestamper so far: buffer units and status words.
    pub fn bus_bytes(&self) -> u64 {
        self.tiles
            .iter()
            .map(|t| t.units * 16 + t.status_reads * 4)
            .sum()
    }

    /// The tiles drained.
    pub fn tiles(&self) -> impl Iterator<Item = (u32, NocCoord)> + '_ {
        self.tiles.iter().map(|t| (t.chip, t.tile))
    }
}

/// The readout of a drained run with the timestamper's `records` merged into the rings'
/// `drained` payloads (`merge_payload`): the profiler's L1 regions of `mem` and the merged
/// payloads in an in-memory [`crate::devmem::Snapshot`], read as any snapshot is.
pub fn merged_readout(
    mem: &dyn DeviceMemory,
    drained: &mut [(RingId, Vec<u8>)],
    records: BTreeMap<RingId, Vec<Record>>,
) -> Result<crate::readout::Readout> {
    let snap = crate::devmem::Snapshot::like(mem)?;
    for region in [
        riscv_linker::profiler::control_region(),
        riscv_linker::profiler::rings_region(),
    ] {
        snap.capture_region(mem, region.start, region.size)?;
    }
    let mut issues = Vec::new();
    merge_into(drained, records, &mut issues);
    for (id, bytes) in drained.iter() {
        snap.add_drained(id.chip, id.tile, id.risc, bytes)?;
    }
    let mut readout = crate::readout::read(&snap, false)?;
    readout.issues.extend(issues);
    Ok(readout)
}

/// Merges each RISC's timestamper records into its ring's drained payload
/// ([`merge_payload`]); a RISC with records but no ring, or a merge that fails, is an
/// issue and its records are not read.
pub(crate) fn merge_into(
    drained: &mut [(RingId, Vec<u8>)],
    records: BTreeMap<RingId, Vec<Record>>,
    issues: &mut Vec<Issue>,
) {
    for (id, extra) in records {
        if extra.is_empty() {
            continue;
        }
        let Some((_, bytes)) = drained.iter_mut().find(|(r, _)| *r == id) else {
            issues.push(Issue::error(
                Some(id.location()),
                format!(
                    "{} timestamper record(s) of a core whose ring has no records (no launch to attribute them to): not read",
                    extra.len()
                ),
            ));
            continue;
        };
        match merge_payload(bytes, &extra, id.risc) {
            Ok(merged) => *bytes = merged,
            Err(why) => issues.push(Issue::error(
                Some(id.location()),
                format!("timestamper records not merged into the ring's: {why}"),
            )),
        }
    }
}

/// A ring's payload (the bytes its consumer decoded) with `extra` records (in non-decreasing
/// time) merged in by time, re-encoded: each record at or before the first ring record of a
/// later time, so every zone follows the `Run` record of its launch and precedes the
/// wrapper zones that close after it. Every record is re-encoded in the smallest exact form
/// for its new reference, so the result decodes to the ring's records and `extra`, in order.
pub(crate) fn merge_payload(
    ring: &[u8],
    extra: &[Record],
    risc: Risc,
) -> std::result::Result<Vec<u8>, String> {
    let halves: Vec<u16> = ring
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let mut out: Vec<u16> = Vec::with_capacity(halves.len() + extra.len() * 10);
    let (mut at, mut ring_ref, mut out_ref) = (0usize, 0u64, 0u64);
    let mut next = extra.iter().peekable();
    let put =
        |r: &Record, out: &mut Vec<u16>, out_ref: &mut u64| -> std::result::Result<(), String> {
            let e = wire::encode(r, *out_ref).ok_or_else(|| {
                format!("{risc}: record {r:?} is earlier than the record before it")
            })?;
            out.extend_from_slice(e.as_slice());
            if let Some(t) = r.ref_time() {
                *out_ref = t;
            }
            Ok(())
        };
    while at < halves.len() {
        let (r, n) = match wire::decode(&halves[at..], ring_ref) {
            Ok(Decoded::Record(r, n)) => (r, n),
            Ok(Decoded::Pad) => break,
            Err(e) => {
                return Err(format!(
                    "{risc}: ring payload undecodable at byte {}: {e:?}",
                    2 * at
                ))
            }
        };
        at += n;
        if let Some(t) = r.ref_time() {
            ring_ref = t;
            let run = matches!(r, Record::Run { .. });
            while let Some(x) = next.next_if(|x| {
                let xt = x.ref_time().unwrap_or(0);
                xt < t || (xt == t && !run)
            }) {
                put(x, &mut out, &mut out_ref)?;
            }
        }
        put(&r, &mut out, &mut out_ref)?;
    }
    for x in next {
        put(x, &mut out, &mut out_ref)?;
    }
    Ok(out.iter().flat_map(|h| h.to_le_bytes()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(records: &[Record]) -> Vec<u8> {
        let mut r = 0;
        let mut out = Vec::new();
        for x in records {
            out.extend(
                wire::encode(x, r)
                    .unwrap()
                    .as_slice()
                    .iter()
                    .flat_map(|h| h.to_le_bytes()),
            );
            r = x.ref_time().unwrap_or(r);
        }
        out
    }

    fn dec(bytes: &[u8]) -> Vec<Record> {
        let h: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        let (mut at, mut r, mut out) = (0, 0, Vec::new());
        while at < h.len() {
            let Decoded::Record(x, n) = wire::decode(&h[at..], r).unwrap() else {
                break;
            };
            at += n;
            r = x.ref_time().unwrap_or(r);
            out.push(x);
        }
        out
    }

    #[test]
    fn timestamper_zones_land_between_their_run_and_its_wrappers() {
        let z = |id, end, duration| Record::Zone {
            id,
            end,
            duration,
            value: None,
        };
        let ring = [
            Record::Run {
                run_id: 1,
                time: 1000,
            },
            z(2, 5000, 3900), // KERNEL
            z(1, 5010, 4010), // FW
            Record::Run {
                run_id: 2,
                time: 90_000,
            },
            z(2, 99_000, 8000),
            z(1, 99_010, 9010),
        ];
        let extra = [
            z(7, 1200, 100),
            z(8, 1300, 300),
            Record::Event { id: 9, time: 4000 },
            z(7, 95_000, 70),
        ];
        let merged = dec(&merge_payload(&enc(&ring), &extra, Risc::Brisc).unwrap());
        assert_eq!(
            merged,
            [
                ring[0], extra[0], extra[1], extra[2], ring[1], ring[2], ring[3], extra[3],
                ring[4], ring[5]
            ]
        );
    }
}
