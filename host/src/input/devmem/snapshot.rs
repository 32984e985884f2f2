//! Snapshots: a recorded copy of (part of) device memory, saved to a file so that a readout
//! can be replayed offline, bit for bit.
//!
//! A snapshot holds *extents*: runs of 32-bit words at `(chip, tile, L1 address)`. Reading a
//! word outside every extent is an error naming the address, so a replay cannot silently
//! read zeros that were never on the device. Writes (a consumer's `TAIL`) change the
//! in-memory copy only, never the file. The file format is [`SNAPSHOT_VERSION`]'s.

use super::loss_record::{self, TAG_LOSS};
use super::sync_record::{SyncLog, TAG_SYNC};
use super::{check_access, DeviceMemory, TileTable};
use crate::atomic::write_atomic;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::readout::RingId;
use crate::util::fnv::{self, fnv1a};
use riscv_linker::devfile::Geometry;
use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

/// File magic of a snapshot.
pub const SNAPSHOT_MAGIC: [u8; 8] = *b"TTSNAP\0\0";
/// Version of the file format this build reads and writes.
///
/// The file format (version 1), all integers little-endian:
///
/// ```text
/// 0   magic "TTSNAP\0\0"
/// 8   version u32 = 1
/// 12  arch id u32 (riscv_linker::Arch::id)
/// 16  chips u32
/// 20  tiles per chip u32
/// 24  L1 bytes per tile u32 (must equal the arch's)
/// 28  section count u32
/// 32  sections, each: tag u32, 0 u32, body length u64, body
/// end FNV-1a 64-bit hash of every byte before it, u64
/// ```
///
/// Section tags: `1` tile table (exactly one; `x, y, 0, 0` per tile, chip-major, the device
/// image's order); `2` extent (`chip u32, tile index u32, address u32`, then the words);
/// `3` clock sync samples (format in `sync_record.rs`); `4` a ring's drained payload (`chip
/// u32, tile index u32, RISC index u32`, then the bytes a consumer decoded from that ring
/// before the snapshot was taken, in ring order: a readout decodes them before the ring's
/// live span, so a snapshot of a drained run still holds every record); `5` a data problem
/// of the recording (`loss_record.rs`: what the memory does not show, such as the
/// timestamper backend's loss), reported again by every readout of the snapshot. Unknown tags are
/// skipped, so later versions can add sections readers of this version ignore.
pub const SNAPSHOT_VERSION: u32 = 1;

const TAG_TILES: u32 = 1;
const TAG_EXTENT: u32 = 2;
const TAG_DRAINED: u32 = 4;
const FIXED: usize = 32;

/// Words recorded at one place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Chip of the extent.
    pub chip: u32,
    /// Tile (NoC0).
    pub tile: NocCoord,
    /// First L1 byte address.
    pub addr: u32,
    /// The words from `addr` on.
    pub words: Vec<u32>,
}

type Key = (u32, u32);

/// A recorded copy of device memory.
pub struct Snapshot {
    source: Option<PathBuf>,
    geometry: Geometry,
    tiles: TileTable,
    /// Per (chip, tile index): address -> words, non-overlapping and non-adjacent.
    extents: RwLock<BTreeMap<Key, BTreeMap<u32, Vec<u32>>>>,
    bytes_read: AtomicU64,
    /// Clock sync samples (see `sync_record.rs`).
    pub(super) sync: SyncLog,
    /// Per (chip, tile index, RISC index): payload a consumer drained before the recording.
    drained: RwLock<BTreeMap<(u32, u32, u32), Vec<u8>>>,
    /// The same, as pieces (offset, length) of the file the snapshot was loaded from: read
    /// back only when a readout asks for the ring ([`DeviceMemory::drained_payload`]), so a
    /// long run's drained payload is never held whole. They come before `drained`'s bytes.
    in_file: BTreeMap<(u32, u32, u32), Vec<(u64, u64)>>,
    /// The file `in_file` points into.
    file: Option<std::fs::File>,
    /// Data problems of the recording (`loss_record.rs`), reported by each readout.
    losses: RwLock<Vec<Issue>>,
}

impl Snapshot {
    /// An empty snapshot of a device with this geometry and these tiles (per chip).
    pub fn new(geometry: Geometry, tiles: Vec<Vec<NocCoord>>) -> Result<Snapshot> {
        geometry.check().map_err(|e| Error::Argument {
            what: format!("snapshot geometry: {e}"),
        })?;
        let tiles = TileTable::checked(&geometry, tiles).map_err(|e| Error::Argument {
            what: format!("snapshot: {e}"),
        })?;
        Ok(Snapshot {
            source: None,
            geometry,
            tiles,
            extents: RwLock::new(BTreeMap::new()),
            bytes_read: AtomicU64::new(0),
            sync: SyncLog::default(),
            drained: RwLock::new(BTreeMap::new()),
            in_file: BTreeMap::new(),
            file: None,
            losses: RwLock::new(Vec::new()),
        })
    }

    /// An empty snapshot with the same geometry and tiles as `mem`.
    pub fn like(mem: &dyn DeviceMemory) -> Result<Snapshot> {
        let g = mem.geometry();
        Snapshot::new(g, (0..g.chips).map(|c| mem.tiles(c)).collect())
    }

    /// Records `words` at `addr` (merging with what is already recorded; new words win).
    pub fn add(&self, chip: u32, tile: NocCoord, addr: u32, words: &[u32]) -> Result<()> {
        let index = self.tiles.index(chip, tile)?;
        check_access(&self.geometry, chip, tile, addr, words.len())?;
        if words.is_empty() {
            return Ok(());
        }
        let mut all = self.extents.write().map_err(|_| poisoned())?;
        insert(all.entry((chip, index)).or_default(), addr, words);
        Ok(())
    }

    /// Records payload a consumer drained from `risc`'s ring of `tile` (appended to what is
    /// recorded for it already): a readout of the snapshot decodes it before the live span.
    pub fn add_drained(&self, chip: u32, tile: NocCoord, risc: Risc, bytes: &[u8]) -> Result<()> {
        let index = self.tiles.index(chip, tile)?;
        let mut all = self.drained.write().map_err(|_| poisoned())?;
        all.entry((chip, index, risc.index() as u32))
            .or_default()
            .extend_from_slice(bytes);
        Ok(())
    }

    /// Records data problems of the recording that its memory does not show (the
    /// timestamper backend's loss): every readout of the snapshot reports them again.
    pub fn add_losses(&self, issues: &[Issue]) -> Result<()> {
        self.losses
            .write()
            .map_err(|_| poisoned())?
            .extend_from_slice(issues);
        Ok(())
    }

    /// Bytes of drained payload recorded, over all rings.
    pub fn drained_bytes(&self) -> u64 {
        let in_file: u64 = self.in_file.values().flatten().map(|p| p.1).sum();
        in_file
            + self
                .drained
                .read()
                .map_or(0, |d| d.values().map(|b| b.len() as u64).sum())
    }

