//! Tensix instruction words: the opcode table (mnemonic, executing unit, the wait-gate
//! block bits that hold it back) and the check that says whether the emulator models a word.
//!
//! Encodings follow Tenstorrent's ISA documentation (`WormholeB0/TensixTile/
//! TensixCoprocessor/<mnemonic>.md`, the bit diagrams of `Diagrams/Src/Bits32.lua`): the
//! opcode is the top eight bits, the fields below it are per instruction. `RDCFG` has no page;
//! its encoding (opcode 0xB1, GPR in bits 16-23, configuration index in bits 0-15) is the one
//! tt-metal's `ckernel_ops.h` uses.

/// The unit an instruction executes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Frontend: `MOP`, `MOP_CFG` (never reach the wait gate).
    MopExpander,
    /// Frontend: `REPLAY` (never reaches the wait gate).
    ReplayExpander,
    Sync,
    Config,
    Scalar,
    Misc,
    Matrix,
    Unpack,
    Pack,
    Vector,
    Mover,
}

/// Wait-gate block bits (`STALLWAIT.md`, "Block mask") the modelled instructions use.
pub(crate) mod block {
    pub const B0: u16 = 1;
    pub const B1: u16 = 1 << 1;
    pub const B2: u16 = 1 << 2;
    pub const B3: u16 = 1 << 3;
    pub const B5: u16 = 1 << 5;
    pub const B6: u16 = 1 << 6;
    pub const B7: u16 = 1 << 7;
    pub const B8: u16 = 1 << 8;
    pub const ALL: u16 = 0x1FF;
}

pub(crate) mod op {
    pub const MOP: u8 = 0x01;
    pub const NOP: u8 = 0x02;
    pub const MOP_CFG: u8 = 0x03;
    pub const REPLAY: u8 = 0x04;
    pub const SETRWC: u8 = 0x37;
    pub const INCRWC: u8 = 0x38;
    pub const PACR: u8 = 0x41;
    pub const UNPACR: u8 = 0x42;
    pub const UNPACR_NOP: u8 = 0x43;
    pub const SETDMAREG: u8 = 0x45;
    pub const REG2FLOP: u8 = 0x48;
    pub const STOREREG: u8 = 0x67;
    pub const SETADC: u8 = 0x50;
    pub const SETADCXY: u8 = 0x51;
    pub const INCADCXY: u8 = 0x52;
    pub const ADDRCRXY: u8 = 0x53;
    pub const SETADCZW: u8 = 0x54;
    pub const INCADCZW: u8 = 0x55;
    pub const ADDRCRZW: u8 = 0x56;
    pub const SETDVALID: u8 = 0x57;
    pub const ADDDMAREG: u8 = 0x58;
    pub const SUBDMAREG: u8 = 0x59;
    pub const MULDMAREG: u8 = 0x5A;
    pub const BITWOPDMAREG: u8 = 0x5B;
    pub const SHIFTDMAREG: u8 = 0x5C;
    pub const CMPDMAREG: u8 = 0x5D;
    pub const SETADCXX: u8 = 0x5E;
    pub const DMANOP: u8 = 0x60;
    pub const ATGETM: u8 = 0xA0;
    pub const ATRELM: u8 = 0xA1;
    pub const STALLWAIT: u8 = 0xA2;
    pub const SEMINIT: u8 = 0xA3;
    pub const SEMPOST: u8 = 0xA4;
    pub const SEMGET: u8 = 0xA5;
    pub const SEMWAIT: u8 = 0xA6;
    pub const WRCFG: u8 = 0xB0;
    pub const RDCFG: u8 = 0xB1;
    pub const SETC16: u8 = 0xB2;
    pub const RMWCIB0: u8 = 0xB3;
    pub const RMWCIB3: u8 = 0xB6;
}

/// One row of the opcode table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpInfo {
    pub mnemonic: &'static str,
    pub unit: Unit,
    /// Block bits that hold the instruction at the wait gate (`STALLWAIT.md`'s table).
    pub block: u16,
    /// Whether the emulator executes it.
    pub modelled: bool,
}

use block::*;
use Unit::*;

const fn m(mnemonic: &'static str, unit: Unit, block: u16) -> OpInfo {
    OpInfo {
        mnemonic,
        unit,
        block,
        modelled: true,
    }
}

