//! One ring's state across drains, and one drain of it.
//!
//! A drain reads the ring's `HEAD` (4 bytes), then only the live span `[TAIL, HEAD)`
//! ([`super::span`]), decodes it into the ring's compact [`ZoneTable`] and, when consuming,
//! writes `TAIL`. The counters that only matter for the final report (`DROPPED`, `STALLS`,
//! `RUN_ID`, `STATE`) are read once more at the end ([`RingEntry::refresh`]), not per drain:
//! per drain the control cost is one word.

use super::checks::LaunchTimes;
use super::control::{self, DRAIN_FIRST, DRAIN_WORDS};
use super::decoded::Decoded;
use super::span::{Span, SpanDecoder, SpanOutput, SpanStats};
use super::RingReport;
use crate::decode::{Pieces, Records};
use crate::devmem::DeviceMemory;
use crate::error::Result;
use crate::issue::Issue;
use riscv_linker::profiler::{ring, RingMap};

pub(super) struct RingEntry {
    pub report: RingReport,
    pub span: SpanDecoder,
    /// Records decoded and not yet taken (a compact table unless the ring is read whole).
    pub table: Decoded,
    /// Consumed position (our copy of `TAIL`).
    pub tail: u32,
    /// Control words read by `attach`, used by the first drain instead of a second read.
    pub fresh: bool,
    /// The words that change while the ring runs (`HEAD..=STATE`) may have changed since
    /// they were last read: set by every drain, for the producer runs on after it (also the
    /// drain that found the ring and used the words read then), cleared by
    /// [`RingEntry::refresh`], which reads them again.
    pub(crate) stale: bool,
    /// Position of the tile in device order (rings are kept in chip, tile, RISC order).
    pub(crate) tile_index: usize,
    /// Where the ring's block and bytes are (its tile's layout).
    pub(crate) map: RingMap,
    /// Records and zones decoded from this ring so far (taken or not).
    pub rows: u64,
    pub zones: u64,
    /// Bytes of the last span drained (how full the ring was).
    pub(crate) last_span: u32,
    /// Attached where an earlier consumer left `TAIL` (not at the ring's first byte): the
    /// records up to the next `Run` have times relative to a reference this drainer never
    /// saw, and no known launch. Counted until that `Run`, then reported once.
    pub(crate) mid_stream: Option<u64>,
    /// `TAIL` when this drainer attached: bytes an earlier reader consumed (freed) before,
    /// unless a recording of them was fed in ([`RingEntry::feed_drained`]).
    pub(crate) consumed_before: u32,
    /// A ring read one at a time ([`super::RingReader`]): its drained recording is decoded
    /// when its turn comes; the position its issues take among the attach's issues.
    pub(crate) deferred: Option<usize>,
}

impl RingEntry {
    pub(super) fn new(
        report: RingReport,
        tile_index: usize,
        map: RingMap,
        keep_payload: bool,
    ) -> RingEntry {
        let mut span = SpanDecoder::default();
        if keep_payload {
            span.keep_payload();
        }
        let tail = report.control().tail;
        RingEntry {
            report,
            span,
            table: Decoded::default(),
            tail,
            fresh: true,
            stale: false,
            tile_index,
            map,
            rows: 0,
            zones: 0,
            last_span: 0,
            mid_stream: (tail != 0).then_some(0),
            consumed_before: tail,
            deferred: None,
        }
    }

    /// Reads `HEAD` (or uses the words `attach` just read), then drains the live span.
    /// Marks the ring stale: what the producer does after this drain is read by the next one
    /// or by [`RingEntry::refresh`] at the end.
    pub(super) fn drain(
        &mut self,
        mem: &dyn DeviceMemory,
        consume: bool,
        issues: &mut Vec<Issue>,
    ) -> Result<()> {
        let id = self.report.id;
        let before = mem.bytes_read();
        if !std::mem::take(&mut self.fresh) {
            self.report.control_mut().head =
                mem.read_u32(id.chip, id.tile, self.map.ring_block(id.risc) + ring::HEAD)?;
        }
        // Also when the words were fresh: they were current when the ring was found, not
        // after this drain. (Not marking it here made the end skip a ring found by the last
        // drain before its kernel ended: its later records, wrapper zones included, and its
        // final STATE were never read.)
        self.stale = true;
        let result = self.drain_span(mem, consume, issues);
        self.report.bus_bytes += mem.bytes_read() - before;
        result
    }

