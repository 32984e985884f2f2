//! Fixtures for tests of code that reads device memory and kernel ELFs, without a RISC-V
//! toolchain or an emulator: synthetic kernel ELFs, device images assembled from simulated
//! cores' L1 (`ttprof_rt::sim::Sim`), and scratch directories.
//!
//! Used by this crate's tests and by other crates' integration tests; not for production use.

use crate::error::{Error, Result};
use riscv_linker::devfile::Geometry;
use riscv_linker::{profiler, NocCoord, Risc};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

pub mod long_run;

/// A fresh, empty scratch directory under the system temp dir.
pub fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "ttprof-test-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Every file under `dir` (recursively) with its bytes, keyed by its path under `dir`.
pub fn files_under(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path.strip_prefix(dir).unwrap().to_path_buf(), bytes);
            }
        }
    }
    out
}

/// Site metadata JSON as `ttprof-rt-macros` writes it, in file `src/kernel.rs`.
pub fn site_json(kind: &str, name: &str, line: u32) -> String {
    format!(
        r#"{{"v":1,"k":"{kind}","n":"{name}","f":"src/kernel.rs","l":{line},"c":5,"p":"kernels","u":{line}}}"#
    )
}

/// What a synthetic kernel ELF contains.
#[derive(Clone, Debug)]
pub struct ElfSpec {
    /// Value of the absolute symbol `__ttprof_arch_id` (absent if `None`).
    pub(crate) arch_id: Option<u32>,
    /// Value of `__ttprof_risc_index` (absent if `None`).
    pub(crate) risc_index: Option<u32>,
    /// Site metadata, site id = index; `None` leaves out the `.ttprof_sites` section.
    pub sites: Option<Vec<String>>,
    /// `e_machine` (`object::elf::EM_RISCV` for a real kernel).
    pub machine: u16,
}

impl ElfSpec {
    /// A well-formed kernel for `risc` on `arch` with these sites.
    pub fn kernel(arch: riscv_linker::Arch, risc: Risc, sites: Vec<String>) -> ElfSpec {
        ElfSpec {
            arch_id: Some(arch.id()),
            risc_index: Some(risc.index() as u32),
            sites: Some(sites),
            machine: object::elf::EM_RISCV,
        }
    }
}

