//! The Vector Unit (SFPU): 32 lanes of 32 bits (`VectorUnit.md`), its `LReg` file
//! (`LReg.md`), the lane flags and their stack, and the instructions the emulator executes,
//! each following its page's functional model (`SFP<NAME>.md`), with the pages' names.
//!
//! `SFPCONFIG` is modelled only in its `LReg[11]` mode (`VD` 11: what tt-metal's firmware
//! does at boot, `SFPCONFIG.md`'s functional model); its other modes are refused. So
//! `LaneConfig` keeps its reset value, all zero: no row is masked, `DISABLE_BACKDOOR_LOAD`
//! is false (so an instruction with `VD >= 12` would load an `SFPLOADMACRO` template:
//! refused by [`unsupported`]), no column exchange, no Dst index capture. `LReg[12..15]`
//! read as zero.
//!
//! Timing is the caller's ([`super::Tensix`]): one instruction per cycle for the unit
//! (all threads together), latency 1, or 2 for the MAD sub-unit and `SFPSWAP`
//! ([`two_cycles`]); after an `SFPSWAP` the unit takes only `SFPNOP` for a cycle
//! ([`VectorUnit::accepts`]). The documented hazard software must avoid, an instruction
//! reading an `LReg` in the cycle right after the MAD sub-unit wrote it, stops the run with
//! a diagnosis.
//!
//! Files: `formats` (the `Dst` conversions), `dst_io` (`SFPLOAD`, `SFPSTORE`, the
//! `AddrMod`), `arith` (the MAD sub-unit, `SFPLOADI`, `SFPMOV`, `SFPIADD`), `bits` (bitwise,
//! field and ordering instructions), `cond` (lane predication and the flag stack).

mod arith;
mod bits;
mod cond;
mod dst_io;
/// The `Dst` conversions (crate-visible: the packers and unpackers may share them).
pub(crate) mod formats;

use super::isa::{field, opcode};

/// Lanes of every `LReg`.
pub const LANES: usize = 32;

/// Opcodes of the instructions this module executes (named as their pages).
pub(crate) mod op {
    pub const SFPLOAD: u8 = 0x70;
    pub const SFPLOADI: u8 = 0x71;
    pub const SFPSTORE: u8 = 0x72;
    pub const SFPMULI: u8 = 0x74;
    pub const SFPADDI: u8 = 0x75;
    pub const SFPDIVP2: u8 = 0x76;
    pub const SFPEXEXP: u8 = 0x77;
    pub const SFPEXMAN: u8 = 0x78;
    pub const SFPIADD: u8 = 0x79;
    pub const SFPSHFT: u8 = 0x7A;
    pub const SFPSETCC: u8 = 0x7B;
    pub const SFPMOV: u8 = 0x7C;
    pub const SFPABS: u8 = 0x7D;
    pub const SFPAND: u8 = 0x7E;
    pub const SFPOR: u8 = 0x7F;
    pub const SFPNOT: u8 = 0x80;
    pub const SFPLZ: u8 = 0x81;
    pub const SFPSETEXP: u8 = 0x82;
    pub const SFPSETMAN: u8 = 0x83;
    pub const SFPMAD: u8 = 0x84;
    pub const SFPADD: u8 = 0x85;
    pub const SFPMUL: u8 = 0x86;
    pub const SFPPUSHC: u8 = 0x87;
    pub const SFPPOPC: u8 = 0x88;
    pub const SFPSETSGN: u8 = 0x89;
    pub const SFPENCC: u8 = 0x8A;
    pub const SFPCOMPC: u8 = 0x8B;
    pub const SFPXOR: u8 = 0x8D;
    pub const SFPNOP: u8 = 0x8F;
    pub const SFPCONFIG: u8 = 0x91;
    pub const SFPSWAP: u8 = 0x92;
}

/// `SFPCONFIG`'s `Mod1` bits (`SFPCONFIG.md`).
const SFPCONFIG_MOD1_IMM16_IS_VALUE: u32 = 1;
const SFPCONFIG_MOD1_IMM16_IS_LANE_MASK: u32 = 8;

/// `LReg[8]`: 0.8373 in every lane (the nearest FP32; ASSUMPTION: the page gives the
/// decimal value only).
pub const LREG8: u32 = 0x3F56_594B;
/// `LReg[10]`: 1.0.
pub const LREG10: u32 = 0x3F80_0000;

/// One entry of the flag stack: `LaneFlags` and `UseLaneFlagsForLaneEnable` of every lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FlagEntry {
    /// `LaneFlags` per lane.
    pub flags: [bool; LANES],
    /// `UseLaneFlagsForLaneEnable` per lane.
    pub use_flags: [bool; LANES],
}

