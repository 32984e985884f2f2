//! Issuing the data path's instructions: the Matrix Unit (one instruction per cycle across
//! threads, its `SrcA`/`SrcB` data-valid waits, the `Dst` read-after-write stall and the
//! move instructions' structural hazards), the unpackers (address calculation, L1 fetch
//! speed, the `FlipSrc` hand-over when the unpack completes) and packer 0. Each returns
//! the instruction's latency, or `None` when it must wait at the gate this cycle.

use super::config::fields::thd as tf;
use super::isa::{field, op, opcode};
use super::matrix::{self, op as mop, Ctx};
use super::src_regs::{A, B};
use super::{counters, pack, unpack, CycleUse, Tensix};
use crate::isa::lines::TensixWait;

/// `Some(latency)` if the instruction issued, `None` if it waits.
type Issued = Result<Option<u32>, String>;

impl Tensix {
    /// Whether every `DstBits` block of `blocks` may be read at cycle `c`.
    fn dst_readable(&self, blocks: u128, c: u64) -> bool {
        (0..128).all(|b| blocks & (1 << b) == 0 || self.dst_ready[b] <= c)
    }

    /// Marks `blocks` written at cycle `c`, readable from `ready`.
    fn dst_written(&mut self, blocks: u128, ready: u64) {
        if blocks != 0 {
            self.dst_ready_max = self.dst_ready_max.max(ready);
        }
        for b in 0..128 {
            if blocks & (1 << b) != 0 {
                self.dst_ready[b] = self.dst_ready[b].max(ready);
            }
        }
    }

    /// Why a thread's next instruction `w` cannot issue on the data path's account, if
    /// it cannot (for a deadlock report).
    pub(super) fn data_wait(&self, w: u32) -> Option<String> {
        let name = ["SrcA", "SrcB"];
        match opcode(w) {
            op::UNPACR => {
                let which = field(w, 23, 1) as usize;
                (!self.unp_bank_free(which)).then(|| {
                    format!(
                        "waiting for the Matrix Unit to give {} bank {} back (a FlipSrc of a Matrix Unit instruction or CLEARDVALID)",
                        name[which], self.src.unp_bank[which]
                    )
                })
            }
            mop::ELWADD | mop::ELWSUB | mop::ELWMUL | mop::MVMUL | mop::MOVA2D | mop::MOVB2D => {
                let x = self.src.mu_valid(A) && self.src.mu_valid(B);
                (!x).then(|| {
                    let missing: Vec<&str> = [A, B]
                        .into_iter()
                        .filter(|&k| !self.src.mu_valid(k))
                        .map(|k| name[k])
                        .collect();
                    format!(
                        "waiting for {} data valid (an UNPACR with FlipSrc or SETDVALID)",
                        missing.join(" and ")
                    )
                })
            }
            _ => None,
        }
    }

    /// Whether unpacker `which` may write its current bank: the unpackers own it and no
    /// finished-but-not-completed `FlipSrc` is about to hand it to the Matrix Unit.
    pub(super) fn unp_bank_free(&self, which: usize) -> bool {
        let bank = self.src.unp_bank[which];
        self.src.unp_free(which)
            && !self
                .pending_flips
                .iter()
                .any(|f| (f.0, f.1) == (which, bank))
    }

