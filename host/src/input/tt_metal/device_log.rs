//! The one reader of `profile_log_device.csv` (tt-metal's device log, and ttprof's own
//! [`crate::csv`] output): streamed row by row, every line at most `MAX_LINE_BYTES`.
//!
//! Line 1 is `ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 64` (each key at
//! most once), line 2 the column names, then one row per marker with exactly 15 unquoted
//! columns (tt-metal's `process_device_log.py` asserts the same): `PCIe slot, core_x, core_y,
//! RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id,
//! trace id counter, zone name, type, source line, source file, meta data` ([`COLUMNS`]; line
//! 2 must name them in that order, case and spaces aside: the rows are read by position, so
//! another order would be read wrong). Any row that does not parse is an error naming the
//! file and line, and so is a log with no row at all: a truncated, empty or foreign file is
//! refused, not half read.

use crate::error::{Error, Result};
use crate::files::{BoundedLines, LineError};
use crate::inputs::Inputs;
use riscv_linker::Arch;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// The longest line read: a row is a marker (~150 bytes; its zone name and meta data are
/// the only free-length parts).
pub(crate) const MAX_LINE_BYTES: usize = 64 << 10;

/// The file name tt-metal (and `ttprof report`) give the device log.
pub const FILE_NAME: &str = "profile_log_device.csv";

/// The columns of a row, as line 2 names them.
pub const COLUMNS: [&str; 15] = [
    "PCIe slot",
    "core_x",
    "core_y",
    "RISC processor type",
    "timer_id",
    "time[cycles since reset]",
    "data",
    "run host ID",
    "trace id",
    "trace id counter",
    "zone name",
    "type",
    "source line",
    "source file",
    "meta data",
];

/// The `CHIP_FREQ[MHz]` accepted: 1 kHz to 1 THz, every chip clock with room to spare.
const MHZ_RANGE: std::ops::RangeInclusive<f64> = 0.001..=1_000_000.0;

/// Whether `path` is a device log: a regular file whose first line starts `ARCH:` (a
/// device image or snapshot never does). Unreadable paths are not. A look, not a read: no
/// input guard notes it (the reader that follows, [`DeviceLog::open`] or a device-memory
/// opener, does).
pub fn is_device_log(path: &Path) -> bool {
    use std::io::Read;
    let none = Inputs::none();
    let Ok((file, _)) =
        crate::files::open_regular(path, "a device log", "read device log", false, &none)
    else {
        return false;
    };
    let mut head = [0u8; 5];
    file.take(5).read_exact(&mut head).is_ok() && &head == b"ARCH:"
}

/// The `type` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RowType {
    /// A zone opens.
    ZoneStart,
    /// A zone closes.
    ZoneEnd,
    /// A sum zone's total (`data`: cycles; meta data `{"count": N}`, else 1 measurement).
    ZoneTotal,
    /// Timestamped data (`data`).
    TsData,
    /// A point event.
    TsEvent,
}

impl RowType {
    fn parse(s: &str) -> Option<RowType> {
        Some(match s {
            "ZONE_START" => RowType::ZoneStart,
            "ZONE_END" => RowType::ZoneEnd,
            "ZONE_TOTAL" => RowType::ZoneTotal,
            "TS_DATA" => RowType::TsData,
            "TS_EVENT" => RowType::TsEvent,
            _ => return None,
        })
    }
}

/// One marker row (text fields borrow the reader's line buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LogRow<'a> {
    /// 1-based line number in the file.
    pub line: usize,
    /// `PCIe slot`: the chip.
    pub chip: u32,
    /// NoC0 x of the core.
    pub x: u8,
    /// NoC0 y of the core.
    pub y: u8,
    /// `RISC processor type` (`BRISC`, `NCRISC`, `TRISC_0`..`TRISC_2`, `ERISC`, ...).
    pub risc: &'a str,
    /// Device cycles since reset.
    pub time: u64,
    /// The `data` column (0 when empty).
    pub data: u64,
    /// `run host ID` (`None` when empty).
    pub run: Option<u32>,
    /// Zone name.
    pub name: &'a str,
    /// Marker type.
    pub kind: RowType,
    /// Source line (0 when empty).
    pub(crate) src_line: u32,
    /// Source file.
    pub(crate) src_file: &'a str,
    /// Meta data (JSON with `,` written as `;`), possibly empty.
    pub meta: &'a str,
}

