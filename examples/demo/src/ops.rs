//! The ops the demo launches, their inputs in DRAM, and the check of their outputs.
//!
//! Every tensor of an op is one interleaved DRAM buffer with a page per tile (tt-metal's
//! layout: page `p` in bank `p % banks`), at the bank addresses [`DRAM_IN0`], [`DRAM_IN1`]
//! and [`DRAM_OUT`]. Core `k` of the op (device order) owns pages `k * tiles..(k + 1) *
//! tiles` of each: its reader reads those of the inputs over the NoC and its writer writes
//! those of the output back.

use example_abi::{
    arg, Op, ARGS, CBS, DRAM_BUFFER_PAGES_PER_BANK, DRAM_IN0, DRAM_IN1, DRAM_OUT, MAX_TILES,
    TILE_BYTES, TILE_ELEMS,
};
use riscv_linker::NocCoord;
use ttprof::devmem::DeviceMemory;
use ttprof::oplog::TensorDesc;
use ttprof::session::Session;
use ttprof::{Error, Result};

/// One op of the sequence.
#[derive(Clone, Copy, Debug)]
pub struct OpSpec {
    /// What the op computes.
    pub op: Op,
    /// Tiles each core streams through the op.
    pub tiles: u32,
}

/// The demo's sequence: at least three ops of different shapes.
pub fn sequence(tiles: u32) -> Vec<OpSpec> {
    vec![
        OpSpec { op: Op::Add, tiles },
        OpSpec {
            op: Op::Matmul,
            tiles: tiles.div_ceil(2),
        },
        OpSpec {
            op: Op::Relu,
            tiles,
        },
        OpSpec { op: Op::Mul, tiles },
    ]
}

/// Deterministic BF16 input values for a tile of the device (xorshift): either sign, every
/// mantissa, exponents 2^-6..2^6, so that no product, sum or chain of the demo's ops comes
/// near a denormal or an overflow (which the Matrix Unit does not handle as IEEE 754 does).
fn input(seed: u32, n: usize) -> Vec<u16> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let exp = 121 + (x >> 8) % 13;
            ((x >> 31) << 15 | exp << 7 | (x & 0x7f)) as u16
        })
        .collect()
}

/// The inputs one core streams: `spec.tiles` tiles of each input.
fn core_inputs(spec: &OpSpec, tile: NocCoord, run: u32) -> (Vec<u16>, Vec<u16>) {
    let n = spec.tiles as usize * TILE_ELEMS;
    let seed = run << 16 | (tile.x as u32) << 8 | tile.y as u32;
    (input(seed, n), input(seed ^ 0xABCD, n))
}

/// Both input tensors of an op on `tiles`: every core's slice, in core order.
pub fn inputs(spec: &OpSpec, tiles: &[NocCoord], run: u32) -> (Vec<u16>, Vec<u16>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for t in tiles {
        let (x, y) = core_inputs(spec, *t, run);
        a.extend(x);
        b.extend(y);
    }
    (a, b)
}

/// Whether `spec` fits the kernels and the DRAM buffers on `cores` cores; the error says why not.
pub fn check_shape(spec: &OpSpec, cores: usize) -> Result<()> {
    if spec.tiles == 0 || spec.tiles > MAX_TILES {
        return Err(Error::Other(format!(
            "{}: {} tiles per core; the example kernels take 1 to {MAX_TILES}",
            spec.op.name(),
            spec.tiles
        )));
    }
    // The smallest bank count (Blackhole's 8) bounds the pages a buffer may have.
    let pages = spec.tiles as u64 * cores as u64;
    if pages > DRAM_BUFFER_PAGES_PER_BANK as u64 * 8 {
        return Err(Error::Other(format!(
            "{}: {pages} tiles in all do not fit the demo's DRAM buffers ({} pages per bank)",
            spec.op.name(),
            DRAM_BUFFER_PAGES_PER_BANK
        )));
    }
    Ok(())
}

/// Writes the op's arguments into a tile, whose place among the op's tiles is `core` (its
/// slice of the tensors starts at page `core * tiles`), and resets its circular buffers.
pub fn stage(mem: &dyn DeviceMemory, tile: NocCoord, core: u32, spec: &OpSpec) -> Result<()> {
    for (word, v) in [
        (arg::OP, spec.op as u32),
        (arg::TILES, spec.tiles),
        (arg::FIRST_PAGE, core * spec.tiles),
        (arg::PAGE_BYTES, TILE_BYTES),
        (arg::IN0, DRAM_IN0),
        (arg::IN1, DRAM_IN1),
        (arg::OUT, DRAM_OUT),
    ] {
        mem.write_u32(0, tile, ARGS + word, v)?;
    }
    for cb in CBS {
        mem.write_u32(0, tile, cb.control, 0)?;
        mem.write_u32(0, tile, cb.control + 4, 0)?;
    }
    Ok(())
}

