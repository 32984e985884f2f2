//! Sizing a `Vec` that most often holds one entry: its first push makes room for four.
//! Here its room grows 1, 2, 4, ...
//!
//! (Growing large vectors by less than doubling was tried for the page's zones and the
//! summary's durations, issue 41: the heap's peak fell, but the resident set rose by
//! ~50 MB on 300,000 rings, since each smaller step leaves a freed block that no later,
//! larger one fits, held by the allocator until it purges. Large vectors double.)

/// Makes room for one more entry in a full `v`, its room growing 1, 2, 4, ... (a `Vec`'s own
/// first growth makes room for four).
pub(crate) fn room_for_one<T>(v: &mut Vec<T>) {
    if v.len() == v.capacity() {
        v.reserve_exact(v.len().max(1));
    }
}

/// Appends `x` with [`room_for_one`]: for lists that most often hold one entry.
pub(crate) fn push_sized<T>(v: &mut Vec<T>, x: T) {
    room_for_one(v);
    v.push(x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_push_takes_room_for_one_and_later_ones_double_it() {
        let mut v: Vec<u64> = Vec::new();
        push_sized(&mut v, 1);
        assert_eq!(v.capacity(), 1);
        push_sized(&mut v, 2);
        assert_eq!(v.capacity(), 2);
        push_sized(&mut v, 3);
        assert_eq!(v.capacity(), 4);
        assert_eq!(v, [1, 2, 3]);
    }
}
