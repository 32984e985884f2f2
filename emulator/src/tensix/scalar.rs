//! The Scalar Unit's (ThCon) GPR arithmetic (`ScalarUnit.md`): `SETDMAREG` (immediate
//! mode), `ADDDMAREG`, `SUBDMAREG`, `MULDMAREG`, `BITWOPDMAREG`, `SHIFTDMAREG`,
//! `CMPDMAREG`, `DMANOP`, on `GPRs[CurrentThread][64]`; `REG2FLOP`, a GPR into THCON
//! configuration or an ADC (`REG2FLOP_Configuration.md`, `REG2FLOP_ADC.md`); and
//! `STOREREG`'s address and value (`STOREREG.md`; the coprocessor delivers the write).

use super::config::BackendConfig;
use super::counters::AdcSet;
use super::isa::{field, op, opcode};

/// `THCON_CFGREG_BASE_ADDR32` and `GLOBAL_CFGREG_BASE_ADDR32` (Wormhole's `cfg_defines.h`):
/// `REG2FLOP` writes `Config` words between them only.
const THCON_BASE: u32 = 52;
const GLOBAL_BASE: u32 = 152;

/// Why `REG2FLOP` `word` cannot run: target 1 (undocumented), a configuration index past
/// THCON's words, or a 128-bit ADC write (both undefined behaviour per the pages).
pub(crate) fn reg2flop_unsupported(word: u32) -> Option<String> {
    let (size, target, index) = (field(word, 22, 2), field(word, 20, 2), field(word, 6, 10));
    match target {
        0 if index >= GLOBAL_BASE - THCON_BASE => Some(format!(
            "REG2FLOP to THCON configuration word {index}: past THCON's {} words, undefined behaviour",
            GLOBAL_BASE - THCON_BASE
        )),
        1 => Some("REG2FLOP with TargetSel 1 is not documented".into()),
        2 | 3 if size == 0 => Some("REG2FLOP of 128 bits to an ADC is not valid".into()),
        _ => None,
    }
}

/// The address `STOREREG` `word` writes: `0xFFB00000 + (AddrLo << 2)`.
fn storereg_addr(word: u32) -> u32 {
    0xFFB0_0000 + (field(word, 0, 18) << 2)
}

/// Why `STOREREG` `word` cannot run: an address below 0xFFB11000 (undefined behaviour per
/// the page), or a device other than the NoC overlay's stream registers, the only target
/// the model delivers it to (tt-llk's: a circular buffer's tiles-received counter).
pub(crate) fn storereg_unsupported(word: u32) -> Option<String> {
    let addr = storereg_addr(word);
    let overlay = riscv_linker::mmio::NOC_OVERLAY_BASE
        ..riscv_linker::mmio::NOC_OVERLAY_BASE + riscv_linker::mmio::NOC_OVERLAY_SIZE;
    if addr < 0xFFB1_1000 {
        Some(format!(
            "STOREREG to {addr:#010x}, below 0xFFB11000: undefined behaviour"
        ))
    } else if !overlay.contains(&addr) {
        Some(format!(
            "STOREREG to {addr:#010x} is not modelled (only to the NoC overlay's stream registers)"
        ))
    } else {
        None
    }
}

/// `STOREREG` `word`: the address and the GPR's value it writes.
pub(crate) fn storereg(gprs: &[u32; 64], word: u32) -> (u32, u32) {
    (storereg_addr(word), gprs[field(word, 18, 6) as usize])
}

/// Executes `REG2FLOP` `word` of `thread` (which passed [`reg2flop_unsupported`]).
pub(crate) fn reg2flop(
    cfg: &mut BackendConfig,
    adcs: &mut [AdcSet; 3],
    gprs: &[u32; 64],
    thread: usize,
    word: u32,
) {
    let f = |lo, w| field(word, lo, w);
    let (size, target, reg) = (f(22, 2), f(20, 2), f(0, 6) as usize);
    if target == 0 {
        let index = (THCON_BASE + f(6, 10)) as usize;
        let bank = &mut cfg.cfg[cfg.state_id(thread)];
        if size == 0 {
            let (c, g) = (index & !3, reg & !3);
            bank[c..c + 4].copy_from_slice(&gprs[g..g + 4]);
        } else {
            bank[index] = gprs[reg];
        }
        return;
    }
    let shift8 = f(18, 2);
    let mut value = gprs[reg];
    value = match size {
        1 if shift8 != 0 => 0,
        1 => value,
        2 if shift8 == 0 => value & 0xFFFF,
        2 if shift8 == 2 => value >> 16,
        2 => 0,
        _ => (value >> (shift8 * 8)) & 0xFF,
    };
    let which = if target == 3 {
        match f(16, 2) as usize {
            t if t < 3 => t,
            _ => return,
        }
    } else {
        thread
    };
    let flop = f(6, 10);
    let (channel, sel, cr, dim) = (
        (flop >> 5) as usize & 1,
        (flop >> 3) as usize & 3,
        flop & 4 != 0,
        flop as usize & 3,
    );
    if sel == 3 {
        return;
    }
    super::counters::set_counter(&mut adcs[which].sets[sel].channel[channel], dim, cr, value);
}