fn bytes(datums: &[u16]) -> Vec<u8> {
    datums.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Fills the op's DRAM buffers from the host: the operands `a` and `b` (every core's slice,
/// in core order; `b` only for a binary op), and the output with a pattern no op produces
/// from these inputs (`0xDEAD`, a BF16 far beyond their range), so a tile left unwritten
/// shows.
pub fn fill_dram(session: &mut Session, spec: &OpSpec, a: &[u16], b: &[u16]) -> Result<()> {
    session.write_dram_interleaved(DRAM_IN0, TILE_BYTES, &bytes(a))?;
    if spec.op.is_binary() {
        session.write_dram_interleaved(DRAM_IN1, TILE_BYTES, &bytes(b))?;
    }
    session.write_dram_interleaved(DRAM_OUT, TILE_BYTES, &bytes(&vec![0xDEAD; a.len()]))
}

/// Reads the op's output back from DRAM and compares it with the host reference of its
/// operands `a` and `b`: the output (what a later op may consume) or the first mismatch.
pub fn check(
    session: &Session,
    spec: &OpSpec,
    tiles: &[NocCoord],
    a: &[u16],
    b: &[u16],
) -> Result<std::result::Result<Vec<u16>, String>> {
    let raw = session.read_dram_interleaved(0, DRAM_OUT, TILE_BYTES, a.len() * 2)?;
    let got: Vec<u16> = raw
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    Ok(match compare(spec, tiles, a, b, &got) {
        Some(mismatch) => Err(mismatch),
        None => Ok(got),
    })
}

/// The first datum of `got` (the output tensor) whose bits differ from `op(a, b)` (the
/// host reference, [`example_abi::bf16`]), named by the core that wrote it, its tile and
/// the datum.
pub fn compare(
    spec: &OpSpec,
    tiles: &[NocCoord],
    a: &[u16],
    b: &[u16],
    got: &[u16],
) -> Option<String> {
    if got.len() != a.len() {
        return Some(format!(
            "{}: the output has {} datums, expected {}",
            spec.op.name(),
            got.len(),
            a.len()
        ));
    }
    let mut want = vec![0u16; TILE_ELEMS];
    for (page, ((x, y), g)) in a
        .chunks(TILE_ELEMS)
        .zip(b.chunks(TILE_ELEMS))
        .zip(got.chunks(TILE_ELEMS))
        .enumerate()
    {
        spec.op.reference(x, y, &mut want);
        if let Some(i) = (0..TILE_ELEMS).find(|&i| g[i] != want[i]) {
            let core = tiles[page / spec.tiles as usize];
            return Some(format!(
                "{} on tile {core}: output tile {} (DRAM page {page}) datum {i} is {:#06x}, expected {:#06x}",
                spec.op.name(),
                page % spec.tiles as usize,
                g[i],
                want[i]
            ));
        }
    }
    None
}

/// The tensors of an op as the op report describes them.
pub fn tensors(spec: &OpSpec, cores: usize) -> (Vec<TensorDesc>, Vec<TensorDesc>) {
    let rows = 32 * spec.tiles * cores as u32;
    let t = |_: usize| TensorDesc {
        id: None,
        shape: [1, 1, rows, 32],
        layout: "TILE".into(),
        dtype: "BFLOAT16".into(),
        memory: "DEV_0_DRAM_INTERLEAVED".into(),
    };
    let inputs = if spec.op.is_binary() {
        vec![t(0), t(1)]
    } else {
        vec![t(0)]
    };
    (inputs, vec![t(0)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_check_names_the_first_wrong_element_and_its_tile() {
        let spec = OpSpec {
            op: Op::Add,
            tiles: 2,
        };
        let tiles = [NocCoord::new(1, 1), NocCoord::new(2, 1)];
        let (a, b) = inputs(&spec, &tiles, 3);
        assert_eq!(a.len(), 4 * TILE_ELEMS);
        let mut want = vec![0u16; a.len()];
        for ((x, y), o) in a
            .chunks(TILE_ELEMS)
            .zip(b.chunks(TILE_ELEMS))
            .zip(want.chunks_mut(TILE_ELEMS))
        {
            spec.op.reference(x, y, o);
        }
        assert_eq!(compare(&spec, &tiles, &a, &b, &want), None);
        let mut bad = want.clone();
        bad[3 * TILE_ELEMS + 5] ^= 1;
        let msg = compare(&spec, &tiles, &a, &b, &bad).unwrap();
        assert!(
            msg.contains("tile (2,1)") && msg.contains("output tile 1 (DRAM page 3) datum 5"),
            "{msg}"
        );
        let short = &want[..want.len() - 1];
        assert!(compare(&spec, &tiles, &a, &b, short)
            .unwrap()
            .contains("4095 datums, expected 4096"));
    }

    #[test]
    fn shapes_beyond_the_kernels_or_the_buffers_are_refused() {
        assert!(check_shape(
            &OpSpec {
                op: Op::Relu,
                tiles: 4
            },
            4
        )
        .is_ok());
        assert!(check_shape(
            &OpSpec {
                op: Op::Relu,
                tiles: 0
            },
            4
        )
        .is_err());
        let msg = check_shape(
            &OpSpec {
                op: Op::Relu,
                tiles: MAX_TILES + 1,
            },
            4,
        )
        .unwrap_err()
        .to_string();
        assert!(msg.contains("1 to 16"), "{msg}");
        assert!(check_shape(
            &OpSpec {
                op: Op::Relu,
                tiles: MAX_TILES
            },
            100_000
        )
        .is_err());
    }
}