/// The Vector Unit's state.
#[derive(Clone, Debug)]
pub(crate) struct VectorUnit {
    /// `LReg[0..8]`, the writable registers.
    pub lreg: [[u32; LANES]; 8],
    /// `LReg[11]`, which only `SFPCONFIG` writes (zero at reset).
    pub lreg11: [u32; LANES],
    /// `LaneFlags`.
    pub flags: [bool; LANES],
    /// `UseLaneFlagsForLaneEnable`.
    pub use_flags: [bool; LANES],
    /// `FlagStack` (every lane pushes and pops together, so one stack of lane vectors).
    pub stack: Vec<FlagEntry>,
    /// The `LReg`s (bit `i` for `LReg[i]`) the MAD sub-unit wrote with the instruction
    /// issued in the given cycle: read in the next cycle they are not yet there.
    mad_wrote: Option<(u64, u32)>,
    /// The cycle of the last `SFPSWAP`: in the next one the unit accepts only `SFPNOP`.
    swap_at: Option<u64>,
    /// Whose rules the MAD sub-unit follows (default: ttsim's; see [`arith::mad`]).
    pub numerics: crate::config::Numerics,
}

impl Default for VectorUnit {
    fn default() -> Self {
        VectorUnit {
            lreg: [[0; LANES]; 8],
            lreg11: [0; LANES],
            flags: [false; LANES],
            use_flags: [false; LANES],
            stack: Vec::new(),
            mad_wrote: None,
            swap_at: None,
            numerics: Default::default(),
        }
    }
}

/// The fields of a Vector Unit instruction word (which ones mean something depends on the
/// instruction; see `Diagrams/Src/Bits32.lua`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fields {
    /// Bits 0-3.
    pub mod1: u32,
    /// Bits 4-7 (the load/store instructions keep theirs in bits 20-23).
    pub vd: usize,
    /// Bits 8-11.
    pub vc: usize,
    /// Bits 12-15.
    pub vb: usize,
    /// Bits 16-19.
    pub va: usize,
}

impl Fields {
    /// The fields of `w`.
    pub fn of(w: u32) -> Fields {
        Fields {
            mod1: field(w, 0, 4),
            vd: field(w, 4, 4) as usize,
            vc: field(w, 8, 4) as usize,
            vb: field(w, 12, 4) as usize,
            va: field(w, 16, 4) as usize,
        }
    }
}

/// What an instruction needs from outside the Vector Unit: `Dst`, the thread's RWCs and
/// configuration.
pub(crate) struct Context<'a> {
    /// The shared destination register.
    pub dst: &'a mut super::dst::Dst,
    /// `RWCs[CurrentThread]`.
    pub rwc: &'a mut super::counters::Rwc,
    /// `ThreadConfig[CurrentThread]`.
    pub thread_cfg: &'a [u16],
    /// `Config[StateID]`.
    pub cfg: &'a [u32],
}

/// The VD field of the instructions that have one (load/store: bits 20-23).
fn vd_of(w: u32) -> Option<usize> {
    match opcode(w) {
        op::SFPLOAD | op::SFPLOADI | op::SFPSTORE => Some(field(w, 20, 4) as usize),
        op::SFPNOP => None,
        _ => Some(field(w, 4, 4) as usize),
    }
}

/// Why the emulator cannot execute the Vector Unit instruction `w` whatever the state, or
/// `None`: the modes the model leaves out and what the pages call undefined behaviour.
pub(crate) fn unsupported(w: u32) -> Option<String> {
    let o = opcode(w);
    let name = || super::isa::mnemonic(w);
    if let Some(vd) = vd_of(w) {
        if vd >= 12 {
            let name = name();
            return Some(format!(
                "{name} with VD {vd}: with LaneConfig.DISABLE_BACKDOOR_LOAD at its reset value it loads an SFPLOADMACRO instruction template, which is not modelled"
            ));
        }
    }
    let mod0 = field(w, 16, 4);
    match o {
        op::SFPLOAD | op::SFPSTORE if mod0 == dst_io::MOD0_FMT_SRCB => Some(format!(
            "{} MOD0_FMT_SRCB (format from the ALU configuration) is not modelled: name the format",
            name()
        )),
        op::SFPLOADI if !matches!(mod0, 0 | 1 | 2 | 4 | 8 | 10) => {
            Some(format!("SFPLOADI Mod0 {mod0} is undefined behaviour"))
        }
        op::SFPMOV if field(w, 0, 4) & arith::SFPMOV_MOD1_FROM_SPECIAL != 0 => Some(
            "SFPMOV from the special registers (SFPLOADMACRO configuration, PRNG, LaneConfig) is not modelled".into(),
        ),
        op::SFPSWAP if field(w, 0, 4) > 8 => Some(format!(
            "SFPSWAP Mod1 {} is undefined behaviour (no VDGetsMin)",
            field(w, 0, 4)
        )),
        op::SFPCONFIG if field(w, 4, 4) != 11 => Some(format!(
            "SFPCONFIG with VD {} (LoadMacroConfig, LaneConfig or LReg[12..14]) is not modelled; VD 11 is",
            field(w, 4, 4)
        )),
        op::SFPNOP if field(w, 7, 1) != 0 => {
            Some("SFPNOP with bit 7 set has no documented meaning".into())
        }
        _ => None,
    }
}

