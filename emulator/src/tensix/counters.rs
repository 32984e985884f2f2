//! Addressing counters: the packers' and unpackers' ADCs (`ADCs.md`; `SETADC`,
//! `SETADCXY`, `SETADCZW`, `SETADCXX`, `INCADCXY`, `INCADCZW`, `ADDRCRXY`, `ADDRCRZW`, all
//! in the Miscellaneous Unit) and the Matrix/Vector Units' RWCs (`RWCs.md`; `SETRWC`,
//! `INCRWC`). Counters wrap at their documented widths.

use super::isa::{field, op, opcode};

/// One counter and its `_Cr` shadow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counter {
    pub v: u32,
    pub cr: u32,
}

/// X, Y, Z, W of one channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Channel {
    pub xyzw: [Counter; 4],
}

/// Widths of X (18), Y (13), Z (8), W (8).
const WIDTH: [u32; 4] = [18, 13, 8, 8];

fn wrap(dim: usize, v: u32) -> u32 {
    v & ((1 << WIDTH[dim]) - 1)
}

/// Sets counter `dim` (X, Y, Z, W) of `ch`, or its `_Cr` shadow, to `value` (wrapped at
/// the counter's width): `REG2FLOP`'s ADC mode.
pub(crate) fn set_counter(ch: &mut Channel, dim: usize, cr: bool, value: u32) {
    let c = &mut ch.xyzw[dim];
    if cr {
        c.cr = wrap(dim, value);
    } else {
        c.v = wrap(dim, value);
    }
}

/// The two channels of one ADC set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Adc {
    pub channel: [Channel; 2],
}

/// `ADCs[thread]`: `Unpacker[0]`, `Unpacker[1]`, `Packers`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AdcSet {
    pub sets: [Adc; 3],
}

/// `RWCs[thread]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rwc {
    pub dst: Counter,
    pub src_a: Counter,
    pub src_b: Counter,
    pub fidelity: u32,
    /// `ExtraAddrModBit`.
    pub extra_bit: u32,
}