    /// Reads every word that changes while the ring runs (`HEAD..=STATE`) if any is stale,
    /// and drains what the producer published since the last drain.
    pub(crate) fn refresh(
        &mut self,
        mem: &dyn DeviceMemory,
        consume: bool,
        issues: &mut Vec<Issue>,
    ) -> Result<()> {
        if std::mem::take(&mut self.fresh) {
            // Found by this very probe: the words `attach` read are current; drain with them.
            let before = mem.bytes_read();
            let result = self.drain_span(mem, consume, issues);
            self.report.bus_bytes += mem.bytes_read() - before;
            return result;
        }
        if !self.stale {
            return Ok(());
        }
        let id = self.report.id;
        let before = mem.bytes_read();
        let mut w = [0u32; DRAIN_WORDS];
        mem.read_words(
            id.chip,
            id.tile,
            self.map.ring_block(id.risc) + DRAIN_FIRST,
            &mut w,
        )?;
        self.report.control_mut().set_live(&w);
        self.stale = false;
        let result = self.drain_span(mem, consume, issues);
        self.report.bus_bytes += mem.bytes_read() - before;
        result
    }

    /// Decodes the payload a consumer drained from this ring before the memory was
    /// recorded (a snapshot of a drained run): the ring's stream up to its `TAIL`, decoded
    /// before the live span, from the ring's first record. `mem` hands it over a piece at a
    /// time ([`DeviceMemory::drained_payload`]), so it is never held whole: a record a piece
    /// cuts is carried into the next ([`Pieces`]), and the rows are those of decoding it in
    /// one piece.
    pub(crate) fn feed_drained(&mut self, mem: &dyn DeviceMemory, issues: &mut Vec<Issue>) {
        self.feed_drained_to(mem, issues, None);
    }

    /// [`RingEntry::feed_drained`], and with `out = Some((rows, hand))`, the decoded rows
    /// handed to `hand` whenever `rows` or more are held (between the payload's pieces), so
    /// the rows held stay about a piece however long the payload (no room is made for all
    /// of it); what is left stays in the table. The counts are those of decoding it whole.
    pub(crate) fn feed_drained_to(
        &mut self,
        mem: &dyn DeviceMemory,
        issues: &mut Vec<Issue>,
        mut out: Option<(usize, &mut dyn FnMut(Records))>,
    ) {
        let id = self.report.id;
        let mut mark = self.table.mark();
        match mem.drained_payload_len(id.chip, id.tile, id.risc) {
            // No room made for no payload: a ring without records keeps no columns.
            0 => {}
            _ if out.is_some() => {}
            len => self.table.reserve_for(len),
        }
        let mut counted = Counted::default();
        let (table, span, mut pieces) = (&mut self.table, &mut self.span, Pieces::new());
        let read = mem.drained_payload(id.chip, id.tile, id.risc, &mut |piece| {
            let decoded = pieces.feed(piece, |b| table.decode_piece(&mut span.decoder, b));
            span.keep_decoded(decoded);
            if let Some((rows, hand)) = &mut out {
                if table.len() >= *rows {
                    counted.add(table, mark);
                    hand(table.take_records());
                    mark = table.mark();
                }
            }
        });
        let (total, good) = (pieces.total(), pieces.good());
        match read {
            // No drained payload (live memory): the ring reads from its live span alone.
            Ok(false) => return,
            Ok(true) => {}
            Err(e) => issues.push(Issue::error(
                Some(id.location()),
                format!("the recorded drained payload could not be read after {total} bytes: {e}"),
            )),
        }
        counted.add(&self.table, mark);
        self.report.payload_bytes += good;
        self.rows += counted.rows;
        self.zones += counted.zones;
        self.report.losses_in_band += counted.losses;
        self.mid_stream = None;
        self.consumed_before = 0;
        if good < total {
            let lost = total - good;
            self.report.skipped_bytes += lost;
            issues.push(
                Issue::error(
                    Some(id.location()),
                    format!("the recorded drained payload stops decoding after {good} of {total} bytes: {lost} byte(s) skipped"),
                )
                .with_count(lost),
            );
        }
    }

