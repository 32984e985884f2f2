//! Device memory: the one interface through which the host reads and writes tiles' L1.
//!
//! [`DeviceMemory`] is shaped like a PCIe TLB window: 32-bit reads and writes at
//! `(chip, NoC0 tile, L1 address)`, and a count of the bytes read so a readout can report
//! its bus cost. Backends:
//!
//! * [`MappedImage`]: the emulator's file-backed device image, mapped with memmap2 and
//!   accessed with volatile 32-bit loads and stores only (as a real BAR must be).
//! * [`Snapshot`]: a recorded copy of the device memory a readout needed, saved to a file so
//!   the readout can be replayed offline. [`Recorder`] wraps any backend and records what it
//!   reads.
//! * `EmuMemory` (feature `emulator`): the in-process emulator, L1 and the debug
//!   timestamper's registers (the image file holds only L1).
//! * [`TtKmd`]: a real card through tt-kmd (`/dev/tenstorrent/N`, short form `tt:N`), see
//!   [`ttkmd`].
//!
//! Clock synchronisation samples come through the sibling trait [`DeviceClock`], so that a
//! backend can offer memory without clocks (a snapshot without samples) and the other way
//! round.

#[cfg(feature = "emulator")]
mod emu;
mod loss_record;
mod mailbox;
mod mapped;
mod posted;
mod recorder;
mod snapshot;
mod sync_record;
pub mod ttkmd;

#[cfg(feature = "emulator")]
pub use emu::EmuMemory;
pub use mapped::MappedImage;
pub use posted::PostedState;
pub use recorder::Recorder;
pub use snapshot::{Extent, Snapshot, SNAPSHOT_MAGIC, SNAPSHOT_VERSION};
pub use sync_record::ClockRecorder;
pub use ttkmd::{is_card, list_cards, parse_spec, render_cards, DeviceSpec, TtKmd};

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use riscv_linker::devfile::Geometry;
use riscv_linker::NocCoord;
use std::collections::HashMap;
use std::path::Path;

/// The most bytes of a ring's drained payload [`DeviceMemory::drained_payload`] hands on
/// at once.
pub const DRAINED_PIECE: usize = 1 << 20;

/// Device memory of one or more chips, read and written in 32-bit words.
///
/// Addresses are L1 byte addresses as every core of the tile sees them; they must be 4-byte
/// aligned and inside the arch's L1. Implementations count every byte they read.
pub trait DeviceMemory: Send + Sync {
    /// Arch, number of chips, tiles per chip, L1 size.
    fn geometry(&self) -> Geometry;

    /// The NoC0 coordinates of `chip`'s tiles, in image order; empty for a chip that does
    /// not exist.
    fn tiles(&self, chip: u32) -> Vec<NocCoord>;

