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
//! contain `,` (replaced by `;`) or line breaks, so every row has exactly 15 columns.
//! Records whose site could not be resolved are written as `unresolved-site-<id>`.

use crate::atomic::write_atomic;
use crate::decode::{RecordKind, NO_RUN};
use crate::error::Result;
use crate::markers::{markers, MarkerType};
use crate::readout::Readout;
use crate::resolve::Resolution;
use std::io::{self, Write};
use std::path::Path;

/// The file name tt-metal uses.
pub const FILE_NAME: &str = "profile_log_device.csv";

/// Line 2, exactly as tt-metal writes it.
pub const HEADER: &str = "PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, \
run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data";

/// Line 1 for this readout: arch, nominal AICLK, worker cores per chip.
pub fn arch_line(readout: &Readout) -> String {
    let g = &readout.geometry;
    format!("ARCH: {}, CHIP_FREQ[MHz]: {}, Max Compute Cores: {}", g.arch.name(), g.arch.aiclk_mhz(), g.tiles_per_chip)
}

/// Writes the CSV to `path` atomically; returns the number of marker rows.
pub fn write_file(path: &Path, readout: &Readout, sites: &Resolution) -> Result<u64> {
    let mut rows = 0;
    write_atomic(path, |w| {
        rows = write(w, readout, sites)?;
        Ok(())
    })?;
    Ok(rows)
}

/// Writes the CSV to `w`; returns the number of marker rows.
pub fn write(w: &mut impl Write, readout: &Readout, sites: &Resolution) -> io::Result<u64> {
    writeln!(w, "{}", arch_line(readout))?;
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
/// breaks by spaces.
fn push_text(out: &mut Vec<u8>, s: &str) {
    if !s.contains([',', '\n', '\r']) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    for c in s.chars() {
        let c = match c {
            ',' => ';',
            '\n' | '\r' => ' ',
            c => c,
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
}
