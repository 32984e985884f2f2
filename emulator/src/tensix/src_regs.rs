//! `SrcA` and `SrcB` (`SrcASrcB.md`): two banks each of 64 rows x 16 columns of 19-bit
//! data, each bank owned either by the unpackers or by the Matrix Unit (`AllowedClient`,
//! the "data valid" handshake), and the bank pointers the Matrix Unit and the two
//! unpackers keep. `CLEARDVALID` and `SETDVALID` are here too: they only move ownership.

/// Who may use a bank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Client {
    /// The unpackers may write the bank.
    Unpackers,
    /// The Matrix Unit may read (and write) the bank.
    MatrixUnit,
}

/// One bank.
#[derive(Clone, Debug)]
pub(crate) struct Bank {
    /// `AllowedClient`.
    pub allowed: Client,
    /// 64 rows of 16 19-bit datums (Sign, Man(10), Exp(8)).
    pub rows: [[u32; 16]; 64],
}

impl Default for Bank {
    fn default() -> Self {
        Bank {
            allowed: Client::Unpackers,
            rows: [[0; 16]; 64],
        }
    }
}

/// `SrcA`, `SrcB` and the bank state of their users.
#[derive(Clone, Debug, Default)]
pub(crate) struct SrcRegs {
    /// `SrcA[2]`, `SrcB[2]`: `[0]` is SrcA.
    pub banks: [[Bank; 2]; 2],
    /// `MatrixUnit.SrcABank`, `MatrixUnit.SrcBBank`.
    pub mu_bank: [usize; 2],
    /// `Unpackers[0].SrcBank` (SrcA), `Unpackers[1].SrcBank` (SrcB).
    pub unp_bank: [usize; 2],
    /// `Unpackers[u].SrcRow[thread]`.
    pub unp_row: [[u32; 3]; 2],
}

/// `SrcA` or `SrcB` (also the index of the unpacker that writes it).
pub(crate) const A: usize = 0;
/// See [`A`].
pub(crate) const B: usize = 1;

impl SrcRegs {
    /// Whether the Matrix Unit's current bank of `which` is its to read.
    pub fn mu_valid(&self, which: usize) -> bool {
        self.banks[which][self.mu_bank[which]].allowed == Client::MatrixUnit
    }

    /// Whether unpacker `which`'s current bank is its to write.
    pub fn unp_free(&self, which: usize) -> bool {
        self.banks[which][self.unp_bank[which]].allowed == Client::Unpackers
    }

    /// The Matrix Unit's current bank of `which`.
    pub fn mu(&self, which: usize) -> &Bank {
        &self.banks[which][self.mu_bank[which]]
    }

    /// The Matrix Unit's current bank of `which`, to write.
    pub fn mu_mut(&mut self, which: usize) -> &mut Bank {
        &mut self.banks[which][self.mu_bank[which]]
    }

    /// The Matrix Unit instructions' `FlipSrcA`/`FlipSrcB` (and `SETRWC`'s): give the
    /// current bank back to the unpackers unless `CLR_DVALID_Src*_Disable` (`keep`), then
    /// move to the other bank.
    pub fn mu_flip(&mut self, which: usize, keep: bool) {
        if !keep {
            let b = self.mu_bank[which];
            self.banks[which][b].allowed = Client::Unpackers;
        }
        self.mu_bank[which] ^= 1;
    }

    /// `CLEARDVALID` (`word` passed the push checks).
    pub fn cleardvalid(&mut self, word: u32) {
        let (reset, keep_reading) = (word & 1 != 0, word & 2 != 0);
        if reset {
            self.mu_bank = [0; 2];
            self.unp_bank = [0; 2];
            for banks in &mut self.banks {
                for b in banks.iter_mut() {
                    b.allowed = Client::Unpackers;
                }
            }
            return;
        }
        for which in [A, B] {
            if word & (1 << (22 + which)) != 0 {
                let b = self.mu_bank[which];
                self.banks[which][b].allowed = Client::Unpackers;
                if !keep_reading {
                    self.mu_bank[which] ^= 1;
                }
            }
        }
    }

    /// Unpacker `which` hands its current bank to the Matrix Unit and moves to the other
    /// one, its row pointer for `thread` back to `row_base` (`SETDVALID`, `UNPACR`'s
    /// `FlipSrc`).
    pub fn unp_flip(&mut self, which: usize, thread: usize, row_base: u32) {
        let b = self.unp_bank[which];
        self.banks[which][b].allowed = Client::MatrixUnit;
        self.unp_bank[which] ^= 1;
        self.unp_row[which][thread] = row_base;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banks_change_hands_both_ways() {
        let mut s = SrcRegs::default();
        assert!(s.unp_free(A) && !s.mu_valid(A));
        s.unp_flip(A, 0, 16);
        assert!(s.mu_valid(A), "bank 0 now the Matrix Unit's");
        assert_eq!((s.unp_bank[A], s.unp_row[A][0]), (1, 16));
        assert!(s.unp_free(A), "the unpacker writes bank 1 meanwhile");
        s.mu_flip(A, false);
        assert_eq!(s.mu_bank[A], 1);
        assert_eq!(s.banks[A][0].allowed, Client::Unpackers);
        // CLEARDVALID FlipSrcB with KeepReadingSameSrc.
        s.unp_flip(B, 0, 0);
        s.cleardvalid((1 << 23) | 2);
        assert_eq!(
            (s.mu_bank[B], s.banks[B][0].allowed),
            (0, Client::Unpackers)
        );
        // Reset gives everything to the unpackers at bank 0.
        s.unp_flip(A, 0, 0);
        s.cleardvalid(1);
        assert_eq!((s.mu_bank, s.unp_bank), ([0, 0], [0, 0]));
        assert!(s
            .banks
            .iter()
            .flatten()
            .all(|b| b.allowed == Client::Unpackers));
    }
}
