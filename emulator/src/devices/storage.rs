//! Plain storage: reads return what was last written (0 at first), shared by every core of
//! the tile that has the window: the PIC registers, the backend configuration window past
//! `ThreadConfig`, the rest of the GPR window past the registers, the reserved words of the TTSync range (`+0xC..+0x1F`) and the TRISCs'
//! `PC_BUF_BASE` window past the semaphores ([`Storage`]); and the words of the debug block
//! no other device models ([`DebugRegs`]). A narrow store merges into the word.

use super::{Access, Ctx, TileDevice};
use crate::error::FaultKind;
use riscv_linker::Risc;
use std::collections::BTreeMap;

/// Plain storage windows: their words change only by stores.
#[derive(Debug, Default)]
pub(crate) struct Storage {
    /// By word address.
    words: BTreeMap<u32, u32>,
}

impl Storage {
    pub fn get(&self, addr: u32) -> u32 {
        self.words.get(&(addr & !3)).copied().unwrap_or(0)
    }

    pub fn set(&mut self, addr: u32, word: u32) {
        self.words.insert(addr & !3, word);
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

impl TileDevice for Storage {
    fn name(&self) -> &'static str {
        "storage"
    }

    fn read(&mut self, a: &Access, _: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Ok(self.get(a.addr))
    }

    fn write(&mut self, a: &Access, word: u32, _: &mut Ctx<'_>) -> Result<(), FaultKind> {
        self.set(a.addr, word);
        Ok(())
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }

    /// Only stores change storage.
    fn timeless(_: u32, _: Risc) -> bool {
        true
    }
}

/// The rest of the debug block (tile control, debug and status): storage, not timeless
/// (these registers are not modelled beyond reading back).
#[derive(Debug, Default)]
pub(crate) struct DebugRegs {
    pub(crate) words: Storage,
}

impl TileDevice for DebugRegs {
    fn name(&self) -> &'static str {
        "debug registers"
    }

    fn read(&mut self, a: &Access, _: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Ok(self.words.get(a.addr))
    }

    fn write(&mut self, a: &Access, word: u32, _: &mut Ctx<'_>) -> Result<(), FaultKind> {
        self.words.set(a.addr, word);
        Ok(())
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }
}