/// Cycles the Scalar Unit is occupied by `word` (the page's table and the per-instruction
/// "Performance" sections): 1 for `SETDMAREG` and `DMANOP`; 2 for `REG2FLOP` (without
/// contention for THCON configuration, which is not modelled); 3 for the arithmetic with an
/// immediate or two GPRs of one aligned group of four, 4 otherwise.
pub(crate) fn cycles(word: u32) -> u32 {
    match opcode(word) {
        op::SETDMAREG | op::DMANOP => 1,
        op::REG2FLOP => 2,
        op::STOREREG => 3,
        _ if field(word, 23, 1) == 1 => 3,
        _ if field(word, 0, 6) / 4 == field(word, 6, 6) / 4 => 3,
        _ => 4,
    }
}

/// Executes `word` on one thread's GPRs (the word passed [`super::isa::unsupported`]).
pub(crate) fn execute(gprs: &mut [u32; 64], word: u32) {
    let o = opcode(word);
    if o == op::DMANOP {
        return;
    }
    if o == op::SETDMAREG {
        let half = field(word, 0, 7) as usize;
        let value = field(word, 8, 16);
        let g = &mut gprs[half / 2];
        let shift = 16 * (half % 2);
        *g = (*g & !(0xFFFF << shift)) | (value << shift);
        return;
    }
    let left = gprs[field(word, 0, 6) as usize];
    let imm = field(word, 23, 1) == 1;
    let right = if imm {
        field(word, 6, if o == op::SHIFTDMAREG { 5 } else { 6 })
    } else {
        gprs[field(word, 6, 6) as usize]
    };
    let mode = field(word, 18, 3);
    let result = match o {
        op::ADDDMAREG => left.wrapping_add(right),
        op::SUBDMAREG => left.wrapping_sub(right),
        op::MULDMAREG => (left & 0xFFFF) * (right & 0xFFFF),
        op::BITWOPDMAREG => match mode {
            0 => left & right,
            1 => left | right,
            _ => left ^ right,
        },
        op::SHIFTDMAREG => {
            let by = right & 0x1F;
            if mode == 0 {
                left << by
            } else {
                left >> by
            }
        }
        _ => {
            (match mode {
                0 => left > right,
                1 => left < right,
                _ => left == right,
            }) as u32
        }
    };
    gprs[field(word, 12, 6) as usize] = result;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alu(o: u8, mode: u32, res: u32, right: u32, left: u32, imm: bool) -> u32 {
        ((o as u32) << 24) | ((imm as u32) << 23) | (mode << 18) | (res << 12) | (right << 6) | left
    }

    #[test]
    fn setdmareg_writes_one_half() {
        let mut g = [0u32; 64];
        g[3] = 0x1111_2222;
        execute(&mut g, (0x45 << 24) | (0xBEEF << 8) | 7); // half 7: high half of GPR 3
        assert_eq!(g[3], 0xBEEF_2222);
        execute(&mut g, (0x45 << 24) | (0xCAFE << 8) | 6);
        assert_eq!(g[3], 0xBEEF_CAFE);
    }

    #[test]
    fn arithmetic_follows_the_functional_models() {
        let mut g = [0u32; 64];
        g[1] = 0xFFFF_FFFE;
        g[2] = 5;
        g[9] = 0x0003_0004;
        execute(&mut g, alu(op::ADDDMAREG, 0, 10, 2, 1, false));
        assert_eq!(g[10], 3, "wraps");
        execute(&mut g, alu(op::SUBDMAREG, 0, 11, 63, 2, true));
        assert_eq!(g[11], 5u32.wrapping_sub(63));
        execute(&mut g, alu(op::MULDMAREG, 0, 12, 9, 1, false));
        assert_eq!(g[12], 0xFFFE * 4, "low 16 bits of each");
        execute(&mut g, alu(op::BITWOPDMAREG, 2, 13, 2, 9, false));
        assert_eq!(g[13], 0x0003_0001);
        execute(&mut g, alu(op::SHIFTDMAREG, 0, 14, 31, 2, true));
        assert_eq!(g[14], 0x8000_0000);
        g[15] = 33;
        execute(&mut g, alu(op::SHIFTDMAREG, 1, 16, 15, 9, false));
        assert_eq!(g[16], 0x0003_0004 >> 1, "shift amount & 0x1f");
        execute(&mut g, alu(op::CMPDMAREG, 1, 17, 1, 2, false));
        assert_eq!(g[17], 1, "5 < 0xFFFFFFFE unsigned");
        execute(&mut g, alu(op::CMPDMAREG, 2, 18, 5, 2, true));
        assert_eq!(g[18], 1);
    }

    /// `TT_OP_REG2FLOP(SizeSel, TargetSel, ByteOffset, ContextId_2, FlopIndex, RegIndex)`.
    fn reg2flop_word(size: u32, target: u32, byte: u32, ctx: u32, flop: u32, reg: u32) -> u32 {
        (0x48 << 24)
            | (size << 22)
            | (target << 20)
            | (byte << 18)
            | (ctx << 16)
            | (flop << 6)
            | reg
    }

    #[test]
    fn reg2flop_writes_thcon_configuration_of_the_threads_bank() {
        let (mut cfg, mut adcs) = (BackendConfig::default(), [AdcSet::default(); 3]);
        let mut g = [0u32; 64];
        g[5] = 0xDEAD_BEEF;
        g[8..12].copy_from_slice(&[1, 2, 3, 4]);
        cfg.thread[1][0] = 1; // thread 1 writes bank 1
        reg2flop(&mut cfg, &mut adcs, &g, 1, reg2flop_word(1, 0, 0, 0, 7, 5));
        assert_eq!(cfg.cfg[1][52 + 7], 0xDEAD_BEEF);
        assert_eq!(cfg.cfg[0][52 + 7], 0);
        // 128 bits: both indices rounded down to a group of four.
        reg2flop(
            &mut cfg,
            &mut adcs,
            &g,
            0,
            reg2flop_word(0, 0, 0, 0, 13, 10),
        );
        assert_eq!(cfg.cfg[0][64..68], [1, 2, 3, 4]);
        assert!(reg2flop_unsupported(reg2flop_word(1, 0, 0, 0, 99, 5)).is_none());
        assert!(reg2flop_unsupported(reg2flop_word(1, 0, 0, 0, 100, 5))
            .unwrap()
            .contains("undefined behaviour"));
        assert!(reg2flop_unsupported(reg2flop_word(1, 1, 0, 0, 0, 5)).is_some());
        assert!(reg2flop_unsupported(reg2flop_word(0, 2, 0, 0, 0, 5)).is_some());
    }

    #[test]
    fn reg2flop_sets_an_adc_counter_from_part_of_a_gpr() {
        let (mut cfg, mut adcs) = (BackendConfig::default(), [AdcSet::default(); 3]);
        let mut g = [0u32; 64];
        g[2] = 0x1234_5678;
        // 16 bits, high half (Shift8 2), this thread (2), packers (ADCSel 2), channel 1, Y.
        let flop = (1 << 5) | (2 << 3) | 1;
        reg2flop(
            &mut cfg,
            &mut adcs,
            &g,
            0,
            reg2flop_word(2, 2, 2, 0, flop, 2),
        );
        assert_eq!(adcs[0].sets[2].channel[1].xyzw[1].v, 0x1234);
        assert_eq!(adcs[0].sets[2].channel[1].xyzw[1].cr, 0);
        // 8 bits at byte 1, thread 2 overridden (TargetSel 3), unpacker 0, channel 0, X_Cr.
        let flop = 4;
        reg2flop(
            &mut cfg,
            &mut adcs,
            &g,
            0,
            reg2flop_word(3, 3, 1, 2, flop, 2),
        );
        assert_eq!(adcs[2].sets[0].channel[0].xyzw[0].cr, 0x56);
        // 32 bits into Z: wrapped at Z's 8 bits.
        reg2flop(&mut cfg, &mut adcs, &g, 1, reg2flop_word(1, 2, 0, 0, 2, 2));
        assert_eq!(adcs[1].sets[0].channel[0].xyzw[2].v, 0x78);
        // ThreadSel 3 and ADCSel 3 write nothing.
        let before = adcs;
        reg2flop(&mut cfg, &mut adcs, &g, 0, reg2flop_word(1, 3, 0, 3, 0, 2));
        reg2flop(
            &mut cfg,
            &mut adcs,
            &g,
            0,
            reg2flop_word(1, 2, 0, 0, 3 << 3, 2),
        );
        assert_eq!(adcs, before);
    }

    #[test]
    fn storereg_names_its_target_and_refuses_other_devices() {
        let mut g = [0u32; 64];
        g[9] = 42;
        // tt-llk: (address of CB 5's tiles received >> 2) & 0x3ffff.
        let addr_lo = ((0xFFB4_0000u32 + 5 * 0x1000 + 16) >> 2) & 0x3ffff;
        let w = (0x67 << 24) | (9 << 18) | addr_lo;
        assert_eq!(storereg(&g, w), (0xFFB4_5010, 42));
        assert!(storereg_unsupported(w).is_none());
        let low = (0x67 << 24) | ((0xFFB1_0000u32 >> 2) & 0x3ffff);
        assert!(storereg_unsupported(low).unwrap().contains("undefined"));
        let mailbox = (0x67 << 24) | ((0xFFB1_2000u32 >> 2) & 0x3ffff);
        assert!(storereg_unsupported(mailbox)
            .unwrap()
            .contains("only to the NoC overlay"));
    }

    #[test]
    fn cycle_counts() {
        assert_eq!(cycles(0x4500_0000), 1);
        assert_eq!(
            cycles(alu(op::ADDDMAREG, 0, 0, 3, 1, false)),
            3,
            "same group"
        );
        assert_eq!(cycles(alu(op::ADDDMAREG, 0, 0, 4, 1, false)), 4);
        assert_eq!(
            cycles(alu(op::ADDDMAREG, 0, 0, 40, 1, true)),
            3,
            "immediate"
        );
    }
}
