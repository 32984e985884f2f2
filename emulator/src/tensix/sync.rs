//! The Sync Unit (`SyncUnit.md`): eight semaphores shared by the three Tensix threads and
//! the TRISCs' memory-mapped view of them, and seven mutexes.

use super::isa::field;

/// One semaphore: `uint4_t Value, Max`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Semaphore {
    pub value: u8,
    pub max: u8,
}

/// Semaphores and mutexes.
#[derive(Debug, Default)]
pub(crate) struct SyncUnit {
    pub sems: [Semaphore; 8],
    /// Holder of mutex `i` (indices 0 and 2-7 exist).
    pub mutex: [Option<u8>; 8],
    /// The thread whose `ATRELM` last freed mutex `i` (until someone takes it).
    pub released_by: [Option<u8>; 8],
}

/// The semaphores a `SemaphoreMask` (bits 2-9 of the instruction) selects.
pub(super) fn selected(word: u32) -> impl Iterator<Item = usize> {
    let mask = field(word, 2, 8);
    (0..8).filter(move |i| mask & (1 << i) != 0)
}

impl SyncUnit {
    /// `SEMINIT`: `Value = NewValue`, `Max = NewMax` for every selected semaphore.
    pub fn seminit(&mut self, word: u32) {
        let (value, max) = (field(word, 16, 4) as u8, field(word, 20, 4) as u8);
        for i in selected(word) {
            self.sems[i] = Semaphore { value, max };
        }
    }

    /// `SEMPOST`: increments each selected `Value`. A `Value` already at its `Max` is an
    /// error (non-contractual: ttsim, the public golden model, stops there; the ISA
    /// documentation's functional model would count on up to 15).
    pub fn sempost(&mut self, word: u32) -> Result<(), String> {
        for i in selected(word) {
            let s = self.sems[i];
            if s.value >= s.max {
                return Err(format!(
                    "SEMPOST on semaphore {i} at its maximum (Value {}, Max {}) is non-contractual",
                    s.value, s.max
                ));
            }
        }
        for i in selected(word) {
            self.post(i);
        }
        Ok(())
    }

    /// `SEMGET`: decrements each selected `Value`. A `Value` of 0 is an error
    /// (non-contractual, as ttsim; the ISA documentation's model would leave it at 0).
    pub fn semget(&mut self, word: u32) -> Result<(), String> {
        for i in selected(word) {
            if self.sems[i].value == 0 {
                return Err(format!(
                    "SEMGET on semaphore {i} at Value 0 is non-contractual"
                ));
            }
        }
        for i in selected(word) {
            self.get(i);
        }
        Ok(())
    }

    fn post(&mut self, i: usize) {
        let s = &mut self.sems[i];
        if s.value < 15 {
            s.value += 1;
        }
    }

    fn get(&mut self, i: usize) {
        let s = &mut self.sems[i];
        s.value = s.value.saturating_sub(1);
    }

    /// A RISC store to `SemaphoreAccess[i]`: odd values act like `SEMGET`, even like
    /// `SEMPOST`.
    pub fn risc_write(&mut self, i: usize, word: u32) {
        if word & 1 != 0 {
            self.get(i)
        } else {
            self.post(i)
        }
    }

    /// Whether a latched `SEMWAIT` with `condition` (C0: wait while a `Value` is 0, C1:
    /// wait while a `Value >= Max`) over `sem_mask` lets instructions through.
    pub fn semwait_met(&self, condition: u8, sem_mask: u8) -> bool {
        (0..8).filter(|i| sem_mask & (1 << i) != 0).all(|i| {
            let s = self.sems[i];
            !(condition & 1 != 0 && s.value == 0 || condition & 2 != 0 && s.value >= s.max)
        })
    }