impl LogRow<'_> {
    /// The unsigned number after `"key":` in the meta data, if any (`{"count": 3}`).
    pub(crate) fn meta_number(&self, key: &str) -> Option<u64> {
        let at = self.meta.find(&format!("\"{key}\":"))?;
        let rest = self.meta[at + key.len() + 3..].trim_start();
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        rest[..end].parse().ok()
    }
}

/// An open device log, positioned after its two header lines.
pub struct DeviceLog {
    path: PathBuf,
    lines: BoundedLines<BufReader<File>>,
    /// `ARCH:` of line 1 (`None`: an arch ttprof does not model, named in `DeviceLog::arch_text`).
    pub arch: Option<Arch>,
    /// `ARCH:` as written.
    pub(crate) arch_text: String,
    /// `CHIP_FREQ[MHz]:` (positive, finite).
    pub mhz: f64,
    /// `Max Compute Cores:` when present.
    pub(crate) max_cores: Option<u32>,
    /// Size of the file when opened, bytes.
    pub size: u64,
    /// Whether a marker row was read (a log with none is refused at its end).
    rows_seen: bool,
}

impl DeviceLog {
    /// Opens `path` (a regular file, noted in `inputs`) and reads its two header lines.
    pub fn open(path: &Path, inputs: &Inputs) -> Result<DeviceLog> {
        let (file, size) = crate::files::open_regular(
            path,
            "a device log (profile_log_device.csv)",
            "read device log",
            false,
            inputs,
        )?;
        let mut log = DeviceLog {
            path: path.into(),
            lines: BoundedLines::new(BufReader::with_capacity(1 << 16, file), MAX_LINE_BYTES),
            arch: None,
            arch_text: String::new(),
            mhz: 0.0,
            max_cores: None,
            size,
            rows_seen: false,
        };
        let first = log.next_text()?.map(|(_, l)| l).unwrap_or_default();
        for key in ["ARCH:", "CHIP_FREQ[MHz]:", "Max Compute Cores:"] {
            let n = first
                .split(',')
                .filter(|f| f.trim().starts_with(key))
                .count();
            if n > 1 {
                return Err(log.bad(
                    1,
                    format!("`{key}` is given {n} times: expected it once (tt-metal's first line)"),
                ));
            }
        }
        let field = |key: &str| {
            first
                .split(',')
                .find_map(|f| f.trim().strip_prefix(key))
                .map(|v| v.trim().to_string())
        };
        let freq = field("CHIP_FREQ[MHz]:");
        let mhz: f64 = freq.as_deref().and_then(|v| v.parse().ok()).ok_or_else(|| {
            log.bad(
                1,
                format!(
                    "expected `ARCH: ..., CHIP_FREQ[MHz]: N, ...` (tt-metal's first line), found {first:?}"
                ),
            )
        })?;
        // NaN, infinite, zero, negative or subnormal: every ns would be NaN, 0 or infinite
        // (a subnormal's reciprocal overflows); far outside any clock, absurd figures.
        if !MHZ_RANGE.contains(&mhz) {
            return Err(log.bad(
                1,
                format!(
                    "CHIP_FREQ[MHz]: {}: expected a frequency in MHz from {} to {}",
                    freq.unwrap_or_default(),
                    MHZ_RANGE.start(),
                    MHZ_RANGE.end()
                ),
            ));
        }
        log.mhz = mhz;
        log.arch_text = field("ARCH:").unwrap_or_default();
        log.arch = Arch::from_name(&log.arch_text);
        log.max_cores = field("Max Compute Cores:").and_then(|v| v.parse().ok());
        let names = log.next_text()?.map(|(_, l)| l);
        log.check_columns(names.as_deref())?;
        Ok(log)
    }

