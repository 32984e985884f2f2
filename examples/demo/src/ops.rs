//! The ops the demo launches, their inputs, and the check of their outputs.

use example_abi::{arg, Op, ARGS, CBS, IN0, IN1, OUT, TILE_ELEMS};
use riscv_linker::NocCoord;
use ttprof::devmem::DeviceMemory;
use ttprof::oplog::TensorDesc;
use ttprof::Result;

/// One op of the sequence.
#[derive(Clone, Copy, Debug)]
pub struct OpSpec {
    pub op: Op,
    pub tiles: u32,
}

/// The demo's sequence: at least three ops of different shapes.
pub fn sequence(tiles: u32) -> Vec<OpSpec> {
    vec![
        OpSpec { op: Op::Add, tiles },
        OpSpec { op: Op::Matmul, tiles: tiles.div_ceil(2) },
        OpSpec { op: Op::Relu, tiles },
        OpSpec { op: Op::Mul, tiles },
    ]
}

/// Deterministic input values for a tile of the device (xorshift).
fn input(seed: u32, n: usize) -> Vec<u32> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x % 2001
        })
        .map(|v| v.wrapping_sub(1000))
        .collect()
}

fn write_words(mem: &dyn DeviceMemory, tile: NocCoord, addr: u32, words: &[u32]) -> Result<()> {
    for (i, w) in words.iter().enumerate() {
        mem.write_u32(0, tile, addr + 4 * i as u32, *w)?;
    }
    Ok(())
}

fn inputs(spec: &OpSpec, tile: NocCoord, run: u32) -> (Vec<u32>, Vec<u32>) {
    let n = spec.tiles as usize * TILE_ELEMS;
    let seed = run << 16 | (tile.x as u32) << 8 | tile.y as u32;
    (input(seed, n), input(seed ^ 0xABCD, n))
}

/// Writes the op's arguments and inputs into a tile and resets its circular buffers.
pub fn stage(mem: &dyn DeviceMemory, tile: NocCoord, spec: &OpSpec, run: u32) -> Result<()> {
    mem.write_u32(0, tile, ARGS + arg::OP, spec.op as u32)?;
    mem.write_u32(0, tile, ARGS + arg::TILES, spec.tiles)?;
    for cb in CBS {
        mem.write_u32(0, tile, cb.control, 0)?;
        mem.write_u32(0, tile, cb.control + 4, 0)?;
    }
    let (a, b) = inputs(spec, tile, run);
    write_words(mem, tile, IN0, &a)?;
    write_words(mem, tile, IN1, &b)?;
    write_words(mem, tile, OUT, &vec![0xDEAD_BEEF; a.len()])
}

/// Compares a tile's output with the host reference; returns the first mismatch.
pub fn check(mem: &dyn DeviceMemory, tile: NocCoord, spec: &OpSpec, run: u32) -> Result<Option<String>> {
    let (a, b) = inputs(spec, tile, run);
    let mut got = vec![0u32; a.len()];
    mem.read_words(0, tile, OUT, &mut got)?;
    let mut want = vec![0u32; TILE_ELEMS];
    for t in 0..spec.tiles as usize {
        let span = t * TILE_ELEMS..(t + 1) * TILE_ELEMS;
        spec.op.reference(&a[span.clone()], &b[span.clone()], &mut want);
        if let Some(i) = (0..TILE_ELEMS).find(|&i| got[span.start + i] != want[i]) {
            return Ok(Some(format!(
                "{} on tile {tile}: output tile {t} element {i} is {:#x}, expected {:#x}",
                spec.op.name(),
                got[span.start + i],
                want[i]
            )));
        }
    }
    Ok(None)
}

/// The tensors of an op as the op report describes them.
pub fn tensors(spec: &OpSpec, cores: usize) -> (Vec<TensorDesc>, Vec<TensorDesc>) {
    let rows = 32 * spec.tiles * cores as u32;
    let t = |_: usize| TensorDesc {
        shape: [1, 1, rows, 32],
        layout: "TILE".into(),
        dtype: "UINT32".into(),
        memory: "DEV_0_L1_INTERLEAVED".into(),
    };
    let inputs = if spec.op.is_binary() { vec![t(0), t(1)] } else { vec![t(0)] };
    (inputs, vec![t(0)])
}