    /// The key a ring's drained payload is kept under (`None`: not a tile of the snapshot).
    fn drained_key(&self, chip: u32, tile: NocCoord, risc: Risc) -> Option<(u32, u32, u32)> {
        let index = self.tiles.index(chip, tile).ok()?;
        Some((chip, index, risc.index() as u32))
    }

    /// Ring `key`'s drained payload: its pieces in the file, then what was added.
    fn drained_of(&self, key: (u32, u32, u32)) -> std::io::Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        let any = self.drained_pieces(key, &mut |b| out.extend_from_slice(b))?;
        Ok(any.then_some(out))
    }

    /// Ring `key`'s drained payload handed to `piece` at most [`super::DRAINED_PIECE`]
    /// bytes at a time (see [`Snapshot::drained_of`]); `Ok(false)` when it has none.
    fn drained_pieces(
        &self,
        key: (u32, u32, u32),
        piece: &mut dyn FnMut(&[u8]),
    ) -> std::io::Result<bool> {
        use std::os::unix::fs::FileExt;
        let pieces = self.in_file.get(&key).map_or(&[][..], Vec::as_slice);
        let held = self
            .drained
            .read()
            .map_err(|_| std::io::Error::other(poisoned().to_string()))?;
        let added = held.get(&key);
        if pieces.is_empty() && added.is_none() {
            return Ok(false);
        }
        let mut buf = Vec::new();
        for &(offset, len) in pieces {
            let Some(f) = &self.file else {
                return Err(std::io::Error::other("internal: no snapshot file"));
            };
            let mut done = 0u64;
            while done < len {
                let n = (len - done).min(super::DRAINED_PIECE as u64) as usize;
                buf.resize(n, 0);
                f.read_exact_at(&mut buf, offset + done)?;
                piece(&buf);
                done += n as u64;
            }
        }
        for chunk in added
            .map_or(&[][..], Vec::as_slice)
            .chunks(super::DRAINED_PIECE)
        {
            piece(chunk);
        }
        Ok(true)
    }

    /// Copies `bytes` bytes at `addr` of every tile of every chip from `mem`.
    pub fn capture_region(&self, mem: &dyn DeviceMemory, addr: u32, bytes: u32) -> Result<()> {
        let mut words = vec![0u32; bytes.div_ceil(4) as usize];
        for chip in 0..self.geometry.chips {
            for tile in mem.tiles(chip) {
                mem.read_words(chip, tile, addr, &mut words)?;
                self.add(chip, tile, addr, &words)?;
            }
        }
        Ok(())
    }

    /// Every extent, in (chip, tile index, address) order.
    pub fn extents(&self) -> Vec<Extent> {
        let all = match self.extents.read() {
            Ok(a) => a,
            Err(p) => p.into_inner(),
        };
        let mut out = Vec::new();
        for (&(chip, index), runs) in all.iter() {
            let tile = self.tiles.per_chip()[chip as usize][index as usize];
            for (&addr, words) in runs {
                out.push(Extent {
                    chip,
                    tile,
                    addr,
                    words: words.clone(),
                });
            }
        }
        out
    }

    /// Writes the snapshot to `path` (atomically).
    pub fn save(&self, path: &Path, inputs: &Inputs) -> Result<()> {
        let bytes = self.encode()?;
        write_atomic(path, inputs, |w| w.write_all(&bytes))
    }

    /// The snapshot file's bytes (what [`Snapshot::save`] writes), for a stream.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.encode()
    }

    /// [`Snapshot::save`] with more drained payload than the snapshot holds: one section per
    /// ring of `rings` (each with its payload's length), its bytes asked of `payload` when
    /// its turn comes, which hands them over a piece at a time, each written at once, so a
    /// long run's drained payload (a session's spool) is never held whole, not even one
    /// ring's. A readout of the file sees them after what [`Snapshot::add_drained`] recorded
    /// for the ring. A ring whose pieces do not add up to its length is an error (the file
    /// is not written).
    pub(crate) fn save_with_drained(
        &self,
        path: &Path,
        inputs: &Inputs,
        rings: &[(RingId, u64)],
        mut payload: impl FnMut(RingId, &mut dyn FnMut(&[u8])) -> Result<()>,
    ) -> Result<()> {
        let mut places = Vec::with_capacity(rings.len());
        for &(id, len) in rings {
            let index = self.tiles.index(id.chip, id.tile)?;
            places.push(([id.chip, index, id.risc.index() as u32], id, len));
        }
        places.sort_by_key(|p| p.0);
        let head = self.encode_body(places.len())?;
        let mut failed = None;
        write_atomic(path, inputs, |w| {
            let mut h = fnv1a(&head);
            w.write_all(&head)?;
            for (place, id, len) in &places {
                let mut header = Vec::with_capacity(28);
                for v in [TAG_DRAINED, 0] {
                    header.extend_from_slice(&v.to_le_bytes());
                }
                header.extend_from_slice(&(12 + len).to_le_bytes());
                for v in place {
                    header.extend_from_slice(&v.to_le_bytes());
                }
                h = fnv::extend(h, &header);
                w.write_all(&header)?;
                let (mut written, mut io) = (0u64, None);
                let asked = payload(*id, &mut |piece| {
                    if io.is_none() {
                        h = fnv::extend(h, piece);
                        written += piece.len() as u64;
                        io = w.write_all(piece).err();
                    }
                });
                let asked = asked.and_then(|()| match written == *len {
                    true => Ok(()),
                    false => Err(crate::Error::Internal(format!(
                        "the drained payload of {} was {written} bytes, said to be {len}",
                        id.location()
                    ))),
                });
                if let Some(e) = io {
                    return Err(e);
                }
                asked.map_err(|e| {
                    let what = e.to_string();
                    failed = Some(e);
                    std::io::Error::other(what)
                })?;
            }
            w.write_all(&h.to_le_bytes())
        })
        .map_err(|e| failed.take().unwrap_or(e))
    }

    /// Reads and validates a snapshot file. Only a regular file is read (a FIFO or a device
    /// is refused before it is opened), and no more bytes than its size.
    ///
    /// Memory is bounded by what the file holds, and nothing is held before the file is
    /// known to be whole: a first pass reads the header (magic, version, arch, geometry,
    /// checked before anything else), walks the section headers against the file's length
    /// and each tag's possible size, and checks the checksum, all streamed through a small
    /// buffer; only then does a second pass keep the sections' bodies, each allocated
    /// fallibly (a body this host cannot hold is an error naming it, not an abort).
    pub fn load(path: &Path, inputs: &Inputs) -> Result<Snapshot> {
        let (file, len) =
            crate::files::open_regular(path, "a snapshot", "read snapshot", false, inputs)?;
        let mut s = load_file(file, len).map_err(|e| match e {
            Load::Bad(what) => Error::BadFile {
                path: path.into(),
                what,
            },
            Load::Io(e) => Error::io(path, "read snapshot", e),
        })?;
        s.source = Some(path.into());
        Ok(s)
    }

    fn encode(&self) -> Result<Vec<u8>> {
        let mut out = self.encode_body(0)?;
        let hash = fnv1a(&out);
        out.extend_from_slice(&hash.to_le_bytes());
        Ok(out)
    }

    /// The file without its checksum, counting `more` sections written after it.
    fn encode_body(&self, more: usize) -> Result<Vec<u8>> {
        let g = &self.geometry;
        let all = self.extents.read().map_err(|_| poisoned())?;
        let sync = if self.sync.is_empty() {
            None
        } else {
            Some(self.sync.encode(|c, t| self.tiles.index(c, t))?)
        };
        let mut keys: Vec<(u32, u32, u32)> = self.in_file.keys().copied().collect();
        keys.extend(self.drained.read().map_err(|_| poisoned())?.keys().copied());
        keys.sort();
        keys.dedup();
        let mut drained = BTreeMap::new();
        for key in keys {
            let bytes = self.drained_of(key).map_err(|e| Error::BadFile {
                path: self.describe().into(),
                what: format!("read its drained payload back: {e}"),
            })?;
            drained.insert(key, bytes.unwrap_or_default());
        }
        let losses = self.losses.read().map_err(|_| poisoned())?.clone();
        let sections = 1
            + all.values().map(|r| r.len()).sum::<usize>()
            + sync.is_some() as usize
            + drained.len()
            + losses.len()
            + more;
        let mut out = Vec::new();
        out.extend_from_slice(&SNAPSHOT_MAGIC);
        for v in [
            SNAPSHOT_VERSION,
            g.arch.id(),
            g.chips,
            g.tiles_per_chip,
            g.l1_size,
            sections as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let table: Vec<u8> = self
            .tiles
            .per_chip()
            .iter()
            .flatten()
            .flat_map(|t| [t.x, t.y, 0, 0])
            .collect();
        section(&mut out, TAG_TILES, &table);
        for (&(chip, index), runs) in all.iter() {
            for (&addr, words) in runs {
                let mut body = Vec::with_capacity(12 + 4 * words.len());
                for v in [chip, index, addr] {
                    body.extend_from_slice(&v.to_le_bytes());
                }
                body.extend(words.iter().flat_map(|w| w.to_le_bytes()));
                section(&mut out, TAG_EXTENT, &body);
            }
        }
        if let Some(body) = sync {
            section(&mut out, TAG_SYNC, &body);
        }
        for (&(chip, index, risc), bytes) in drained.iter() {
            let mut body = Vec::with_capacity(12 + bytes.len());
            for v in [chip, index, risc] {
                body.extend_from_slice(&v.to_le_bytes());
            }
            body.extend_from_slice(bytes);
            section(&mut out, TAG_DRAINED, &body);
        }
        for issue in &losses {
            section(&mut out, TAG_LOSS, &loss_record::encode(issue));
        }
        Ok(out)
    }

    fn lookup(&self, chip: u32, tile: NocCoord, addr: u32, out: &mut [u32]) -> Result<()> {
        let index = self.tiles.index(chip, tile)?;
        check_access(&self.geometry, chip, tile, addr, out.len())?;
        let all = self.extents.read().map_err(|_| poisoned())?;
        let found = all.get(&(chip, index)).and_then(|runs| {
            let (&start, words) = runs.range(..=addr).next_back()?;
            let first = ((addr - start) / 4) as usize;
            words.get(first..first + out.len())
        });
        match found {
            Some(words) => {
                out.copy_from_slice(words);
                Ok(())
            }
            None => Err(Error::Address {
                what: format!(
                    "chip {chip} tile {tile}: {} byte(s) at L1 address {addr:#x} were not recorded in {}",
                    4 * out.len(),
                    self.describe()
                ),
            }),
        }
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("source", &self.source)
            .field("geometry", &self.geometry)
            .field("extents", &self.extents().len())
            .finish()
    }
}

