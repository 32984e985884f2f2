//! TTSync ([TTSync], TRISCs, `PC_BUF_BASE + 4` and `+ 8`): a `CoprocessorDoneCheck` load
//! waits until the TRISC's Tensix thread has nothing in flight, a `MOPExpanderDoneCheck`
//! load until its MOP Expander has no `MOP` queued or expanding (both at once with
//! `OverrideEn` and `OverrideBusy` of the PCBuf override register), then returns 0 for the
//! page's "undefined value"; stores to them are discarded. Every such load first runs the
//! coprocessor up to the accessing core's clock.
//!
//! [TTSync]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/TTSync.md

use super::pcbuf::override_bits;
use super::{thread, Access, Ctx, TileDevice, Wait};
use crate::error::FaultKind;
use crate::tensix::{Hold, TtSync};
use riscv_linker::mmio;

/// The TTSync registers of the three TRISCs (their state is the coprocessor's).
#[derive(Debug, Default)]
pub(crate) struct TtSyncs;

/// The TRISC's thread and the check a TTSync access names.
fn which(a: &Access) -> (usize, TtSync) {
    let t = thread(a.risc).expect("a TRISC's TTSync");
    if a.word() == mmio::TTSYNC_COPROCESSOR_DONE {
        (t, TtSync::CoprocessorDone)
    } else {
        (t, TtSync::MopExpanderDone)
    }
}

impl TileDevice for TtSyncs {
    fn name(&self) -> &'static str {
        "TTSync"
    }

    // The value is undefined: 0.
    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        let (thread, which) = which(a);
        let (en, busy, _) = override_bits(cx.pc_buf_override, thread);
        if (en && busy) || cx.tensix.ttsync(thread, which, a.time)? {
            Ok(0)
        } else {
            Err(a.blocked(false))
        }
    }

    fn write(&mut self, _: &Access, _: u32, _: &mut Ctx<'_>) -> Result<(), FaultKind> {
        Ok(())
    }

    fn waits_on(&self, a: &Access, write: bool) -> Wait {
        if write {
            return Wait::Peers;
        }
        let (thread, which) = which(a);
        Wait::Tensix {
            thread,
            hold: Hold::Sync(which),
        }
    }
}
