//! A fixed, well-mixed function of a number (SplitMix64's finaliser): deterministic
//! "randomness" for sampling that gives the same answer for the same input.

/// SplitMix64's finaliser of `x`.
pub(crate) fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