    /// One 32-bit word.
    fn read_u32(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32>;

    /// Writes one 32-bit word.
    fn write_u32(&self, chip: u32, tile: NocCoord, addr: u32, v: u32) -> Result<()>;

    /// Lets later [`DeviceMemory::write_u32`] calls write the `bytes` of every tile's L1
    /// from `addr` (a sample buffer the user named, `ttprof capture --sample`). Memory that
    /// takes any L1 write already (the emulator's) has nothing to do; a card writes only
    /// its rings' consumer words unless told.
    fn allow_l1_writes(&self, addr: u32, bytes: u32) -> Result<()> {
        let _ = (addr, bytes);
        Ok(())
    }

    /// How many more register writes can be posted without waiting, for memory that queues
    /// them for another process (an emulator's image); `None`: writes never wait for room.
    fn posted_room(&self) -> Option<u32> {
        None
    }

    /// `out.len()` consecutive words starting at `addr`.
    fn read_words(&self, chip: u32, tile: NocCoord, addr: u32, out: &mut [u32]) -> Result<()> {
        for (i, w) in out.iter_mut().enumerate() {
            *w = self.read_u32(chip, tile, addr + 4 * i as u32)?;
        }
        Ok(())
    }

    /// Total bytes read through this backend so far (the device-bus cost).
    fn bytes_read(&self) -> u64;

    /// A short description for messages, e.g. `device image /tmp/dev.img`.
    fn describe(&self) -> String;

    /// The payload a consumer drained from this ring (its decoded bytes up to `TAIL`) before
    /// this memory was recorded: a snapshot of a drained run keeps it so that a readout of
    /// the snapshot still sees every record. Handed to `piece` in order, a piece of at most
    /// [`DRAINED_PIECE`] bytes at a time (a piece may end inside a record), so a long ring's
    /// payload is never held whole. `Ok(false)`: none (live memory).
    fn drained_payload(
        &self,
        _chip: u32,
        _tile: NocCoord,
        _risc: riscv_linker::Risc,
        _piece: &mut dyn FnMut(&[u8]),
    ) -> std::io::Result<bool> {
        Ok(false)
    }

    /// How many bytes [`DeviceMemory::drained_payload`] hands on for this ring (0: none), so
    /// that the reader can make room for its records once.
    fn drained_payload_len(&self, _chip: u32, _tile: NocCoord, _risc: riscv_linker::Risc) -> u64 {
        0
    }

    /// Data problems of the recording that the memory does not show (a snapshot's record
    /// of the timestamper backend's loss): every readout of this memory reports them.
    fn recorded_issues(&self) -> Vec<crate::issue::Issue> {
        Vec::new()
    }

    /// The device side's run status (`riscv_linker::devfile::STATUS_*` bits), where the
    /// backend knows it (the emulator's image): a readout tells a kernel still running from
    /// one stopped by a fault.
    fn device_status(&self) -> Option<u32> {
        None
    }

    /// Claims the device's one consumer role (a reader that frees what it read): an error
    /// naming the memory when another consumer holds it. Backends without a notion of it
    /// grant it.
    fn claim_consumer(&self) -> Result<()> {
        Ok(())
    }

    /// Claims the device's one sampler role (the host arming and reading the tiles' debug
    /// daisychains): an error naming the memory when another sampler holds it. Backends
    /// without a notion of it grant it.
    fn claim_sampler(&self) -> Result<()> {
        Ok(())
    }

    /// Checks the memory is all still there before a drain touches it (a mapped file
    /// truncated under the reader would otherwise kill it with SIGBUS).
    fn check(&self) -> Result<()> {
        Ok(())
    }
}

/// One clock synchronisation sample: host time just before the read, the device wall clock
/// the read returned, host time just after. The device time lies within the bracket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncSample {
    /// Host time (ns, the host's monotonic clock) just before the read.
    pub host_before_ns: u64,
    /// The tile's wall clock (device cycles) the read returned.
    pub device_cycles: u64,
    /// Host time (ns) just after the read.
    pub host_after_ns: u64,
}

impl SyncSample {
    /// Width of the host-time bracket: the uncertainty of this sample.
    pub(crate) fn bracket_ns(&self) -> u64 {
        self.host_after_ns.saturating_sub(self.host_before_ns)
    }
}

/// A [`SyncSample`] and the tile it was taken on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileSample {
    /// Chip the sample was taken on.
    pub chip: u32,
    /// Its tile (NoC0).
    pub tile: NocCoord,
    /// The sample.
    pub sample: SyncSample,
}

/// Device clocks, sampled against host time (for clock alignment). Separate from
/// [`DeviceMemory`] because not every backend has live clocks. Implementations:
///
/// * [`MappedImage`]: asks the emulator process through the image's clock mailbox
///   (`riscv_linker::devfile::mailbox`); times are the emulator's virtual host time.
/// * [`Snapshot`]: replays the samples it recorded, per tile in recorded order
///   ([`ClockRecorder`] records them).
/// * [`TtKmd`]: brackets one `WALL_CLOCK_L` read with `CLOCK_MONOTONIC_RAW`.
/// * `ttprof::clock::EmuClock`: an in-process emulator `Device`, directly.
pub trait DeviceClock: Send + Sync {
    /// Takes one sample of `tile`'s wall clock on `chip`.
    fn sync_sample(&self, chip: u32, tile: NocCoord) -> Result<SyncSample>;

    /// Lets `ns` of host time pass before the next sample (to spread a sync window). Real
    /// hardware sleeps; the emulator advances its virtual host time instead; a replay has
    /// nothing to wait for.
    fn wait_ns(&self, ns: u64) -> Result<()> {
        std::thread::sleep(std::time::Duration::from_nanos(ns));
        Ok(())
    }
}

