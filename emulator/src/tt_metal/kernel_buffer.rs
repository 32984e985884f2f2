//! A program's kernels in a core's kernel configuration buffer: where each is linked, and
//! the check that their images lie in the buffer without touching each other.
//!
//! The buffer holds, from its start, the runtime arguments, semaphores and circular buffer
//! configurations (to [`BRISC_TEXT`]), then the kernels' images packed by size in
//! [`Risc`] order, each at a 16-byte boundary: BRISC's, NCRISC's, TRISC0's, TRISC1's,
//! TRISC2's (a compute kernel's three parts), as tt-metal's host packs them. tt-metal's host
//! relocates each kernel to its place; ours links each there instead
//! ([`packed_text_bases`]: a host links the kernels once, asks, and links again those
//! whose place moved), so the code that runs is at the addresses its ELF names. BRISC's is
//! always first. On Wormhole B0 NCRISC's kernel is linked in its instruction RAM: its image
//! takes its place in the buffer all the same (the firmware copies it from there).
//!
//! Kernels linked anywhere else in the buffer are taken as long as no two images overlap
//! and each lies in the buffer: a program from an older build, linked in fixed slots
//! ([`trisc_text_base`], [`ncrisc_text_base`]), still runs.

use super::program::ProgramKernel;
use crate::{EmuError, Risc};
use riscv_linker::tt_metal;
use riscv_linker::Arch;

/// Offset of BRISC's kernel text, the first kernel's: a BRISC kernel of a program is
/// linked at `KERNEL_CONFIG_BASE + BRISC_TEXT` ([`brisc_text_base`]).
pub const BRISC_TEXT: u32 = 0x1000;
/// Offset where Blackhole NCRISC's kernel is linked before the kernels are packed
/// ([`ncrisc_text_base`]).
pub const NCRISC_TEXT: u32 = 0x4C00;
/// Offset where TRISC0's part is linked before the kernels are packed; TRISC1's and
/// TRISC2's follow at [`TRISC_SLOT`] ([`trisc_text_base`]).
pub const TRISC_TEXT: u32 = 0x8800;
/// Bytes between the TRISCs' places before packing.
pub const TRISC_SLOT: u32 = 0x2C00;
/// Alignment of each kernel's place in the buffer (`L1_ALIGNMENT`).
pub const KERNEL_ALIGN: u32 = 16;
const _: () = assert!(BRISC_TEXT < NCRISC_TEXT && NCRISC_TEXT < TRISC_TEXT);
const _: () = assert!(TRISC_TEXT + 3 * TRISC_SLOT <= tt_metal::KERNEL_CONFIG_SIZE);

/// The start of `arch`'s kernel configuration buffer.
pub(super) const fn config_base(arch: Arch) -> u32 {
    tt_metal::l1_map(arch).kernel_config.start
}

/// Where a BRISC kernel of a program is linked on `arch`: its text is written there, and
/// the launch message's text offset points at it.
pub const fn brisc_text_base(arch: Arch) -> u32 {
    config_base(arch) + BRISC_TEXT
}

/// Where an NCRISC kernel is linked on `arch` before packing. Wormhole: the start of
/// NCRISC's instruction RAM (`MEM_NCRISC_KERNEL_BASE`), where it stays; its image is written
/// into the buffer after BRISC's (its entry finds its data image from the offset the
/// firmware passes). Blackhole: [`NCRISC_TEXT`] in the buffer, where it runs.
pub const fn ncrisc_text_base(arch: Arch) -> u32 {
    match arch.ncrisc_iram() {
        Some((iram, _)) => iram,
        None => config_base(arch) + NCRISC_TEXT,
    }
}

/// Where TRISC `n`'s part of a compute kernel is linked on `arch` before packing (0, 1, 2:
/// unpack, math, pack).
pub const fn trisc_text_base(arch: Arch, n: u32) -> u32 {
    config_base(arch) + TRISC_TEXT + n * TRISC_SLOT
}

