//! `profile_log_device.csv` in tt-metal's format, as its `process_device_log.py` reads it.
//!
//! ```text
//! ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 64
//! PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data
//! 0,1,1,BRISC,65537,1234,0,3,,,read-tile,ZONE_END,42,src/bin/reader.rs,
//! ```
//!
//! One row per marker ([`crate::markers`]): a zone gives a `ZONE_START` and a `ZONE_END` row,
//! an event `TS_EVENT`, timestamped data `TS_DATA` (payload in `data`), a sum zone
//! `ZONE_TOTAL` (total cycles in `data`, measurement count in the meta data). `PCIe slot` is
//! the chip index, `core_x`/`core_y` the tile's NoC0 coordinate, `timer_id` is
//! `(marker type << 16) | site id`, times are raw device cycles, `run host ID` is the run
//! id. Rows are grouped by chip, tile and RISC, each RISC's in time order. Text fields never
//! contain `,` (replaced by `;`), line breaks (replaced by spaces) or `"` (replaced by `'`:
//! tt-metal writes fields unquoted), so every row has exactly 15 columns for `csv.reader` and
//! pandas alike. Records whose site could not be resolved are written as
//! `unresolved-site-<id>`. Rows are written one ring at a time by a `RowWriter`, each
//! (run, site)'s text columns rendered once per ring.

pub mod rings;
mod sink;
pub use rings::{write_streamed, CsvWritten, RingCsv};
pub use sink::DeviceCsv;

use crate::atomic::write_atomic;
use crate::decode::{RecordKind, Records, NO_RUN};
use crate::error::Result;
use crate::inputs::Inputs;
use crate::markers::{markers, markers_after_view, Carry, Marker, MarkerType};
use crate::model::zone_records::ZoneRecords;
use crate::profile::Part;
use crate::readout::{Readout, RingId};
use crate::resolve::{Resolution, RingSites};
use crate::timebase::Timebase;
use riscv_linker::devfile::Geometry;
use std::io::{self, Write};
use std::path::Path;

/// The file name tt-metal uses.
pub const FILE_NAME: &str = "profile_log_device.csv";

/// Line 2, exactly as tt-metal writes it.
pub const HEADER: &str =
    "PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, \
run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data";

/// Line 1: arch, AICLK in MHz (the clock fit's for chip 0 when there is one, else the
/// nominal: see [`freq_mhz`]), worker cores per chip.
pub fn arch_line(g: &Geometry, mhz: u32) -> String {
    format!(
        "ARCH: {}, CHIP_FREQ[MHz]: {mhz}, Max Compute Cores: {}",
        g.arch.name(),
        g.tiles_per_chip
    )
}

/// The `CHIP_FREQ[MHz]` of a readout on `timebase`: chip 0's frequency, rounded (tt-metal
/// reads one integer for the whole file). When the chip's clock stepped during the run
/// (DVFS), that is the cycle-weighted mean over the synced span (total cycles / total host
/// time, [`crate::timebase::ChipTime::cycles_per_ns`]): right for totals, not for a single
/// zone; the op report and the other outputs convert through the fitted segments.
pub fn freq_mhz(timebase: &Timebase) -> u32 {
    timebase
        .chips
        .values()
        .next()
        .map_or(0, |c| (c.cycles_per_ns * 1000.0).round() as u32)
}

/// Writes the CSV to `path` atomically (never over one of `inputs`); returns the number of
/// marker rows.
pub fn write_file(
    path: &Path,
    readout: &Readout,
    sites: &Resolution,
    mhz: u32,
    inputs: &Inputs,
) -> Result<u64> {
    let mut rows = 0;
    write_atomic(path, inputs, |w| {
        rows = write(w, readout, sites, mhz)?;
        Ok(())
    })?;
    Ok(rows)
}

/// Writes the CSV to `w`; returns the number of marker rows.
pub fn write(
    w: &mut impl Write,
    readout: &Readout,
    sites: &Resolution,
    mhz: u32,
) -> io::Result<u64> {
    header(w, readout.geometry, mhz)?;
    let mut rows = RowWriter::new();
    let mut n = 0;
    for (i, ring) in readout.rings.iter().enumerate() {
        let none = RingSites::default();
        n += rows.ring(
            w,
            ring.id,
            &ring.records,
            sites.rings.get(i).unwrap_or(&none),
            None,
        )?;
    }
    Ok(n)
}

/// Writes the two header lines for a device of `geometry` clocked at `mhz`.
pub fn header(w: &mut impl Write, geometry: Geometry, mhz: u32) -> io::Result<()> {
    writeln!(w, "{}", arch_line(&geometry, mhz))?;
    writeln!(w, "{HEADER}")
}