/// What a device-memory file should be, for messages.
pub(crate) const DEVICE_FILE: &str = "device memory (a device image or a snapshot)";

/// The two kinds of device-memory file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// The emulator's device image (`TTDEVMEM`): live device memory.
    Image,
    /// A [`Snapshot`] (`TTSNAP`): a recording.
    Snapshot,
}

/// Tells the kinds apart by their magic. A JSON-lines file (an op log given as device
/// memory) is named as such. Only a regular file is opened: a FIFO (whose `open` blocks
/// until a writer appears) or a device is refused first.
pub fn file_kind(path: &Path, inputs: &Inputs) -> Result<FileKind> {
    use std::io::Read;
    if is_card(path) {
        parse_spec(path)?;
        return Err(Error::Unsupported(format!(
            "{} is a card (tt-kmd), not a device image or snapshot file: this command reads files only",
            path.display()
        )));
    }
    let (f, _) =
        crate::files::open_regular(path, DEVICE_FILE, "open device memory file", false, inputs)?;
    let mut head = Vec::new();
    // Enough to skip the blank space an op log may start with.
    f.take(4096)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, "read device memory file", e))?;
    if head.starts_with(&riscv_linker::devfile::MAGIC) {
        Ok(FileKind::Image)
    } else if head.starts_with(&SNAPSHOT_MAGIC) {
        Ok(FileKind::Snapshot)
    } else if let Some((what, hint)) = other_kind(&head) {
        Err(Error::BadFile {
            path: path.into(),
            what: format!(
                "{what}, not device memory (expected a device image or a snapshot){hint}"
            ),
        })
    } else {
        Err(Error::BadFile {
            path: path.into(),
            what: format!(
                "starts with {:02x?}: expected a device image (\"TTDEVMEM\") or a snapshot (\"TTSNAP\\0\\0\")",
                &head[..head.len().min(8)]
            ),
        })
    }
}

/// What a file that is not device memory is, by its first bytes: another of ttprof's
/// inputs or outputs given as `--device` (`None` when it cannot be told).
fn other_kind(head: &[u8]) -> Option<(&'static str, &'static str)> {
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    let text = &head[start..];
    let first = text.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let has = |s: &[u8]| first.windows(s.len()).any(|w| w == s);
    if text.starts_with(b"{") && (has(b"\"op\"") || has(b"\"signpost\"")) {
        return Some((
            "looks like an op log (JSON lines)",
            ": did you swap --device and --oplog?",
        ));
    }
    Some((
        if text.starts_with(b"{") || text.starts_with(b"[") {
            "is a JSON file (an analysis or trace?)"
        } else if text.starts_with(b"ARCH:") {
            "is a device profiler log (profile_log_device.csv; `ttprof diff` reads it)"
        } else if text.starts_with(b"OP CODE") {
            "is an op report (ops_perf_results CSV; `ttprof diff` reads it)"
        } else if text.starts_with(b"\x7fELF") {
            "is an ELF file (a kernel?)"
        } else if text.starts_with(b"PAR1") {
            "is a Parquet file"
        } else if std::str::from_utf8(first).is_ok() && has(b",") && !first.contains(&0) {
            "is a CSV (comma-separated text) file"
        } else {
            return None;
        },
        "",
    ))
}

/// Device memory that also has live clocks: a device image (its clock mailbox) or a card.
pub trait LiveDevice: DeviceMemory + DeviceClock {}
impl<T: DeviceMemory + DeviceClock> LiveDevice for T {}

/// Opens a device-memory file of either kind, or a card: a device image is mapped
/// (read-write, or read-only when `writable` is false), a snapshot is loaded into memory,
/// a card (`/dev/tenstorrent/N`, `tt:N`, see [`ttkmd`]) is opened through tt-kmd (writing
/// only its consumer words, and only when `writable`). Anything else but a regular file is
/// refused before it is opened. A file is noted in `inputs` (the command's input guard).
pub fn open(path: &Path, writable: bool, inputs: &Inputs) -> Result<Box<dyn DeviceMemory>> {
    if let DeviceSpec::Card {
        path,
        index,
        options,
    } = parse_spec(path)?
    {
        return ttkmd::open_memory(&path, index, &options, writable, inputs);
    }
    Ok(match file_kind(path, inputs)? {
        FileKind::Image if writable => Box::new(MappedImage::open(path, inputs)?),
        FileKind::Image => Box::new(MappedImage::open_read_only(path, inputs)?),
        FileKind::Snapshot => Box::new(Snapshot::load(path, inputs)?),
    })
}

