//! Device-image headers: `riscv_linker::devfile::Geometry::read_header` on arbitrary bytes,
//! and `ttprof::devmem::MappedImage::open` of a file holding them, never panic (no overflow
//! in the size computations) and never allocate more than the fuzz limit. A header that is
//! accepted also writes back to itself, and an image that opens can be read out.
//!
//! Input: the start of an image file. When its fixed header names a geometry whose file
//! size is at most 64 MiB (computed here with checked arithmetic), the file is extended to
//! that size with zeros, so that the size check passes and the tile table and mapping are
//! reached; otherwise the file is the input as it is.
#![no_main]

use libfuzzer_sys::fuzz_target;
use riscv_linker::devfile::{field, Geometry, HEADER_FIXED, PAGE};
use riscv_linker::Arch;
use ttprof::devmem::{DeviceMemory, MappedImage};

ttprof_fuzz::limit_allocations!();

const MAX_FILE: u64 = 64 << 20;

fn word(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
}

/// The file size the fixed header describes, if it computes without overflow.
fn declared_size(data: &[u8]) -> Option<u64> {
    if data.len() < HEADER_FIXED as usize {
        return None;
    }
    let (chips, tiles) = (word(data, field::CHIPS) as u64, word(data, field::TILES_PER_CHIP) as u64);
    let arch = Arch::from_id(word(data, field::ARCH))?;
    let page = PAGE as u64;
    let n = chips.checked_mul(tiles)?;
    let header = n.checked_mul(4)?.checked_add(HEADER_FIXED as u64)?.checked_next_multiple_of(page)?;
    let stride = (word(data, field::L1_SIZE) as u64).max(arch.l1_size() as u64).checked_next_multiple_of(page)?;
    stride.checked_mul(n)?.checked_add(header)
}

fuzz_target!(|data: &[u8]| ttprof_fuzz::run(|| {
    let declared = declared_size(data);
    let _ = Geometry::read_header(data, data.len() as u64);
    if let Some(len) = declared {
        if let Ok(g) = Geometry::read_header(data, len) {
            let (header, stride, size) = (g.header_size(), g.tile_stride(), g.file_size());
            assert!(header >= HEADER_FIXED as u64 && header % PAGE as u64 == 0 && stride % PAGE as u64 == 0);
            assert_eq!(size, len, "the accepted file size is the declared one");
            if g.chips > 0 && g.tiles_per_chip > 0 {
                let last = g.tile_offset(g.chips - 1, g.tiles_per_chip - 1);
                assert_eq!(last + stride, size, "the last tile ends the file");
            }
            // Written back from its own tile table (chip 0's, the same on every chip), the
            // header reads as the same geometry. `read_header` checks the geometry only; the
            // tile table is `check_tiles`'s (which every reader calls), so only a table that
            // passes it is written back.
            if header <= 1 << 20 && g.tiles_per_chip <= 4096 {
                let tiles: Option<Vec<_>> = (0..g.tiles_per_chip).map(|t| g.tile_coord(data, 0, t)).collect();
                if let Some(tiles) = tiles.filter(|t| g.chips > 0 && g.check_tiles(0, t).is_ok()) {
                    let mut back = vec![0u8; header as usize];
                    g.write_header(&mut back, &tiles).expect("an accepted header can be written");
                    assert_eq!(Geometry::read_header(&back, size), Ok(g));
                }
            }
        }
    }

    // Reported (fuzz finding): a header with no tiles per chip and millions of chips passes
    // validation, and opening it allocates a tile list per chip.
    if ttprof_fuzz::skip_known() && data.len() >= HEADER_FIXED as usize {
        if word(data, field::TILES_PER_CHIP) == 0 && word(data, field::CHIPS) > 1 << 16 {
            return;
        }
    }
    let scratch = ttprof_fuzz::scratch();
    scratch.set(data, declared.filter(|&n| n <= MAX_FILE).unwrap_or(0));
    let Ok(image) = MappedImage::open(scratch.path(), &ttprof::inputs::Inputs::none()) else { return };
    let g = image.geometry();
    for chip in 0..g.chips.min(4) {
        let _ = image.tiles(chip);
    }
    let _ = (image.status(), image.launches(), image.device_status());
    let _ = ttprof::readout::read(&image, false);
}));