    /// `UNPACR_NOP` of thread `t` for `SrcA` (`which` 0) or `SrcB` (1), in the two modes
    /// tt-llk uses: 1 (`UNP_ZEROSRC`) waits until the Matrix Unit's current bank is no longer
    /// its to read, then zeroes the unpacker's current bank; 7 (`UNP_SET_DVALID`) waits for
    /// the unpacker's bank to be its to write, then hands it to the Matrix Unit as
    /// `SETDVALID` does. The ISA documentation has no page for `UNPACR_NOP`; these are the
    /// semantics of Tenstorrent's functional simulator ttsim for Wormhole (read, not
    /// copied). `None`: it waits.
    fn unpacr_nop(&mut self, t: usize, w: u32, which: usize) -> Option<u32> {
        if field(w, 0, 23) == 1 {
            if self.src.mu_valid(which) {
                self.why[t] = [TensixWait::SrcAFree, TensixWait::SrcBFree][which];
                return None;
            }
            let bank = self.src.unp_bank[which];
            self.src.banks[which][bank].rows = [[0; 16]; 64];
        } else {
            if !self.unp_bank_free(which) {
                self.why[t] = [TensixWait::SrcAFree, TensixWait::SrcBFree][which];
                return None;
            }
            let base = self
                .config
                .thd(t, [tf::SRCA_SET_BASE, tf::SRCB_SET_BASE][which])
                << 4;
            self.src.unp_flip(which, t, base);
        }
        Some(self.timing.misc_latency)
    }

    /// `SETDVALID`.
    pub(super) fn setdvalid(&mut self, t: usize, w: u32) {
        let cfg = &self.config;
        if w & 1 != 0 {
            let base = cfg.thd(t, tf::SRCA_SET_BASE) << 4;
            self.src.unp_flip(A, t, base);
        }
        if w & 2 != 0 {
            let base = cfg.thd(t, tf::SRCB_SET_BASE) << 4;
            self.src.unp_flip(B, t, base);
        }
    }

    /// A Matrix Unit instruction of thread `t` at cycle `c`.
    pub(super) fn issue_matrix(&mut self, t: usize, w: u32, c: u64, used: &mut CycleUse) -> Issued {
        let o = opcode(w);
        let taken = used.matrix
            || self
                .mu_only
                .is_some_and(|(only, until)| c < until && o != only)
            || (c < self.mov_to_dst_until
                && matches!(o, mop::MOVD2A | mop::MOVD2B | mop::ELWMUL | mop::MVMUL));
        if taken {
            self.why[t] = TensixWait::MatrixUnit;
            return Ok(None);
        }
        let tm = self.timing;
        let latency = match o {
            op::SETRWC => {
                counters::setrwc(&mut self.rwcs[t], w);
                for (which, bit, keep) in [
                    (A, 22, tf::CLR_DVALID_SRCA_DISABLE),
                    (B, 23, tf::CLR_DVALID_SRCB_DISABLE),
                ] {
                    if field(w, bit, 1) != 0 {
                        let keep = self.config.thd(t, keep) != 0;
                        self.src.mu_flip(which, keep);
                    }
                }
                tm.rwc_latency
            }
            op::INCRWC => {
                counters::incrwc(&mut self.rwcs[t], w);
                tm.rwc_latency
            }
            _ => {
                let mut x = Ctx {
                    thread: t,
                    cfg: &self.config,
                    rwc: &mut self.rwcs[t],
                    src: &mut self.src,
                    dst: &mut self.dst,
                    numerics: self.numerics,
                };
                let f = matrix::footprint(w, &x)?;
                if f.needs[A] && !x.src.mu_valid(A) {
                    self.why[t] = TensixWait::SrcAValid;
                    return Ok(None);
                }
                if f.needs[B] && !x.src.mu_valid(B) {
                    self.why[t] = TensixWait::SrcBValid;
                    return Ok(None);
                }
                if !(0..128).all(|b| f.reads & (1 << b) == 0 || self.dst_ready[b] <= c) {
                    self.why[t] = TensixWait::DstHazard;
                    return Ok(None);
                }
                matrix::execute(w, &mut x)?;
                self.dst_written(f.writes, c + 1 + tm.dst_read_after_write as u64);
                match o {
                    mop::MVMUL | mop::ELWMUL | mop::ELWADD | mop::ELWSUB => tm.fpu_latency,
                    mop::MOVA2D | mop::MOVB2D | mop::MOVDBGA2D => {
                        // The next three cycles stall the listed instructions (MOVA2D.md).
                        self.mov_to_dst_until = c + 4;
                        tm.mov_to_dst_latency
                    }
                    mop::MOVD2A => {
                        self.mu_only = Some((mop::MOVD2A, c + 2));
                        tm.movd2a_latency
                    }
                    mop::MOVD2B => {
                        self.mu_only = Some((mop::MOVD2B, c + 4));
                        tm.movd2b_latency
                    }
                    _ => tm.rwc_latency,
                }
            }
        };
        used.matrix = true;
        self.matrix_until[t] = self.matrix_until[t].max(c + latency as u64);
        Ok(Some(latency))
    }