/// Where the kernel for `risc` is linked on `arch` before packing ([`brisc_text_base`],
/// [`ncrisc_text_base`], [`trisc_text_base`]).
pub const fn text_base(arch: Arch, risc: Risc) -> u32 {
    match risc {
        Risc::Brisc => brisc_text_base(arch),
        Risc::Ncrisc => ncrisc_text_base(arch),
        _ => trisc_text_base(arch, risc.index() as u32 - 2),
    }
}

/// Where each of `kernels` (a program's, at most one per RISC) is to be linked on `arch` so
/// that their images lie packed in the kernel configuration buffer, in the order of
/// `kernels`: BRISC's at [`brisc_text_base`], then each next one in [`Risc`] order at the
/// first 16-byte boundary after the one before (Wormhole's NCRISC: its instruction RAM, its
/// image at that place). Sizes are the images' as linked now; a kernel linked again at
/// another address keeps its size. Whether they fit is [`super::program::check`]'s to say.
pub fn packed_text_bases(arch: Arch, kernels: &[ProgramKernel<'_>]) -> Result<Vec<u32>, EmuError> {
    let images = kernels.iter().map(image).collect::<Result<Vec<_>, _>>()?;
    let mut order: Vec<usize> = (0..kernels.len()).collect();
    order.sort_by_key(|&j| kernels[j].risc.index());
    let mut bases = vec![0; kernels.len()];
    let mut at = brisc_text_base(arch);
    for j in order {
        let img = &images[j];
        bases[j] = match (kernels[j].risc, arch.ncrisc_iram()) {
            (Risc::Ncrisc, Some((iram, _))) => iram,
            _ => at,
        };
        at = u32::try_from(place_after(u64::from(at) + img.len())).unwrap_or(u32::MAX);
    }
    Ok(bases)
}

/// The place of the image after one that ends at `end`: the next [`KERNEL_ALIGN`] boundary
/// (where [`packed_text_bases`] links a kernel, and where [`place`] puts Wormhole NCRISC's
/// image, which must agree).
fn place_after(end: u64) -> u64 {
    end.div_ceil(u64::from(KERNEL_ALIGN)) * u64::from(KERNEL_ALIGN)
}

/// A kernel's loadable segments and entry.
pub(super) struct Image {
    /// Each segment's load address (where it is written) and bytes.
    pub segments: Vec<(u32, Vec<u8>)>,
    /// The entry: the start of the text.
    pub entry: u32,
}

/// `k`'s image, read from its ELF.
pub(super) fn image(k: &ProgramKernel<'_>) -> Result<Image, EmuError> {
    use object::{Object, ObjectSegment};
    let err = |reason: String| EmuError::Elf {
        file: k.name.clone(),
        reason,
    };
    let file = object::File::parse(k.elf).map_err(|e| err(format!("not an ELF file: {e}")))?;
    if file.architecture() != object::Architecture::Riscv32 {
        return Err(err("not a 32-bit RISC-V ELF".into()));
    }
    let mut segments = Vec::new();
    for seg in file.segments() {
        let data = seg.data().map_err(|e| err(format!("segment: {e}")))?;
        if data.is_empty() {
            continue;
        }
        // Written where it is loaded from (the LMA): text in the buffer, the data image
        // behind it (the entry copies it into local memory, `do_crt1`).
        let addr = segment_lma(k.elf, seg.address()).unwrap_or(seg.address());
        segments.push((addr as u32, data.to_vec()));
    }
    Ok(Image {
        segments,
        entry: file.entry() as u32,
    })
}

/// The load address of the segment at virtual address `vaddr` (ELF program headers'
/// `p_paddr`).
fn segment_lma(bytes: &[u8], vaddr: u64) -> Option<u64> {
    use object::read::elf::{ElfFile32, ProgramHeader};
    let elf = ElfFile32::<object::Endianness>::parse(bytes).ok()?;
    let endian = elf.endian();
    elf.elf_program_headers()
        .iter()
        .find(|p| u64::from(p.p_vaddr(endian)) == vaddr && p.p_filesz(endian) > 0)
        .map(|p| u64::from(p.p_paddr(endian)))
}

impl Image {
    /// Bytes of the segment loaded at the entry (the text).
    pub fn text_len(&self) -> u32 {
        self.segments
            .iter()
            .find(|(a, _)| *a == self.entry)
            .map_or(0, |(_, d)| d.len() as u32)
    }

    /// The lowest load address (the entry when there are no segments).
    pub fn start(&self) -> u32 {
        self.segments
            .iter()
            .map(|(a, _)| *a)
            .min()
            .unwrap_or(self.entry)
    }

    /// One past the last byte the image loads (past 4 GiB for a segment that would wrap).
    pub fn end(&self) -> u64 {
        self.segments
            .iter()
            .map(|(a, d)| u64::from(*a) + d.len() as u64)
            .max()
            .unwrap_or(u64::from(self.entry))
    }

    /// Bytes from the lowest load address to [`Image::end`].
    fn len(&self) -> u64 {
        self.end() - u64::from(self.start())
    }

    /// Checks Wormhole NCRISC's kernel: linked at the start of its instruction RAM, its
    /// text no larger than the RAM, nothing loaded before the text.
    fn check_iram(&self, k: &ProgramKernel<'_>, iram: u32, iram_size: u32) -> Result<(), EmuError> {
        let err = |reason: String| EmuError::Elf {
            file: k.name.clone(),
            reason,
        };
        if self.entry != iram {
            return Err(err(format!(
                "entry {:#x}: an NCRISC kernel is linked at {iram:#x}, NCRISC's instruction RAM",
                self.entry,
            )));
        }
        let text = self.text_len();
        if text > iram_size {
            return Err(err(format!(
                "{text} bytes of text: NCRISC's instruction RAM holds {iram_size}"
            )));
        }
        if let Some((addr, _)) = self.segments.iter().find(|(a, _)| *a < iram) {
            return Err(err(format!(
                "a segment loaded at {addr:#x}, before the text at {iram:#x}"
            )));
        }
        Ok(())
    }
}

/// Checks where `kernels`' `images` lie in `arch`'s kernel configuration buffer: BRISC's
/// linked at [`brisc_text_base`], Wormhole NCRISC's in its instruction RAM, every image
/// (Wormhole NCRISC's at its place after BRISC's) inside the buffer from [`BRISC_TEXT`], no
/// two overlapping. Returns where Wormhole NCRISC's image goes (`None` without one, or on
/// Blackhole, where NCRISC's runs where it is linked).
pub(super) fn place(
    kernels: &[ProgramKernel<'_>],
    images: &[Image],
    arch: Arch,
) -> Result<Option<u32>, EmuError> {
    let buffer = tt_metal::l1_map(arch).kernel_config;
    let (room, end) = (brisc_text_base(arch), buffer.end());
    let need: u64 = images.iter().map(Image::len).sum();
    let mut spans = Vec::with_capacity(kernels.len());
    let mut ncrisc_at = None;
    for (j, (k, img)) in kernels.iter().zip(images).enumerate() {
        let err = |reason: String| EmuError::Elf {
            file: k.name.clone(),
            reason,
        };
        let (start, len) = match (k.risc, arch.ncrisc_iram()) {
            (Risc::Ncrisc, Some((iram, iram_size))) => {
                img.check_iram(k, iram, iram_size)?;
                let after = kernels
                    .iter()
                    .zip(images)
                    .find(|(k, _)| k.risc == Risc::Brisc)
                    .map_or(u64::from(room), |(_, img)| img.end());
                (place_after(after), img.end() - u64::from(iram))
            }
            (risc, _) => {
                if risc == Risc::Brisc && img.entry != room {
                    return Err(err(format!(
                        "entry {:#x}: a BRISC kernel of a program is linked at {room:#x} (the \
                         kernel configuration buffer {:#x} + {BRISC_TEXT:#x})",
                        img.entry, buffer.start,
                    )));
                }
                (u64::from(img.start()), img.len())
            }
        };
        if start < u64::from(room) || start + len > end {
            return Err(err(format!(
                "its image [{start:#x}, {:#x}) lies outside [{room:#x}, {end:#x}), the kernel \
                 configuration buffer's room for kernels ({} bytes; the program's kernels \
                 take {need})",
                start + len,
                end - u64::from(room),
            )));
        }
        if k.risc == Risc::Ncrisc && arch.ncrisc_iram().is_some() {
            ncrisc_at = Some(start as u32);
        }
        spans.push((start, start + len, j));
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        let ((s0, e0, a), (s1, e1, b)) = (w[0], w[1]);
        if s1 < e0 {
            return Err(EmuError::Elf {
                file: kernels[b].name.clone(),
                reason: format!(
                    "its image [{s1:#x}, {e1:#x}) overlaps {}'s [{s0:#x}, {e0:#x}) in the kernel \
                     configuration buffer: link each kernel where `packed_text_bases` places it",
                    kernels[a].name
                ),
            });
        }
    }
    Ok(ncrisc_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(risc: Risc, name: &str) -> ProgramKernel<'static> {
        ProgramKernel {
            risc,
            elf: &[],
            name: name.into(),
            args: vec![],
            common_args: vec![],
        }
    }

    fn img(segments: &[(u32, usize)]) -> Image {
        Image {
            segments: segments.iter().map(|&(a, n)| (a, vec![0; n])).collect(),
            entry: segments[0].0,
        }
    }

    const ARCH: Arch = Arch::Blackhole;

    #[test]
    fn images_packed_one_after_another_are_taken_anywhere_in_the_buffer() {
        let b = brisc_text_base(ARCH);
        let ks = [kernel(Risc::Brisc, "w"), kernel(Risc::Trisc0, "u")];
        // BRISC's 40,000 bytes: past the 30 KiB a fixed slot gave it.
        let ims = [img(&[(b, 40_000)]), img(&[(b + 40_000, 9_000)])];
        assert_eq!(place(&ks, &ims, ARCH).unwrap(), None);
    }

    #[test]
    fn overlapping_images_are_refused_naming_both() {
        let b = brisc_text_base(ARCH);
        let ks = [kernel(Risc::Brisc, "w"), kernel(Risc::Ncrisc, "r")];
        let ims = [img(&[(b, 0x100)]), img(&[(b + 0xF0, 0x100)])];
        let e = place(&ks, &ims, ARCH).unwrap_err().to_string();
        assert!(e.contains("r:") && e.contains("overlaps w's"), "{e}");
    }

    #[test]
    fn an_image_past_the_buffer_or_wrapping_past_4_gib_is_refused() {
        let b = brisc_text_base(ARCH);
        let end = tt_metal::l1_map(ARCH).kernel_config.end() as u32;
        let ks = [kernel(Risc::Brisc, "w")];
        let e = place(&ks, &[img(&[(b, (end - b) as usize + 1)])], ARCH)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("lies outside") && e.contains("room for kernels"),
            "{e}"
        );
        // A second segment whose end wraps past 2^32 is not a short image.
        let e = place(&ks, &[img(&[(b, 16), (0xFFFF_FFF0, 0x20)])], ARCH)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lies outside"), "{e}");
    }

    #[test]
    fn a_brisc_kernel_not_at_its_place_is_refused() {
        let b = brisc_text_base(ARCH);
        let ks = [kernel(Risc::Brisc, "w")];
        let e = place(&ks, &[img(&[(b + 16, 16)])], ARCH)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a BRISC kernel of a program is linked at"),
            "{e}"
        );
    }
}
