//! Growing a `Vec` by less than doubling, where what it holds is most of the memory: a
//! doubling vector holds up to as much again unused, and a first push makes room for four
//! (issue 41: memory per ring and per zone).

/// Makes room in `v` for `n` more, growing it by a quarter at a time (at least `n`).
pub(crate) fn grow_for<T>(v: &mut Vec<T>, n: usize) {
    if v.capacity() - v.len() < n {
        v.reserve_exact(n.max(v.len() / 4));
    }
}

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
    fn grows_by_a_quarter_and_a_first_push_takes_room_for_one() {
        let mut v: Vec<u64> = Vec::new();
        push_sized(&mut v, 1);
        assert_eq!(v.capacity(), 1);
        let mut w: Vec<u64> = (0..1000).collect();
        w.shrink_to_fit();
        grow_for(&mut w, 1);
        assert_eq!(w.capacity(), 1250);
        grow_for(&mut w, 10);
        assert_eq!(w.capacity(), 1250, "room left: no growth");
        grow_for(&mut w, 2000);
        assert_eq!(w.capacity(), 3000);
    }
}