    /// Which of a `SEMWAIT`'s conditions keep it waiting: (some semaphore of `sem_mask` is
    /// zero while `condition` waits on zero, some is at its maximum while it waits on that).
    pub fn semwait_keeping(&self, condition: u8, sem_mask: u8) -> (bool, bool) {
        let sems = (0..8)
            .filter(|i| sem_mask & (1 << i) != 0)
            .map(|i| self.sems[i]);
        let zero = condition & 1 != 0 && sems.clone().any(|s| s.value == 0);
        let full = condition & 2 != 0 && sems.into_iter().any(|s| s.value >= s.max);
        (zero, full)
    }

    /// `ATGETM` by `thread`: takes mutex `index` if nobody else holds it; `false` means
    /// the instruction waits at the gate.
    pub fn try_acquire(&mut self, index: usize, thread: u8) -> bool {
        match self.mutex[index] {
            Some(h) if h != thread => false,
            _ => {
                self.mutex[index] = Some(thread);
                self.released_by[index] = None;
                true
            }
        }
    }

    /// `ATRELM` by `thread`: releases mutex `index` if `thread` holds it.
    pub fn release(&mut self, index: usize, thread: u8) {
        if self.mutex[index] == Some(thread) {
            self.mutex[index] = None;
            self.released_by[index] = Some(thread);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An instruction word with `SemaphoreMask` `mask`.
    fn sem(op: u32, mask: u32) -> u32 {
        (op << 24) | (mask << 2)
    }

    #[test]
    fn seminit_post_get_follow_the_functional_models() {
        let mut s = SyncUnit::default();
        s.seminit(sem(0xA3, 0b101) | (3 << 16) | (4 << 20));
        assert_eq!(s.sems[0], Semaphore { value: 3, max: 4 });
        assert_eq!(s.sems[2], Semaphore { value: 3, max: 4 });
        assert_eq!(s.sems[1], Semaphore::default());
        s.seminit(sem(0xA3, 0b10) | (14 << 16) | (15 << 20));
        s.sempost(sem(0xA4, 0b11)).unwrap();
        assert_eq!((s.sems[0].value, s.sems[1].value), (4, 15));
        // Past Max (here 4 and 15): an error, nothing changes.
        let e = s.sempost(sem(0xA4, 0b11)).unwrap_err();
        assert!(
            e.contains("semaphore 0 at its maximum (Value 4, Max 4)"),
            "{e}"
        );
        assert_eq!((s.sems[0].value, s.sems[1].value), (4, 15));
        s.semget(sem(0xA5, 0b1)).unwrap();
        s.seminit(sem(0xA3, 0b1000));
        let e = s.semget(sem(0xA5, 0b1001)).unwrap_err();
        assert!(e.contains("semaphore 3 at Value 0"), "{e}");
        assert_eq!(
            (s.sems[0].value, s.sems[3].value),
            (3, 0),
            "nothing changed"
        );
        s.risc_write(3, 2);
        s.risc_write(0, 1);
        assert_eq!((s.sems[0].value, s.sems[3].value), (2, 1));
    }

    #[test]
    fn semwait_conditions() {
        let mut s = SyncUnit::default();
        assert!(!s.semwait_met(1, 1), "C0: Value == 0 keeps waiting");
        assert!(!s.semwait_met(1, 6), "any selected semaphore at 0");
        s.seminit(sem(0xA3, 1) | (2 << 16) | (2 << 20));
        assert!(s.semwait_met(1, 1));
        assert!(!s.semwait_met(2, 1), "C1: Value >= Max keeps waiting");
        s.semget(sem(0xA5, 1)).unwrap();
        assert!(s.semwait_met(3, 1));
        assert!(s.semwait_met(3, 0), "no semaphore selected");
    }

    #[test]
    fn mutexes_are_held_by_one_thread() {
        let mut s = SyncUnit::default();
        assert!(s.try_acquire(2, 0));
        assert!(s.try_acquire(2, 0), "the holder again");
        assert!(!s.try_acquire(2, 1));
        s.release(2, 1);
        assert!(!s.try_acquire(2, 1), "only the holder releases");
        s.release(2, 0);
        assert!(s.try_acquire(2, 1));
    }
}
