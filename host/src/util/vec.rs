//! Sizing a `Vec` that most often holds one entry: its first push makes room for four.
//!
//! (Growing large vectors by less than doubling was tried for the page's zones and the
//! summary's durations, issue 41: the heap's peak fell, but the resident set rose by
//! ~50 MB on 300,000 rings, since each smaller step leaves a freed block that no later,
//! larger one fits, held by the allocator until it purges. Large vectors double.)

/// Appends `x`, the first one into room for one (then as `Vec::push` grows): for lists
/// that most often hold one entry.
pub(crate) fn push_sized<T>(v: &mut Vec<T>, x: T) {
    if v.capacity() == 0 {
        v.reserve_exact(1);
    }
    v.push(x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_push_takes_room_for_one_and_later_ones_grow_as_a_vec_does() {
        let mut v: Vec<u64> = Vec::new();
        push_sized(&mut v, 1);
        assert_eq!(v.capacity(), 1);
        push_sized(&mut v, 2);
        assert!(v.capacity() >= 2);
        assert_eq!(v, [1, 2]);
    }
}