/// Whether `w` writes through the MAD sub-unit (its result is not readable in the next
/// cycle).
fn is_mad(w: u32) -> bool {
    matches!(
        opcode(w),
        op::SFPMAD | op::SFPADD | op::SFPMUL | op::SFPMULI | op::SFPADDI
    )
}

/// Whether `w` has the two-cycle latency of `VectorUnit.md`'s table (the MAD sub-unit's
/// instructions and `SFPSWAP`); every other modelled one has one cycle.
pub(crate) fn two_cycles(w: u32) -> bool {
    is_mad(w) || opcode(w) == op::SFPSWAP
}

impl VectorUnit {
    /// `LReg[r][lane]` as an instruction reads it (constants included).
    pub fn read(&self, r: usize, lane: usize) -> u32 {
        match r {
            0..=7 => self.lreg[r][lane],
            8 => LREG8,
            10 => LREG10,
            11 => self.lreg11[lane],
            15 => 2 * lane as u32,
            _ => 0, // 9: zero; 12-14: SFPCONFIG's, at reset
        }
    }

    /// `IsLaneEnabled(lane)` (`ROW_MASK` is zero).
    pub fn enabled(&self, lane: usize) -> bool {
        !self.use_flags[lane] || self.flags[lane]
    }

    /// The `LReg`s `w` reads (bit `i` for `LReg[i]`), for the MAD hazard.
    fn reads(&self, w: u32) -> u32 {
        let f = Fields::of(w);
        let bit = |r: usize| 1u32 << r;
        let mod0 = field(w, 16, 4);
        match opcode(w) {
            op::SFPLOAD if matches!(mod0, 14 | 15) => bit(field(w, 20, 4) as usize),
            op::SFPLOADI if matches!(mod0, 8 | 10) => bit(field(w, 20, 4) as usize),
            op::SFPSTORE => bit(field(w, 20, 4) as usize),
            op::SFPMAD | op::SFPADD | op::SFPMUL => {
                let mut m = bit(f.vb) | bit(f.vc);
                if f.mod1 & arith::SFPMAD_MOD1_INDIRECT_VA != 0 {
                    m |= bit(7);
                    for l in 0..LANES {
                        m |= bit((self.lreg[7][l] & 15) as usize);
                    }
                } else {
                    m |= bit(f.va);
                }
                if f.mod1 & arith::SFPMAD_MOD1_INDIRECT_VD != 0 {
                    m |= bit(7);
                }
                m
            }
            op::SFPMULI | op::SFPADDI => {
                let indirect = f.mod1 & arith::SFPMAD_MOD1_INDIRECT_VD != 0;
                bit(f.vd) | if indirect { bit(7) } else { 0 }
            }
            // SFPSETCC reads VC only to compare (not in its immediate or clear modes).
            op::SFPSETCC
                if f.mod1 & (cond::SFPSETCC_MOD1_IMM_BIT0 | cond::SFPSETCC_MOD1_CLEAR) != 0 =>
            {
                0
            }
            op::SFPMOV | op::SFPSETCC | op::SFPNOT | op::SFPABS | op::SFPEXEXP => bit(f.vc),
            op::SFPEXMAN | op::SFPDIVP2 | op::SFPLZ => bit(f.vc),
            op::SFPIADD | op::SFPSHFT | op::SFPSETSGN | op::SFPSETEXP | op::SFPSETMAN
                if f.mod1 & 1 != 0 =>
            {
                // The immediate forms (ARG_IMM is bit 0 for all five).
                if opcode(w) == op::SFPSHFT {
                    bit(f.vd)
                } else {
                    bit(f.vc)
                }
            }
            op::SFPIADD | op::SFPAND | op::SFPOR | op::SFPXOR | op::SFPSHFT => {
                bit(f.vc) | bit(f.vd)
            }
            op::SFPSETSGN | op::SFPSETEXP | op::SFPSETMAN | op::SFPSWAP => bit(f.vc) | bit(f.vd),
            op::SFPCONFIG if f.mod1 & SFPCONFIG_MOD1_IMM16_IS_VALUE == 0 => bit(0),
            _ => 0,
        }
    }