fn poisoned() -> Error {
    Error::Internal("snapshot lock poisoned by a panic in another thread".into())
}

fn section(out: &mut Vec<u8>, tag: u32, body: &[u8]) {
    out.extend_from_slice(&tag.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
}

/// Inserts a run of words, merging it with overlapping or adjacent runs.
fn insert(runs: &mut BTreeMap<u32, Vec<u32>>, addr: u32, words: &[u32]) {
    let mut start = addr as u64;
    let mut end = addr as u64 + 4 * words.len() as u64;
    let touching: Vec<u32> = runs
        .range(..=end as u32)
        .filter(|(&a, w)| a as u64 + 4 * w.len() as u64 >= start)
        .map(|(&a, _)| a)
        .collect();
    let mut merged_old = Vec::new();
    for a in &touching {
        if let Some(w) = runs.remove(a) {
            start = start.min(*a as u64);
            end = end.max(*a as u64 + 4 * w.len() as u64);
            merged_old.push((*a, w));
        }
    }
    let mut merged = vec![0u32; ((end - start) / 4) as usize];
    for (a, w) in merged_old {
        let at = ((a as u64 - start) / 4) as usize;
        merged[at..at + w.len()].copy_from_slice(&w);
    }
    let at = ((addr as u64 - start) / 4) as usize;
    merged[at..at + words.len()].copy_from_slice(words);
    runs.insert(start as u32, merged);
}

/// A cursor over the file's bytes that names what it was reading when the file ends.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], String> {
        let end = (self.at as u64)
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len() as u64);
        let Some(end) = end else {
            return Err(format!(
                "truncated: {what} at byte {} needs {n} bytes, but only {} remain (expected a complete snapshot)",
                self.at,
                self.bytes.len() - self.at
            ));
        };
        let s = &self.bytes[self.at..end as usize];
        self.at = end as usize;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(le32(self.take(4, what)?, 0))
    }

    #[cfg(test)]
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let b = self.take(8, what)?;
        Ok(le32(b, 0) as u64 | (le32(b, 4) as u64) << 32)
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The fixed header's geometry and section count, checked (`head` is the file's first
/// [`FIXED`] bytes, the magic included).
fn decode_header(head: &[u8]) -> Result<(Geometry, u32), String> {
    let mut c = Cursor { bytes: head, at: 8 };
    let version = c.u32("version")?;
    if version != SNAPSHOT_VERSION {
        return Err(format!(
            "snapshot format version {version}, this build reads version {SNAPSHOT_VERSION}"
        ));
    }
    let arch_id = c.u32("arch")?;
    let arch = Arch::from_id(arch_id).ok_or(format!(
        "unknown arch id {arch_id} (expected 1 = wormhole_b0, 2 = blackhole)"
    ))?;
    let geometry = Geometry {
        arch,
        chips: c.u32("chips")?,
        tiles_per_chip: c.u32("tiles per chip")?,
        l1_size: c.u32("L1 size")?,
    };
    if geometry.l1_size != arch.l1_size() {
        return Err(format!(
            "L1 size {} bytes, but {arch} has {}",
            geometry.l1_size,
            arch.l1_size()
        ));
    }
    // No chip, no tiles or more tiles per chip than the NoC grid: refused before any size
    // is computed from the counts.
    geometry.check().map_err(|e| e.to_string())?;
    Ok((geometry, c.u32("section count")?))
}