    /// Reports what is still pending at the end of a readout (records read after attaching
    /// mid-stream with no `Run` record since).
    pub(crate) fn settle(&mut self, issues: &mut Vec<Issue>) {
        if let Some(n) = self.mid_stream.take() {
            issues.extend(mid_stream_issue(&self.report, n));
        }
    }

    fn drain_span(
        &mut self,
        mem: &dyn DeviceMemory,
        consume: bool,
        issues: &mut Vec<Issue>,
    ) -> Result<()> {
        let id = self.report.id;
        let r = &mut self.report;
        let mut c = r.control();
        c.tail = self.tail;
        r.dropped = c.dropped;
        r.stalls = c.stalls;
        r.state = c.state;
        if r.corrupt.is_none() {
            if let Err(what) = control::check_positions(&c) {
                issues.push(Issue::error(
                    Some(id.location()),
                    format!("{what}; this ring's data is skipped from here"),
                ));
                r.corrupt = Some("control words".into());
            }
        }
        let head = c.head;
        self.last_span = head.wrapping_sub(self.tail);
        if r.corrupt.is_some() {
            // Skip what the producer wrote since: it cannot be decoded without the lost state.
            let skipped = head.wrapping_sub(self.tail);
            if skipped <= c.capacity {
                r.skipped_bytes += skipped as u64;
                self.tail = head;
            }
        } else if head != self.tail {
            let mark = self.table.mark();
            let mut stats = SpanStats::default();
            let base = self.map.ring_data(id.risc).start;
            let span = Span {
                tail: self.tail,
                head,
                capacity: c.capacity,
            };
            let read = |off: u32, w: &mut [u32]| mem.read_words(id.chip, id.tile, base + off, w);
            let result = self.span.decode(span, read, &mut self.table, &mut stats);
            r.payload_bytes += stats.payload_bytes;
            r.skipped_bytes += stats.skipped_bytes;
            self.rows += self.table.rows_since(mark) as u64;
            if let Some(before_run) = &mut self.mid_stream {
                let run = self.table.first_run_since(mark);
                *before_run += (run.unwrap_or(self.table.len()) - mark.rows) as u64;
                if run.is_some() {
                    issues.extend(mid_stream_issue(r, *before_run));
                    self.mid_stream = None;
                }
            }
            self.zones += self.table.zones_since(mark) as u64;
            r.losses_in_band += self.table.losses_since(mark);
            if let Err(err) = result {
                let consumed = stats.payload_bytes + stats.skipped_bytes;
                let lost = head.wrapping_sub(self.tail) as u64 - consumed;
                r.skipped_bytes += lost;
                issues.push(
                    Issue::error(
                        Some(id.location()),
                        format!("{err}; {lost} byte(s) from there to HEAD and everything after are skipped"),
                    )
                    .with_count(lost),
                );
                r.corrupt = Some(err.to_string());
            }
            self.tail = head;
        }
        if consume && r.control().tail != self.tail {
            mem.write_u32(
                id.chip,
                id.tile,
                self.map.ring_block(id.risc) + ring::TAIL,
                self.tail,
            )?;
            r.control_mut().tail = self.tail;
        }
        Ok(())
    }
}