    /// Line 2 names [`COLUMNS`] in order (case and surrounding spaces aside).
    fn check_columns(&self, line: Option<&str>) -> Result<()> {
        let expected = || COLUMNS.join(", ");
        let Some(line) = line else {
            return Err(self.bad(
                1,
                format!(
                    "the file ends after its first line: expected line 2 to name the columns ({}) and then one \
                     row per marker",
                    expected()
                ),
            ));
        };
        let names: Vec<&str> = line.split(',').map(str::trim).collect();
        if names.first().is_some_and(|n| n.parse::<u64>().is_ok()) {
            return Err(self.bad(
                2,
                format!(
                    "is a marker row, not the column names: a device log's second line names its columns ({}); \
                     was its header cut off?",
                    expected()
                ),
            ));
        }
        if names.len() != COLUMNS.len() {
            return Err(self.bad(
                2,
                format!(
                    "names {} column(s), expected the {} of tt-metal's device log ({})",
                    names.len(),
                    COLUMNS.len(),
                    expected()
                ),
            ));
        }
        if let Some((i, (got, want))) = names
            .iter()
            .zip(COLUMNS)
            .enumerate()
            .find(|(_, (got, want))| !got.eq_ignore_ascii_case(want))
        {
            return Err(self.bad(
                2,
                format!(
                    "column {} is {:?}, expected {want:?}: rows are read by position, in tt-metal's order ({})",
                    i + 1,
                    truncate(got, 80),
                    expected()
                ),
            ));
        }
        Ok(())
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn bad(&self, line: usize, what: String) -> Error {
        Error::BadFile {
            path: self.path.clone(),
            what: format!("line {line}: {what}"),
        }
    }

    fn read_err(&self, e: LineError) -> Error {
        match e {
            LineError::TooLong { line, max } => Error::BadFile {
                path: self.path.clone(),
                what: format!(
                    "line {line} is longer than {max} bytes: expected tt-metal's device log, a row per marker"
                ),
            },
            LineError::Io(e) => Error::io(&self.path, "read device log", e),
        }
    }

    /// A header line as text (lossy).
    fn next_text(&mut self) -> Result<Option<(usize, String)>> {
        match self.lines.next_line() {
            Ok(Some((n, l))) => Ok(Some((n, String::from_utf8_lossy(l).into_owned()))),
            Ok(None) => Ok(None),
            Err(e) => Err(self.read_err(e)),
        }
    }

    /// The next marker row (blank lines skipped); `None` at the end of the file.
    pub(crate) fn next_row(&mut self) -> Result<Option<LogRow<'_>>> {
        let n = loop {
            match self.lines.next_line() {
                Ok(Some((_, l))) if l.iter().all(u8::is_ascii_whitespace) => continue,
                Ok(Some((n, _))) => break n,
                Ok(None) if !self.rows_seen => {
                    return Err(Error::BadFile {
                        path: self.path.clone(),
                        what: "holds no marker row after its two header lines: nothing to read (a capture with \
                               the device profiler off, or a truncated file)"
                            .into(),
                    })
                }
                Ok(None) => return Ok(None),
                Err(e) => return Err(self.read_err(e)),
            }
        };
        // The line just read (borrowed again: a borrow returned from inside the loop
        // would outlive it).
        let line = self.lines.last_line();
        let text = std::str::from_utf8(line).map_err(|e| Error::BadFile {
            path: self.path.clone(),
            what: format!("line {n}: not UTF-8 text (byte {})", e.valid_up_to() + 1),
        })?;
        self.rows_seen = true;
        parse_row(n, text)
            .map_err(|what| Error::BadFile {
                path: self.path.clone(),
                what: format!("line {n}: {what}"),
            })
            .map(Some)
    }
}

/// At most `max` characters of `s`.
fn truncate(s: &str, max: usize) -> &str {
    s.char_indices().nth(max).map_or(s, |(i, _)| &s[..i])
}