/// A section body's length, checked against what its tag can hold (before the body is
/// read): a tile table is 4 bytes per tile, an extent at most one tile's L1 after its
/// place, drained payload at least its place. An error says why one is impossible.
fn check_section_len(g: &Geometry, tag: u32, len: u64) -> Result<(), String> {
    let tiles = g.chips as u64 * g.tiles_per_chip as u64;
    match tag {
        TAG_TILES if Some(len) != tiles.checked_mul(4) => Err(format!(
            "tile table is {len} bytes, expected {} (4 per tile for {} chip(s) of {} tiles)",
            tiles.checked_mul(4).map_or_else(|| "more than 2^64".to_string(), |b| b.to_string()),
            g.chips,
            g.tiles_per_chip
        )),
        TAG_EXTENT if len < 12 || len - 12 > g.l1_size as u64 || !(len - 12).is_multiple_of(4) => Err(format!(
            "extent body of {len} bytes: expected 12 bytes of place and a whole number of words, at most one tile's L1 \
             ({} bytes)",
            g.l1_size
        )),
        TAG_DRAINED if len < 12 => Err(format!("drained payload body of {len} bytes: expected at least 12 bytes of place")),
        TAG_LOSS => loss_record::check_len(len),
        _ => Ok(()),
    }
}

/// Adds one section to the snapshot being decoded (`None` until the tile table).
fn apply_section(
    snapshot: &mut Option<Snapshot>,
    g: Geometry,
    what: &str,
    tag: u32,
    data: Vec<u8>,
) -> Result<(), String> {
    match (tag, &*snapshot) {
        (TAG_TILES, None) => *snapshot = Some(tile_table(g, &data)?),
        (TAG_TILES, Some(_)) => return Err(format!("{what}: a second tile table")),
        (TAG_EXTENT, None) => return Err(format!("{what}: an extent before the tile table")),
        (TAG_EXTENT, Some(s)) => extent(s, &data).map_err(|e| format!("{what}: {e}"))?,
        (TAG_SYNC, None) => return Err(format!("{what}: clock samples before the tile table")),
        (TAG_SYNC, Some(s)) => s
            .sync
            .decode(&data, s.tiles.per_chip())
            .map_err(|e| format!("{what}: {e}"))?,
        (TAG_DRAINED, None) => {
            return Err(format!("{what}: drained payload before the tile table"))
        }
        (TAG_DRAINED, Some(s)) => drained(s, data).map_err(|e| format!("{what}: {e}"))?,
        (TAG_LOSS, None) => return Err(format!("{what}: a data problem before the tile table")),
        (TAG_LOSS, Some(s)) => {
            let issue = loss_record::decode(&data).map_err(|e| format!("{what}: {e}"))?;
            s.losses
                .write()
                .map_err(|_| format!("{what}: poisoned"))?
                .push(issue);
        }
        _ => {}
    }
    Ok(())
}

/// Decodes a whole snapshot file held in memory (the checksum first).
#[cfg(test)]
fn decode(bytes: &[u8]) -> Result<Snapshot, String> {
    if bytes.len() < 8 || bytes[..8] != SNAPSHOT_MAGIC {
        return Err(NOT_A_SNAPSHOT.into());
    }
    if bytes.len() < FIXED + 8 {
        return Err(format!(
            "truncated: {} bytes, a snapshot has at least {}",
            bytes.len(),
            FIXED + 8
        ));
    }
    let (body, hash) = bytes.split_at(bytes.len() - 8);
    let stored = le32(hash, 0) as u64 | (le32(hash, 4) as u64) << 32;
    if fnv1a(body) != stored {
        return Err(CHECKSUM.into());
    }
    let (geometry, sections) = decode_header(&body[..FIXED])?;
    let mut c = Cursor {
        bytes: body,
        at: FIXED,
    };
    let mut snapshot: Option<Snapshot> = None;
    for i in 0..sections {
        let what = format!("section {i}");
        let tag = c.u32(&what)?;
        let _ = c.u32(&what)?;
        let len = c.u64(&what)?;
        let data = c.take(len, &format!("body of {what} (tag {tag})"))?;
        check_section_len(&geometry, tag, len).map_err(|e| format!("{what}: {e}"))?;
        apply_section(&mut snapshot, geometry, &what, tag, data.to_vec())?;
    }
    if c.at != body.len() {
        return Err(format!(
            "{} unexpected bytes after the last of {sections} sections",
            body.len() - c.at
        ));
    }
    snapshot.ok_or_else(|| "no tile table section".into())
}

const NOT_A_SNAPSHOT: &str = "not a snapshot: expected the magic \"TTSNAP\\0\\0\" at byte 0";
const CHECKSUM: &str =
    "checksum mismatch: the file is truncated or corrupt (expected the FNV-1a hash in its last 8 bytes)";

/// Why a snapshot file did not load.
enum Load {
    /// What is wrong with the file.
    Bad(String),
    /// Reading it failed.
    Io(std::io::Error),
}

impl From<String> for Load {
    fn from(what: String) -> Load {
        Load::Bad(what)
    }
}

/// Reads sequentially from a snapshot file, counting the position and, in the first
/// pass, hashing every byte.
struct Reader {
    r: std::io::BufReader<std::fs::File>,
    at: u64,
    /// The end of the part being read (the file's length less the checksum).
    end: u64,
    hash: Option<u64>,
}

impl Reader {
    /// `n` bytes into `out` (cleared), or a "truncated" error naming `what`.
    fn read(&mut self, n: u64, what: &str, out: &mut Vec<u8>) -> Result<(), Load> {
        use std::io::Read;
        self.check(n, what)?;
        out.clear();
        let want = usize::try_from(n).map_err(|_| {
            Load::Bad(format!(
                "{what}: {n} bytes, more than this host can address"
            ))
        })?;
        out.try_reserve_exact(want).map_err(|_| {
            Load::Bad(format!("{what}: {n} bytes, more memory than this process may allocate (a snapshot's section is held in memory)"))
        })?;
        (&mut self.r).take(n).read_to_end(out).map_err(Load::Io)?;
        if out.len() as u64 != n {
            return Err(Load::Bad(format!(
                "{what} at byte {}: the file ended early (it changed while it was read)",
                self.at
            )));
        }
        self.hashed(out);
        self.at += n;
        Ok(())
    }

