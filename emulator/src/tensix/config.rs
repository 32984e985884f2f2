//! Backend configuration (`BackendConfiguration.md`) and the Configuration Unit's
//! instructions (`WRCFG`, `RDCFG`, `SETC16`, `RMWCIB0..3`), plus the RISC view at
//! `TENSIX_CFG_BASE`: `Config[2][CFG_STATE_SIZE * 4]` words, then
//! `ThreadConfig[3][THD_STATE_SIZE]` as 16-byte entries whose low 16 bits are the value.
//!
//! The sizes are Wormhole's (tt-metal's `tensix.h`: `CFG_STATE_SIZE` 47, `THD_STATE_SIZE`
//! 57); `CFG_STATE_ID_StateID` is bit 0 of `ThreadConfig[t][0]` (`cfg_defines.h`). The
//! special cases of the page (`STATE_RESET_EN`, PRNG seeding, the RISC reset-PC and cache
//! fields, writes past `GLOBAL_CFGREG_BASE_ADDR32` reaching both banks) are not modelled:
//! those words are plain storage.

use super::isa::field;

pub(crate) const CFG_STATE_SIZE: usize = 47;
/// Words of one `Config` bank.
pub(crate) const CFG_WORDS: usize = CFG_STATE_SIZE * 4;
pub(crate) const THD_STATE_SIZE: usize = 57;
/// Bytes of the RISC view: both `Config` banks, then the three `ThreadConfig` banks.
pub(crate) const RISC_VIEW_BYTES: u32 = (2 * CFG_WORDS * 4 + 3 * THD_STATE_SIZE * 16) as u32;

/// `Config` and `ThreadConfig`.
#[derive(Debug)]
pub(crate) struct BackendConfig {
    pub cfg: [[u32; CFG_WORDS]; 2],
    pub thread: [[u16; THD_STATE_SIZE]; 3],
}

impl Default for BackendConfig {
    fn default() -> Self {
        BackendConfig {
            cfg: [[0; CFG_WORDS]; 2],
            thread: [[0; THD_STATE_SIZE]; 3],
        }
    }
}

impl BackendConfig {
    /// `ThreadConfig[thread].CFG_STATE_ID_StateID`: the `Config` bank the thread writes.
    pub fn state_id(&self, thread: usize) -> usize {
        (self.thread[thread][0] & 1) as usize
    }

    /// `WRCFG`: 32 or 128 bits from the thread's GPRs to `Config[StateID]`.
    pub fn wrcfg(&mut self, thread: usize, gprs: &[u32; 64], word: u32) {
        let (index, wide, reg) = (
            field(word, 0, 11) as usize,
            field(word, 15, 1) != 0,
            field(word, 16, 6) as usize,
        );
        let bank = &mut self.cfg[self.state_id(thread)];
        if wide {
            let (c, g) = (index & !3, reg & !3);
            bank[c..c + 4].copy_from_slice(&gprs[g..g + 4]);
        } else {
            bank[index] = gprs[reg];
        }
    }

    /// `RDCFG`: `Config[StateID][CfgIndex]` into a GPR.
    pub fn rdcfg(&self, thread: usize, gprs: &mut [u32; 64], word: u32) {
        let (index, reg) = (field(word, 0, 16) as usize, field(word, 16, 8) as usize);
        gprs[reg] = self.cfg[self.state_id(thread)][index];
    }

    /// `SETC16`: 16 bits into the thread's own `ThreadConfig`.
    pub fn setc16(&mut self, thread: usize, word: u32) {
        self.thread[thread][field(word, 16, 8) as usize] = field(word, 0, 16) as u16;
    }

    /// `RMWCIB<Index1>`: masked write of one byte of `Config[StateID][Index4]`.
    pub fn rmwcib(&mut self, thread: usize, word: u32) {
        let byte = (super::isa::opcode(word) - super::isa::op::RMWCIB0) as u32;
        let (index, value, mask) = (
            field(word, 0, 8) as usize,
            field(word, 8, 8),
            field(word, 16, 8),
        );
        let w = &mut self.cfg[self.state_id(thread)][index];
        let (m, v) = (mask << (8 * byte), value << (8 * byte));
        *w = (v & m) | (*w & !m);
    }

    /// A RISC load of the word at byte offset `off` of the view (below
    /// [`RISC_VIEW_BYTES`]).
    pub fn risc_read(&self, off: u32) -> u32 {
        let w = (off / 4) as usize;
        if w < 2 * CFG_WORDS {
            self.cfg[w / CFG_WORDS][w % CFG_WORDS]
        } else {
            let e = (off as usize - 2 * CFG_WORDS * 4) / 16;
            if off.is_multiple_of(16) {
                self.thread[e / THD_STATE_SIZE][e % THD_STATE_SIZE] as u32
            } else {
                0 // padding
            }
        }
    }

    /// A RISC store: `Config` takes it; `ThreadConfig` has no RISC writes (discarded).
    pub fn risc_write(&mut self, off: u32, word: u32) {
        let w = (off / 4) as usize;
        if w < 2 * CFG_WORDS {
            self.cfg[w / CFG_WORDS][w % CFG_WORDS] = word;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrcfg_rdcfg_use_the_thread_bank() {
        let mut c = BackendConfig::default();
        let mut g = [0u32; 64];
        g[5] = 0xAAAA_5555;
        c.wrcfg(1, &g, (0xB0 << 24) | (5 << 16) | 10);
        assert_eq!(c.cfg[0][10], 0xAAAA_5555);
        c.setc16(1, (0xB2 << 24) | 1); // ThreadConfig[1][0] = 1: StateID 1
        assert_eq!(c.state_id(1), 1);
        assert_eq!(c.state_id(0), 0);
        g[8..12].copy_from_slice(&[1, 2, 3, 4]);
        c.wrcfg(1, &g, (0xB0 << 24) | (1 << 15) | (9 << 16) | 22); // 128-bit: aligned down
        assert_eq!(c.cfg[1][20..24], [1, 2, 3, 4]);
        c.rdcfg(1, &mut g, (0xB1 << 24) | (63 << 16) | 21);
        assert_eq!(g[63], 2);
        c.rdcfg(0, &mut g, (0xB1 << 24) | (62 << 16) | 10);
        assert_eq!(g[62], 0xAAAA_5555);
    }

    #[test]
    fn rmwcib_writes_masked_bits_of_one_byte() {
        let mut c = BackendConfig::default();
        c.cfg[0][3] = 0x1122_3344;
        // RMWCIB2: byte 2, mask 0x0F, new 0xAB
        c.rmwcib(0, (0xB5 << 24) | (0x0F << 16) | (0xAB << 8) | 3);
        assert_eq!(c.cfg[0][3], 0x112B_3344);
    }

    #[test]
    fn risc_view_config_then_thread_config() {
        let mut c = BackendConfig::default();
        c.risc_write(4 * 200, 7); // bank 1, word 12
        assert_eq!(c.cfg[1][200 - CFG_WORDS], 7);
        c.setc16(2, (0xB2 << 24) | (3 << 16) | 0xBEEF);
        let off = (2 * CFG_WORDS * 4 + (2 * THD_STATE_SIZE + 3) * 16) as u32;
        assert_eq!(c.risc_read(off), 0xBEEF);
        assert_eq!(c.risc_read(off + 4), 0, "padding");
        c.risc_write(off, 1);
        assert_eq!(c.risc_read(off), 0xBEEF, "no RISC writes to ThreadConfig");
        assert_eq!(RISC_VIEW_BYTES, 4240);
    }
}
