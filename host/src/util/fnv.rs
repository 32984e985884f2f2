//! FNV-1a: a hash that is the same in every build and on every machine (unlike std's
//! `DefaultHasher`), for checksums and names that must not change.

/// The 64-bit hash of no bytes (FNV-1a's offset basis): where [`extend`] starts.
pub(crate) const START: u64 = 0xcbf2_9ce4_8422_2325;

/// The 64-bit FNV-1a of the bytes that gave `h`, followed by `bytes`.
pub(crate) fn extend(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// 64-bit FNV-1a.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    extend(START, bytes)
}

/// 32-bit FNV-1a.
pub(crate) fn fnv1a_32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ b as u32).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // The reference values of the FNV-1a specification.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a_32(b"a"), 0xe40c_292c);
        assert_eq!(extend(fnv1a(b"foo"), b"bar"), fnv1a(b"foobar"));
    }
}