    /// Moves past `n` bytes, hashing them in the first pass (memory: the buffer).
    fn skip(&mut self, n: u64, what: &str) -> Result<(), Load> {
        use std::io::BufRead;
        self.check(n, what)?;
        if self.hash.is_none() {
            let delta = i64::try_from(n).map_err(|_| Load::Bad(format!("{what}: {n} bytes")))?;
            self.r.seek_relative(delta).map_err(Load::Io)?;
            self.at += n;
            return Ok(());
        }
        let mut left = n;
        while left > 0 {
            let buf = self.r.fill_buf().map_err(Load::Io)?;
            if buf.is_empty() {
                return Err(Load::Bad(format!(
                    "{what} at byte {}: the file ended early (it changed while it was read)",
                    self.at
                )));
            }
            let take = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            let h = self.hash.unwrap_or_default();
            self.hash = Some(fnv::extend(h, &buf[..take]));
            self.r.consume(take);
            self.at += take as u64;
            left -= take as u64;
        }
        Ok(())
    }

    fn check(&self, n: u64, what: &str) -> Result<(), Load> {
        if self.at.checked_add(n).is_none_or(|e| e > self.end) {
            return Err(Load::Bad(format!(
                "truncated: {what} at byte {} needs {n} bytes, but only {} remain (expected a complete snapshot)",
                self.at,
                self.end - self.at
            )));
        }
        Ok(())
    }

    fn hashed(&mut self, bytes: &[u8]) {
        if let Some(h) = self.hash {
            self.hash = Some(fnv::extend(h, bytes));
        }
    }

    /// A section's header: tag and body length.
    fn section(&mut self, what: &str, buf: &mut Vec<u8>) -> Result<(u32, u64), Load> {
        self.read(16, what, buf)?;
        Ok((
            le32(buf, 0),
            le32(buf, 8) as u64 | (le32(buf, 12) as u64) << 32,
        ))
    }
}

/// Loads a snapshot from `file` (`len` bytes) in two passes, as [`Snapshot::load`] says.
fn load_file(file: std::fs::File, len: u64) -> Result<Snapshot, Load> {
    use std::io::{Read, Seek, SeekFrom};
    let mut r = std::io::BufReader::with_capacity(1 << 16, file);
    let mut head = Vec::new();
    (&mut r)
        .take(FIXED as u64)
        .read_to_end(&mut head)
        .map_err(Load::Io)?;
    if head.len() < 8 || head[..8] != SNAPSHOT_MAGIC {
        return Err(Load::Bad(NOT_A_SNAPSHOT.into()));
    }
    if len < (FIXED + 8) as u64 || head.len() < FIXED {
        return Err(Load::Bad(format!(
            "truncated: {len} bytes, a snapshot has at least {}",
            FIXED + 8
        )));
    }
    // The header is checked before anything else is read.
    let (geometry, sections) = decode_header(&head)?;
    let body_end = len - 8;
    let start = fnv1a(&head);
    // Pass 1: the sections' headers against the file and their tags, and the checksum.
    let mut p = Reader {
        r,
        at: FIXED as u64,
        end: body_end,
        hash: Some(start),
    };
    let mut buf = Vec::new();
    for i in 0..sections {
        let what = format!("section {i}");
        let (tag, n) = p.section(&what, &mut buf)?;
        p.check(n, &format!("body of {what} (tag {tag})"))?;
        check_section_len(&geometry, tag, n).map_err(|e| format!("{what}: {e}"))?;
        p.skip(n, &format!("body of {what} (tag {tag})"))?;
    }
    if p.at != body_end {
        // The extra bytes still count in the checksum, which comes first: a file cut or
        // corrupted anywhere says so.
        let extra = body_end - p.at;
        p.skip(extra, "the bytes after the last section")?;
        check_hash(&mut p, &mut buf)?;
        return Err(Load::Bad(format!(
            "{extra} unexpected bytes after the last of {sections} sections"
        )));
    }
    check_hash(&mut p, &mut buf)?;
    // Pass 2: the bodies.
    let mut r = p.r;
    r.seek(SeekFrom::Start(FIXED as u64)).map_err(Load::Io)?;
    let mut p = Reader {
        r,
        at: FIXED as u64,
        end: body_end,
        hash: None,
    };
    let mut snapshot = None;
    for i in 0..sections {
        let what = format!("section {i}");
        let (tag, n) = p.section(&what, &mut buf)?;
        if !matches!(
            tag,
            TAG_TILES | TAG_EXTENT | TAG_SYNC | TAG_DRAINED | TAG_LOSS
        ) {
            p.skip(n, &what)?;
            continue;
        }
        if tag == TAG_DRAINED {
            // Only the place is read: the payload stays in the file until a readout asks.
            let mut place = Vec::new();
            p.read(12, &format!("place of {what} (tag {tag})"), &mut place)?;
            let offset = p.at;
            p.skip(n - 12, &format!("body of {what} (tag {tag})"))?;
            match snapshot.as_mut() {
                Some(s) => drained_in_file(s, &place, offset, n - 12)
                    .map_err(|e| Load::Bad(format!("{what}: {e}")))?,
                None => {
                    return Err(Load::Bad(format!(
                        "{what}: drained payload before the tile table"
                    )))
                }
            }
            continue;
        }
        let mut data = Vec::new();
        p.read(n, &format!("body of {what} (tag {tag})"), &mut data)?;
        apply_section(&mut snapshot, geometry, &what, tag, data)?;
    }
    let mut snapshot = snapshot.ok_or_else(|| Load::Bad("no tile table section".into()))?;
    if !snapshot.in_file.is_empty() {
        snapshot.file = Some(p.r.into_inner());
    }
    Ok(snapshot)
}

/// Compares the hash of everything read so far with the file's last 8 bytes.
fn check_hash(p: &mut Reader, buf: &mut Vec<u8>) -> Result<(), Load> {
    let computed = p.hash.take().unwrap_or_default();
    p.end += 8;
    p.read(8, "checksum", buf)?;
    let stored = le32(buf, 0) as u64 | (le32(buf, 4) as u64) << 32;
    if computed != stored {
        return Err(Load::Bad(CHECKSUM.into()));
    }
    Ok(())
}