const fn u(mnemonic: &'static str, unit: Unit) -> OpInfo {
    OpInfo {
        mnemonic,
        unit,
        block: 0,
        modelled: false,
    }
}

/// The opcode table: every opcode the ISA documentation gives an encoding for, and the
/// Wormhole B0 opcodes only ttsim's instruction table names (0x0B, 0x14, 0x15, 0x1A-0x1E,
/// 0x22-0x25, 0x31, 0x32, 0x39, 0x3A, 0x43, 0x44, 0x4B; none modelled), so that a refusal
/// names the instruction.
const TABLE: &[(u8, OpInfo)] = &[
    (op::MOP, m("MOP", MopExpander, 0)),
    // NOP is held back only when every block bit is set (special-cased in `blocked`).
    (op::NOP, m("NOP", Misc, 0)),
    (op::MOP_CFG, m("MOP_CFG", MopExpander, 0)),
    (op::REPLAY, m("REPLAY", ReplayExpander, 0)),
    (0x08, m("MOVD2A", Matrix, B6)),
    (0x0B, u("MOVB2A", Matrix)),
    (0x14, u("TRNSPSRCA", Matrix)),
    (0x15, u("RAREB", Matrix)),
    (0x1A, u("SETASHRMH0", Unpack)),
    (0x1B, u("SETASHRMH1", Unpack)),
    (0x1C, u("SETASHRMV", Unpack)),
    (0x1D, u("SETPKEDGOF", Pack)),
    (0x1E, u("SETASHRMH", Unpack)),
    (0x22, u("CONV3S1", Matrix)),
    (0x23, u("CONV3S2", Matrix)),
    (0x24, u("MPOOL3S1", Matrix)),
    (0x25, u("APOOL3S1", Matrix)),
    (0x31, u("MPOOL3S2", Matrix)),
    (0x32, u("APOOL3S2", Matrix)),
    (0x39, u("SETIBRWC", Matrix)),
    (0x3A, u("MFCONV3S1", Matrix)),
    (op::UNPACR_NOP, m("UNPACR_NOP", Unpack, B0 | B3)),
    (0x44, u("RSTDMA", Scalar)),
    (0x4B, u("TBUFCMD", Misc)),
    (0x09, m("MOVDBGA2D", Matrix, B6)),
    (0x0A, m("MOVD2B", Matrix, B6)),
    (0x10, m("ZEROACC", Matrix, B6)),
    (0x11, m("ZEROSRC", Matrix, B6)),
    (0x12, m("MOVA2D", Matrix, B6)),
    (0x13, m("MOVB2D", Matrix, B6)),
    (0x16, u("TRNSPSRCB", Matrix)),
    (0x17, u("SHIFTXA", Matrix)),
    (0x18, u("SHIFTXB", Matrix)),
    (0x21, u("CLREXPHIST", Matrix)),
    (0x26, m("MVMUL", Matrix, B6)),
    (0x27, m("ELWMUL", Matrix, B6)),
    (0x28, m("ELWADD", Matrix, B6)),
    (0x29, u("DOTPV", Matrix)),
    (0x30, m("ELWSUB", Matrix, B6)),
    (0x33, u("GMPOOL", Matrix)),
    (0x34, u("GAPOOL", Matrix)),
    (0x35, u("GATESRCRST", Matrix)),
    (0x36, m("CLEARDVALID", Matrix, B6)),
    (op::SETRWC, m("SETRWC", Matrix, B6)),
    (op::INCRWC, m("INCRWC", Matrix, B6)),
    (0x40, u("XMOV", Mover)),
    (op::PACR, m("PACR", Pack, B0 | B2)),
    (op::UNPACR, m("UNPACR", Unpack, B0 | B3)),
    (op::SETDMAREG, m("SETDMAREG", Scalar, B0 | B5)),
    (0x46, u("FLUSHDMA", Scalar)),
    (op::REG2FLOP, m("REG2FLOP", Scalar, B0 | B5)),
    (0x49, u("LOADIND", Scalar)),
    (0x4A, u("PACR_SETREG", Pack)),
    (op::SETADC, m("SETADC", Misc, B0)),
    (op::SETADCXY, m("SETADCXY", Misc, B0)),
    (op::INCADCXY, m("INCADCXY", Misc, B0)),
    (op::ADDRCRXY, m("ADDRCRXY", Misc, B0)),
    (op::SETADCZW, m("SETADCZW", Misc, B0)),
    (op::INCADCZW, m("INCADCZW", Misc, B0)),
    (op::ADDRCRZW, m("ADDRCRZW", Misc, B0)),
    (op::SETDVALID, m("SETDVALID", Misc, B0)),
    (op::ADDDMAREG, m("ADDDMAREG", Scalar, B0 | B5)),
    (op::SUBDMAREG, m("SUBDMAREG", Scalar, B0 | B5)),
    (op::MULDMAREG, m("MULDMAREG", Scalar, B0 | B5)),
    (op::BITWOPDMAREG, m("BITWOPDMAREG", Scalar, B0 | B5)),
    (op::SHIFTDMAREG, m("SHIFTDMAREG", Scalar, B0 | B5)),
    (op::CMPDMAREG, m("CMPDMAREG", Scalar, B0 | B5)),
    (op::SETADCXX, m("SETADCXX", Misc, B0)),
    (op::DMANOP, m("DMANOP", Scalar, B0 | B5)),
    (0x61, u("ATINCGET", Scalar)),
    (0x62, u("ATINCGETPTR", Scalar)),
    (0x63, u("ATSWAP", Scalar)),
    (0x64, u("ATCAS", Scalar)),
    (0x66, u("STOREIND", Scalar)),
    (op::STOREREG, m("STOREREG", Scalar, B0 | B5)),
    (0x68, u("LOADREG", Scalar)),
    (0x70, m("SFPLOAD", Vector, B8)),
    (0x71, m("SFPLOADI", Vector, B8)),
    (0x72, m("SFPSTORE", Vector, B8)),
    (0x73, u("SFPLUT", Vector)),
    (0x74, m("SFPMULI", Vector, B8)),
    (0x75, m("SFPADDI", Vector, B8)),
    (0x76, m("SFPDIVP2", Vector, B8)),
    (0x77, m("SFPEXEXP", Vector, B8)),
    (0x78, m("SFPEXMAN", Vector, B8)),
    (0x79, m("SFPIADD", Vector, B8)),
    (0x7A, m("SFPSHFT", Vector, B8)),
    (0x7B, m("SFPSETCC", Vector, B8)),
    (0x7C, m("SFPMOV", Vector, B8)),
    (0x7D, m("SFPABS", Vector, B8)),
    (0x7E, m("SFPAND", Vector, B8)),
    (0x7F, m("SFPOR", Vector, B8)),
    (0x80, m("SFPNOT", Vector, B8)),
    (0x81, m("SFPLZ", Vector, B8)),
    (0x82, m("SFPSETEXP", Vector, B8)),
    (0x83, m("SFPSETMAN", Vector, B8)),
    (0x84, m("SFPMAD", Vector, B8)),
    (0x85, m("SFPADD", Vector, B8)),
    (0x86, m("SFPMUL", Vector, B8)),
    (0x87, m("SFPPUSHC", Vector, B8)),
    (0x88, m("SFPPOPC", Vector, B8)),
    (0x89, m("SFPSETSGN", Vector, B8)),
    (0x8A, m("SFPENCC", Vector, B8)),
    (0x8B, m("SFPCOMPC", Vector, B8)),
    (0x8C, u("SFPTRANSP", Vector)),
    (0x8D, m("SFPXOR", Vector, B8)),
    (0x8E, u("SFPSTOCHRND", Vector)),
    (0x8F, m("SFPNOP", Vector, B8)),
    (0x90, u("SFPCAST", Vector)),
    (0x91, m("SFPCONFIG", Vector, B8)),
    (0x92, m("SFPSWAP", Vector, B8)),
    (0x93, u("SFPLOADMACRO", Vector)),
    (0x94, u("SFPSHFT2", Vector)),
    (0x95, u("SFPLUTFP32", Vector)),
    (op::ATGETM, m("ATGETM", Sync, B1)),
    (op::ATRELM, m("ATRELM", Sync, B1)),
    (op::STALLWAIT, m("STALLWAIT", Sync, ALL)),
    (op::SEMINIT, m("SEMINIT", Sync, B1)),
    (op::SEMPOST, m("SEMPOST", Sync, B1)),
    (op::SEMGET, m("SEMGET", Sync, B1)),
    (op::SEMWAIT, m("SEMWAIT", Sync, B1)),
    (op::WRCFG, m("WRCFG", Config, B7)),
    (op::RDCFG, m("RDCFG", Config, B7)),
    (op::SETC16, m("SETC16", Config, B7)),
    (0xB3, m("RMWCIB0", Config, B7)),
    (0xB4, m("RMWCIB1", Config, B7)),
    (0xB5, m("RMWCIB2", Config, B7)),
    (0xB6, m("RMWCIB3", Config, B7)),
];