/// The warning about records read after attaching mid-stream (none if there are none).
fn mid_stream_issue(r: &RingReport, records: u64) -> Option<Issue> {
    (records > 0).then(|| {
        Issue::warning(
            Some(r.id.location()),
            format!(
                "attached where an earlier consumer left TAIL ({:#x}): {records} record(s) before the next Run record have \
                 times relative to a reference this readout never saw (they may be off by multiples of 2^16 or 2^32 \
                 cycles) and no known launch",
                r.control().tail
            ),
        )
        .with_count(records)
    })
}

/// Rows, zones and in-band losses decoded, counted a piece at a time.
#[derive(Default)]
struct Counted {
    rows: u64,
    zones: u64,
    losses: u64,
}

impl Counted {
    /// The rows `table` gained since `mark`.
    fn add(&mut self, table: &Decoded, mark: super::decoded::Mark) {
        self.rows += table.rows_since(mark) as u64;
        self.zones += table.zones_since(mark) as u64;
        self.losses += table.losses_since(mark);
    }
}

/// Warnings and errors about a ring's final state (its records' times are checked by
/// [`super::checks::launch_times`] on the rich view).
/// `faulted`: the device says its last run stopped on a fault.
pub(super) fn final_issues(r: &RingReport, faulted: bool) -> Vec<Issue> {
    let mut times = LaunchTimes::default();
    times.push(&r.records);
    final_issues_after(r, times, faulted)
}