fn tile_table(geometry: Geometry, data: &[u8]) -> Result<Snapshot, String> {
    let tiles = geometry.chips as u64 * geometry.tiles_per_chip as u64;
    let expected = tiles.checked_mul(4);
    if expected != Some(data.len() as u64) {
        return Err(format!(
            "tile table is {} bytes, expected {} (4 per tile for {} chip(s) of {} tiles)",
            data.len(),
            expected.map_or_else(|| "more than 2^64".to_string(), |b| b.to_string()),
            geometry.chips,
            geometry.tiles_per_chip
        ));
    }
    let coords: Vec<NocCoord> = data
        .chunks_exact(4)
        .map(|b| NocCoord::new(b[0], b[1]))
        .collect();
    let per_chip = coords
        .chunks(geometry.tiles_per_chip as usize)
        .map(|c| c.to_vec())
        .collect();
    Snapshot::new(geometry, per_chip).map_err(|e| e.to_string())
}

fn extent(s: &Snapshot, data: &[u8]) -> Result<(), String> {
    if data.len() < 12 || !(data.len() - 12).is_multiple_of(4) {
        return Err(format!(
            "extent body of {} bytes: expected 12 bytes of place and a whole number of words",
            data.len()
        ));
    }
    let (chip, index, addr) = (le32(data, 0), le32(data, 4), le32(data, 8));
    let tile = tile_at(s, chip, index, "extent")?;
    let words: Vec<u32> = data[12..].chunks_exact(4).map(|b| le32(b, 0)).collect();
    s.add(chip, tile, addr, &words).map_err(|e| e.to_string())
}

/// A drained payload section whose body (after its 12 bytes of place) stays in the file:
/// `len` bytes at `offset`.
fn drained_in_file(s: &mut Snapshot, place: &[u8], offset: u64, len: u64) -> Result<(), String> {
    let key = drained_key(s, place)?;
    s.in_file.entry(key).or_default().push((offset, len));
    Ok(())
}

/// The ring a drained payload section names (its first 12 bytes), checked.
fn drained_key(s: &Snapshot, data: &[u8]) -> Result<(u32, u32, u32), String> {
    if data.len() < 12 {
        return Err(format!(
            "drained payload body of {} bytes: expected at least 12 bytes of place",
            data.len()
        ));
    }
    let (chip, index, risc) = (le32(data, 0), le32(data, 4), le32(data, 8));
    let tile = tile_at(s, chip, index, "drained payload")?;
    let risc = Risc::from_index(risc as usize)
        .filter(|_| (risc as usize) < Risc::COUNT)
        .ok_or(format!(
            "drained payload names RISC index {risc}, expected 0..=4"
        ))?;
    let index = s.tiles.index(chip, tile).map_err(|e| e.to_string())?;
    Ok((chip, index, risc.index() as u32))
}

fn drained(s: &Snapshot, mut data: Vec<u8>) -> Result<(), String> {
    let key = drained_key(s, &data)?;
    let mut all = s.drained.write().map_err(|_| poisoned().to_string())?;
    let kept = all.entry(key).or_default();
    if kept.is_empty() {
        // The body becomes the ring's payload without a copy.
        data.drain(..12);
        *kept = data;
    } else {
        kept.try_reserve(data.len() - 12)
            .map_err(|_| "more drained payload than this process may allocate".to_string())?;
        kept.extend_from_slice(&data[12..]);
    }
    Ok(())
}

/// The tile a section names by chip and tile-table index.
fn tile_at(s: &Snapshot, chip: u32, index: u32, what: &str) -> Result<NocCoord, String> {
    s.tiles
        .per_chip()
        .get(chip as usize)
        .and_then(|t| t.get(index as usize))
        .copied()
        .ok_or(format!(
            "{what} names chip {chip} tile #{index}, which the tile table does not have"
        ))
}

impl DeviceMemory for Snapshot {
    fn geometry(&self) -> Geometry {
        self.geometry
    }

    fn tiles(&self, chip: u32) -> Vec<NocCoord> {
        self.tiles.tiles(chip)
    }