/// Opens live device memory with clocks: a device image (read-write; its clocks through the
/// emulator's mailbox) or a card. A snapshot has no live clocks and is refused.
pub fn open_live(path: &Path, inputs: &Inputs) -> Result<Box<dyn LiveDevice>> {
    if let DeviceSpec::Card {
        path,
        index,
        options,
    } = parse_spec(path)?
    {
        return Ok(Box::new(ttkmd::open_card(&path, index, &options, inputs)?));
    }
    match file_kind(path, inputs)? {
        FileKind::Image => Ok(Box::new(MappedImage::open(path, inputs)?)),
        FileKind::Snapshot => Err(Error::BadFile {
            path: path.into(),
            what: "is a snapshot (a recording): it has no live memory or clocks; give the emulator's device image or a \
                   card (tt:N)"
                .into(),
        }),
    }
}

/// Tile coordinates per chip and the reverse lookup, shared by the backends.
#[derive(Clone, Debug, Default)]
pub(crate) struct TileTable {
    per_chip: Vec<Vec<NocCoord>>,
    index: HashMap<(u32, NocCoord), u32>,
}

impl TileTable {
    /// The tile table of a device with geometry `g`, one list per chip, after checking it:
    /// `g.chips` lists of `g.tiles_per_chip` tiles, each a worker tile of the arch, none
    /// twice on one chip (`Geometry::check_tiles`). A tile listed twice would otherwise
    /// merge two tiles' rows under one coordinate.
    pub(crate) fn checked(
        g: &Geometry,
        per_chip: Vec<Vec<NocCoord>>,
    ) -> std::result::Result<TileTable, String> {
        if per_chip.len() as u64 != g.chips as u64 {
            return Err(format!(
                "tile table has {} chip(s), expected {}",
                per_chip.len(),
                g.chips
            ));
        }
        let mut index = HashMap::new();
        for (chip, tiles) in per_chip.iter().enumerate() {
            g.check_tiles(chip as u32, tiles)
                .map_err(|e| e.to_string())?;
            for (i, t) in tiles.iter().enumerate() {
                index.insert((chip as u32, *t), i as u32);
            }
        }
        Ok(TileTable { per_chip, index })
    }

    pub(crate) fn tiles(&self, chip: u32) -> Vec<NocCoord> {
        self.per_chip
            .get(chip as usize)
            .cloned()
            .unwrap_or_default()
    }

    pub(crate) fn per_chip(&self) -> &[Vec<NocCoord>] {
        &self.per_chip
    }

    /// Image index of `tile` on `chip`, or an error naming both.
    pub(crate) fn index(&self, chip: u32, tile: NocCoord) -> Result<u32> {
        self.index.get(&(chip, tile)).copied().ok_or_else(|| Error::Address {
            what: format!(
                "chip {chip} tile {tile}: no such tile (the device has {} chip(s); chip {chip} has {} tiles)",
                self.per_chip.len(),
                self.per_chip.get(chip as usize).map_or(0, |t| t.len())
            ),
        })
    }
}

