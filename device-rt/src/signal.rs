//! Signals by a runtime index, for helpers that take a CB or semaphore number as a value (a
//! CB wrapper's `push_back`): `ttprof_rt::signal::cb_push(n)` records what
//! `signal!("cb-push", cb_push(N))` records for the literal `N`. Each is a match over
//! [`MAX_INDEX`] arms, one site each; inlined with a constant index, one arm is left: the
//! cost is exactly an event. An index of [`MAX_INDEX`] or more records nothing (its waits
//! stay unmatched, and the host says so).
//!
//! Without the `profile` feature every function is empty.

/// Indices 0..MAX_INDEX have a site (tt-metal's Wormhole has 32 CBs).
pub const MAX_INDEX: u32 = 32;

macro_rules! by_index {
    ($(#[$doc:meta])* $fn:ident, $name:literal, $res:ident) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $fn(index: u32) {
            #[cfg(feature = "profile")]
            by_index!(@arms index, $name, $res,
                0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
            #[cfg(not(feature = "profile"))]
            let _ = index;
        }
    };
    (@arms $i:ident, $name:literal, $res:ident, $($n:tt)*) => {
        match $i {
            $($n => crate::zone::event(ttprof_rt_macros::__site!(crate, event, $name, $res($n))),)*
            _ => {}
        }
    };
}

by_index!(
    /// Data is ready in CB `index` (just before the store that publishes it): ends a
    /// `cb_front(index)` wait on this tile.
    cb_push, "cb-push", cb_push
);
by_index!(
    /// Space was freed in CB `index` (just before the store that frees it): ends a
    /// `cb_back(index)` wait on this tile.
    cb_pop, "cb-pop", cb_pop
);
by_index!(
    /// Semaphore `index` is incremented, here or over the NoC (just before the increment):
    /// ends a `semaphore(index)` wait on a tile of this chip.
    sem_inc, "sem-inc", sem_inc
);
by_index!(
    /// Semaphore `index` is set, here or over the NoC (just before the write): ends a
    /// `semaphore(index)` wait on a tile of this chip.
    sem_set, "sem-set", sem_set
);
