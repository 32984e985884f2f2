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

/// A configuration field: word index, first bit, width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Field(pub usize, pub u32, pub u32);

impl Field {
    /// The field `k` words further on (the `_SEC<k>` families).
    pub const fn at(self, k: usize) -> Field {
        Field(self.0 + k, self.1, self.2)
    }

    fn get(self, word: u32) -> u32 {
        let v = word >> self.1;
        if self.2 >= 32 {
            v
        } else {
            v & ((1 << self.2) - 1)
        }
    }
}

impl BackendConfig {
    /// `Config[StateID].f` for `thread`.
    pub fn get(&self, thread: usize, f: Field) -> u32 {
        f.get(self.cfg[self.state_id(thread)][f.0])
    }

    /// `ThreadConfig[thread].f`.
    pub fn thd(&self, thread: usize, f: Field) -> u32 {
        f.get(self.thread[thread][f.0] as u32)
    }
}

/// The fields of `cfg_defines.h` (tt-metal, Wormhole B0) the data path reads, each named
/// after its `cfg_defines.h` field and holding its `_ADDR32` word, `_SHAMT` and width:
/// `ThreadConfig` fields in `thd`, `Config` fields in `cfg`.
pub(crate) mod fields {
    use super::Field as F;

    pub mod thd {
        use super::F;
        pub const MATH_OFFSET: F = F(1, 0, 12);
        pub const ADDR_MOD_SET_BASE: F = F(2, 0, 1);
        pub const SRCA_SET_BASE: F = F(3, 0, 2);
        pub const SRCA_SET_OVRD_WITH_ADDR: F = F(3, 2, 1);
        pub const SRCB_SET_BASE: F = F(4, 0, 2);
        pub const CLR_DVALID_SRCA_DISABLE: F = F(5, 0, 1);
        pub const CLR_DVALID_SRCB_DISABLE: F = F(5, 1, 1);
        pub const FIDELITY_BASE: F = F(6, 0, 2);
        /// `ADDR_MOD_AB_SEC<k>` is word `7 + 2k`.
        pub const ADDR_MOD_AB: usize = 7;
        /// `ADDR_MOD_DST_SEC<k>` is word `23 + k`.
        pub const ADDR_MOD_DST: usize = 23;
        /// `ADDR_MOD_PACK_SEC<k>` is word `31 + k`.
        pub const ADDR_MOD_PACK: usize = 31;
        /// `ADDR_MOD_BIAS_SEC<k>` is word `48 + k`.
        pub const ADDR_MOD_BIAS: usize = 48;
        pub const FP16A_FORCE: F = F(56, 0, 1);
        /// `UNPACK_MISC_CFG_CfgContextOffset_<u>` (unpacker `u`).
        pub const CFG_CONTEXT_OFFSET: [F; 2] = [F(39, 0, 4), F(39, 8, 4)];
    }

