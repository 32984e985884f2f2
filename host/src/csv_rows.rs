//! `profile_log_device.csv` written one ring at a time, fast: for readouts too large to
//! hold (capture, the 70 M-zone scale run), where rows are produced ring by ring and a
//! ring's records are dropped once written.
//!
//! The bytes are exactly [`crate::csv::write`]'s for the same records and sites (a test
//! compares them): the same header lines ([`crate::csv::arch_line`], [`crate::csv::HEADER`]),
//! the same marker order ([`crate::markers::markers`]), the same text escaping. What differs
//! is speed: integers are formatted by hand, and each (run, site)'s text columns are
//! rendered once per ring instead of once per row.

use crate::csv;
use crate::decode::{RecordKind, Records, NO_RUN};
use crate::markers::{markers, MarkerType};
use crate::readout::RingId;
use crate::resolve::RingSites;
use riscv_linker::devfile::Geometry;
use std::io::{self, Write};

/// Writes the two header lines for a device of `geometry` clocked at `mhz`.
pub fn header(w: &mut impl Write, geometry: Geometry, mhz: u32) -> io::Result<()> {
    writeln!(w, "{}", csv::arch_line(&geometry, mhz))?;
    writeln!(w, "{}", csv::HEADER)
}

/// Writes rows ring by ring, reusing its buffers and caches across rings.
#[derive(Default)]
pub struct RowWriter {
    buf: Vec<u8>,
    /// Rendered text columns per (site, marker type) of the current run.
    texts: Vec<Vec<u8>>,
    /// Per `site * 5 + marker type`: `(generation, index into texts)`; valid when the
    /// generation matches.
    slots: Vec<(u32, u32)>,
    generation: u32,
}

/// Bytes buffered before they are handed to the writer.
const FLUSH_AT: usize = 256 << 10;

impl RowWriter {
    pub fn new() -> RowWriter {
        RowWriter::default()
    }

    /// Writes the rows of one ring's records (`sites` binds them to metadata); returns the
    /// number of rows.
    pub fn ring(&mut self, w: &mut impl Write, id: RingId, r: &Records, sites: &RingSites) -> io::Result<u64> {
        let mut prefix = Vec::new();
        write!(prefix, "{},{},{},{},", id.chip, id.tile.x, id.tile.y, id.risc.name())?;
        let mut rows = 0;
        let mut run = None;
        for m in markers(r) {
            let i = m.record as usize;
            let (site, row_run, kind) = (r.site[i], r.run[i], r.kind[i]);
            if run != Some(row_run) {
                run = Some(row_run);
                self.new_run();
            }
            let mid = self.text(sites, row_run, site, m.kind);
            // The numbers `timer_id,time,data,run` in one go.
            let mut nums = Digits::new();
            nums.u64(((m.kind as u32) << 16 | site as u32) as u64);
            nums.comma();
            nums.u64(m.time);
            nums.comma();
            nums.u64(if matches!(m.kind, MarkerType::TsData | MarkerType::ZoneTotal) { r.value[i] } else { 0 });
            nums.comma();
            if row_run != NO_RUN {
                nums.u64(row_run as u64);
            }
            let b = &mut self.buf;
            b.extend_from_slice(&prefix);
            b.extend_from_slice(nums.as_slice());
            b.extend_from_slice(&self.texts[mid]);
            match kind {
                RecordKind::ValueZone => {
                    b.extend_from_slice(b"{\"value\": ");
                    push_u64(b, r.value[i]);
                    b.extend_from_slice(b"}\n");
                }
                RecordKind::Sum => {
                    b.extend_from_slice(b"{\"count\": ");
                    push_u64(b, r.count[i] as u64);
                    b.extend_from_slice(b"}\n");
                }
                _ => b.push(b'\n'),
            }
            rows += 1;
            if b.len() >= FLUSH_AT {
                w.write_all(b)?;
                b.clear();
            }
        }
        w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(rows)
    }

