//! One op to launch: its kernels, tiles, L1 inputs and what the op report says of it.

use crate::devmem::DeviceMemory;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::oplog::TensorDesc;
use riscv_linker::{NocCoord, Risc};
use std::path::{Path, PathBuf};

/// Bytes written into L1 at `addr` of every tile of an op before it is launched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct L1Input {
    /// L1 byte address (4-byte aligned).
    pub addr: u32,
    /// The bytes (padded with zeros to whole words).
    pub bytes: Vec<u8>,
}

impl L1Input {
    /// A 32-bit word.
    pub fn word(addr: u32, value: u32) -> L1Input {
        L1Input {
            addr,
            bytes: value.to_le_bytes().to_vec(),
        }
    }

    /// The contents of a file (noted in `inputs`).
    pub fn file(addr: u32, path: &Path, inputs: &Inputs) -> Result<L1Input> {
        // At most the largest L1 (Blackhole's 1.5 MiB): more cannot be written anyway.
        let bytes = crate::files::read_regular(
            path,
            "an L1 input file",
            "read L1 input file",
            2 << 20,
            inputs,
        )?;
        Ok(L1Input { addr, bytes })
    }

    /// Writes the input into `tile` of `chip`.
    pub fn write(&self, mem: &dyn DeviceMemory, chip: u32, tile: NocCoord) -> Result<()> {
        if !self.addr.is_multiple_of(4) {
            return Err(Error::Address {
                what: format!(
                    "L1 input at {:#x}: the address must be 4-byte aligned",
                    self.addr
                ),
            });
        }
        for (i, chunk) in self.bytes.chunks(4).enumerate() {
            let mut w = [0u8; 4];
            w[..chunk.len()].copy_from_slice(chunk);
            let at = self
                .addr
                .checked_add(4 * i as u32)
                .ok_or_else(|| Error::Address {
                    what: format!(
                        "L1 input at {:#x} of {} bytes runs past the 32-bit address space",
                        self.addr,
                        self.bytes.len()
                    ),
                })?;
            mem.write_u32(chip, tile, at, u32::from_le_bytes(w))?;
        }
        Ok(())
    }
}

/// An op: kernels per RISC on a set of tiles, with L1 inputs written before the launch.
#[derive(Clone, Debug, Default)]
pub struct Op {
    /// The op's name (the op report's `OP CODE`).
    pub name: String,
    /// At most one kernel per RISC.
    pub kernels: Vec<(Risc, PathBuf)>,
    /// `None`: every tile of the session.
    pub tiles: Option<Vec<NocCoord>>,
    /// Written into every tile of the op, in order, before each launch.
    pub l1: Vec<L1Input>,
    /// Runtime arguments per RISC (tt-metal's `get_arg_val<uint32_t>(i)`, `ttprof_rt::arg`):
    /// written into that RISC's [`riscv_linker::runtime_args`] of every tile of the op before
    /// each launch, the rest of its words zeroed. At most [`riscv_linker::MAX_RUNTIME_ARGS`].
    pub args: Vec<(Risc, Vec<u32>)>,
    /// Runtime arguments of one RISC on one tile, instead of its [`Op::args`] there
    /// (tt-metal's `SetRuntimeArgs` for one core).
    pub tile_args: Vec<(NocCoord, Risc, Vec<u32>)>,
    /// The op report's `ATTRIBUTES`.
    pub attributes: serde_json::Map<String, serde_json::Value>,
    /// Input tensors, as the op report describes them; an input whose
    /// [`TensorDesc::id`] is another op's output's makes this op depend on that one in the op
    /// graph ([`crate::sink::graph`]).
    pub inputs: Vec<TensorDesc>,
    /// Output tensors.
    pub outputs: Vec<TensorDesc>,
}

impl Op {
    /// An op named `name` with no kernels yet.
    pub fn new(name: impl Into<String>) -> Op {
        Op {
            name: name.into(),
            ..Op::default()
        }
    }

    /// Runs `elf` on `risc` of every tile of the op.
    pub fn kernel(mut self, risc: Risc, elf: impl Into<PathBuf>) -> Op {
        self.kernels.push((risc, elf.into()));
        self
    }

    /// Runs on these tiles only.
    pub fn tiles(mut self, tiles: Vec<NocCoord>) -> Op {
        self.tiles = Some(tiles);
        self
    }

    /// Gives `risc`'s kernel these runtime arguments (replacing any given before).
    pub fn args(mut self, risc: Risc, values: Vec<u32>) -> Op {
        self.args.retain(|(r, _)| *r != risc);
        self.args.push((risc, values));
        self
    }

    /// Gives `risc`'s kernel on `tile` these runtime arguments, instead of its
    /// [`Op::args`] (replacing any given before for that tile).
    pub fn tile_args(mut self, tile: NocCoord, risc: Risc, values: Vec<u32>) -> Op {
        self.tile_args.retain(|(t, r, _)| (*t, *r) != (tile, risc));
        self.tile_args.push((tile, risc, values));
        self
    }

    /// The runtime arguments `risc` reads on `tile`.
    pub fn args_on(&self, tile: NocCoord, risc: Risc) -> &[u32] {
        self.tile_args
            .iter()
            .find(|(t, r, _)| (*t, *r) == (tile, risc))
            .map(|(_, _, v)| v.as_slice())
            .or_else(|| {
                self.args
                    .iter()
                    .find(|(r, _)| *r == risc)
                    .map(|(_, v)| v.as_slice())
            })
            .unwrap_or(&[])
    }

    /// Writes `input` into L1 before the launch.
    pub fn l1(mut self, input: L1Input) -> Op {
        self.l1.push(input);
        self
    }

    /// Adds an input tensor (give it the producing op's output's `id` to link the two).
    pub fn input(mut self, tensor: TensorDesc) -> Op {
        self.inputs.push(tensor);
        self
    }

    /// Adds an output tensor (give it a fresh `id` that later ops' inputs can name).
    pub fn output(mut self, tensor: TensorDesc) -> Op {
        self.outputs.push(tensor);
        self
    }

    /// Sets an op-report attribute.
    pub fn attribute(mut self, key: &str, value: impl Into<serde_json::Value>) -> Op {
        self.attributes.insert(key.into(), value.into());
        self
    }
}