    pub mod cfg {
        use super::F;
        pub const SRCA_VAL: F = F(0, 0, 4);
        pub const SRCA_OVERRIDE: F = F(0, 4, 1);
        pub const DSTACC_VAL: F = F(0, 10, 4);
        pub const DSTACC_OVERRIDE: F = F(0, 14, 1);
        pub const FPU_SRND: F = F(1, 0, 1);
        pub const PACKER_SRND: F = F(1, 2, 1);
        pub const SRCA_FMT: F = F(1, 17, 4);
        pub const SRCB_FMT: F = F(1, 21, 4);
        pub const DSTACC: F = F(1, 25, 4);
        pub const FP32_ENABLED: F = F(1, 29, 1);
        pub const INT8_MATH: F = F(1, 31, 1);
        pub const ZERO_FLAG_DISABLED_SRC: F = F(2, 0, 1);
        pub const APPLY_RELU: F = F(2, 2, 4);
        pub const DEST_REGW_BASE: F = F(6, 0, 16);
        // Packers (PCK0_*, shared by the four packers).
        pub const PCK_XSTRIDE0: F = F(8, 0, 12);
        pub const PCK_YSTRIDE0: F = F(8, 12, 12);
        pub const PCK_ZSTRIDE0: F = F(9, 0, 12);
        pub const PCK_WSTRIDE0: F = F(9, 12, 16);
        pub const PCK_YSTRIDE1: F = F(10, 12, 12);
        pub const PCK_ZSTRIDE1: F = F(11, 0, 12);
        pub const PCK_WSTRIDE1: F = F(11, 12, 16);
        pub const PCK_BASE0: F = F(12, 0, 16);
        pub const PCK_BASE1: F = F(13, 0, 16);
        pub const READ_32B: F = F(14, 0, 1);
        pub const READ_RAW: F = F(14, 2, 1);
        pub const ROUND_10B_MANT: F = F(14, 3, 1);
        pub const EDGE_FACE_SET_SELECT: F = F(15, 0, 8);
        pub const EDGE_FACE_SET_ENABLE: F = F(15, 8, 1);
        /// `TILE_ROW_SET_MAPPING_<k>`: word `16 + k`, sixteen 2-bit entries.
        pub const TILE_ROW_SET_MAPPING: usize = 16;
        /// `PCK_EDGE_OFFSET_SEC<k>_mask`: word `20 + k`, bits 0-15.
        pub const EDGE_MASK: F = F(20, 0, 16);
        pub const EDGE_ROW_SET_SELECT: F = F(20, 17, 8);
        /// `TILE_FACE_SET_MAPPING_<k>`: word `32 + k`.
        pub const TILE_FACE_SET_MAPPING: usize = 32;
        // Unpackers: UNPx_ADDR_CTRL_*_REG_1, UNPx_ADDR_BASE_REG_1 (x = 0, 1).
        pub const UNP_YSTRIDE1: [F; 2] = [F(44, 12, 12), F(46, 12, 12)];
        pub const UNP_ZSTRIDE1: [F; 2] = [F(45, 0, 12), F(47, 0, 12)];
        pub const UNP_WSTRIDE1: [F; 2] = [F(45, 12, 16), F(47, 12, 16)];
        pub const UNP_BASE1: [F; 2] = [F(40, 16, 16), F(48, 16, 16)];
        /// `UNPx_ADD_DEST_ADDR_CNTR_add_dest_addr_cntr`.
        pub const UNP_ADD_DEST_ADDR_CNTR: [F; 2] = [F(41, 8, 1), F(49, 8, 1)];
        /// `THCON_SEC<u>`: unpacker `u`'s section starts at word `52 + 40u`.
        pub const THCON_SEC: [usize; 2] = [52, 92];
        // Offsets inside a THCON section.
        pub const TD_WORDS: usize = 0; // TileDescriptor, 4 words
        pub const OUT_DATA_FORMAT: F = F(8, 0, 4);
        pub const THROTTLE_MODE: F = F(8, 4, 2);
        pub const HALOIZE: F = F(8, 8, 1);
        pub const TILEIZE: F = F(8, 9, 1);
        pub const SRC_REG_SET_UPD: F = F(8, 10, 1);
        pub const UNPACK_IF_SEL: F = F(8, 11, 1);
        pub const UPSAMPLE_RATE: F = F(8, 12, 2);
        pub const SHIFT_AMOUNT_CNTX0: F = F(8, 16, 4);
        pub const OVRD_DATA_FORMAT: F = F(8, 14, 1);
        /// `Disable_zero_compress_cntx<k>`: bit `k` (k < 4) or `12 + k` of word 9.
        pub const DISABLE_ZERO_COMPRESS_CNTX: usize = 9;
        /// `Unpack_if_sel_cntx<k>`: bit `4 + k` (k < 4) or `16 + k` of word 9.
        pub const UNPACK_IF_SEL_CNTX: usize = 9;
        /// `Base_cntx<k>_address` (k = 1..7): word `12 + k` (REG3, REG4).
        pub const BASE_CNTX: usize = 12;
        /// `Dest_cntx<k>_address` (unpacker 0, k < 4): 16 bits of word `20 + k / 2`.
        pub const DEST_CNTX: usize = 20;
        /// `Tile_x_dim_cntx<k>` (unpacker 0, k < 4): 16 bits of word `22 + k / 2`.
        pub const TILE_X_DIM_CNTX: usize = 22;
        /// `Offset_cntx<k>_address` (k < 4): word `28 + k` (REG7), bits 0-15.
        pub const OFFSET_CNTX: usize = 28;
        pub const UNPACK_LIMIT: F = F(10, 0, 17);
        pub const UNPACK_FIFO_SIZE: F = F(11, 0, 17);
        pub const BASE_ADDRESS: F = F(12, 0, 32);
        pub const OFFSET_ADDRESS: F = F(28, 0, 16);
        // Packer 0's section (THCON_SEC0_REG1, REG9).
        pub const P0_L1_DEST_ADDR: F = F(57, 0, 32);
        pub const P0_DISABLE_ZERO_COMPRESS: F = F(58, 0, 1);
        pub const P0_ADD_L1_DEST_OFFSET: F = F(58, 1, 1);
        pub const P0_ADDR_CNT_CONTEXT: F = F(58, 2, 2);
        pub const P0_OUT_DATA_FORMAT: F = F(58, 4, 4);
        pub const P0_IN_DATA_FORMAT: F = F(58, 8, 4);
        pub const P0_SUB_L1_HEADER: F = F(58, 15, 1);
        pub const P0_SOURCE_L1: F = F(58, 16, 1);
        pub const ALL_PACK_DISABLE_ZERO_COMPRESS: F = F(58, 17, 4);
        pub const ALL_PACK_DISABLE_ZERO_COMPRESS_OVRD: F = F(58, 21, 1);
        pub const P0_DOWNSAMPLE_MASK: F = F(59, 0, 16);
        pub const P0_EXP_THRESHOLD_EN: F = F(59, 20, 1);
        pub const P0_L1_ACC: F = F(59, 21, 1);
        pub const P0_LIMIT: F = F(88, 0, 17);
        pub const P0_FIFO_SIZE: F = F(89, 0, 17);
        pub const DEST_TARGET_PACK_OFFSET: F = F(152, 0, 12);
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