/// Executes an ADC instruction of `thread` on `adcs`.
pub(crate) fn adc(adcs: &mut [AdcSet; 3], thread: usize, word: u32) {
    let o = opcode(word);
    let f = |lo, w| field(word, lo, w);
    let over = match o {
        op::SETADC => f(16, 2),
        op::SETADCXX => 0,
        _ => f(18, 2),
    } as usize;
    let which = if over == 0 { thread } else { over - 1 };
    let units = f(21, 3);
    for (k, set) in adcs[which].sets.iter_mut().enumerate() {
        if units & (1 << k) == 0 {
            continue;
        }
        let ch = &mut set.channel;
        match o {
            op::SETADC => {
                let (dim, c) = (f(18, 2) as usize, f(20, 1) as usize);
                let v = wrap(dim, f(0, 18));
                ch[c].xyzw[dim] = Counter { v, cr: v };
            }
            op::SETADCXX => {
                ch[0].xyzw[0] = Counter {
                    v: f(0, 10),
                    cr: f(0, 10),
                };
                ch[1].xyzw[0] = Counter {
                    v: f(10, 10),
                    cr: f(10, 10),
                };
            }
            _ => {
                // XY or ZW pair: flag bits 0-3 (X0/Y0/X1/Y1), values at 6, 9, 12, 15.
                let base = if matches!(o, op::SETADCZW | op::INCADCZW | op::ADDRCRZW) {
                    2
                } else {
                    0
                };
                for k in 0..4u32 {
                    let (c, dim) = ((k / 2) as usize, base + (k % 2) as usize);
                    let val = f(6 + 3 * k, 3);
                    let on = f(k, 1) == 1;
                    let n = &mut ch[c].xyzw[dim];
                    match o {
                        op::SETADCXY | op::SETADCZW if on => *n = Counter { v: val, cr: val },
                        op::INCADCXY | op::INCADCZW => n.v = wrap(dim, n.v + val),
                        op::ADDRCRXY | op::ADDRCRZW if on => {
                            n.cr = wrap(dim, n.cr + val);
                            n.v = n.cr;
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

const DST: u32 = 10;
const SRC: u32 = 6;

fn m(bits: u32, v: u32) -> u32 {
    v & ((1 << bits) - 1)
}

/// `SETRWC` (without the bank flips, which [`super::isa::unsupported`] rejects).
pub(crate) fn setrwc(r: &mut Rwc, word: u32) {
    let f = |lo, w| field(word, lo, w);
    if f(0, 1) == 1 {
        let v = m(SRC, f(6, 4) + if f(18, 1) == 1 { r.src_a.cr } else { 0 });
        r.src_a = Counter { v, cr: v };
    }
    if f(1, 1) == 1 {
        let v = m(SRC, f(10, 4) + if f(19, 1) == 1 { r.src_b.cr } else { 0 });
        r.src_b = Counter { v, cr: v };
    }
    if f(2, 1) == 1 || f(21, 1) == 1 {
        let base = if f(21, 1) == 1 {
            r.dst.v
        } else if f(20, 1) == 1 {
            r.dst.cr
        } else {
            0
        };
        let v = m(DST, f(14, 4) + base);
        r.dst = Counter { v, cr: v };
    }
    if f(3, 1) == 1 {
        r.fidelity = 0;
    }
}

/// `INCRWC`.
pub(crate) fn incrwc(r: &mut Rwc, word: u32) {
    let f = |lo, w| field(word, lo, w);
    for (c, bits, inc, cr) in [
        (&mut r.src_a, SRC, f(6, 4), f(18, 1)),
        (&mut r.src_b, SRC, f(10, 4), f(19, 1)),
        (&mut r.dst, DST, f(14, 4), f(20, 1)),
    ] {
        if cr == 1 {
            c.cr = m(bits, c.cr + inc);
            c.v = c.cr;
        } else {
            c.v = m(bits, c.v + inc);
        }
    }
}

/// `ApplyAddrMod` (`RWCs.md`) with the thread's `ThreadConfig` row `thd`; the
/// `ADDR_MOD_*` words are as `cfg_defines.h` lays them out.
pub(crate) fn apply_addr_mod(r: &mut Rwc, thd: &[u16], addr_mod: u32, update_fidelity: bool) {
    use super::config::fields::thd as t;
    let base = thd[t::ADDR_MOD_SET_BASE.0] & 1 != 0;
    let index = (addr_mod + if r.extra_bit != 0 || base { 4 } else { 0 }) as usize;
    let ab = thd[t::ADDR_MOD_AB + 2 * index] as u32;
    let dst = thd[t::ADDR_MOD_DST + index] as u32;
    let bias = thd[t::ADDR_MOD_BIAS + index] as u32;
    for (c, incr, cr, clear) in [
        (&mut r.src_a, ab & 0x3f, ab & 0x40, ab & 0x80),
        (&mut r.src_b, (ab >> 8) & 0x3f, ab & 0x4000, ab & 0x8000),
    ] {
        if clear != 0 {
            *c = Counter::default();
        } else if cr != 0 {
            c.cr = m(SRC, c.cr + incr);
            c.v = c.cr;
        } else {
            c.v = m(SRC, c.v + incr);
        }
    }
    let incr = dst & 0x3ff;
    let d = &mut r.dst;
    if dst & 0x800 != 0 {
        *d = Counter::default();
    } else if dst & 0x1000 != 0 {
        d.v = m(DST, d.v + incr);
        d.cr = d.v;
    } else if dst & 0x400 != 0 {
        d.cr = m(DST, d.cr + incr);
        d.v = d.cr;
    } else {
        d.v = m(DST, d.v + incr);
    }
    if update_fidelity {
        if dst & 0x8000 != 0 {
            r.fidelity = 0;
        } else {
            r.fidelity = (r.fidelity + ((dst >> 13) & 3)) & 3;
        }
    }
    if bias & 0x10 != 0 {
        r.extra_bit = 0;
    } else if bias & 3 != 0 {
        r.extra_bit ^= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setadc_targets_units_channel_dimension_and_thread_override() {
        let mut a = [AdcSet::default(); 3];
        // SETADC PK=1, channel 1, Y, NewValue 0x2_0005: ThreadOverride 2 -> thread 1.
        adc(
            &mut a,
            0,
            (0x50 << 24) | (1 << 23) | (1 << 20) | (1 << 18) | 0x2_0005,
        );
        assert_eq!(
            a[1].sets[2].channel[1].xyzw[1],
            Counter { v: 5, cr: 5 },
            "Y is 13 bits"
        );
        assert_eq!(a[0], AdcSet::default());
        // SETADCXX U0: X0 = 1000, X1 = 7.
        adc(&mut a, 2, (0x5E << 24) | (1 << 21) | (7 << 10) | 1000);
        assert_eq!(a[2].sets[0].channel[0].xyzw[0].v, 1000);
        assert_eq!(a[2].sets[0].channel[1].xyzw[0].cr, 7);
    }

    #[test]
    fn xy_set_increment_and_cr_increment() {
        let mut a = [AdcSet::default(); 3];
        let u1 = 1 << 22;
        // SETADCXY U1: X0 = 3, Y1 = 5 (flags X0, Y1).
        adc(&mut a, 0, (0x51 << 24) | u1 | (5 << 15) | (3 << 6) | 0b1001);
        let ch = |a: &[AdcSet; 3]| a[0].sets[1].channel;
        assert_eq!(ch(&a)[0].xyzw[0], Counter { v: 3, cr: 3 });
        assert_eq!(ch(&a)[1].xyzw[1], Counter { v: 5, cr: 5 });
        // INCADCXY: X0 += 2 (Cr untouched).
        adc(&mut a, 0, (0x52 << 24) | u1 | (2 << 6));
        assert_eq!(ch(&a)[0].xyzw[0], Counter { v: 5, cr: 3 });
        // ADDRCRXY X0 += 1: Cr += 1, X = Cr.
        adc(&mut a, 0, (0x53 << 24) | u1 | (1 << 6) | 1);
        assert_eq!(ch(&a)[0].xyzw[0], Counter { v: 4, cr: 4 });
        // ZW: SETADCZW W0 = 7, then INCADCZW W0 += 7.
        adc(&mut a, 0, (0x54 << 24) | u1 | (7 << 9) | 0b10);
        adc(&mut a, 0, (0x55 << 24) | u1 | (7 << 9));
        assert_eq!(ch(&a)[0].xyzw[3], Counter { v: 14, cr: 7 });
    }

    #[test]
    fn rwcs_set_and_increment() {
        let mut r = Rwc::default();
        incrwc(&mut r, (0x38 << 24) | (1 << 20) | (4 << 14) | (15 << 6));
        assert_eq!((r.dst, r.src_a.v), (Counter { v: 4, cr: 4 }, 15));
        incrwc(&mut r, (0x38 << 24) | (15 << 6) | (15 << 6));
        incrwc(&mut r, (0x38 << 24) | (15 << 6));
        incrwc(&mut r, (0x38 << 24) | (15 << 6));
        assert_eq!(r.src_a.v, 60, "four times 15");
        incrwc(&mut r, (0x38 << 24) | (15 << 6));
        assert_eq!(r.src_a.v, 75 - 64, "SrcA wraps at 6 bits");
        // SETRWC Dst with DstCr: Dst = DstVal + Dst_Cr.
        setrwc(&mut r, (0x37 << 24) | (1 << 20) | (3 << 14) | 0b0100);
        assert_eq!(r.dst, Counter { v: 7, cr: 7 });
        r.dst.v = 9;
        setrwc(&mut r, (0x37 << 24) | (1 << 21) | (1 << 14));
        assert_eq!(r.dst, Counter { v: 10, cr: 10 }, "DstCtoCr adds Dst");
        r.fidelity = 2;
        setrwc(&mut r, (0x37 << 24) | 0b1011 | (2 << 6) | (1 << 10));
        assert_eq!((r.src_a.v, r.src_b.cr, r.fidelity), (2, 1, 0));
    }

    #[test]
    fn addr_mod_applies_the_selected_section() {
        let mut thd = [0u16; 57];
        // Section 1: SrcA += 8 (Cr), SrcB += 16, Dst += 8, fidelity += 1.
        thd[7 + 2] = 8 | 0x40 | (16 << 8);
        thd[24] = 8 | (1 << 13);
        let mut r = Rwc::default();
        apply_addr_mod(&mut r, &thd, 1, true);
        apply_addr_mod(&mut r, &thd, 1, true);
        assert_eq!(
            (r.src_a, r.src_b.v, r.dst.v, r.fidelity),
            (Counter { v: 16, cr: 16 }, 32, 16, 2)
        );
        apply_addr_mod(&mut r, &thd, 1, false);
        assert_eq!(r.fidelity, 2, "SFPLOAD-style: fidelity untouched");
        // Section 2: clear everything.
        thd[7 + 4] = 0x80 | 0x8000;
        thd[25] = 0x800 | 0x8000;
        apply_addr_mod(&mut r, &thd, 2, true);
        assert_eq!((r.src_a.v, r.src_b.v, r.dst.v, r.fidelity), (0, 0, 0, 0));
        // ADDR_MOD_SET_Base selects sections 4-7.
        thd[2] = 1;
        thd[23 + 4] = 5;
        apply_addr_mod(&mut r, &thd, 0, true);
        assert_eq!(r.dst.v, 5);
    }
}