/// Checks that `words` words at `addr` are an aligned access inside L1.
pub(crate) fn check_access(
    g: &Geometry,
    chip: u32,
    tile: NocCoord,
    addr: u32,
    words: usize,
) -> Result<()> {
    let end = addr as u64 + 4 * words as u64;
    if !addr.is_multiple_of(4) || end > g.l1_size as u64 {
        return Err(Error::Address {
            what: format!(
                "chip {chip} tile {tile}: {words}-word access at L1 address {addr:#x}: expected a 4-byte aligned \
                 address with the access inside L1 (0..{:#x})",
                g.l1_size
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_op_log_given_as_device_memory_is_named_and_other_files_keep_their_message() {
        let dir = crate::testing::temp_dir("devmem-kind");
        let ops = dir.join("ops.jsonl");
        std::fs::write(&ops, "\n  {\"op\":{\"run_id\":1}}\n").unwrap();
        for e in [
            file_kind(&ops, &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string(),
            open(&ops, false, &crate::inputs::Inputs::none())
                .err()
                .unwrap()
                .to_string(),
        ] {
            assert!(
                e.contains("ops.jsonl: looks like an op log (JSON lines), not device memory")
                    && e.contains("did you swap --device and --oplog?"),
                "{e}"
            );
        }
        let other = dir.join("other.bin");
        std::fs::write(&other, b"NOTMAGIC and more").unwrap();
        let e = file_kind(&other, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("starts with [4e, 4f, 54, 4d, 41, 47, 49, 43]: expected a device image"),
            "{e}"
        );
        let short = dir.join("short.bin");
        std::fs::write(&short, b"TTS").unwrap();
        assert!(file_kind(&short, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string()
            .contains("starts with [54, 54, 53]:"));
        let snap = dir.join("s.snap");
        std::fs::write(&snap, SNAPSHOT_MAGIC).unwrap();
        assert_eq!(
            file_kind(&snap, &crate::inputs::Inputs::none()).unwrap(),
            FileKind::Snapshot
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Before, a CSV, a JSON file or an op report given as --device printed its first bytes
    /// in hex (or "did you swap?" for any JSON): now the file is named for what it is.
    #[test]
    fn another_ttprof_file_given_as_device_memory_is_named_for_what_it_is() {
        let dir = crate::testing::temp_dir("devmem-other-kinds");
        for (name, body, want) in [
            (
                "dev.csv",
                "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000\n",
                "is a device profiler log",
            ),
            ("ops_perf.csv", "OP CODE,OP TYPE\n", "is an op report"),
            ("a.json", "{\"ops\": []}", "is a JSON file"),
            ("t.json", "[{\"ph\":\"X\"}]", "is a JSON file"),
            ("x.csv", "a,b,c\n1,2,3\n", "is a CSV"),
            ("k.elf", "\x7fELF\x01\x01", "is an ELF file"),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, body).unwrap();
            let e = file_kind(&path, &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(want) && !e.contains("swap") && !e.contains("starts with ["),
                "{name}: {e}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn fifos_devices_and_directories_are_refused_without_blocking_or_reading() {
        // A FIFO as --device blocked every command in `open` (no writer ever comes).
        let errors = crate::files::with_fifo("devmem-fifo", |p| {
            vec![
                file_kind(p, &crate::inputs::Inputs::none())
                    .unwrap_err()
                    .to_string(),
                open(p, false, &crate::inputs::Inputs::none())
                    .err()
                    .unwrap()
                    .to_string(),
                open(p, true, &crate::inputs::Inputs::none())
                    .err()
                    .unwrap()
                    .to_string(),
                MappedImage::open(p, &crate::inputs::Inputs::none())
                    .err()
                    .unwrap()
                    .to_string(),
                MappedImage::open_read_only(p, &crate::inputs::Inputs::none())
                    .err()
                    .unwrap()
                    .to_string(),
                Snapshot::load(p, &crate::inputs::Inputs::none())
                    .unwrap_err()
                    .to_string(),
            ]
        });
        for e in errors.unwrap_or_default() {
            assert!(
                e.contains("fifo: is not a regular file (a FIFO, socket or device?)"),
                "{e}"
            );
        }
        let zero = Path::new("/dev/zero");
        for e in [
            file_kind(zero, &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string(),
            MappedImage::open_read_only(zero, &crate::inputs::Inputs::none())
                .err()
                .unwrap()
                .to_string(),
            Snapshot::load(zero, &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string(),
        ] {
            assert!(e.contains("/dev/zero: is not a regular file"), "{e}");
        }
        let dir = crate::testing::temp_dir("devmem-dir");
        let e = open(&dir, false, &crate::inputs::Inputs::none())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("is a directory, not device memory (a device image or a snapshot)"),
            "{e}"
        );
        let e = Snapshot::load(&dir, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a directory, not a snapshot"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
