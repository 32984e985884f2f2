//! What each Tensix thread did that the host's critical path needs and no RISC can record:
//! when its wait gate held an instruction back, and on what (a [`crate::lines`] cause,
//! `tensix-fifo: <wait>`: `SrcA valid` is unpack's data, `SrcA bank free` math's hand-back),
//! and the cycle it executed each `SEMPOST` and `SEMGET`. A TRISC records a post when it
//! pushes it; the thread executes it after everything queued before it, which is when the
//! semaphore moves and the TRISC (or thread) waiting on it is let go; a `SEMGET` lets go a
//! thread waiting for the semaphore to drop below its maximum (tt-llk's math waiting for
//! pack to free `Dst`).
//!
//! Only the gate's waits on a hand-over between threads are logged ([`hands_over`]): a
//! `Src` bank's data or its return, a semaphore. A thread waiting on its own work (a
//! `Dst` block it wrote a few cycles ago, its unit busy) is working, and those stretches
//! would be most of a compute kernel's (one per `ELWADD`).
//!
//! Memory is bounded like the tile's held stretches: past [`MAX_POSTS`] posts (or gets) a
//! thread and run, they are only counted ([`ThreadLog::lost_posts`]); the gate's stretches
//! are a [`HoldLog`].

use crate::isa::lines::TensixWait;
use crate::time::stretch::HoldLog;

/// Whether a gate waiting on `w` waits for another thread: `SrcA`/`SrcB` data (unpack's),
/// a `Src` bank given back (math's), a semaphore (`SEMWAIT`: whichever thread posts it).
pub(crate) fn hands_over(w: TensixWait) -> bool {
    use TensixWait::*;
    matches!(
        w,
        SrcAValid
            | SrcBValid
            | SrcAFree
            | SrcBFree
            | Semaphore0
            | Semaphore1
            | Semaphore2
            | Semaphore3
            | Semaphore4
            | Semaphore5
            | Semaphore6
            | Semaphore7
    )
}

/// Most executed posts kept per thread and run (16 bytes each: 1 MiB).
pub const MAX_POSTS: usize = 1 << 16;

/// One thread's log for the current run, on the coprocessor's clock (the tile's core time).
#[derive(Clone, Debug, Default)]
pub(crate) struct ThreadLog {
    /// Stretches its wait gate held the instruction at its head, by cause.
    pub gate: HoldLog,
    /// Each `SEMPOST` it executed: (cycle, semaphore), one entry per semaphore of its mask.
    pub posts: Vec<(u64, u8)>,
    /// Each `SEMGET` it executed, likewise.
    pub gets: Vec<(u64, u8)>,
    /// Posts and gets past [`MAX_POSTS`] each: counted, not placed.
    pub lost_posts: u64,
}

impl ThreadLog {
    /// Notes that the thread executed a `SEMPOST` (`get`: a `SEMGET`) of semaphore `sem`
    /// at `cycle`.
    pub fn post(&mut self, cycle: u64, sem: u8, get: bool) {
        let list = if get { &mut self.gets } else { &mut self.posts };
        if list.len() < MAX_POSTS {
            list.push((cycle, sem));
        } else {
            self.lost_posts += 1;
        }
    }

    pub fn clear(&mut self) {
        self.gate.clear();
        self.posts.clear();
        self.gets.clear();
        self.lost_posts = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posts_past_the_cap_are_counted_and_a_new_run_starts_empty() {
        let mut log = ThreadLog::default();
        for k in 0..MAX_POSTS as u64 + 3 {
            log.post(k, (k % 8) as u8, false);
        }
        log.post(7, 2, true);
        assert_eq!((log.posts.len(), log.lost_posts), (MAX_POSTS, 3));
        assert_eq!(log.posts[9], (9, 1));
        assert_eq!(log.gets, [(7, 2)]);
        log.gate.note(5, 2, 1);
        log.clear();
        assert!(log.posts.is_empty() && log.gets.is_empty());
        assert!(log.gate.spans.is_empty() && log.lost_posts == 0);
    }
}
