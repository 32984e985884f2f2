//! Data type conversions of the Vector Unit: between `LReg`'s 32-bit types and `Dst`'s
//! stored forms (`SFPLOAD.md` and `SFPSTORE.md` "Supporting definitions"), and the FP16
//! widening of `SFPLOADI.md`. `Dst` keeps floating-point data with the mantissa before the
//! exponent ("shuffled"); these functions are the pages' own, bit for bit.

/// `UnshuffleBF16`: `Dst`'s `Sign,Man(7),Exp(8)` to `Sign,Exp(8),Man(7)`.
pub fn unshuffle_bf16(x: u16) -> u16 {
    let sign = x & 0x8000;
    let exp = x & 0x00ff;
    let man = x & 0x7f00;
    sign | (exp << 7) | (man >> 8)
}

/// `BF16Shuffle`: the inverse of [`unshuffle_bf16`].
pub fn shuffle_bf16(x: u16) -> u16 {
    let sign = x & 0x8000;
    let exp = x & 0x7f80;
    let man = x & 0x007f;
    sign | (man << 8) | (exp >> 7)
}

/// `UnshuffleFP32`: [`unshuffle_bf16`] on the high 16 bits.
pub fn unshuffle_fp32(x: u32) -> u32 {
    (u32::from(unshuffle_bf16((x >> 16) as u16)) << 16) | (x & 0xffff)
}

/// `FP32Shuffle`: [`shuffle_bf16`] on the high 16 bits.
pub fn shuffle_fp32(x: u32) -> u32 {
    (u32::from(shuffle_bf16((x >> 16) as u16)) << 16) | (x & 0xffff)
}

/// `FP16Shuffle`: `Sign,Exp(5),Man(10)` to `Dst`'s `Sign,Man(10),Exp(5)`.
pub fn shuffle_fp16(x: u16) -> u16 {
    let sign = x & 0x8000;
    let exp = x & 0x7c00;
    let man = x & 0x03ff;
    sign | (man << 5) | (exp >> 10)
}

/// `ReadFP16` (with `ENABLE_FP16A_INF` false, its reset value): `Dst`'s FP16 to FP32 by
/// rebiasing the exponent; a zero exponent stays zero (denormals become FP32 denormals,
/// which arithmetic then reads as zero).
pub fn read_fp16(x: u16) -> u32 {
    let sign = u32::from(x >> 15);
    let man = u32::from((x >> 5) & 0x3ff);
    let mut exp = u32::from(x & 0x1f);
    if exp != 0 {
        exp += 112;
    }
    (sign << 31) | (exp << 23) | (man << 13)
}

/// `ToFP16`: flushes underflow and denormals to signed zero, saturates overflow to the
/// largest pattern (which `Dst` reads as a huge finite value), truncates the mantissa.
pub fn to_fp16(x: u32) -> u16 {
    let sign = x >> 31;
    let mut exp = ((x >> 23) & 0xff) as i32 - 112;
    let mut man = x & 0x7f_ffff;
    if exp <= 0 {
        exp = 0;
        man = 0;
    } else if exp > 31 {
        exp = 31;
        man = 0x7f_ffff;
    }
    man >>= 13;
    ((sign << 15) | ((exp as u32) << 10) | man) as u16
}

/// An FP32 denormal to zero of its sign; anything else as it is.
pub fn flush_denormal(x: u32) -> u32 {
    if x & 0x7f80_0000 == 0 {
        x & 0x8000_0000
    } else {
        x
    }
}

/// `ToBF16`: flushes denormals to signed zero, then truncates toward zero.
pub fn to_bf16(x: u32) -> u16 {
    let sign = x & 0x8000_0000;
    let exp = x & 0x7f80_0000;
    let man = if exp == 0 { 0 } else { x & 0x007f_ffff };
    ((sign | exp | man) >> 16) as u16
}

/// `ToSignMag`: two's complement to sign and 31-bit magnitude.
pub fn to_sign_mag(x: u32) -> u32 {
    let sign = x & 0x8000_0000;
    let mag = if sign != 0 { x.wrapping_neg() } else { x };
    sign | (mag & 0x7fff_ffff)
}

/// `SignMagToTwosComp`.
pub fn sign_mag_to_twos(x: u32) -> u32 {
    let mag = x & 0x7fff_ffff;
    if x & 0x8000_0000 != 0 {
        mag.wrapping_neg()
    } else {
        mag
    }
}