/// A minimal ELF32 little-endian executable with the sections and symbols the host reads
/// from a kernel: `.ttprof_sites` (at address 0, one byte per site), `.symtab`, `.strtab`.
pub fn kernel_elf(spec: &ElfSpec) -> Vec<u8> {
    const SHN_ABS: u16 = 0xFFF1;
    let mut strtab = vec![0u8];
    let mut name = |s: &str| {
        let at = strtab.len() as u32;
        strtab.extend_from_slice(s.as_bytes());
        strtab.push(0);
        at
    };
    let sites_index: u16 = 1;
    // (name, value, shndx)
    let mut syms: Vec<(u32, u32, u16)> = Vec::new();
    if let Some(sites) = &spec.sites {
        for (i, s) in sites.iter().enumerate() {
            syms.push((name(s), i as u32, sites_index));
        }
    }
    if let Some(a) = spec.arch_id {
        syms.push((name("__ttprof_arch_id"), a, SHN_ABS));
    }
    if let Some(r) = spec.risc_index {
        syms.push((name("__ttprof_risc_index"), r, SHN_ABS));
    }
    let mut symtab = vec![0u8; 16];
    for (n, v, shndx) in &syms {
        symtab.extend_from_slice(&n.to_le_bytes());
        symtab.extend_from_slice(&v.to_le_bytes());
        symtab.extend_from_slice(&1u32.to_le_bytes());
        symtab.push(1 << 4 | 1); // GLOBAL, OBJECT
        symtab.push(0);
        symtab.extend_from_slice(&shndx.to_le_bytes());
    }
    let site_bytes = vec![0u8; spec.sites.as_ref().map_or(0, |s| s.len())];
    let mut shstr = vec![0u8];
    let mut sh_name = |s: &str| {
        let at = shstr.len() as u32;
        shstr.extend_from_slice(s.as_bytes());
        shstr.push(0);
        at
    };
    // (name, type, link, info, entsize, data)
    let mut sections: Vec<(u32, u32, u32, u32, u32, Vec<u8>)> = Vec::new();
    let has_sites = spec.sites.is_some();
    if has_sites {
        sections.push((sh_name(".ttprof_sites"), 1, 0, 0, 0, site_bytes));
    }
    let symtab_link = sections.len() as u32 + 2; // .strtab follows .symtab
    sections.push((sh_name(".symtab"), 2, symtab_link, 1, 16, symtab));
    sections.push((sh_name(".strtab"), 3, 0, 0, 0, strtab));
    let shstr_name = sh_name(".shstrtab");
    sections.push((shstr_name, 3, 0, 0, 0, shstr.clone()));
    let mut out = vec![0u8; 52];
    let mut offsets = Vec::new();
    for s in &sections {
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
        offsets.push(out.len() as u32);
        out.extend_from_slice(&s.5);
    }
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
    let shoff = out.len() as u32;
    out.extend_from_slice(&[0u8; 40]);
    for (i, s) in sections.iter().enumerate() {
        for v in [
            s.0,
            s.1,
            0,
            0,
            offsets[i],
            s.5.len() as u32,
            s.2,
            s.3,
            if s.1 == 2 { 4 } else { 1 },
            s.4,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    let h = &mut out[..52];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 1; // 32-bit
    h[5] = 1; // little-endian
    h[6] = 1;
    h[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    h[18..20].copy_from_slice(&spec.machine.to_le_bytes());
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    h[32..36].copy_from_slice(&shoff.to_le_bytes());
    h[40..42].copy_from_slice(&52u16.to_le_bytes());
    h[42..44].copy_from_slice(&32u16.to_le_bytes());
    h[46..48].copy_from_slice(&40u16.to_le_bytes());
    h[48..50].copy_from_slice(&(sections.len() as u16 + 1).to_le_bytes());
    h[50..52].copy_from_slice(&(sections.len() as u16).to_le_bytes());
    out
}

/// Writes a synthetic kernel ELF to `path`.
pub fn write_kernel_elf(path: &Path, spec: &ElfSpec) -> Result<()> {
    std::fs::write(path, kernel_elf(spec)).map_err(|e| Error::io(path, "write kernel ELF", e))
}

/// A device image under construction: the profiler part of each tile's L1 (everything below
/// `riscv_linker::USER_L1_BASE`), the rest of L1 zero.
pub struct ImageBuilder {
    /// Arch, chips, tiles per chip, L1 size.
    pub geometry: Geometry,
    /// Every chip's tiles (NoC0), in image order.
    pub tiles: Vec<NocCoord>,
    l1: Vec<Vec<u8>>,
}

const PREFIX: usize = riscv_linker::USER_L1_BASE as usize;

impl ImageBuilder {
    /// `tiles` is every chip's tile list (the same on each chip).
    pub fn new(arch: riscv_linker::Arch, chips: u32, tiles: Vec<NocCoord>) -> ImageBuilder {
        let geometry = Geometry {
            arch,
            chips,
            tiles_per_chip: tiles.len() as u32,
            l1_size: arch.l1_size(),
        };
        let l1 = vec![vec![0u8; PREFIX]; chips as usize * tiles.len()];
        ImageBuilder {
            geometry,
            tiles,
            l1,
        }
    }

    fn slot(&mut self, chip: u32, tile: NocCoord) -> &mut Vec<u8> {
        let i = self
            .tiles
            .iter()
            .position(|t| *t == tile)
            .expect("tile of this image");
        &mut self.l1[chip as usize * self.tiles.len() + i]
    }

    /// Copies `risc`'s ring control block and ring bytes, and the tile control block, from a
    /// simulated core's L1 (`Sim::l1`) into `tile` of `chip`.
    pub fn put_ring(&mut self, chip: u32, tile: NocCoord, risc: Risc, sim_l1: &[u8]) {
        let slot = self.slot(chip, tile);
        let mut copy = |start: u32, size: u32| {
            let r = start as usize..(start + size) as usize;
            slot[r.clone()].copy_from_slice(&sim_l1[r]);
        };
        copy(profiler::TILE_BLOCK, profiler::TILE_BLOCK_SIZE);
        copy(profiler::ring_block(risc), profiler::RING_BLOCK_SIZE);
        let d = profiler::ring_data(risc);
        copy(d.start, d.size);
    }

    /// Writes one little-endian word into a tile's L1 (to corrupt control blocks in tests).
    pub fn poke(&mut self, chip: u32, tile: NocCoord, addr: u32, v: u32) {
        let slot = self.slot(chip, tile);
        slot[addr as usize..addr as usize + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// Writes the image file.
    pub fn write(&self, path: &Path) -> Result<()> {
        let g = &self.geometry;
        let io = |e| Error::io(path, "write device image", e);
        let mut header = vec![0u8; g.header_size() as usize];
        g.write_header(&mut header, &self.tiles)
            .map_err(|e| Error::Internal(format!("device image header: {e}")))?;
        let mut f = std::fs::File::create(path).map_err(io)?;
        f.write_all(&header).map_err(io)?;
        for chip in 0..g.chips {
            for t in 0..g.tiles_per_chip {
                f.seek(SeekFrom::Start(g.tile_offset(chip, t)))
                    .map_err(io)?;
                f.write_all(&self.l1[(chip * g.tiles_per_chip + t) as usize])
                    .map_err(io)?;
            }
        }
        f.set_len(g.file_size()).map_err(io)
    }
}

/// A small seeded random number generator (SplitMix64) for reproducible generated tests.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A value of `bits` random bits (`bits <= 64`).
    pub fn bits(&mut self, bits: u32) -> u64 {
        if bits >= 64 {
            self.next_u64()
        } else {
            self.next_u64() & ((1u64 << bits) - 1)
        }
    }
}
