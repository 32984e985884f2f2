//! The data problems a snapshot records beside the memory (section tag 5): what the
//! recording lost that the memory itself does not show, such as the timestamper backend's
//! overflows and unpaired zones. A readout of the snapshot reports them again, so `report`
//! of a lossy run's snapshot exits 2 as the run did.
//!
//! A section's body, little-endian: `flags u32` (bit 0 an error, bit 1 a place follows,
//! bit 2 a RISC), `chip u32, x u32, y u32, RISC index u32`, `count u64`, then the UTF-8 text.

use crate::error::Location;
use crate::issue::{Issue, Severity};
use riscv_linker::Risc;

/// Section tag.
pub(crate) const TAG_LOSS: u32 = 5;
/// Bytes before the text.
const HEAD: usize = 28;
/// Longest text kept (a longer one is cut at a character boundary).
pub(crate) const MAX_TEXT: usize = 4096;

/// The section body of `issue`.
pub(crate) fn encode(issue: &Issue) -> Vec<u8> {
    let mut text = issue.what.as_str();
    if text.len() > MAX_TEXT {
        let mut end = MAX_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text = &text[..end];
    }
    let flags = u32::from(issue.severity == Severity::Error)
        | u32::from(issue.at.is_some()) << 1
        | u32::from(issue.at.is_some_and(|a| a.risc.is_some())) << 2;
    let at = issue.at.unwrap_or(Location {
        chip: 0,
        x: 0,
        y: 0,
        risc: None,
    });
    let risc = at.risc.map_or(0, |r| r.index() as u32);
    let mut out = Vec::with_capacity(HEAD + text.len());
    for v in [flags, at.chip, at.x.into(), at.y.into(), risc] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&issue.count.to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// Whether a body of `len` bytes can be one.
pub(crate) fn check_len(len: u64) -> Result<(), String> {
    if (HEAD as u64..=(HEAD + MAX_TEXT) as u64).contains(&len) {
        return Ok(());
    }
    Err(format!(
        "recorded data problem of {len} bytes: expected {HEAD} to {} bytes",
        HEAD + MAX_TEXT
    ))
}

/// The issue a section body holds.
pub(crate) fn decode(body: &[u8]) -> Result<Issue, String> {
    check_len(body.len() as u64)?;
    let word = |i: usize| u32::from_le_bytes(body[4 * i..4 * i + 4].try_into().unwrap());
    let flags = word(0);
    let place = |v: u32, what: &str| {
        u8::try_from(v)
            .map_err(|_| format!("recorded data problem: tile {what} {v} is not a NoC coordinate"))
    };
    let at = if flags & 2 != 0 {
        let risc = if flags & 4 != 0 {
            Some(Risc::from_index(word(4) as usize).ok_or_else(|| {
                format!(
                    "recorded data problem: RISC index {} names no RISC",
                    word(4)
                )
            })?)
        } else {
            None
        };
        Some(Location {
            chip: word(1),
            x: place(word(2), "x")?,
            y: place(word(3), "y")?,
            risc,
        })
    } else {
        None
    };
    let what = std::str::from_utf8(&body[HEAD..])
        .map_err(|_| "recorded data problem: its text is not UTF-8".to_string())?
        .to_string();
    Ok(Issue {
        severity: if flags & 1 != 0 {
            Severity::Error
        } else {
            Severity::Warning
        },
        at,
        what,
        count: u64::from_le_bytes(body[20..28].try_into().unwrap()),
    })
}