/// The opcode of `word`.
pub(crate) const fn opcode(word: u32) -> u8 {
    (word >> 24) as u8
}

/// `width` bits of `word` starting at bit `lo`.
pub(crate) const fn field(word: u32, lo: u32, width: u32) -> u32 {
    (word >> lo) & ((1 << width) - 1)
}

/// The table row of `opcode`, if the documentation gives it an encoding (looked up in an
/// index by opcode: the wait gate asks for every instruction).
pub(crate) fn info(opcode: u8) -> Option<&'static OpInfo> {
    static INDEX: std::sync::OnceLock<[Option<u8>; 256]> = std::sync::OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut ix = [None; 256];
        for (k, (o, _)) in TABLE.iter().enumerate() {
            ix[*o as usize] = Some(k as u8);
        }
        ix
    });
    index[opcode as usize].map(|k| &TABLE[k as usize].1)
}

/// The mnemonic of `word` (`"an unknown opcode"` when the documentation has none).
pub(crate) fn mnemonic(word: u32) -> &'static str {
    info(opcode(word)).map_or("an unknown opcode", |i| i.mnemonic)
}

/// The mnemonics the emulator executes, in opcode order (for documentation and tests).
pub fn modelled_mnemonics() -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|(_, i)| i.modelled)
        .map(|(_, i)| i.mnemonic)
        .collect()
}