/// Appends `s` with the characters that would break a row replaced: `,` by `;`, line
/// breaks by spaces, `"` by `'`.
pub(crate) fn push_text(out: &mut Vec<u8>, s: &str) {
    if !s.contains([',', '\n', '\r', '"']) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
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

/// Writes rows ring by ring, reusing its buffers and caches across rings.
#[derive(Default)]
pub(crate) struct RowWriter {
    buf: Vec<u8>,
    /// Rendered text columns per (site, marker type) of the current run.
    texts: Vec<Vec<u8>>,
    /// Per `site * 5 + marker type`: `(generation, index into texts)`; valid when the
    /// generation matches.
    slots: Vec<(u32, u32)>,
    generation: u32,
    /// The zones still open of a ring given in pieces ([`RowWriter::piece`]).
    carry: Carry,
}

/// Bytes buffered before they are handed to the writer.
const FLUSH_AT: usize = 256 << 10;

impl RowWriter {
    /// A writer with an empty buffer and no rendered text columns yet.
    pub(crate) fn new() -> RowWriter {
        RowWriter::default()
    }

    /// Writes the rows of one ring's records (`sites` binds them to metadata); returns the
    /// number of rows. `zones`: the ring's zones in opening order, when its view made them
    /// (not made again: [`markers_after_view`]).
    pub(crate) fn ring(
        &mut self,
        w: &mut impl Write,
        id: RingId,
        r: &Records,
        sites: &RingSites,
        zones: Option<&ZoneRecords>,
    ) -> io::Result<u64> {
        let markers = match zones {
            Some(zones) => markers_after_view(r, zones),
            None => markers(r),
        };
        self.rows(w, id, r, sites, markers)
    }

    /// Writes the rows of one piece of a ring given in pieces ([`crate::ring_pieces`]: its
    /// openings in opening order), the zones still open carried to the ring's next piece
    /// ([`Carry`]); returns the number of rows. The pieces' rows, in turn, are the whole
    /// ring's ([`RowWriter::ring`]).
    pub(crate) fn piece(
        &mut self,
        w: &mut impl Write,
        id: RingId,
        r: &Records,
        sites: &RingSites,
        part: Part,
    ) -> io::Result<u64> {
        if part.first {
            self.carry = Carry::default();
        }
        let joined = self.carry.join(r);
        let mut markers = self.carry.markers(&joined, part.last);
        let rows = self.rows(w, id, &joined, sites, &mut markers)?;
        self.carry.keep_open(&joined, markers);
        Ok(rows)
    }

    /// Writes the rows of `markers`, markers of `r`'s records.
    fn rows(
        &mut self,
        w: &mut impl Write,
        id: RingId,
        r: &Records,
        sites: &RingSites,
        markers: impl Iterator<Item = Marker>,
    ) -> io::Result<u64> {
        let mut prefix = Vec::new();
        write!(
            prefix,
            "{},{},{},{},",
            id.chip,
            id.tile.x,
            id.tile.y,
            id.risc.name()
        )?;
        let mut rows = 0;
        let mut run = None;
        for m in markers {
            let i = m.record as usize;
            let (site, row_run, kind) = (r.site[i], r.run_at(i), r.kind[i]);
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
            nums.u64(
                if matches!(m.kind, MarkerType::TsData | MarkerType::ZoneTotal) {
                    r.value_at(i)
                } else {
                    0
                },
            );
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
                    push_u64(b, r.value_at(i));
                    b.extend_from_slice(b"}\n");
                }
                RecordKind::Sum => {
                    b.extend_from_slice(b"{\"count\": ");
                    push_u64(b, r.count_at(i) as u64);
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
            Some(s) => push_text(&mut t, &s.name),
            None => t.extend_from_slice(crate::profile::unresolved_name(site).as_bytes()),
        }
        t.push(b',');
        t.extend_from_slice(kind.name().as_bytes());
        t.push(b',');
        match meta {
            Some(s) => {
                push_u64(&mut t, s.line as u64);
                t.push(b',');
                push_text(&mut t, &s.file);
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
        Digits {
            buf: [0; 96],
            len: 0,
        }
    }

    /// Appends `v` (the buffer holds four numbers of up to 20 digits and their commas;
    /// digits are written in place, without a copy).
    #[inline]
    fn u64(&mut self, mut v: u64) {
        let end = self.len + v.checked_ilog10().unwrap_or(0) as usize + 1;
        let Some(digits) = self.buf.get_mut(self.len..end) else {
            return;
        };
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
    use crate::model::fixture;
    use crate::sites::SiteMeta;
    use std::sync::Arc;

    /// The fixture's records, with the `work` zone renamed to something that would break
    /// an unquoted row.
    fn csv_text() -> String {
        let r = fixture::readout();
        let mut table = fixture::sites();
        let mut sites = crate::sites::SiteTable::default();
        for (id, m) in table.iter() {
            let mut m: SiteMeta = m.clone();
            if id == fixture::site::WORK {
                m.name = "\"work\", part\n2".into();
                m.file = "src/a,b.rs".into();
            }
            sites.insert(id, m).unwrap();
        }
        table = sites;
        let res = Resolution::uniform(&r, Arc::new(table));
        let mut out = Vec::new();
        write(&mut out, &r, &res, 1000).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Reads the file back the way tt-metal's `process_device_log.py` does: line 1 split on
    /// `,` and `:`, then `csv.reader` rows of exactly 15 fields with integer core, time and
    /// timer columns.
    #[test]
    fn reads_back_like_process_device_log() {
        let text = csv_text();
        let mut lines = text.lines();
        let info: Vec<&str> = lines.next().unwrap().split(',').collect();
        let value = |i: usize| info[i].split(':').next_back().unwrap().trim();
        assert_eq!(
            (
                value(0),
                value(1).parse::<u32>().unwrap(),
                value(2).parse::<u32>().unwrap()
            ),
            ("wormhole_b0", 1000, 2)
        );
        assert_eq!(lines.next().unwrap(), HEADER);
        let header: Vec<&str> = HEADER.split(',').map(str::trim).collect();
        assert_eq!(header.len(), 15);
        let mut types = std::collections::BTreeMap::<String, usize>::new();
        let mut rows = 0;
        for line in lines {
            let row: Vec<&str> = line.split(',').collect();
            assert_eq!(row.len(), 15, "{line}");
            assert!(
                row.iter().all(|f| !f.starts_with('"')),
                "a csv reader would take {line:?} for quoted"
            );
            for i in [0, 1, 2, 4, 5, 6, 7, 12] {
                row[i]
                    .trim()
                    .parse::<u64>()
                    .unwrap_or_else(|e| panic!("column {} of {line}: {e}", header[i]));
            }
            assert!(["BRISC", "NCRISC", "TRISC_0", "TRISC_1", "TRISC_2"].contains(&row[3]));
            let kind = row[11].to_string();
            let timer = row[4].parse::<u32>().unwrap();
            let packet = [
                "ZONE_START",
                "ZONE_END",
                "ZONE_TOTAL",
                "TS_DATA",
                "TS_EVENT",
            ]
            .iter()
            .position(|k| *k == kind)
            .unwrap();
            assert_eq!(
                timer >> 16,
                packet as u32,
                "timer id carries the packet type: {line}"
            );
            if row[10].starts_with("'work'") {
                assert_eq!((row[10], row[13]), ("'work'; part 2", "src/a;b.rs"));
            }
            *types.entry(kind).or_default() += 1;
            rows += 1;
        }
        // 10 rings x 3 ops: 4 zones, 1 event, 1 data, 1 sum each.
        let per = |k: &str| types.get(k).copied().unwrap_or(0);
        assert_eq!((per("ZONE_START"), per("ZONE_END")), (120, 120));
        assert_eq!(
            (per("TS_EVENT"), per("TS_DATA"), per("ZONE_TOTAL")),
            (30, 30, 30)
        );
        assert_eq!(rows, 330);
    }

    /// The same file through pandas, as tt-metal's contract reader loads it
    /// (`read_csv(skiprows=1)`), when Python with pandas is installed.
    #[test]
    fn pandas_reads_fifteen_named_columns() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, csv_text()).unwrap();
        let script = "import sys, pandas as pd\n\
            df = pd.read_csv(sys.argv[1], skiprows=1, header=0, na_filter=False)\n\
            cols = [str(c).strip() for c in df.columns]\n\
            print(len(cols), len(df), cols[5], cols[14], int(df.iloc[0, 5]), df.iloc[0, 11])";
        let out = match std::process::Command::new("python3")
            .args(["-c", script])
            .arg(&path)
            .output()
        {
            Ok(o) if o.status.success() => o,
            Ok(o) if String::from_utf8_lossy(&o.stderr).contains("No module named 'pandas'") => {
                eprintln!("SKIPPED: python3 has no pandas: cannot read the CSV back with it");
                return;
            }
            Ok(o) => panic!(
                "pandas could not read {}: {}",
                path.display(),
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(_) => {
                eprintln!("SKIPPED: no python3: cannot read the CSV back with pandas");
                return;
            }
        };
        let first_time = fixture::times(1, 0, riscv_linker::Risc::Brisc).fw.0;
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            format!("15 330 time[cycles since reset] meta data {first_time} ZONE_START")
        );
    }

    #[test]
    fn integers_print_in_decimal() {
        for v in [0u64, 7, 10, 99, 100, 12345, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            push_u64(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
    }

    /// Issue 41: a ring given in pieces writes the rows it writes whole, the zones still
    /// open at a piece's end closed among the next pieces' rows (a zone that ends after its
    /// parent among them).
    #[test]
    fn rings_in_pieces_write_the_rows_whole_rings_do() {
        let mut r = fixture::readout();
        let x = fixture::times(2, 0, r.rings[0].id.risc);
        r.rings[0].records.push(
            RecordKind::Zone,
            fixture::site::WORK,
            x.work.0 + 1,
            x.fw.1 + 5,
            0,
            0,
            2,
        );
        let p = fixture::profile_of(r, fixture::ARCH, true);
        let (files, _) = crate::sink::pieces::assert_pieces_write_what_whole_rings_do(
            "csv-pieces",
            &p,
            &|dir| Box::new(DeviceCsv::new(&dir.join(FILE_NAME), &Inputs::none())),
        );
        // And what the sink writes is the file of the whole readout.
        let mut want = Vec::new();
        write(&mut want, &p.readout, &p.sites, freq_mhz(&p.timebase)).unwrap();
        assert!(files[FILE_NAME] == want);
    }
}
