//! The capture summary, [`super::SUMMARY_FILE`]: per-ring and total counts (zones, records,
//! payload and bus bytes, drops, stalls, drains, why it stopped).

use crate::capture::Captured;
use crate::csv::CsvWritten;

/// The summary of capture `c` of `device` whose outputs wrote `w`.
pub(super) fn json(
    c: &Captured,
    w: &CsvWritten,
    device: &str,
    samples: Option<crate::lines::sample::LiveCounts>,
) -> serde_json::Value {
    let r = &c.readout;
    let rings: Vec<serde_json::Value> = r
        .rings
        .iter()
        .map(|x| {
            serde_json::json!({
                "chip": x.id.chip, "x": x.id.tile.x, "y": x.id.tile.y, "risc": x.id.risc.name(),
                "payload_bytes": x.payload_bytes, "skipped_bytes": x.skipped_bytes, "bus_bytes": x.bus_bytes,
                "dropped": x.dropped, "stalls": x.stalls, "losses_in_band": x.losses_in_band,
                "corrupt": x.corrupt,
            })
        })
        .collect();
    serde_json::json!({
        "device": device,
        "stopped": c.stopped.describe(),
        "seconds": c.elapsed.as_secs_f64(),
        "drains": c.drains,
        "zones": w.zones,
        "records": w.records,
        "rows": w.rows,
        "dropped": r.rings.iter().map(|x| x.dropped as u64).sum::<u64>(),
        "stalls": r.rings.iter().map(|x| x.stalls as u64).sum::<u64>(),
        "payload_bytes": r.payload_bytes(),
        "bus_bytes": r.bus_bytes,
        "bus_bytes_per_payload_byte": r.bus_bytes_per_payload_byte(),
        "resolved": w.resolved,
        "unresolved": w.unresolved,
        "errors": r.issues.iter().chain(&w.issues).filter(|i| i.is_error()).count(),
        "warnings": r.issues.iter().chain(&w.issues).filter(|i| !i.is_error()).count(),
        "rings": rings,
        "samples": samples,
    })
}