    /// `SFPCONFIG` with `VD` 11 (`SFPCONFIG.md`): `LReg[11]` of every enabled lane gets
    /// `LReg[0]` of lane `lane & 7`, or -1.0 with `MOD1_IMM16_IS_VALUE`; `Imm16` bit
    /// `2 (lane & 7)` enables a lane with `MOD1_IMM16_IS_LANE_MASK`.
    fn sfpconfig_lreg11(&mut self, w: u32) {
        let (mod1, imm16) = (field(w, 0, 4), field(w, 8, 16));
        for lane in 0..LANES {
            if mod1 & SFPCONFIG_MOD1_IMM16_IS_LANE_MASK != 0 && imm16 >> ((lane & 7) * 2) & 1 == 0 {
                continue;
            }
            if self.use_flags[lane & 7] && !self.flags[lane & 7] {
                continue;
            }
            self.lreg11[lane] = if mod1 & SFPCONFIG_MOD1_IMM16_IS_VALUE != 0 {
                0xBF80_0000
            } else {
                self.lreg[0][lane & 7]
            };
        }
    }

    /// Whether the unit accepts `w` at `cycle`: in the cycle after an `SFPSWAP` only an
    /// `SFPNOP` (`SFPSWAP.md`: hardware stalls any other instruction for that cycle).
    pub fn accepts(&self, w: u32, cycle: u64) -> bool {
        !(self.swap_at.is_some_and(|s| s + 1 == cycle) && opcode(w) != op::SFPNOP)
    }

    /// Executes `w` issued at `cycle`.
    pub fn execute(&mut self, w: u32, cycle: u64, ctx: Context) -> Result<(), String> {
        if let Some((at, wrote)) = self.mad_wrote {
            let clash = self.reads(w) & wrote;
            if at + 1 == cycle && clash != 0 {
                return Err(format!(
                    "reads LReg[{}] in the cycle after an SFPMAD/SFPADD/SFPMUL wrote it (SFPMAD.md: software must put an SFPNOP between them)",
                    clash.trailing_zeros()
                ));
            }
        }
        self.mad_wrote = None;
        self.swap_at = (opcode(w) == op::SFPSWAP).then_some(cycle);
        let f = Fields::of(w);
        match opcode(w) {
            op::SFPLOAD => dst_io::sfpload(self, w, ctx)?,
            op::SFPSTORE => dst_io::sfpstore(self, w, ctx)?,
            op::SFPLOADI => arith::sfploadi(self, w),
            op::SFPMAD | op::SFPADD | op::SFPMUL => {
                let wrote = arith::sfpmad(self, f);
                self.mad_wrote = Some((cycle, wrote));
            }
            op::SFPMULI | op::SFPADDI => {
                let wrote = arith::sfpmuli_addi(self, w, f, opcode(w) == op::SFPADDI);
                self.mad_wrote = Some((cycle, wrote));
            }
            op::SFPMOV => arith::sfpmov(self, f),
            op::SFPIADD => arith::sfpiadd(self, w, f),
            op::SFPSETCC => cond::sfpsetcc(self, w, f),
            op::SFPENCC => cond::sfpencc(self, f, field(w, 12, 2)),
            op::SFPCOMPC => cond::sfpcompc(self),
            op::SFPPUSHC => cond::sfppushc(self)?,
            op::SFPPOPC => cond::sfppopc(self, f)?,
            op::SFPNOP => {}
            op::SFPCONFIG => self.sfpconfig_lreg11(w),
            op::SFPAND | op::SFPOR | op::SFPXOR | op::SFPNOT | op::SFPABS | op::SFPSETSGN => {
                bits::execute(self, w)
            }
            op::SFPSETEXP | op::SFPSETMAN | op::SFPEXEXP | op::SFPEXMAN | op::SFPDIVP2 => {
                bits::execute(self, w)
            }
            op::SFPLZ | op::SFPSHFT | op::SFPSWAP => bits::execute(self, w),
            o => {
                return Err(format!(
                    "opcode {o:#04x} is not a modelled Vector Unit instruction"
                ))
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod agreement;
