//! The NoC overlay's stream registers (`NOC_OVERLAY_START_ADDR` 0xFFB40000, 0x1000 bytes per
//! stream, register `r` at `+4 r`): the overlay moves no data in the emulator
//! ([NoC overlay](https://github.com/tenstorrent/tt-isa-documentation/tree/main/WormholeB0/NoC/Overlay)),
//! so every register reads back what was stored. tt-metal uses two of them per stream
//! `0..32` as its circular buffers' counters (`stream_io_map.h`, `noc_overlay_parameters.h`
//! of the pinned wheel): register 4 (`STREAM_REMOTE_DEST_BUF_SIZE`) is CB `i`'s tiles
//! received and register 3 (`STREAM_REMOTE_DEST_BUF_START`) its tiles acked; its TRISC0
//! firmware zeroes them at boot; tt-llk's pack thread bumps tiles received with a Tensix
//! `STOREREG`, which the coprocessor hands to this device at its next access. They are named
//! so in deadlock reports. Their width on
//! silicon is not modelled: a store keeps all 32 bits (tt-metal wraps the counters at 16
//! bits in software; the header gives register 4 a 17-bit field).

use super::storage::Storage;
use super::{Access, Ctx, TileDevice};
use crate::error::FaultKind;
use riscv_linker::{mmio, Arch, Risc};

/// Bytes of one stream's registers.
pub(crate) const STREAM_BYTES: u32 = 0x1000;
/// Streams whose registers 3 and 4 tt-metal uses as CB counters (`NUM_CIRCULAR_BUFFERS`).
pub(crate) const CB_STREAMS: u32 = 32;
/// `STREAM_REMOTE_DEST_BUF_START_REG_INDEX`: CB tiles acked.
const TILES_ACKED: u32 = 3;
/// `STREAM_REMOTE_DEST_BUF_SIZE_REG_INDEX`: CB tiles received.
const TILES_RECEIVED: u32 = 4;

/// The overlay's stream registers.
#[derive(Debug, Default)]
pub(crate) struct OverlayStreams {
    words: Storage,
}

/// The stream and register of `addr` in the overlay window.
fn stream_reg(addr: u32) -> (u32, u32) {
    let off = addr - mmio::NOC_OVERLAY_BASE;
    (off / STREAM_BYTES, (off % STREAM_BYTES) / 4)
}

impl OverlayStreams {
    /// Runs the coprocessor up to the access and takes the `STOREREG` writes it made
    /// before it, so an access sees them in time order.
    fn catch_up(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        cx.tensix.advance_to(a.time)?;
        for (addr, value) in cx.tensix.take_mmio_writes() {
            self.words.set(addr, value);
        }
        Ok(())
    }
}

impl TileDevice for OverlayStreams {
    fn name(&self) -> &'static str {
        "overlay streams"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        self.catch_up(a, cx)?;
        Ok(self.words.get(a.addr))
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        self.catch_up(a, cx)?;
        self.words.set(a.addr, word);
        Ok(())
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }

    /// The coprocessor writes them too (`STOREREG`): accesses are ordered in time.
    fn timeless(_: u32, _: Risc) -> bool {
        false
    }

    fn register(&self, addr: u32, _: Risc, _: Arch) -> String {
        let (stream, reg) = stream_reg(addr);
        match reg {
            TILES_RECEIVED if stream < CB_STREAMS => {
                format!("overlay stream {stream} register 4 (tt-metal: CB {stream} tiles received)")
            }
            TILES_ACKED if stream < CB_STREAMS => {
                format!("overlay stream {stream} register 3 (tt-metal: CB {stream} tiles acked)")
            }
            _ => format!("overlay stream {stream} register {reg}"),
        }
    }
}
