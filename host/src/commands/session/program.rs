//! A tt-metal program as one op of a session in tt-metal's layout: the emulator's
//! slow-dispatch host (`ttprof_emu::tt_metal::program`) runs it on tt-metal's pre-compiled
//! firmware while the session's consumer drains the rings in the mailboxes'
//! `profiler_msg_t` at every look of the host, and the op goes into the op log with its
//! kernels as any other op does (docs/design/tt-metal-program.md).

use super::{ring_map, Launched, Session};
use crate::clock::EmuClock;
use crate::error::{Error, Result};
use crate::launch;
use crate::oplog::{KernelBinding, OpRecord};
use riscv_linker::Layout;
use std::path::PathBuf;
use ttprof_emu::tt_metal::program::{run_program_with, Program, ProgramRun};
use ttprof_emu::tt_metal::{dispatch::HOST_POLL_CYCLES, Firmware};

/// One tt-metal program to launch: what the slow-dispatch host writes, each kernel's ELF
/// file (in the order of `program.kernels`: copied under `kernels/` and named in the op
/// log), and the firmware build it runs on.
pub struct ProgramOp<'a> {
    /// The op's name in the op log and every output (e.g. the program file's name).
    pub name: String,
    /// The program.
    pub program: Program<'a>,
    /// Each kernel's ELF file, in the order of `program.kernels`.
    pub elves: Vec<PathBuf>,
    /// tt-metal's pre-compiled firmware.
    pub firmware: &'a Firmware,
}

impl Session {
    /// The run id the next [`Session::launch_program`] of a program with
    /// `host_assigned_id` takes (the id itself, unless 0 or not above every earlier run id),
    /// whether it finishes or faults.
    pub fn program_run_id(&self, host_assigned_id: u32) -> u32 {
        match host_assigned_id {
            id if id >= self.next_run => id,
            _ => self.next_run,
        }
    }

    /// Runs a tt-metal program to every core's done ([`ProgramOp`]) with its
    /// `host_assigned_id` as the run id (unless 0 or not above every earlier run id: then
    /// the next one, written into the launch message), draining the rings
    /// every `drain_every_cycles` (rounded up to the host's look, every
    /// [`HOST_POLL_CYCLES`] cycles), and logs it as an op. Needs a session in tt-metal's
    /// layout ([`super::Config::layout`]).
    pub fn launch_program(&mut self, op: &ProgramOp<'_>) -> Result<(Launched, ProgramRun)> {
        if self.cfg.layout != Layout::TtMetal {
            return Err(Error::Unsupported(
                "a tt-metal program runs in a session of tt-metal's layout (Config::layout)".into(),
            ));
        }
        if op.elves.len() != op.program.kernels.len() {
            return Err(Error::Argument {
                what: format!(
                    "program {:?}: {} kernel ELF paths for {} kernels",
                    op.name,
                    op.elves.len(),
                    op.program.kernels.len()
                ),
            });
        }
        if let Some(bad) = op.program.cores.iter().find(|c| !self.tiles.contains(c)) {
            return Err(Error::Argument {
                what: format!(
                    "program {:?}: core {bad} is not a tile of this session",
                    op.name
                ),
            });
        }
        // A program the emulator would not take (a kernel outside its slot of the kernel
        // configuration buffer, circular buffers past L1, too many arguments, ..) is unusable input: refused before
        // anything is copied, run or logged (refused at the launch, it was taken for a
        // fault, and the outputs of a run with no records hid why).
        ttprof_emu::tt_metal::program::check(&op.program, self.cfg.arch).map_err(|e| {
            Error::Argument {
                what: format!("program {:?}: {e}", op.name),
            }
        })?;
        let map = ring_map(&self.cfg);
        let mut copies = Vec::new();
        for (k, path) in op.program.kernels.iter().zip(&op.elves) {
            copies.push((k.risc, self.copy_kernel(path, k.elf)?));
        }
        // tt-metal's program id is the run id (the kernels' entry copies the launch message's
        // `host_assigned_id` into the Run records), unless it is 0 or an earlier op's.
        let mut program = op.program.clone();
        let run_id = self.program_run_id(program.host_assigned_id);
        program.host_assigned_id = run_id;
        self.next_run = run_id.saturating_add(1);
        let p = &program;
        // No RUN_ID written: the kernels' entry takes it from the launch message, as on a
        // card, where nothing of ttprof's writes it.
        for t in &p.cores {
            for k in &p.kernels {
                launch::set_kernel_in(&map, &self.mem, 0, *t, k.risc, k.elf)?;
            }
        }
        let noc_before = super::counters::arm(&mut self.dev, &self.cfg.counters, &p.cores)?;
        let start = self.dev.host_time_ns() as u64;
        let drain_every = self.cfg.drain_every_cycles;
        let (drainer, sampler) = (&mut self.drainer, &mut self.sampler);
        let (spool, spool_failed) = (&mut self.spool, &mut self.spool_failed);
        let mut drain_error = None;
        let mut at = 0u64;
        let result = run_program_with(&mut self.dev, op.firmware, p, &mut |dev| {
            let before = at;
            at += HOST_POLL_CYCLES;
            if drain_every > 0 && at.div_ceil(drain_every) != before.div_ceil(drain_every) {
                if drain_error.is_none() {
                    drain_error = drainer.drain().err();
                }
                if let (None, Some(spool)) = (&drain_error, spool.as_mut()) {
                    if let Err(e) = super::spool_drained(drainer, spool) {
                        spool_failed.get_or_insert(e);
                    }
                }
                sampler.tick(&EmuClock::new(dev), dev.host_time_ns() as u64);
            }
            Ok(())
        });
        let end = self.dev.host_time_ns() as u64;
        // Read whether the program completed or not, as `launch` does.
        let counters = super::counters::read(
            &mut self.dev,
            &self.cfg.counters,
            &p.cores,
            noc_before.as_ref(),
        )?;
        let record = OpRecord {
            run_id,
            device: 0,
            op_code: op.name.clone(),
            op_type: "tt_dnn_device".into(),
            attributes: Default::default(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            host_start_ns: start,
            host_end_ns: end,
            kernels: copies
                .iter()
                .map(|(risc, copy)| KernelBinding {
                    risc: risc.name().into(),
                    elf: self.in_out(copy),
                    cores: p.cores.iter().map(|t| [t.x, t.y]).collect(),
                })
                .collect(),
            counters,
        };
        // Logged whatever happened: the records a faulting launch published still need names.
        self.log.op(&record)?;
        self.log_holds(run_id)?;
        let run = match result {
            Ok(r) => r,
            Err(e) => {
                let kernels: Vec<_> = p.kernels.iter().map(|k| (k.risc, k.elf)).collect();
                return Err(self.stopped(e, &op.name, run_id, &p.cores, &kernels));
            }
        };
        if let Some(e) = drain_error {
            return Err(e);
        }
        let launched = Launched {
            run_id,
            op: op.name.clone(),
            host_ns: (start, end),
            instructions: run.summary.instructions(),
        };
        self.launched.push(launched.clone());
        Ok((launched, run))
    }
}