/// Why the emulator cannot execute `word`, or `None` when it can. This is the whole
/// "supported" rule: an opcode outside the modelled set, or a modelled opcode used in a
/// mode or with operands the emulator does not model or that the documentation calls
/// undefined behaviour.
pub(crate) fn unsupported(word: u32) -> Option<String> {
    let Some(i) = info(opcode(word)) else {
        return Some(format!(
            "opcode {:#04x} is not a Wormhole B0 Tensix instruction (neither the ISA documentation nor ttsim names it)",
            opcode(word)
        ));
    };
    if !i.modelled {
        return Some(format!(
            "{} is not modelled (docs/design/tensix-coprocessor.md lists what is)",
            i.mnemonic
        ));
    }
    let f = |lo, w| field(word, lo, w);
    let cfg_words = super::config::CFG_WORDS as u32;
    match opcode(word) {
        op::SETDMAREG if f(7, 1) == 1 => {
            Some("SETDMAREG reading packer configuration or state is not modelled".into())
        }
        op::BITWOPDMAREG | op::CMPDMAREG if f(18, 3) > 2 => Some(format!(
            "{} mode {} is undefined behaviour",
            i.mnemonic,
            f(18, 3)
        )),
        op::SHIFTDMAREG if f(18, 3) > 1 => Some(format!(
            "SHIFTDMAREG mode {} is undefined behaviour",
            f(18, 3)
        )),
        op::REG2FLOP => super::scalar::reg2flop_unsupported(word),
        op::STOREREG => super::scalar::storereg_unsupported(word),
        op::UNPACR => super::unpack::unsupported(word),
        op::UNPACR_NOP => match f(0, 23) {
            1 | 7 => None,
            m => Some(format!(
                "UNPACR_NOP mode {m:#x} is not modelled (modes 1, zero the unpacker's bank, and 7, set it valid)"
            )),
        },
        op::PACR => super::pack::unsupported(word),
        0x10 if f(18, 1) == 1 && f(19, 2) >= 1 => {
            Some("ZEROACC with Revert set is undefined behaviour".into())
        }
        op::ATGETM | op::ATRELM if f(0, 16) == 1 || f(0, 16) > 7 => Some(format!(
            "{} of mutex {} waits forever (valid mutexes: 0, 2-7)",
            i.mnemonic,
            f(0, 16)
        )),
        op::WRCFG if f(0, 11) >= cfg_words => Some(format!(
            "WRCFG index {} is past Config ({cfg_words} words): undefined behaviour",
            f(0, 11)
        )),
        op::RDCFG if f(0, 16) >= cfg_words => Some(format!(
            "RDCFG index {} is past Config ({cfg_words} words)",
            f(0, 16)
        )),
        op::RDCFG if f(16, 8) >= 64 => Some(format!("RDCFG GPR {} is past 63", f(16, 8))),
        op::SETC16 if f(16, 8) >= super::config::THD_STATE_SIZE as u32 => Some(format!(
            "SETC16 index {} is past ThreadConfig ({} entries): undefined behaviour",
            f(16, 8),
            super::config::THD_STATE_SIZE
        )),
        op::RMWCIB0..=op::RMWCIB3 if f(0, 8) >= cfg_words => Some(format!(
            "{} index {} is past Config ({cfg_words} words): undefined behaviour",
            i.mnemonic,
            f(0, 8)
        )),
        op::NOP if f(0, 24) != 0 => Some(format!(
            "NOP with reserved bits set ({:#08x}) is undefined behaviour",
            f(0, 24)
        )),
        0x70..=0x95 => super::sfpu::unsupported(word),
        _ => None,
    }
}