/// The 15 columns of one row.
fn parse_row(n: usize, text: &str) -> std::result::Result<LogRow<'_>, String> {
    let mut f = [""; 15];
    let mut count = 0;
    for (i, c) in text.split(',').enumerate() {
        if i < 15 {
            f[i] = c.trim();
        }
        count = i + 1;
    }
    if count != 15 {
        return Err(format!(
            "{count} column(s), expected 15 (tt-metal's device log; a truncated file?)"
        ));
    }
    fn num<T: std::str::FromStr>(
        col: &str,
        v: &str,
        empty: Option<T>,
    ) -> std::result::Result<T, String> {
        if v.is_empty() {
            if let Some(e) = empty {
                return Ok(e);
            }
        }
        v.parse().map_err(|_| {
            // A whole number too large (or negative) for the column is not a typo.
            if v.parse::<i128>().is_ok() || v.len() > 38 && v.bytes().all(|b| b.is_ascii_digit()) {
                format!("{col} {v:?} is out of range")
            } else {
                format!("{col} {v:?} is not a number")
            }
        })
    }
    Ok(LogRow {
        line: n,
        chip: num("PCIe slot", f[0], None)?,
        x: num("core_x", f[1], None)?,
        y: num("core_y", f[2], None)?,
        risc: f[3],
        time: num("time[cycles since reset]", f[5], None)?,
        data: num("data", f[6], Some(0))?,
        run: if f[7].is_empty() {
            None
        } else {
            Some(num("run host ID", f[7], None)?)
        },
        name: f[10],
        kind: RowType::parse(f[11]).ok_or_else(|| {
            format!(
                "type {:?}: expected ZONE_START, ZONE_END, ZONE_TOTAL, TS_DATA or TS_EVENT",
                f[11]
            )
        })?,
        src_line: num("source line", f[12], Some(0))?,
        src_file: f[13],
        meta: f[14],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (PathBuf, PathBuf) {
        let dir = crate::testing::temp_dir("device-log");
        let p = dir.join(FILE_NAME);
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    const HEAD: &str = "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 64\n\
        PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data\n";

    #[test]
    fn rows_parse_with_their_line_numbers() {
        let (dir, p) = write(&format!(
            "{HEAD}0,1,2,TRISC_0,5,100,0,3,,,work,ZONE_START,7,a.cpp,\n\n\
             1,3,4,BRISC,5,200,42,,,,w,ZONE_TOTAL,,,{{\"count\": 3}}\n"
        ));
        let mut log = DeviceLog::open(&p, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!(
            (log.arch, log.mhz, log.max_cores),
            (Some(Arch::WormholeB0), 1000.0, Some(64))
        );
        let r = log.next_row().unwrap().unwrap();
        assert_eq!(
            (
                r.line, r.chip, r.x, r.y, r.risc, r.time, r.run, r.name, r.kind, r.src_line,
                r.src_file
            ),
            (
                3,
                0,
                1,
                2,
                "TRISC_0",
                100,
                Some(3),
                "work",
                RowType::ZoneStart,
                7,
                "a.cpp"
            )
        );
        let r = log.next_row().unwrap().unwrap();
        assert_eq!(
            (r.line, r.data, r.run, r.kind),
            (5, 42, None, RowType::ZoneTotal)
        );
        assert_eq!(r.meta_number("count"), Some(3));
        assert!(log.next_row().unwrap().is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_bad_row_names_file_and_line() {
        for (body, what) in [
            (
                "0,1,2,BRISC,5,100,0,3,,,work,ZONE_ST",
                "line 3: 12 column(s), expected 15",
            ),
            (
                "0,1,2,BRISC,5,1x0,0,3,,,work,ZONE_START,7,a.cpp,",
                "line 3: time[cycles since reset] \"1x0\" is not a number",
            ),
            (
                "0,1,2,BRISC,5,100,0,3,,,work,ZONE_MIDDLE,7,a.cpp,",
                "line 3: type \"ZONE_MIDDLE\"",
            ),
            (
                "0,1,999,BRISC,5,100,0,3,,,work,ZONE_START,7,a.cpp,",
                "line 3: core_y \"999\" is out of range",
            ),
        ] {
            let (dir, p) = write(&format!("{HEAD}{body}\n"));
            let mut log = DeviceLog::open(&p, &crate::inputs::Inputs::none()).unwrap();
            let e = log.next_row().unwrap_err().to_string();
            assert!(e.starts_with(&format!("{}: {what}", p.display())), "{e}");
            std::fs::remove_dir_all(dir).unwrap();
        }
        // Subnormal (every ns NaN or infinite), zero, negative, not finite, absurd: refused.
        for freq in ["4.9e-324", "1e-310", "0", "-5", "NaN", "inf", "1e300"] {
            let (dir, p) = write(&format!(
                "ARCH: wormhole_b0, CHIP_FREQ[MHz]: {freq}, Max Compute Cores: 64\n"
            ));
            let e = DeviceLog::open(&p, &crate::inputs::Inputs::none())
                .err()
                .unwrap()
                .to_string();
            assert!(
                e.contains(&format!(
                    "line 1: CHIP_FREQ[MHz]: {freq}: expected a frequency in MHz"
                )),
                "{e}"
            );
            std::fs::remove_dir_all(dir).unwrap();
        }
        let (dir, p) = write("ARCH: wormhole_b0, Max Compute Cores: 64\n");
        let e = DeviceLog::open(&p, &crate::inputs::Inputs::none())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("line 1: expected `ARCH: ..., CHIP_FREQ[MHz]: N"),
            "{e}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Issue 41 (Low): line 2 was skipped unread, so a log whose columns were in another
    /// order was read by position (a silent wrong answer), a log without its column names
    /// lost its first row, duplicate keys of line 1 passed, and a log with no row imported
    /// as 0 zones with exit 0.
    #[test]
    fn header_quirks_and_empty_logs_are_refused_by_line() {
        let line1 = "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 64\n";
        let names = COLUMNS.join(", ");
        let row = "0,1,2,TRISC_0,5,100,0,3,,,work,ZONE_START,7,a.cpp,\n";
        let swapped = names.replace(
            "timer_id, time[cycles since reset]",
            "time[cycles since reset], timer_id",
        );
        for (text, what) in [
            (
                line1.to_string(),
                "line 1: the file ends after its first line",
            ),
            (
                format!("{line1}{row}"),
                "line 2: is a marker row, not the column names",
            ),
            (
                format!("{line1}{swapped}\n{row}"),
                "line 2: column 5 is \"time[cycles since reset]\", expected \"timer_id\"",
            ),
            (
                format!("{line1}{}\n{row}", names.replace(", zone name", "")),
                "line 2: names 14 column(s), expected the 15",
            ),
            (format!("{line1}header\n{row}"), "line 2: names 1 column(s)"),
            (
                format!(
                    "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, CHIP_FREQ[MHz]: 2000\n{names}\n{row}"
                ),
                "line 1: `CHIP_FREQ[MHz]:` is given 2 times",
            ),
            (
                format!("ARCH: wormhole_b0, ARCH: blackhole, CHIP_FREQ[MHz]: 1000\n{names}\n{row}"),
                "line 1: `ARCH:` is given 2 times",
            ),
        ] {
            let (dir, p) = write(&text);
            let e = DeviceLog::open(&p, &crate::inputs::Inputs::none())
                .err()
                .unwrap_or_else(|| panic!("accepted {text:?}"))
                .to_string();
            assert!(e.starts_with(&format!("{}: {what}", p.display())), "{e}");
            std::fs::remove_dir_all(dir).unwrap();
        }
        // The column names in other case and spacing are tt-metal's.
        let (dir, p) = write(&format!(
            "{line1}{}\n{row}",
            names.to_uppercase().replace(", ", ",")
        ));
        let mut log = DeviceLog::open(&p, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!(log.next_row().unwrap().unwrap().name, "work");
        assert!(log.next_row().unwrap().is_none());
        std::fs::remove_dir_all(dir).unwrap();
        // No row at all (blank lines aside): refused at the end, naming the file.
        let (dir, p) = write(&format!("{HEAD}\n\n"));
        let mut log = DeviceLog::open(&p, &crate::inputs::Inputs::none()).unwrap();
        let e = log.next_row().unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: holds no marker row", p.display())),
            "{e}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
