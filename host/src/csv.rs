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
//! tt-metal writes fields unquoted, and a CSV reader takes a field that starts with `"` for
//! a quoted one), so every row has exactly 15 columns for `csv.reader` and pandas alike.
//! Records whose site could not be resolved are written as `unresolved-site-<id>`.

use crate::atomic::write_atomic;
use crate::decode::{RecordKind, NO_RUN};
use crate::error::Result;
use crate::markers::{markers, MarkerType};
use crate::readout::Readout;
use crate::resolve::Resolution;
use crate::timebase::Timebase;
use riscv_linker::devfile::Geometry;
use std::io::{self, Write};
use std::path::Path;

/// The file name tt-metal uses.
pub const FILE_NAME: &str = "profile_log_device.csv";

/// Line 2, exactly as tt-metal writes it.
pub const HEADER: &str = "PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, \
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
        .first()
        .map_or(0, |c| (c.cycles_per_ns * 1000.0).round() as u32)
}

/// Writes the CSV to `path` atomically; returns the number of marker rows.
pub fn write_file(path: &Path, readout: &Readout, sites: &Resolution, mhz: u32) -> Result<u64> {
    let mut rows = 0;
    write_atomic(path, |w| {
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
    writeln!(w, "{}", arch_line(&readout.geometry, mhz))?;
    writeln!(w, "{HEADER}")?;
    let mut rows = 0;
    let mut line = Vec::with_capacity(256);
    for (ri, ring) in readout.rings.iter().enumerate() {
        let r = &ring.records;
        let id = ring.id;
        let prefix = format!("{},{},{},{},", id.chip, id.tile.x, id.tile.y, id.risc.name());
        for m in markers(r) {
            let i = m.record as usize;
            let (site, run) = (r.site[i], r.run[i]);
            let meta = sites.site(ri, run, site);
            let data = match m.kind {
                MarkerType::TsData | MarkerType::ZoneTotal => r.value[i],
                _ => 0,
            };
            line.clear();
            line.extend_from_slice(prefix.as_bytes());
            let timer_id = (m.kind as u32) << 16 | site as u32;
            write!(line, "{timer_id},{},{data},", m.time)?;
            if run != NO_RUN {
                write!(line, "{run}")?;
            }
            line.extend_from_slice(b",,,");
            match meta {
                Some(s) => push_text(&mut line, &s.name),
                None => write!(line, "unresolved-site-{site}")?,
            }
            write!(line, ",{},", m.kind.name())?;
            match meta {
                Some(s) => {
                    write!(line, "{},", s.line)?;
                    push_text(&mut line, &s.file);
                }
                None => line.extend_from_slice(b"0,"),
            }
            line.push(b',');
            match (r.kind[i], m.kind) {
                (RecordKind::ValueZone, _) => write!(line, "{{\"value\": {}}}", r.value[i])?,
                (RecordKind::Sum, _) => write!(line, "{{\"count\": {}}}", r.count[i])?,
                _ => {}
            }
            line.push(b'\n');
            w.write_all(&line)?;
            rows += 1;
        }
    }
    Ok(rows)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;
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
        assert_eq!((value(0), value(1).parse::<u32>().unwrap(), value(2).parse::<u32>().unwrap()), ("wormhole_b0", 1000, 2));
        assert_eq!(lines.next().unwrap(), HEADER);
        let header: Vec<&str> = HEADER.split(',').map(str::trim).collect();
        assert_eq!(header.len(), 15);
        let mut types = std::collections::BTreeMap::<String, usize>::new();
        let mut rows = 0;
        for line in lines {
            let row: Vec<&str> = line.split(',').collect();
            assert_eq!(row.len(), 15, "{line}");
            assert!(row.iter().all(|f| !f.starts_with('"')), "a csv reader would take {line:?} for quoted");
            for i in [0, 1, 2, 4, 5, 6, 7, 12] {
                row[i].trim().parse::<u64>().unwrap_or_else(|e| panic!("column {} of {line}: {e}", header[i]));
            }
            assert!(["BRISC", "NCRISC", "TRISC_0", "TRISC_1", "TRISC_2"].contains(&row[3]));
            let kind = row[11].to_string();
            let timer = row[4].parse::<u32>().unwrap();
            let packet = ["ZONE_START", "ZONE_END", "ZONE_TOTAL", "TS_DATA", "TS_EVENT"].iter().position(|k| *k == kind).unwrap();
            assert_eq!(timer >> 16, packet as u32, "timer id carries the packet type: {line}");
            if row[10].starts_with("'work'") {
                assert_eq!((row[10], row[13]), ("'work'; part 2", "src/a;b.rs"));
            }
            *types.entry(kind).or_default() += 1;
            rows += 1;
        }
        // 10 rings x 3 ops: 4 zones, 1 event, 1 data, 1 sum each.
        let per = |k: &str| types.get(k).copied().unwrap_or(0);
        assert_eq!((per("ZONE_START"), per("ZONE_END")), (120, 120));
        assert_eq!((per("TS_EVENT"), per("TS_DATA"), per("ZONE_TOTAL")), (30, 30, 30));
        assert_eq!(rows, 330);
    }

    /// The same file through pandas, as tt-metal's contract reader loads it
    /// (`read_csv(skiprows=1)`), when Python with pandas is installed.
    #[test]
    fn pandas_reads_fifteen_named_columns() {
        let dir = crate::testing::temp_dir("device-csv-pandas");
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, csv_text()).unwrap();
        let script = "import sys, pandas as pd\n\
            df = pd.read_csv(sys.argv[1], skiprows=1, header=0, na_filter=False)\n\
            cols = [str(c).strip() for c in df.columns]\n\
            print(len(cols), len(df), cols[5], cols[14], int(df.iloc[0, 5]), df.iloc[0, 11])";
        let out = match std::process::Command::new("python3").args(["-c", script]).arg(&path).output() {
            Ok(o) if o.status.success() => o,
            Ok(o) if String::from_utf8_lossy(&o.stderr).contains("No module named 'pandas'") => {
                eprintln!("SKIPPED: python3 has no pandas: cannot read the CSV back with it");
                return;
            }
            Ok(o) => panic!("pandas could not read {}: {}", path.display(), String::from_utf8_lossy(&o.stderr)),
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
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