/// [`final_issues`] of a ring whose records' times `times` checked as they came.
pub(super) fn final_issues_after(r: &RingReport, times: LaunchTimes, faulted: bool) -> Vec<Issue> {
    let at = Some(r.id.location());
    let mut out = times.finish(at);
    if r.dropped > 0 {
        // Lost records are a data problem (exit 2), whatever the policy that chose to lose them.
        let running = r.state & ring::STATE_RUNNING != 0;
        let unreported = (r.dropped as u64).saturating_sub(r.losses_in_band);
        let tail = if unreported == 0 {
            "all of them reported in-band by Loss records".to_string()
        } else if running {
            format!("{} reported in-band by Loss records, {unreported} not yet (the kernel is still running)", r.losses_in_band)
        } else {
            format!(
                "{} reported in-band by Loss records, {unreported} after the kernel's last record",
                r.losses_in_band
            )
        };
        out.push(
            Issue::error(
                at,
                format!(
                    "{} record(s) dropped because the ring was full (Drop policy, or Block without a consumer): the \
                     outputs miss them; {tail}",
                    r.dropped
                ),
            )
            .with_count(r.dropped as u64),
        );
    }
    if r.state & ring::STATE_PANICKED != 0 {
        out.push(Issue::error(
            at,
            "the kernel panicked (STATE bit 2); its zones up to the panic were read",
        ));
    } else if r.state & ring::STATE_STOPPED != 0 {
        out.push(Issue::error(
            at,
            "the core was stopped by a fault before its kernel ended (STATE bit 3): its records up to the stop were \
             read, what it would have done after is missing",
        ));
    } else if r.state & ring::STATE_RUNNING != 0 && faulted {
        out.push(Issue::error(
            at,
            "the run stopped on a fault while this kernel ran: the records it wrote after its last published HEAD are \
             lost (ttprof run and ttprof::session publish them from the stopped core; a readout of the memory alone \
             cannot)",
        ));
    } else if r.state & ring::STATE_RUNNING != 0 {
        out.push(Issue::warning(
            at,
            "a kernel is still running: records after the last published HEAD are not read yet",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::devmem::{DeviceMemory, Snapshot};
    use crate::error::Result;
    use crate::inputs::Inputs;
    use riscv_linker::devfile::Geometry;
    use riscv_linker::{NocCoord, Risc};

    /// A snapshot whose drained payload is handed on in pieces of the given sizes, in turn.
    struct Cut<'a> {
        inner: &'a Snapshot,
        sizes: &'a [usize],
    }

    impl DeviceMemory for Cut<'_> {
        fn geometry(&self) -> Geometry {
            self.inner.geometry()
        }
        fn tiles(&self, chip: u32) -> Vec<NocCoord> {
            self.inner.tiles(chip)
        }
        fn read_u32(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32> {
            self.inner.read_u32(chip, tile, addr)
        }
        fn write_u32(&self, chip: u32, tile: NocCoord, addr: u32, v: u32) -> Result<()> {
            self.inner.write_u32(chip, tile, addr, v)
        }
        fn bytes_read(&self) -> u64 {
            self.inner.bytes_read()
        }
        fn describe(&self) -> String {
            self.inner.describe()
        }
        fn drained_payload(
            &self,
            chip: u32,
            tile: NocCoord,
            risc: Risc,
            piece: &mut dyn FnMut(&[u8]),
        ) -> std::io::Result<bool> {
            let mut whole = Vec::new();
            let any = self
                .inner
                .drained_payload(chip, tile, risc, &mut |b| whole.extend_from_slice(b))?;
            let mut at = 0;
            for &n in self.sizes.iter().cycle() {
                if at >= whole.len() {
                    break;
                }
                let to = (at + n).min(whole.len());
                piece(&whole[at..to]);
                at = to;
            }
            Ok(any)
        }
    }

    /// Issue 41: a ring's drained payload is decoded a piece at a time, never held whole.
    /// Cut anywhere (every byte its own piece, pieces shorter and longer than a record,
    /// cuts inside records), with a cut record and junk after its last record, it reads as
    /// in one piece: the same records, counts and issues.
    #[test]
    fn drained_payload_cut_anywhere_reads_as_in_one_piece() {
        let dir = crate::testing::temp_dir("drained-pieces");
        let run = crate::testing::long_run::write(&dir, 10_000, 2_000).unwrap();
        let snap = Snapshot::load(&run.snapshot, &Inputs::none()).unwrap();
        let (tile, risc) = (snap.tiles(0)[0], Risc::Ncrisc);
        let check = |snap: &Snapshot, what: &str| {
            let whole = super::super::read(snap, false).unwrap();
            assert!(whole.rings.iter().map(|r| r.records.len()).sum::<usize>() > 9_000);
            for sizes in [&[1][..], &[5, 3, 7, 31, 2, 64], &[6], &[4096, 1]] {
                let cut = super::super::read(&Cut { inner: snap, sizes }, false).unwrap();
                assert_eq!(cut.rings.len(), whole.rings.len());
                for (a, b) in cut.rings.iter().zip(&whole.rings) {
                    // Not assert_eq: a failure would print every record.
                    assert!(a.records == b.records, "{what} {sizes:?}: {:?}", a.id);
                    assert_eq!(
                        (a.payload_bytes, a.skipped_bytes, a.losses_in_band),
                        (b.payload_bytes, b.skipped_bytes, b.losses_in_band),
                        "{what} {sizes:?}"
                    );
                }
                let text = |r: &super::super::Readout| -> Vec<String> {
                    r.issues.iter().map(|i| i.to_string()).collect()
                };
                assert_eq!(text(&cut), text(&whole), "{what} {sizes:?}");
            }
            whole
        };
        check(&snap, "whole records");
        // A record cut short at the end: its bytes are skipped, said once.
        snap.add_drained(0, tile, risc, &[0x12, 0x34, 0x56, 0x78, 0x9a])
            .unwrap();
        let cut_short = check(&snap, "a cut record");
        let said: Vec<String> = cut_short.issues.iter().map(|i| i.to_string()).collect();
        assert!(
            said.iter()
                .any(|s| s.contains("stops decoding") && s.contains("5 byte(s) skipped")),
            "{said:?}"
        );
        // Junk, then more junk: decoding stops at the first, the rest is skipped.
        snap.add_drained(0, tile, risc, &[0xff; 100]).unwrap();
        check(&snap, "junk");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
