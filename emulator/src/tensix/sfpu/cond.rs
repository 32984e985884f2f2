//! Lane predication: `SFPSETCC`, `SFPENCC`, `SFPCOMPC`, `SFPPUSHC`, `SFPPOPC`, following
//! their pages and `VectorUnit.md`'s "Lane Predication Masks". The flag stack holds at
//! most eight entries; pushing onto a full stack or plainly popping an empty one is
//! undefined behaviour and stops the run.

use super::{Fields, FlagEntry, VectorUnit, LANES};
use crate::tensix::isa::field;

/// Flags from `Imm1`.
pub const SFPSETCC_MOD1_IMM_BIT0: u32 = 1;
/// Flags cleared.
pub const SFPSETCC_MOD1_CLEAR: u32 = 8;
/// Invert `UseLaneFlagsForLaneEnable`.
pub const SFPENCC_MOD1_EC: u32 = 1;
/// Set `UseLaneFlagsForLaneEnable` from the immediate.
pub const SFPENCC_MOD1_EI: u32 = 2;
/// Set the lane flags from the immediate (else: true).
pub const SFPENCC_MOD1_RI: u32 = 8;
/// Bits of `SFPENCC`'s `Imm2` (`SFPENCC_IMM12_E`, `SFPENCC_IMM12_R`).
pub const SFPENCC_IMM_E: u32 = 1;
/// Immediate bit for the lane flags (`SFPENCC_IMM12_R`).
pub const SFPENCC_IMM_R: u32 = 2;
/// Capacity of the flag stack.
pub const STACK_DEPTH: usize = 8;

/// `SFPSETCC`.
pub fn sfpsetcc(u: &mut VectorUnit, w: u32, f: Fields) {
    let imm1 = field(w, 12, 1);
    for lane in 0..LANES {
        if !u.enabled(lane) {
            continue;
        }
        u.flags[lane] = if !u.use_flags[lane] || f.mod1 & SFPSETCC_MOD1_CLEAR != 0 {
            false
        } else if f.mod1 & SFPSETCC_MOD1_IMM_BIT0 != 0 {
            imm1 != 0
        } else {
            let c = u.read(f.vc, lane) as i32;
            match f.mod1 {
                0 => c < 0,
                2 => c != 0,
                4 => c >= 0,
                _ => c == 0, // 6
            }
        };
    }
}

/// `SFPENCC`. The page's `SFPENCC_IMM12_E`/`_R` tests read `Mod1` in its pseudo-code but
/// name an immediate bit: the encoding has a separate `Imm2` field (bits 12-13), and the
/// model reads the immediate bits from there (ASSUMPTION, as tt-metal's SFPI uses them).
pub fn sfpencc(u: &mut VectorUnit, f: Fields, imm2: u32) {
    for lane in 0..LANES {
        if f.mod1 & SFPENCC_MOD1_EI != 0 {
            u.use_flags[lane] = imm2 & SFPENCC_IMM_E != 0;
        } else if f.mod1 & SFPENCC_MOD1_EC != 0 {
            u.use_flags[lane] = !u.use_flags[lane];
        }
        u.flags[lane] = if f.mod1 & SFPENCC_MOD1_RI != 0 {
            imm2 & SFPENCC_IMM_R != 0
        } else {
            true
        };
    }
}

/// The top of the stack as `SFPCOMPC`/`SFPPOPC` peek it, `empty` when there is none.
fn top(u: &VectorUnit, empty: bool) -> FlagEntry {
    u.stack.last().copied().unwrap_or(FlagEntry {
        flags: [empty; LANES],
        use_flags: [empty; LANES],
    })
}

/// `SFPCOMPC`.
pub fn sfpcompc(u: &mut VectorUnit) {
    let t = top(u, true);
    for lane in 0..LANES {
        u.flags[lane] = t.use_flags[lane] && u.use_flags[lane] && t.flags[lane] && !u.flags[lane];
    }
}

/// `SFPPUSHC`.
pub fn sfppushc(u: &mut VectorUnit) -> Result<(), String> {
    if u.stack.len() >= STACK_DEPTH {
        return Err(
            "SFPPUSHC onto a full flag stack (eight entries) is undefined behaviour".into(),
        );
    }
    u.stack.push(FlagEntry {
        flags: u.flags,
        use_flags: u.use_flags,
    });
    Ok(())
}

/// `BooleanOp` of `SFPPOPC.md`.
fn boolean_op(mod1: u32, a: bool, b: bool) -> bool {
    match mod1 {
        1 => b,
        2 => !b,
        3 => a && b,
        4 => a || b,
        5 => a && !b,
        6 => a || !b,
        7 => !a && b,
        8 => !a || b,
        9 => !a && !b,
        10 => !a || !b,
        11 => a != b,
        _ => a == b, // 12
    }
}

/// `SFPPOPC`, including the documented hardware bug (a peeking mode on a full stack
/// overwrites the bottom entry with the top).
pub fn sfppopc(u: &mut VectorUnit, f: Fields) -> Result<(), String> {
    let t = top(u, false);
    if f.mod1 == 0 {
        if u.stack.pop().is_none() {
            return Err("SFPPOPC (plain pop) of an empty flag stack is undefined behaviour".into());
        }
    } else if u.stack.len() == STACK_DEPTH {
        u.stack[0] = t;
    }
    for lane in 0..LANES {
        match f.mod1 {
            0 => {
                u.use_flags[lane] = t.use_flags[lane];
                u.flags[lane] = t.flags[lane];
            }
            1..=12 => {
                u.use_flags[lane] = t.use_flags[lane];
                u.flags[lane] = boolean_op(f.mod1, u.flags[lane], t.flags[lane]);
            }
            13 => u.flags[lane] = !u.flags[lane],
            14 => {
                u.use_flags[lane] = true;
                u.flags[lane] = true;
            }
            _ => {
                u.use_flags[lane] = true;
                u.flags[lane] = false;
            }
        }
    }
    Ok(())
}