    /// An `UNPACR` of thread `t` at cycle `c`.
    pub(super) fn issue_unpack(&mut self, t: usize, w: u32, c: u64) -> Issued {
        if c < self.unpack_setup_until {
            self.why[t] = TensixWait::UnpackSetup;
            return Ok(None);
        }
        let which = field(w, 23, 1) as usize;
        if opcode(w) == op::UNPACR_NOP {
            return Ok(self.unpacr_nop(t, w, which));
        }
        if !self.unp_bank_free(which) {
            self.why[t] = [TensixWait::SrcAFree, TensixWait::SrcBFree][which];
            return Ok(None);
        }
        let l1 = self
            .l1
            .ok_or("the coprocessor has no L1 attached (a unit-test coprocessor)")?;
        let u = unpack::execute(
            w,
            t,
            &self.config,
            &mut self.adcs,
            &mut self.src,
            &mut self.dst,
            &l1,
        )?;
        let tm = self.timing;
        let want = 1 << u.throttle;
        let other = 1 - which;
        let speed = if self.unpacker_busy[other] > c {
            let s = if which == 0 {
                unpack::shared_speeds(want, self.unpacker_speed[other])
            } else {
                let (a, b) = unpack::shared_speeds(self.unpacker_speed[other], want);
                (b, a)
            };
            s.0
        } else {
            want
        };
        let setup = tm.unpack_setup as u64;
        let start = (c + setup).max(self.unpacker_busy[which]);
        let rate = (tm.unpack_bytes_per_cycle * speed).max(1);
        let done = start + u.bytes.div_ceil(rate) as u64;
        self.unpacker_busy[which] = done;
        self.unpacker_speed[which] = want;
        self.unpack_setup_until = c + setup;
        self.thread_held_until[t] = self.thread_held_until[t].max(c + setup);
        self.held_by[t] = TensixWait::UnpackSetup;
        self.unpack_thread_until[which][t] = done;
        if let Some(bank) = u.flip {
            self.pending_flips.push((which, bank, done));
        }
        // ASSUMPTION: data unpacked to Dst may be read once the unpack completes.
        self.dst_written(u.dst_writes, done);
        Ok(Some((done - c) as u32))
    }

    /// A `PACR` of thread `t` at cycle `c`.
    pub(super) fn issue_pack(&mut self, t: usize, w: u32, c: u64, used: &mut CycleUse) -> Issued {
        if used.pack {
            self.why[t] = TensixWait::Packer;
            return Ok(None);
        }
        let reads = pack::dst_reads(w, t, &self.config, &self.adcs);
        if !self.dst_readable(reads, c) {
            self.why[t] = TensixWait::DstHazard;
            return Ok(None);
        }
        let l1 = self
            .l1
            .ok_or("the coprocessor has no L1 attached (a unit-test coprocessor)")?;
        let p = pack::execute(
            w,
            t,
            &self.config,
            &mut self.adcs,
            &self.dst,
            &mut self.packers,
            &l1,
        )?;
        let tm = self.timing;
        let start = (c + tm.pack_setup as u64).max(self.pack_busy);
        let done = start + p.bytes.div_ceil(tm.pack_bytes_per_cycle.max(1)) as u64;
        self.pack_busy = done;
        self.pack_thread_until[t] = done;
        used.pack = true;
        Ok(Some((done - c) as u32))
    }
}