    /// Forgets the per-site texts (they belong to one run's kernel).
    fn new_run(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.iter_mut().for_each(|s| *s = (0, 0));
            self.generation = 1;
        }
        self.texts.clear();
    }

    /// Index in `texts` of the columns from `run host ID`'s end to `meta data`'s start of a
    /// `kind` marker of `site` in `run` (`,,,name,TYPE,line,file,`), rendered on first use.
    fn text(&mut self, sites: &RingSites, run: u32, site: u16, kind: MarkerType) -> usize {
        let slot = site as usize * MARKER_TYPES + kind as usize;
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, (0, 0));
        }
        let (generation, index) = self.slots[slot];
        if generation == self.generation {
            return index as usize;
        }
        let mut t = b",,,".to_vec();
        let meta = sites.site(run, site);
        match meta {
            Some(s) => csv::push_text(&mut t, &s.name),
            None => {
                t.extend_from_slice(b"unresolved-site-");
                push_u64(&mut t, site as u64);
            }
        }
        t.push(b',');
        t.extend_from_slice(kind.name().as_bytes());
        t.push(b',');
        match meta {
            Some(s) => {
                push_u64(&mut t, s.line as u64);
                t.push(b',');
                csv::push_text(&mut t, &s.file);
            }
            None => t.extend_from_slice(b"0,"),
        }
        t.push(b',');
        self.texts.push(t);
        let index = self.texts.len() - 1;
        self.slots[slot] = (self.generation, index as u32);
        index
    }
}

/// Marker types (`MarkerType` values are `0..5`).
const MARKER_TYPES: usize = 5;

/// A few decimal numbers and commas, formatted on the stack.
struct Digits {
    buf: [u8; 96],
    len: usize,
}

impl Digits {
    fn new() -> Digits {
        Digits { buf: [0; 96], len: 0 }
    }

    /// Appends `v` (the buffer holds four numbers of up to 20 digits and their commas;
    /// digits are written in place, without a copy).
    #[inline]
    fn u64(&mut self, mut v: u64) {
        let end = self.len + v.checked_ilog10().unwrap_or(0) as usize + 1;
        let Some(digits) = self.buf.get_mut(self.len..end) else { return };
        for d in digits.iter_mut().rev() {
            *d = b'0' + (v % 10) as u8;
            v /= 10;
        }
        self.len = end;
    }

    #[inline]
    fn comma(&mut self) {
        if let Some(b) = self.buf.get_mut(self.len) {
            *b = b',';
            self.len += 1;
        }
    }

    fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Appends `v` in decimal.
#[inline]
fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;
    use crate::sites::{SiteMeta, SiteTable};
    use std::sync::Arc;

    /// The fixture readout with a site whose name and file need escaping, some records
    /// with values and counts, and a ring without any resolution.
    #[test]
    fn rows_are_byte_identical_to_the_csv_writer() {
        let mut r = fixture::readout();
        let mut table = SiteTable::default();
        for (id, m) in fixture::sites().iter() {
            let mut m: SiteMeta = m.clone();
            if id == fixture::site::WORK {
                m.name = "\"work\", part\r\n2 \u{e9}".into();
                m.file = "src/a,b.rs".into();
            }
            table.insert(id, m).unwrap();
        }
        r.rings[0].records.push(RecordKind::ValueZone, fixture::site::WORK, 5, 7, 1 << 40, 0, NO_RUN);
        r.rings[0].records.push(RecordKind::Zone, 999, 8, 9, 0, 0, 1);
        let mut res = crate::resolve::Resolution::uniform(&r, Arc::new(table));
        res.rings[1] = RingSites::default();
        let mut want = Vec::new();
        csv::write(&mut want, &r, &res, 1000).unwrap();
        let mut got = Vec::new();
        header(&mut got, r.geometry, 1000).unwrap();
        let mut writer = RowWriter::new();
        let mut rows = 0;
        for (i, ring) in r.rings.iter().enumerate() {
            rows += writer.ring(&mut got, ring.id, &ring.records, &res.rings[i]).unwrap();
        }
        let (got, want_text) = (String::from_utf8(got).unwrap(), String::from_utf8(want.clone()).unwrap());
        for (n, (a, b)) in got.lines().zip(want_text.lines()).enumerate() {
            assert_eq!(a, b, "line {}", n + 1);
        }
        assert_eq!(got.len(), want_text.len());
        assert_eq!(rows as usize, want.iter().filter(|&&b| b == b'\n').count() - 2);
    }

    #[test]
    fn integers_print_in_decimal() {
        for v in [0u64, 7, 10, 99, 100, 12345, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            push_u64(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
    }
}
