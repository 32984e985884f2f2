//! Signals by a runtime index, for helpers that take a CB or semaphore number as a value (a
//! CB wrapper's `push_back`): `ttprof_rt::signal::cb_push(n)` records what
//! `signal!("cb-push-N", cb_push(N))` records for the literal `N` (each index its own name:
//! the host tells sites apart by name, file and line). Each is a match over
//! [`MAX_INDEX`] arms, one site each; inlined with a constant index, one arm is left: the
//! cost is exactly an event. An index of [`MAX_INDEX`] or more records nothing (its waits
//! stay unmatched, and the host says so).
//!
//! Each function is `#[inline(always)]`: the host locates its sites at the kernel's line that
//! calls it, from the relocations the kernel keeps and its inlined frames (docs/design/
//! zone-metadata.md, "Where a site is"), not at this file's line.
//!
//! Without the `profile` feature every function is empty.

/// Indices 0..MAX_INDEX have a site (tt-metal's Wormhole has 32 CBs).
pub const MAX_INDEX: u32 = 32;

macro_rules! by_index {
    ($(#[$doc:meta])* $fn:ident, $res:ident, $($n:tt $name:literal)*) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $fn(index: u32) {
            #[cfg(feature = "profile")]
            by_index!(@arms index, $res, $($n $name)*);
            #[cfg(not(feature = "profile"))]
            let _ = index;
        }
    };
    (@arms $i:ident, $res:ident, $($n:tt $name:literal)*) => {
        match $i {
            $($n => crate::zone::event(ttprof_rt_macros::__site!(crate, event, $name, $res($n))),)*
            _ => {}
        }
    };
}

by_index!(
    /// Data is ready in CB `index` (just before the store that publishes it): ends a
    /// `cb_front(index)` wait on this tile.
    cb_push, cb_push,
    0 "cb-push-0" 1 "cb-push-1" 2 "cb-push-2" 3 "cb-push-3" 4 "cb-push-4" 5 "cb-push-5" 6 "cb-push-6" 7 "cb-push-7" 8 "cb-push-8" 9 "cb-push-9" 10 "cb-push-10" 11 "cb-push-11" 12 "cb-push-12" 13 "cb-push-13" 14 "cb-push-14" 15 "cb-push-15" 16 "cb-push-16" 17 "cb-push-17" 18 "cb-push-18" 19 "cb-push-19" 20 "cb-push-20" 21 "cb-push-21" 22 "cb-push-22" 23 "cb-push-23" 24 "cb-push-24" 25 "cb-push-25" 26 "cb-push-26" 27 "cb-push-27" 28 "cb-push-28" 29 "cb-push-29" 30 "cb-push-30" 31 "cb-push-31"
);
by_index!(
    /// Space was freed in CB `index` (just before the store that frees it): ends a
    /// `cb_back(index)` wait on this tile.
    cb_pop, cb_pop,
    0 "cb-pop-0" 1 "cb-pop-1" 2 "cb-pop-2" 3 "cb-pop-3" 4 "cb-pop-4" 5 "cb-pop-5" 6 "cb-pop-6" 7 "cb-pop-7" 8 "cb-pop-8" 9 "cb-pop-9" 10 "cb-pop-10" 11 "cb-pop-11" 12 "cb-pop-12" 13 "cb-pop-13" 14 "cb-pop-14" 15 "cb-pop-15" 16 "cb-pop-16" 17 "cb-pop-17" 18 "cb-pop-18" 19 "cb-pop-19" 20 "cb-pop-20" 21 "cb-pop-21" 22 "cb-pop-22" 23 "cb-pop-23" 24 "cb-pop-24" 25 "cb-pop-25" 26 "cb-pop-26" 27 "cb-pop-27" 28 "cb-pop-28" 29 "cb-pop-29" 30 "cb-pop-30" 31 "cb-pop-31"
);
by_index!(
    /// Semaphore `index` is incremented, here or over the NoC (just before the increment):
    /// ends a `semaphore(index)` wait on a tile of this chip.
    sem_inc, sem_inc,
    0 "sem-inc-0" 1 "sem-inc-1" 2 "sem-inc-2" 3 "sem-inc-3" 4 "sem-inc-4" 5 "sem-inc-5" 6 "sem-inc-6" 7 "sem-inc-7" 8 "sem-inc-8" 9 "sem-inc-9" 10 "sem-inc-10" 11 "sem-inc-11" 12 "sem-inc-12" 13 "sem-inc-13" 14 "sem-inc-14" 15 "sem-inc-15" 16 "sem-inc-16" 17 "sem-inc-17" 18 "sem-inc-18" 19 "sem-inc-19" 20 "sem-inc-20" 21 "sem-inc-21" 22 "sem-inc-22" 23 "sem-inc-23" 24 "sem-inc-24" 25 "sem-inc-25" 26 "sem-inc-26" 27 "sem-inc-27" 28 "sem-inc-28" 29 "sem-inc-29" 30 "sem-inc-30" 31 "sem-inc-31"
);
by_index!(
    /// Semaphore `index` is set, here or over the NoC (just before the write): ends a
    /// `semaphore(index)` wait on a tile of this chip.
    sem_set, sem_set,
    0 "sem-set-0" 1 "sem-set-1" 2 "sem-set-2" 3 "sem-set-3" 4 "sem-set-4" 5 "sem-set-5" 6 "sem-set-6" 7 "sem-set-7" 8 "sem-set-8" 9 "sem-set-9" 10 "sem-set-10" 11 "sem-set-11" 12 "sem-set-12" 13 "sem-set-13" 14 "sem-set-14" 15 "sem-set-15" 16 "sem-set-16" 17 "sem-set-17" 18 "sem-set-18" 19 "sem-set-19" 20 "sem-set-20" 21 "sem-set-21" 22 "sem-set-22" 23 "sem-set-23" 24 "sem-set-24" 25 "sem-set-25" 26 "sem-set-26" 27 "sem-set-27" 28 "sem-set-28" 29 "sem-set-29" 30 "sem-set-30" 31 "sem-set-31"
);
by_index!(
    /// This TRISC pushes `SEMPOST` of Tensix semaphore `index` to its Tensix thread (call it
    /// just before the push): ends a `tensix_sem(index)` wait on this tile. The coprocessor
    /// runs the post after the thread's queued work, so the host puts the time from the push
    /// to the waiter's release on this TRISC's path. Tensix has 8 semaphores: an index of 8
    /// or more records nothing.
    tensix_sem_post, tensix_sem_post,
    0 "tensix-sem-post-0" 1 "tensix-sem-post-1" 2 "tensix-sem-post-2" 3 "tensix-sem-post-3" 4 "tensix-sem-post-4" 5 "tensix-sem-post-5" 6 "tensix-sem-post-6" 7 "tensix-sem-post-7"
);