/// Whether an instruction `word` is held at the wait gate by `mask`.
pub(crate) fn blocked(word: u32, mask: u16) -> bool {
    match opcode(word) {
        op::NOP => mask & block::ALL == block::ALL,
        o => info(o).is_some_and(|i| i.block & mask != 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_are_unique_and_mnemonics_resolve() {
        for (k, (a, _)) in TABLE.iter().enumerate() {
            assert!(TABLE[k + 1..].iter().all(|(b, _)| a != b), "{a:#x}");
        }
        assert_eq!(mnemonic(0x2800_0000), "ELWADD");
        assert_eq!(mnemonic(0xFF00_0000), "an unknown opcode");
        assert!(modelled_mnemonics().contains(&"SEMWAIT"));
    }

    #[test]
    fn unsupported_names_the_reason() {
        assert!(unsupported(0x0200_0000).is_none(), "NOP");
        assert!(unsupported(0x2800_0000).is_none(), "ELWADD");
        assert!(unsupported(0x2900_0000)
            .unwrap()
            .contains("DOTPV is not modelled"));
        assert!(unsupported(0x4500_0080).unwrap().contains("packer"));
        assert!(unsupported(0xA200_0100).is_none(), "STALLWAIT C8");
        assert!(unsupported(0x4100_0200).is_none(), "PACR to packer 1");
        assert!(
            unsupported(0x4100_0f00).is_none(),
            "PACR to all four packers"
        );
        assert!(unsupported(0x4100_0500)
            .unwrap()
            .contains("PackerMask 0b0101"));
        assert!(
            unsupported(0x4200_0081).is_none(),
            "UNPACR MultiContextMode + Last, as tt-metal emits it"
        );
        assert!(unsupported(0x4200_0088)
            .unwrap()
            .contains("UseContextCounter"));
        assert!(unsupported(0x4200_0380).unwrap().contains("ContextADC 3"));
        // A NOP with reserved bits stops (ttsim does too).
        assert!(unsupported(0x0200_0001).unwrap().contains("reserved bits"));
        // Opcodes the ISA documentation leaves out but ttsim's table names are named.
        assert!(unsupported(0x1A00_0000)
            .unwrap()
            .contains("SETASHRMH0 is not modelled"));
        assert!(unsupported(0x4300_0001).is_none(), "UNPACR_NOP UNP_ZEROSRC");
        assert!(
            unsupported(0x4380_0007).is_none(),
            "UNPACR_NOP UNP_SET_DVALID, SrcB"
        );
        assert!(unsupported(0x4300_0005)
            .unwrap()
            .contains("UNPACR_NOP mode 0x5 is not modelled"));
        assert!(unsupported(0x0500_0000)
            .unwrap()
            .contains("0x05 is not a Wormhole B0 Tensix instruction"));
        assert!(unsupported(0xA000_0001).unwrap().contains("forever"));
        assert!(unsupported(0xA000_0002).is_none());
    }

    #[test]
    fn block_bits_follow_the_table() {
        let semget = 0xA500_0004;
        assert!(blocked(semget, block::B1) && !blocked(semget, block::B0 | block::B6));
        assert!(!blocked(0x0200_0000, block::ALL & !1) && blocked(0x0200_0000, block::ALL));
        assert!(blocked(0x4500_0000, block::B5) && blocked(0x4500_0000, block::B0));
        assert!(blocked(0x3800_0000, block::B6));
        assert!(blocked(0xB200_0000, block::B7));
    }
}
