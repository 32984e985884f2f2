//! Where a readout's timebase comes from: the fit of the clock samples a snapshot recorded,
//! or the nominal clock (and a line saying why).

use super::{fit, FitOptions};
use crate::devmem::{self, FileKind, Snapshot};
use crate::inputs::Inputs;
use crate::timebase::Timebase;
use riscv_linker::Arch;
use std::path::Path;

/// The timebase for a readout of `device`, and one line saying where it comes from: the fit
/// of the clock samples a snapshot recorded, or the nominal clock (and why). The snapshot is
/// noted in `inputs`.
pub fn timebase_for(device: &Path, arch: Arch, chips: u32, inputs: &Inputs) -> (Timebase, String) {
    let nominal = |why: &str| {
        (
            Timebase::nominal(arch, chips),
            format!(
                "clock: nominal {} MHz, not aligned ({why})",
                arch.aiclk_mhz()
            ),
        )
    };
    if devmem::is_card(device) {
        return nominal("a live card has no recorded sync samples; `ttprof clock --device <card> --record` records them");
    }
    let Ok(FileKind::Snapshot) = devmem::file_kind(device, inputs) else {
        return nominal(
            "a device image has no recorded sync samples; `ttprof clock --record` records them",
        );
    };
    let Ok(snap) = Snapshot::load(device, inputs) else {
        return nominal("the snapshot cannot be loaded");
    };
    let samples = snap.sync_samples();
    if samples.is_empty() {
        return nominal("the snapshot has no sync samples; `ttprof clock --record` records them");
    }
    match fit(&samples, arch, chips, &FitOptions::default()) {
        Ok(f) => {
            let issues: Vec<String> = f.issues.iter().map(|i| format!("\n{i}")).collect();
            let note = format!("{f}{}", issues.concat());
            (f.timebase, note)
        }
        Err(e) => (
            Timebase::nominal(arch, chips),
            format!("clock: not aligned, nominal {} MHz: {e}", arch.aiclk_mhz()),
        ),
    }
}

/// One line for a readout of `device`: the fit of the clock samples it recorded, or why
/// its times stay nominal. The device file is noted in `inputs`.
pub fn readout_note(device: &Path, inputs: &Inputs) -> String {
    let (arch, chips) = match devmem::open(device, false, inputs) {
        Ok(mem) => (mem.geometry().arch, mem.geometry().chips),
        Err(e) => return format!("clock: not aligned: {e}"),
    };
    timebase_for(device, arch, chips, inputs).1
}