/// `SignMag8ToSignMag32`: `Dst`'s "integer 8" (`Sign,Ignored(3),Mag(7),Ignored(5)`).
pub fn sign_mag8_to_32(x: u16) -> u32 {
    (u32::from(x >> 15) << 31) | u32::from((x >> 5) & 0x7f)
}

/// `SignMag11ToSignMag32`: `Sign,Mag(10),Ignored(5)`.
pub fn sign_mag11_to_32(x: u16) -> u32 {
    (u32::from(x >> 15) << 31) | u32::from((x >> 5) & 0x3ff)
}

/// `SignMag16ToSignMag32`: `Sign,Mag(15)`.
pub fn sign_mag16_to_32(x: u16) -> u32 {
    (u32::from(x >> 15) << 31) | u32::from(x & 0x7fff)
}

/// `SignMag11ToFP16`: to `Dst`'s "integer 8", with the fixed exponent 16.
pub fn sign_mag11_to_fp16(x: u32) -> u16 {
    let sign = ((x >> 31) << 15) as u16;
    sign | (16 << 10) | (x & 0x3ff) as u16
}

/// `FP16toFP32` of `SFPLOADI`: widens and rebiases the exponent, with no special case for
/// zero, denormals, infinities or NaNs (so `0x0000` becomes 2^-112).
pub fn sfploadi_fp16(x: u16) -> u32 {
    let sign = u32::from(x >> 15);
    let exp = u32::from((x >> 10) & 0x1f) + 112;
    let man = u32::from(x & 0x3ff);
    (sign << 31) | (exp << 23) | (man << 13)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffles_invert_each_other() {
        for x in [0u32, 0x3f80_0000, 0xc049_0fdb, 0x7f7f_ffff, 0x0000_0001] {
            assert_eq!(unshuffle_fp32(shuffle_fp32(x)), x);
        }
        // 1.0 (BF16 0x3F80): Sign 0, Exp 127, Man 0 -> Dst Man(7) 0, Exp 0x7F.
        assert_eq!(shuffle_bf16(0x3f80), 0x007f);
        // FP16 1.0 (0x3C00): Exp 15 -> Dst 0x000F.
        assert_eq!(shuffle_fp16(0x3c00), 0x000f);
        assert_eq!(read_fp16(0x000f), 0x3f80_0000);
    }

    #[test]
    fn narrowing_flushes_truncates_and_saturates() {
        // FP16: 2^-15 underflows (Exp - 112 = 0) to zero; sign kept.
        assert_eq!(to_fp16(0xb800_0000), 0x8000);
        // 1 + 2^-11 truncates to 1.0.
        assert_eq!(to_fp16(0x3f80_1000), 0x3c00);
        // 2^16 is Exp 31 (finite in Dst); 2^17 saturates to Exp 31, Man all ones.
        assert_eq!(to_fp16(0x4780_0000), 0x7c00);
        assert_eq!(to_fp16(0x4800_0000), 0x7fff);
        // Infinity too (the page: "NaN is also converted to infinity"-like saturation).
        assert_eq!(to_fp16(0x7f80_0000), 0x7fff);
        // BF16 truncates toward zero and flushes denormals.
        assert_eq!(to_bf16(0x3f80_ffff), 0x3f80);
        assert_eq!(to_bf16(0x807f_ffff), 0x8000);
        // A NaN whose mantissa sits in the low 16 bits becomes infinity.
        assert_eq!(to_bf16(0x7f80_0001), 0x7f80);
    }

    #[test]
    fn integer_forms() {
        assert_eq!(to_sign_mag(-5i32 as u32), 0x8000_0005);
        assert_eq!(sign_mag_to_twos(0x8000_0005), -5i32 as u32);
        assert_eq!(sign_mag_to_twos(0x8000_0000), 0, "negative zero");
        assert_eq!(sign_mag11_to_fp16(0x8000_007f), 0x807f | (16 << 10));
        // SFPSTORE INT8 then SFPLOAD INT8_COMP's read: the magnitude survives the shuffle.
        let stored = shuffle_fp16(sign_mag11_to_fp16(0x8000_007f));
        assert_eq!(sign_mag11_to_32(stored), 0x8000_007f);
        assert_eq!(sign_mag8_to_32(stored), 0x8000_007f);
        assert_eq!(sign_mag16_to_32(0x8005), 0x8000_0005);
        assert_eq!(sfploadi_fp16(0x3c00), 0x3f80_0000);
        assert_eq!(sfploadi_fp16(0x0000), 112 << 23, "no zero special case");
    }
}
