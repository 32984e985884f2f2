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
use crate::readout::{Readout, RingId};
use crate::resolve::RingSites;
use riscv_linker::devfile::Geometry;
use std::io::{self, Write};

/// Writes the two header lines for a device of `geometry`.
pub fn header(w: &mut impl Write, geometry: Geometry) -> io::Result<()> {
    let empty = Readout { geometry, rings: Vec::new(), issues: Vec::new(), bus_bytes: 0, tiles: 0, unused_tiles: 0 };
    writeln!(w, "{}", csv::arch_line(&empty))?;
    writeln!(w, "{}", csv::HEADER)
}

/// The text columns of one (run, site): `name` and `line,file` as they appear in a row.
struct SiteText {
    name: Vec<u8>,
    line_file: Vec<u8>,
}

/// Writes rows ring by ring, reusing its buffers and caches across rings.
#[derive(Default)]
pub struct RowWriter {
    buf: Vec<u8>,
    texts: Vec<SiteText>,
    /// Per site id: `(generation, index into texts)`; valid when the generation matches.
    slots: Vec<(u32, u32)>,
    generation: u32,
}

/// Bytes buffered before they are handed to the writer.
const FLUSH_AT: usize = 1 << 20;

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
            let text = self.text(sites, row_run, site);
            let b = &mut self.buf;
            b.extend_from_slice(&prefix);
            push_u64(b, ((m.kind as u32) << 16 | site as u32) as u64);
            b.push(b',');
            push_u64(b, m.time);
            b.push(b',');
            push_u64(b, if matches!(m.kind, MarkerType::TsData | MarkerType::ZoneTotal) { r.value[i] } else { 0 });
            b.push(b',');
            if row_run != NO_RUN {
                push_u64(b, row_run as u64);
            }
            b.extend_from_slice(b",,,");
            b.extend_from_slice(&self.texts[text].name);
            b.push(b',');
            b.extend_from_slice(m.kind.name().as_bytes());
            b.push(b',');
            b.extend_from_slice(&self.texts[text].line_file);
            b.push(b',');
            match kind {
                RecordKind::ValueZone => {
                    b.extend_from_slice(b"{\"value\": ");
                    push_u64(b, r.value[i]);
                    b.push(b'}');
                }
                RecordKind::Sum => {
                    b.extend_from_slice(b"{\"count\": ");
                    push_u64(b, r.count[i] as u64);
                    b.push(b'}');
                }
                _ => {}
            }
            b.push(b'\n');
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

    /// Index in `texts` of `site`'s columns in `run`, rendered on first use.
    fn text(&mut self, sites: &RingSites, run: u32, site: u16) -> usize {
        if self.slots.len() <= site as usize {
            self.slots.resize(site as usize + 1, (0, 0));
        }
        let (generation, index) = self.slots[site as usize];
        if generation == self.generation {
            return index as usize;
        }
        let mut t = SiteText { name: Vec::new(), line_file: Vec::new() };
        match sites.site(run, site) {
            Some(s) => {
                push_text(&mut t.name, &s.name);
                push_u64(&mut t.line_file, s.line as u64);
                t.line_file.push(b',');
                push_text(&mut t.line_file, &s.file);
            }
            None => {
                t.name.extend_from_slice(b"unresolved-site-");
                push_u64(&mut t.name, site as u64);
                t.line_file.extend_from_slice(b"0,");
            }
        }
        self.texts.push(t);
        let index = self.texts.len() - 1;
        self.slots[site as usize] = (self.generation, index as u32);
        index
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

/// Appends `s` as `csv::write` does: `,` becomes `;`, line breaks spaces, `"` becomes `'`.
fn push_text(out: &mut Vec<u8>, s: &str) {
    for c in s.chars() {
        let c = match c {
            ',' => ';',
            '\n' | '\r' => ' ',
            '"' => '\'',
            c => c,
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
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
        csv::write(&mut want, &r, &res).unwrap();
        let mut got = Vec::new();
        header(&mut got, r.geometry).unwrap();
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