    fn read_u32(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32> {
        let mut w = [0u32; 1];
        self.read_words(chip, tile, addr, &mut w)?;
        Ok(w[0])
    }

    fn write_u32(&self, chip: u32, tile: NocCoord, addr: u32, v: u32) -> Result<()> {
        let mut probe = [0u32; 1];
        self.lookup(chip, tile, addr, &mut probe)?;
        self.add(chip, tile, addr, &[v])
    }

    fn read_words(&self, chip: u32, tile: NocCoord, addr: u32, out: &mut [u32]) -> Result<()> {
        self.lookup(chip, tile, addr, out)?;
        self.bytes_read
            .fetch_add(4 * out.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn describe(&self) -> String {
        match &self.source {
            Some(p) => format!("snapshot {}", p.display()),
            None => "in-memory snapshot".into(),
        }
    }

    fn recorded_issues(&self) -> Vec<Issue> {
        self.losses
            .read()
            .map_or_else(|_| Vec::new(), |l| l.clone())
    }

    fn drained_payload_len(&self, chip: u32, tile: NocCoord, risc: Risc) -> u64 {
        let Some(key) = self.drained_key(chip, tile, risc) else {
            return 0;
        };
        let in_file: u64 = self
            .in_file
            .get(&key)
            .map_or(0, |p| p.iter().map(|p| p.1).sum());
        let held = self
            .drained
            .read()
            .map_or(0, |d| d.get(&key).map_or(0, |b| b.len() as u64));
        in_file + held
    }

    fn drained_payload(
        &self,
        chip: u32,
        tile: NocCoord,
        risc: Risc,
        piece: &mut dyn FnMut(&[u8]),
    ) -> std::io::Result<bool> {
        let Some(key) = self.drained_key(chip, tile, risc) else {
            return Ok(false);
        };
        // The file was whole when loaded (its checksum); a read that fails now is an error
        // the readout reports at the ring.
        self.drained_pieces(key, piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring's drained payload read back whole (`None`: none), its pieces each at most
    /// [`super::super::DRAINED_PIECE`] bytes.
    fn payload_of(s: &Snapshot, chip: u32, tile: NocCoord, risc: Risc) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let any = s
            .drained_payload(chip, tile, risc, &mut |b| {
                assert!(b.len() <= super::super::DRAINED_PIECE);
                out.extend_from_slice(b)
            })
            .unwrap();
        any.then_some(out)
    }

    fn snapshot() -> Snapshot {
        let arch = Arch::WormholeB0;
        let g = Geometry {
            arch,
            chips: 2,
            tiles_per_chip: 2,
            l1_size: arch.l1_size(),
        };
        let tiles = vec![NocCoord::new(1, 1), NocCoord::new(2, 1)];
        Snapshot::new(g, vec![tiles.clone(), tiles]).unwrap()
    }

    /// The timestamper backend's loss is not in the memory: a snapshot records it and every
    /// readout of the snapshot, saved and loaded, reports it (issue 41, High 2: `report` of a
    /// lossy run's snapshot exited 0).
    #[test]
    fn recorded_data_problems_survive_a_save_and_every_readout_reports_them() {
        let s = snapshot();
        let at = crate::error::Location {
            chip: 1,
            x: 2,
            y: 1,
            risc: Some(Risc::Ncrisc),
        };
        let lost = [
            Issue::error(Some(at), "timestamper backend: 3 zone(s) lost an end"),
            Issue::error(None, "1 timestamper event(s) named no RISC"),
        ];
        s.add_losses(&lost).unwrap();
        // The profiler's L1, as a run left it with no ring written.
        for chip in 0..2 {
            for tile in s.tiles(chip) {
                for r in [
                    riscv_linker::profiler::control_region(),
                    riscv_linker::profiler::rings_region(),
                ] {
                    s.add(chip, tile, r.start, &vec![0; r.size as usize / 4])
                        .unwrap();
                }
            }
        }
        let dir = crate::testing::temp_dir("snapshot-losses");
        let path = dir.join("lossy.snap");
        s.save(&path, &crate::inputs::Inputs::none()).unwrap();
        let back = Snapshot::load(&path, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!(back.recorded_issues(), lost);
        let readout = crate::readout::read(&back, false).unwrap();
        for issue in &lost {
            assert!(readout.issues.contains(issue), "{:?}", readout.issues);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn extents_merge_and_reads_outside_them_are_errors() {
        let s = snapshot();
        let t = NocCoord::new(2, 1);
        s.add(1, t, 0x100, &[1, 2]).unwrap();
        s.add(1, t, 0x108, &[3]).unwrap();
        s.add(1, t, 0xF8, &[9, 10, 11]).unwrap();
        let mut w = [0u32; 5];
        s.read_words(1, t, 0xF8, &mut w).unwrap();
        assert_eq!(w, [9, 10, 11, 2, 3]);
        assert_eq!(s.extents().len(), 1);
        assert_eq!(s.bytes_read(), 20);
        let e = s.read_u32(1, t, 0x10C).unwrap_err().to_string();
        assert!(e.contains("0x10c") && e.contains("not recorded"), "{e}");
        assert!(s.read_u32(0, t, 0x100).is_err(), "other chip");
        assert!(s
            .read_u32(1, NocCoord::new(5, 5), 0x100)
            .unwrap_err()
            .to_string()
            .contains("no such tile"));
        assert!(s
            .read_u32(1, t, 0x102)
            .unwrap_err()
            .to_string()
            .contains("aligned"));
        s.write_u32(1, t, 0x104, 77).unwrap();
        assert_eq!(s.read_u32(1, t, 0x104).unwrap(), 77);
        assert!(
            s.write_u32(1, t, 0x400, 1).is_err(),
            "writes only where recorded"
        );
    }

    #[test]
    fn files_round_trip_and_every_truncation_is_named() {
        let s = snapshot();
        s.add(0, NocCoord::new(1, 1), 0x40, &[0xAB, 0xCD]).unwrap();
        s.add(1, NocCoord::new(2, 1), 0x2_0000, &[1, 2, 3, 4])
            .unwrap();
        let bytes = s.encode().unwrap();
        let back = decode(&bytes).unwrap();
        assert_eq!(back.extents(), s.extents());
        assert_eq!(back.geometry(), s.geometry());
        assert_eq!(back.tiles(1), s.tiles(1));
        for cut in 0..bytes.len() {
            let e = match decode(&bytes[..cut]) {
                Err(e) => e,
                Ok(_) => panic!("a file cut at {cut} bytes was accepted"),
            };
            assert!(
                e.contains("truncated") || e.contains("checksum") || e.contains("magic"),
                "cut {cut}: {e}"
            );
        }
        let mut flipped = bytes.clone();
        flipped[40] ^= 1;
        assert!(decode(&flipped).unwrap_err().contains("checksum"));
    }

    #[test]
    fn inconsistent_files_are_rejected_with_the_reason() {
        let s = snapshot();
        let mut bytes = s.encode().unwrap();
        bytes.truncate(bytes.len() - 8);
        bytes[24..28].copy_from_slice(&5u32.to_le_bytes()); // wrong L1 size
        let hash = fnv1a(&bytes);
        bytes.extend_from_slice(&hash.to_le_bytes());
        assert!(decode(&bytes).unwrap_err().contains("L1 size"));
    }

    /// `bytes` (an encoded snapshot) with the u32 at `at` set to `v` and the hash redone.
    fn patched(bytes: &[u8], edits: &[(usize, u32)]) -> Vec<u8> {
        let mut b = bytes[..bytes.len() - 8].to_vec();
        for &(at, v) in edits {
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        let hash = fnv1a(&b);
        b.extend_from_slice(&hash.to_le_bytes());
        b
    }

    #[test]
    fn absurd_geometry_and_sizes_are_refused_before_anything_is_allocated() {
        let bytes = snapshot().encode().unwrap();
        let (chips, tiles) = (16, 20);
        for (c, t, want) in [
            (0, 2, "0 chip(s) of 2 tile(s): expected at least one chip and 1..=120 tiles per chip"),
            (2, 0, "2 chip(s) of 0 tile(s)"),
            (1, 121, "1 chip(s) of 121 tile(s)"),
            (1 << 31, 1 << 31, "2147483648 chip(s) of 2147483648 tile(s)"),
            (u32::MAX, 120, "tile table is 16 bytes, expected 2061584301600 (4 per tile for 4294967295 chip(s) of 120 tiles)"),
        ] {
            let e = decode(&patched(&bytes, &[(chips, c), (tiles, t)])).unwrap_err();
            assert!(e.contains(want), "{c} x {t}: {e}");
        }
        // A section length past the end of the file is named, not allocated.
        let first_len = FIXED + 8;
        let e = decode(&patched(
            &bytes,
            &[(first_len, u32::MAX), (first_len + 4, u32::MAX)],
        ))
        .unwrap_err();
        assert!(
            e.contains("body of section 0 (tag 1)")
                && e.contains("needs 18446744073709551615 bytes"),
            "{e}"
        );
    }

    /// A snapshot written with drained payload handed over ring by ring (a session's spool)
    /// loads with that payload left in the file, read back when a ring is asked for, after
    /// what was added in memory; saved again, it keeps every byte.
    #[test]
    fn drained_payload_is_written_ring_by_ring_and_read_back_from_the_file() {
        use crate::readout::RingId;
        let dir = crate::testing::temp_dir("snapshot-drained");
        let path = dir.join("s.snap");
        let s = snapshot();
        s.add_drained(1, NocCoord::new(2, 1), Risc::Trisc1, &[1, 2])
            .unwrap();
        let ring = |chip, x, y, risc| RingId {
            chip,
            tile: NocCoord::new(x, y),
            risc,
        };
        let rings = [
            (ring(1, 2, 1, Risc::Trisc1), 3),
            (ring(0, 1, 1, Risc::Brisc), 1000),
        ];
        let mut asked = Vec::new();
        let pieces = |id: RingId, piece: &mut dyn FnMut(&[u8])| {
            if id.chip == 1 {
                piece(&[3, 4]);
                piece(&[5]);
            } else {
                [9; 1000].chunks(300).for_each(&mut *piece);
            }
        };
        s.save_with_drained(
            &path,
            &crate::inputs::Inputs::none(),
            &rings,
            |id, piece| {
                asked.push(id);
                pieces(id, piece);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(asked.len(), 2, "each ring asked once");
        // Pieces that do not add up to the ring's length: an error naming the ring, no file.
        let short = dir.join("short.snap");
        let e = s
            .save_with_drained(
                &short,
                &crate::inputs::Inputs::none(),
                &[(ring(0, 1, 1, Risc::Brisc), 1001)],
                |id, piece| {
                    pieces(id, piece);
                    Ok(())
                },
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("was 1000 bytes, said to be 1001"), "{e}");
        assert!(!short.exists());
        let back = Snapshot::load(&path, &crate::inputs::Inputs::none()).unwrap();
        assert!(back.drained.read().unwrap().is_empty(), "nothing held");
        assert_eq!(back.in_file.len(), 2);
        assert_eq!(back.drained_bytes(), 1005);
        assert_eq!(
            payload_of(&back, 1, NocCoord::new(2, 1), Risc::Trisc1).unwrap(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(
            payload_of(&back, 0, NocCoord::new(1, 1), Risc::Brisc).unwrap(),
            vec![9; 1000]
        );
        assert!(payload_of(&back, 0, NocCoord::new(1, 1), Risc::Ncrisc).is_none());
        let again = dir.join("again.snap");
        back.save(&again, &crate::inputs::Inputs::none()).unwrap();
        let twice = Snapshot::load(&again, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!(
            payload_of(&twice, 1, NocCoord::new(2, 1), Risc::Trisc1).unwrap(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(twice.drained_bytes(), 1005);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn files_are_loaded_header_first_checksum_streamed_then_bodies_each_bounded() {
        let dir = crate::testing::temp_dir("snapshot-load");
        let path = dir.join("s.snap");
        let s = snapshot();
        s.add(0, NocCoord::new(1, 1), 0x40, &[0xAB, 0xCD]).unwrap();
        s.add_drained(1, NocCoord::new(2, 1), Risc::Trisc1, &[1, 2, 3, 4, 5])
            .unwrap();
        s.add_drained(1, NocCoord::new(2, 1), Risc::Trisc1, &[6])
            .unwrap();
        s.save(&path, &crate::inputs::Inputs::none()).unwrap();
        let back = Snapshot::load(&path, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!(back.extents(), s.extents());
        assert_eq!(
            payload_of(&back, 1, NocCoord::new(2, 1), Risc::Trisc1).unwrap(),
            [1, 2, 3, 4, 5, 6]
        );
        // Every cut file is refused, the way the in-memory decoder refuses it.
        let bytes = std::fs::read(&path).unwrap();
        for cut in 0..bytes.len() {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let e = Snapshot::load(&path, &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("truncated") || e.contains("checksum") || e.contains("magic"),
                "cut {cut}: {e}"
            );
        }
        // A huge file with the magic: its header is refused before anything else is read.
        let huge = dir.join("huge.snap");
        let f = std::fs::File::create(&huge).unwrap();
        std::io::Write::write_all(&mut &f, &SNAPSHOT_MAGIC).unwrap();
        f.set_len(1 << 40).unwrap();
        let e = Snapshot::load(&huge, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("huge.snap: snapshot format version 0, this build reads version 1"),
            "{e}"
        );
        // A section that claims more than the file, or more than its tag can hold: named
        // from its header alone (the 1 TiB of zeros after it is never read).
        let header = |tag: u32, len: u64| {
            let mut b = bytes[..FIXED].to_vec();
            b[28..32].copy_from_slice(&1u32.to_le_bytes());
            b.extend_from_slice(&tag.to_le_bytes());
            b.extend_from_slice(&0u32.to_le_bytes());
            b.extend_from_slice(&len.to_le_bytes());
            b
        };
        for (tag, len, want) in [
            (
                TAG_DRAINED,
                u64::MAX,
                "body of section 0 (tag 4) at byte 48 needs 18446744073709551615 bytes",
            ),
            (
                TAG_EXTENT,
                12 + (1 << 21),
                "section 0: extent body of 2097164 bytes: expected 12 bytes of place",
            ),
            (
                TAG_TILES,
                1 << 30,
                "section 0: tile table is 1073741824 bytes, expected 16",
            ),
        ] {
            std::fs::write(&huge, header(tag, len)).unwrap();
            std::fs::File::options()
                .write(true)
                .open(&huge)
                .unwrap()
                .set_len(1 << 40)
                .unwrap();
            let e = Snapshot::load(&huge, &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{tag}: {e}");
        }
        // A section that fits, with a wrong checksum: the checksum is checked (streamed)
        // before any body is held.
        std::fs::write(&huge, header(TAG_DRAINED, (64 << 20) - 56)).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&huge)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let e = Snapshot::load(&huge, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(e.contains("huge.snap: checksum mismatch"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_tile_table_with_a_tile_twice_or_not_a_worker_is_refused() {
        let bytes = snapshot().encode().unwrap();
        // The tile table is the first section: (1,1), (2,1) per chip; entry 1 of chip 1
        // made (1,1) again would merge the two tiles' extents under one coordinate.
        let entry = |chip: usize, i: usize| FIXED + 16 + 4 * (2 * chip + i);
        let mut twice = bytes[..bytes.len() - 8].to_vec();
        twice[entry(1, 1)] = 1;
        let hash = fnv1a(&twice);
        twice.extend_from_slice(&hash.to_le_bytes());
        let e = decode(&twice).unwrap_err();
        assert!(
            e.contains("tile table of chip 1 lists tile (1,1) twice (entries 0 and 1)"),
            "{e}"
        );
        let mut off_grid = bytes[..bytes.len() - 8].to_vec();
        off_grid[entry(0, 1)] = 5; // NoC column 5 of Wormhole holds no Tensix tiles
        let hash = fnv1a(&off_grid);
        off_grid.extend_from_slice(&hash.to_le_bytes());
        let e = decode(&off_grid).unwrap_err();
        assert!(e.contains("tile table entry 1 of chip 0 is (5,1), which is not a Tensix worker tile of wormhole_b0"), "{e}");
        // The same for a snapshot built in memory.
        let g = snapshot().geometry();
        let t = NocCoord::new(1, 1);
        let e = Snapshot::new(g, vec![vec![t, NocCoord::new(2, 1)], vec![t, t]])
            .unwrap_err()
            .to_string();
        assert!(e.contains("lists tile (1,1) twice"), "{e}");
    }
}
