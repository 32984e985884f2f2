//! The op log: what the host program launched, one JSON object per line.
//!
//! A host program records every launch (an "op": one program run on the device) through
//! [`OpLogWriter`]. The readout joins device records to ops by run id: the device writes the
//! run id the launcher gave it at the start of every launch (`Run` record), and each op line
//! names that run id and the kernel ELF that ran on each (tile, RISC), which is how zone ids
//! are resolved to names and source lines. The op report (`ops_perf_results_*.csv`) takes
//! its op names, attributes and tensors from here.
//!
//! ```json
//! {"op":{"run_id":1,"device":0,"op_code":"Matmul","op_type":"tt_dnn_device","attributes":{"tiles":"8"},
//!   "inputs":[{"id":7,"shape":[1,1,32,256],"layout":"TILE","dtype":"BFLOAT16","memory":"DEV_0_L1_INTERLEAVED"}],
//!   "outputs":[...],"host_start_ns":1000,"host_end_ns":9000,
//!   "kernels":[{"risc":"BRISC","elf":"kernels/reader","cores":[[1,1],[2,1]]}]}}
//! {"signpost":{"name":"warmup-done","device":0,"host_ns":12000}}
//! {"held":{"run_id":1,"device":0,"core":[1,1],"risc":"TRISC_1","spans":[[81920,60,"tensix-fifo: SrcA valid"]]}}
//! {"held":{"run_id":1,"device":0,"core":[1,1],"risc":"TRISC_1","spans":[],"gate":[[81900,90,"tensix-fifo: SrcA valid"]]}}
//! {"held":{"run_id":1,"device":0,"core":[1,1],"risc":"TRISC_1","spans":[],"posts":[[82100,0]]}}
//! ```
//!
//! A `held` line (the emulator writes them) lists when a core of an op was held on an
//! access the tile moved it past: `[wall clock at the start, cycles, why]`, why being the
//! emulator's cause (`tensix-fifo: <what its Tensix thread waits on>`, `ttsync: ...`,
//! `fifo-wait`). The analysis counts those cycles as waits, not busy time. For a TRISC the
//! emulator also writes its Tensix thread's side, which no kernel can record: `gate`, when
//! the thread's wait gate held the instruction at its head on another thread's hand-over
//! (`Src` data or a bank's return, a semaphore) and which (same form), and
//! `posts` and `gets`, each `SEMPOST` and `SEMGET` the thread executed, `[wall clock,
//! semaphore]`. The critical path
//! uses them to walk through the coprocessor ([`crate::critpath`]).

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use riscv_linker::{NocCoord, Risc};
use serde::{Deserialize, Serialize};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// How many leading bytes [`OpLog::read`] looks at to tell a file that is not an op log
/// (device memory, an ELF, binary data) from one that is.
const SNIFF_BYTES: u64 = 4096;

/// The longest op log line read (one op or signpost: a few KB in practice). A longer line
/// is refused before more of it is held: parsed, a line of JSON takes up to ~16 times its
/// size in memory.
pub(crate) const MAX_LINE_BYTES: usize = 1 << 20;

/// A tensor as the op report describes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorDesc {
    /// The tensor's identity, as ttnn's `tensor_id`: the same id on one op's output and
    /// another's input makes the second consume what the first produced (the op graph,
    /// [`crate::sink::graph`]). `None` (an op log written without ids): the op has no edges.
    /// Not written when `None`, so op logs without ids read and write as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// `[W, Z, Y, X]` (padded), tt-metal's order.
    pub shape: [u32; 4],
    /// `TILE` or `ROW_MAJOR`.
    pub layout: String,
    /// e.g. `BFLOAT16`.
    pub dtype: String,
    /// e.g. `DEV_0_L1_INTERLEAVED` or `DEV_0_DRAM_INTERLEAVED`.
    pub memory: String,
}

/// Which kernel image ran on which cores for one RISC.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelBinding {
    /// tt-metal's RISC name (`BRISC`, `NCRISC`, `TRISC_0`, ...).
    pub risc: String,
    /// Path of the kernel ELF (relative paths are relative to the op log's directory).
    pub elf: PathBuf,
    /// NoC0 `[x, y]` of every tile it ran on.
    pub cores: Vec<[u8; 2]>,
}

impl KernelBinding {
    /// The core its `risc` field names, or `None` for a name the profiler does not know.
    pub fn risc(&self) -> Option<Risc> {
        Risc::from_name(&self.risc)
    }

    /// Whether this kernel ran on `tile` (NoC0 coordinates) in this op.
    pub(crate) fn runs_on(&self, tile: NocCoord) -> bool {
        self.cores.iter().any(|c| c[0] == tile.x && c[1] == tile.y)
    }
}

/// One launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpRecord {
    /// The run id the launcher gave the device for this launch (what its `Run` records carry).
    pub run_id: u32,
    /// Chip (device) index the op ran on.
    pub device: u32,
    /// The op's name in the op report (tt-metal's `OP CODE`, e.g. `Matmul`).
    pub op_code: String,
    /// `tt_dnn_device` for device ops.
    pub op_type: String,
    /// The op's parameters, as the op report's `ATTRIBUTES` column shows them (may be empty).
    #[serde(default)]
    pub attributes: serde_json::Map<String, serde_json::Value>,
    /// Input tensors, in argument order (may be empty).
    #[serde(default)]
    pub inputs: Vec<TensorDesc>,
    /// Output tensors, in order (may be empty).
    #[serde(default)]
    pub outputs: Vec<TensorDesc>,
    /// Host time (ns since the op log's epoch) when the host launched the op.
    pub host_start_ns: u64,
    /// Host time (ns since the op log's epoch) when the host saw it finish; never before
    /// `host_start_ns` in an op log that was read back.
    pub host_end_ns: u64,
    /// Which kernel ELF ran on which cores, per RISC (empty: no device code is known).
    #[serde(default)]
    pub kernels: Vec<KernelBinding>,
    /// Performance counters over the op, per tile (`ttprof run --counters`; empty: none
    /// were armed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<TileCounters>,
}

/// The banks a counted zone may count, as `ttprof run --counters` names their groups.
pub const COUNTED_BANKS: [&str; 5] = ["fpu", "instrn", "unpack", "pack", "l1"];

/// Each of [`COUNTED_BANKS`] as the op log's counters name the bank (tt-llk's group).
pub const COUNTED_BANK_NAMES: [&str; 5] =
    ["FPU", "INSTRN_THREAD", "TDMA_UNPACK", "TDMA_PACK", "L1"];

/// One tile's performance counters over an op: what the host read after the launch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileCounters {
    /// NoC0 `[x, y]` of the tile.
    pub core: [u8; 2],
    /// Cycles the banks counted (from the arming before the launch to the read after it).
    pub cycles: u64,
    /// One per armed bank.
    pub values: Vec<CounterValue>,
    /// Bytes of read data the tile's NIUs received over the op, both NoCs (the NIU status
    /// counter `RD_DATA_WORD_RECEIVED`, in NoC words of 32 B on Wormhole, 64 on Blackhole:
    /// a partial word counts whole). `None` in logs older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noc_read_bytes: Option<u64>,
    /// Bytes of write data the tile's NIUs sent over the op, both NoCs, posted and not
    /// (`*_WR_DATA_WORD_SENT`, as above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noc_write_bytes: Option<u64>,
}

/// One counter's value over an op on one tile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterValue {
    /// The bank (`FPU`, `INSTRN_THREAD`, `TDMA_UNPACK`, `TDMA_PACK`, `L1`).
    pub bank: String,
    /// The counter, as tt-llk's tables name it (`FPU_COUNTER`).
    pub name: String,
    /// Cycles (or instructions, for `THREAD_INSTRUCTIONS_*`) it counted.
    pub value: u64,
}

impl OpRecord {
    /// The counter `--counters` armed in bank `group` (`fpu`, ..., one of
    /// [`COUNTED_BANKS`]) for this op, as the first tile read it.
    pub fn armed_counter(&self, group: &str) -> Option<&str> {
        let i = COUNTED_BANKS.iter().position(|&b| b == group)?;
        let bank = COUNTED_BANK_NAMES[i];
        self.counters
            .iter()
            .flat_map(|t| &t.values)
            .find(|c| c.bank == bank)
            .map(|c| c.name.as_str())
    }

    /// A device op (`tt_dnn_device`) of run `run_id` on chip `device` from host time `start`
    /// to `end` (ns), with these kernels, no attributes and no tensors.
    pub fn device_op(
        run_id: u32,
        device: u32,
        op_code: impl Into<String>,
        (start, end): (u64, u64),
        kernels: Vec<KernelBinding>,
    ) -> OpRecord {
        OpRecord {
            run_id,
            device,
            op_code: op_code.into(),
            op_type: "tt_dnn_device".into(),
            attributes: Default::default(),
            inputs: vec![],
            outputs: vec![],
            host_start_ns: start,
            host_end_ns: end,
            kernels,
            counters: Vec::new(),
        }
    }

    /// The kernel that ran on `risc` of `tile` in this op.
    pub fn kernel_for(&self, tile: NocCoord, risc: Risc) -> Option<&KernelBinding> {
        self.kernels
            .iter()
            .find(|k| k.risc() == Some(risc) && k.runs_on(tile))
    }
}

/// A named marker between ops (tt-metal's signposts).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signpost {
    /// The user's label for this point of the host program.
    pub name: String,
    /// Chip (device) index it is shown on.
    pub device: u32,
    /// Host time (ns since the op log's epoch) when it was recorded.
    pub host_ns: u64,
}

/// When the emulator held one core of one op (a `held` line; at most [`HELD_SPANS_PER_LINE`]
/// stretches a line, a core's further stretches on further lines).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreHolds {
    /// The op's run id.
    pub run_id: u32,
    /// The op's chip.
    pub device: u32,
    /// NoC0 `[x, y]` of the tile.
    pub core: [u8; 2],
    /// tt-metal's RISC name.
    pub risc: String,
    /// `(wall clock at the start, cycles, why)`, in time order.
    pub spans: Vec<(u64, u32, String)>,
    /// Held cycles the emulator counted but did not place (past its cap).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_cycles: u64,
    /// A TRISC's Tensix thread: when its wait gate held the instruction at its head,
    /// `(wall clock at the start, cycles, why)`, why as in `spans` (`tensix-fifo: SrcA
    /// valid`: waiting for unpack's data). Not written when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gate: Vec<(u64, u32, String)>,
    /// Gate cycles counted but not placed (past the emulator's cap).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gate_lost_cycles: u64,
    /// A TRISC's Tensix thread: each `SEMPOST` it executed, `(wall clock, semaphore)`, in
    /// time order (the TRISC records a post when it pushes it; the thread executes it
    /// later, after what was queued before it). Not written when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub posts: Vec<(u64, u32)>,
    /// A TRISC's Tensix thread: each `SEMGET` it executed, likewise (a thread waiting for
    /// a semaphore below its maximum is let go by one). Not written when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gets: Vec<(u64, u32)>,
    /// Posts and gets counted but not placed (past the emulator's cap).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_posts: u64,
}

impl CoreHolds {
    /// The line's core with no stretch, post or count.
    fn bare(&self) -> CoreHolds {
        CoreHolds {
            run_id: self.run_id,
            device: self.device,
            core: self.core,
            risc: self.risc.clone(),
            spans: Vec::new(),
            lost_cycles: 0,
            gate: Vec::new(),
            gate_lost_cycles: 0,
            posts: Vec::new(),
            gets: Vec::new(),
            lost_posts: 0,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Most stretches on one `held` line (~45 bytes each: well under the 1 MiB an op log line
/// may take).
pub const HELD_SPANS_PER_LINE: usize = 16_384;

/// One line of the op log: `{"op":{...}}`, `{"signpost":{...}}` or `{"held":{...}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpLogEntry {
    /// A launch.
    Op(OpRecord),
    /// A named marker between launches.
    Signpost(Signpost),
    /// When the emulator held a core of an op.
    Held(CoreHolds),
}

/// An op log read back: its entries in file order, and its path (whose directory relative
/// ELF paths are resolved against).
#[derive(Clone, Debug, Default)]
pub struct OpLog {
    /// The op log file.
    pub path: PathBuf,
    /// Every line, in file order.
    pub entries: Vec<OpLogEntry>,
    /// The input guard of the command that read it ([`OpLog::read`]): the kernel ELFs it
    /// names are read through it too (by the model's resolver and provenance check).
    /// [`Inputs::none`] for an op log made in memory.
    pub inputs: Inputs,
}

impl OpLog {
    /// Reads an op log; a malformed line is an error naming the line, and so is an op that
    /// finished before it was launched (`host_end_ns` before `host_start_ns`).
    ///
    /// Only a regular file is read: a directory, FIFO or device (`/dev/zero`) is refused
    /// before it is opened, since reading it could block or never end. A file that is
    /// something else (a device image, a snapshot, an ELF, binary data) is an error that
    /// says what it looks like, and whether `--device` and `--oplog` were swapped. The file is
    /// noted in `inputs` (the command's input guard).
    pub fn read(path: &Path, inputs: &Inputs) -> Result<OpLog> {
        check_regular_file(
            path,
            std::fs::metadata(path).map_err(|e| Error::io(path, "open op log", e))?,
        )?;
        let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, "open op log", e))?;
        // The path may have been replaced between the two looks: check what was opened.
        let meta = file
            .metadata()
            .map_err(|e| Error::io(path, "stat op log", e))?;
        check_regular_file(path, meta.clone())?;
        inputs.note(path, &meta);
        let mut head = Vec::new();
        (&mut file)
            .take(SNIFF_BYTES)
            .read_to_end(&mut head)
            .map_err(|e| Error::io(path, "read op log", e))?;
        if let Some(what) = not_an_op_log(&head) {
            return Err(Error::BadFile {
                path: path.into(),
                what,
            });
        }
        file.seek(SeekFrom::Start(0))
            .map_err(|e| Error::io(path, "read op log", e))?;
        let mut entries = Vec::new();
        let mut lines =
            crate::files::BoundedLines::new(std::io::BufReader::new(file), MAX_LINE_BYTES);
        loop {
            let (n, bytes) = match lines.next_line() {
                Ok(Some(l)) => l,
                Ok(None) => break,
                Err(crate::files::LineError::TooLong { line, max }) => {
                    return Err(Error::OpLog {
                        path: path.into(),
                        line,
                        what: format!(
                            "longer than {max} bytes: an op log line is one op or signpost (a few KB); refusing to read \
                             more of it"
                        ),
                    })
                }
                Err(crate::files::LineError::Io(e)) => return Err(Error::io(path, "read op log", e)),
            };
            let line = std::str::from_utf8(bytes).map_err(|_| Error::OpLog {
                path: path.into(),
                line: n,
                what: "not UTF-8 text: an op log is JSON lines".into(),
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let entry: OpLogEntry = serde_json::from_str(line).map_err(|e| Error::OpLog {
                path: path.into(),
                line: n,
                what: e.to_string(),
            })?;
            if let OpLogEntry::Op(op) = &entry {
                check_op(op).map_err(|what| Error::OpLog {
                    path: path.into(),
                    line: n,
                    what,
                })?;
            }
            entries.push(entry);
        }
        Ok(OpLog {
            path: path.into(),
            entries,
            inputs: inputs.clone(),
        })
    }

    /// The launches, in file order (signposts skipped).
    pub fn ops(&self) -> impl Iterator<Item = &OpRecord> {
        self.entries.iter().filter_map(|e| match e {
            OpLogEntry::Op(o) => Some(o),
            _ => None,
        })
    }

    /// The `held` lines, in file order.
    pub fn holds(&self) -> impl Iterator<Item = &CoreHolds> {
        self.entries.iter().filter_map(|e| match e {
            OpLogEntry::Held(h) => Some(h),
            _ => None,
        })
    }

    /// The op with this run id on this device (the first, if several claim it). A scan of
    /// the log: to look up many, index [`OpLog::ops`] once, as the resolver does.
    pub fn op(&self, device: u32, run_id: u32) -> Option<&OpRecord> {
        self.ops()
            .find(|o| o.run_id == run_id && o.device == device)
    }

    /// An ELF path from the log, made absolute against the log's directory.
    pub fn resolve_path(&self, elf: &Path) -> PathBuf {
        if elf.is_absolute() {
            elf.into()
        } else {
            self.path.parent().unwrap_or(Path::new(".")).join(elf)
        }
    }
}

/// What is wrong with an op whose line parsed, if anything.
fn check_op(op: &OpRecord) -> std::result::Result<(), String> {
    if op.host_end_ns < op.host_start_ns {
        return Err(format!(
            "op {} (run {}, device {}) ends before it starts: host_end_ns {} < host_start_ns {} (expected the host to \
             see an op finish after it launched it)",
            op.op_code, op.run_id, op.device, op.host_end_ns, op.host_start_ns
        ));
    }
    Ok(())
}

/// Refuses anything but a regular file (`meta` is the path's metadata, links followed).
fn check_regular_file(path: &Path, meta: std::fs::Metadata) -> Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    let what = if meta.is_dir() {
        "is a directory, not an op log (the JSON-lines file the host program writes)".to_string()
    } else {
        "is not a regular file (a FIFO, socket or device?): an op log is a regular file of JSON lines, \
         and reading anything else could block or never end"
            .to_string()
    };
    Err(Error::BadFile {
        path: path.into(),
        what,
    })
}

/// What a file that starts with `head` (its first [`SNIFF_BYTES`] bytes, or all of it) is,
/// when that is clearly not an op log; `None` for text.
fn not_an_op_log(head: &[u8]) -> Option<String> {
    const SWAPPED: &str = "did you swap --device and --oplog?";
    if head.starts_with(&riscv_linker::devfile::MAGIC) {
        return Some(format!(
            "is a device image (it starts with \"TTDEVMEM\"), not an op log: {SWAPPED}"
        ));
    }
    if head.starts_with(&crate::devmem::SNAPSHOT_MAGIC) {
        return Some(format!(
            "is a device-memory snapshot (it starts with \"TTSNAP\"), not an op log: {SWAPPED}"
        ));
    }
    if head.starts_with(b"\x7fELF") {
        return Some(
            "is an ELF file (a kernel?), not an op log: --oplog takes the JSON-lines file the host program writes"
                .into(),
        );
    }
    let cut_short = head.len() as u64 == SNIFF_BYTES;
    let invalid = match std::str::from_utf8(head) {
        Ok(_) => false,
        // An incomplete character at the end of a full sniff is the cut, not the file.
        Err(e) => e.error_len().is_some() || !cut_short,
    };
    // Text whose first line is JSON and whose damage comes later: an op log with a bad
    // line, named by its number (not a swapped argument).
    let bad_at = match std::str::from_utf8(head) {
        Err(e) if invalid => Some(e.valid_up_to()),
        _ => head.iter().position(|&b| b == 0),
    };
    if let Some(at) = bad_at {
        let before = &head[..at];
        let first = before.iter().find(|b| !b.is_ascii_whitespace());
        if first == Some(&b'{') && before.contains(&b'\n') {
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            return Some(format!(
                "line {line}: is not UTF-8 text (a bad byte at offset {at}): an op log is JSON lines in UTF-8"
            ));
        }
    }
    if invalid || head.contains(&0) {
        return Some(format!(
            "is binary data (not UTF-8 text; it starts with {:02x?}), not an op log: {SWAPPED}",
            &head[..head.len().min(8)]
        ));
    }
    None
}

/// Appends entries to an op log as the host program runs.
pub struct OpLogWriter {
    path: PathBuf,
    out: BufWriter<std::fs::File>,
}

impl OpLogWriter {
    /// Creates (or truncates) the op log at `path`.
    /// Refuses a path that holds anything but a regular file (a link, a FIFO, a device)
    /// or one of `inputs` ([`crate::atomic::check_destination`]).
    pub fn create(path: &Path, inputs: &Inputs) -> Result<OpLogWriter> {
        crate::atomic::check_destination(path, inputs)?;
        let file = std::fs::File::create(path).map_err(|e| Error::io(path, "create op log", e))?;
        Ok(OpLogWriter {
            path: path.into(),
            out: BufWriter::new(file),
        })
    }

    /// Appends one launch and flushes it to the file.
    pub fn op(&mut self, op: &OpRecord) -> Result<()> {
        self.write(&OpLogEntry::Op(op.clone()))
    }

    /// Appends one signpost and flushes it to the file.
    pub fn signpost(&mut self, s: &Signpost) -> Result<()> {
        self.write(&OpLogEntry::Signpost(s.clone()))
    }

    /// Appends when a core of an op was held, and its Tensix thread's gate and posts: one
    /// `held` line per [`HELD_SPANS_PER_LINE`] entries of one list, the counts on the first
    /// (a core with nothing to say writes nothing).
    pub fn holds(&mut self, h: &CoreHolds) -> Result<()> {
        let lines = h
            .spans
            .chunks(HELD_SPANS_PER_LINE)
            .map(|c| CoreHolds {
                spans: c.to_vec(),
                ..h.bare()
            })
            .chain(h.gate.chunks(HELD_SPANS_PER_LINE).map(|c| CoreHolds {
                gate: c.to_vec(),
                ..h.bare()
            }))
            .chain(h.posts.chunks(HELD_SPANS_PER_LINE).map(|c| CoreHolds {
                posts: c.to_vec(),
                ..h.bare()
            }))
            .chain(h.gets.chunks(HELD_SPANS_PER_LINE).map(|c| CoreHolds {
                gets: c.to_vec(),
                ..h.bare()
            }));
        let counts = |line: CoreHolds| CoreHolds {
            lost_cycles: h.lost_cycles,
            gate_lost_cycles: h.gate_lost_cycles,
            lost_posts: h.lost_posts,
            ..line
        };
        let mut written = 0;
        for line in lines {
            let line = if written == 0 { counts(line) } else { line };
            self.write(&OpLogEntry::Held(line))?;
            written += 1;
        }
        if written == 0 && counts(h.bare()) != h.bare() {
            self.write(&OpLogEntry::Held(counts(h.bare())))?;
        }
        Ok(())
    }

    fn write(&mut self, e: &OpLogEntry) -> Result<()> {
        let line = serde_json::to_string(e)
            .map_err(|e| Error::Internal(format!("op log entry as JSON: {e}")))?;
        writeln!(self.out, "{line}").map_err(|e| Error::io(&self.path, "write op log", e))?;
        self.out
            .flush()
            .map_err(|e| Error::io(&self.path, "write op log", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core's held stretches, its thread's gate and its posts go on separate lines of at
    /// most `HELD_SPANS_PER_LINE` entries (a line stays under the reader's limit), the
    /// counts on the first; read back they are what was written.
    #[test]
    fn held_lines_split_by_list_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ops.jsonl");
        let n = HELD_SPANS_PER_LINE as u64 + 1;
        let h = CoreHolds {
            run_id: 1,
            device: 0,
            core: [1, 1],
            risc: "TRISC_1".into(),
            spans: (0..n)
                .map(|k| (k * 10, 3, "tensix-fifo: SrcA valid".to_string()))
                .collect(),
            lost_cycles: 7,
            gate: vec![(5, 2, "tensix-fifo: SrcA valid".into()), (9, 1, "x".into())],
            gate_lost_cycles: 0,
            posts: vec![(20, 0), (30, 1), (40, 0)],
            gets: vec![(25, 0)],
            lost_posts: 2,
        };
        let mut w = OpLogWriter::create(&path, &Inputs::none()).unwrap();
        w.holds(&h).unwrap();
        w.holds(&CoreHolds {
            lost_cycles: 4,
            ..h.bare()
        })
        .unwrap();
        w.holds(&h.bare()).unwrap();
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 6, "{}", &text[text.len() - 400..]);
        assert!(text.lines().all(|l| l.len() < MAX_LINE_BYTES));
        let log = OpLog::read(&path, &Inputs::none()).unwrap();
        let lines: Vec<&CoreHolds> = log.holds().collect();
        let mut back = lines[0].bare();
        for l in &lines[..5] {
            back.spans.extend(l.spans.iter().cloned());
            back.gate.extend(l.gate.iter().cloned());
            back.posts.extend(l.posts.iter().cloned());
            back.gets.extend(l.gets.iter().cloned());
            back.lost_cycles += l.lost_cycles;
            back.gate_lost_cycles += l.gate_lost_cycles;
            back.lost_posts += l.lost_posts;
        }
        assert_eq!(back, h);
        assert_eq!((lines[0].lost_cycles, lines[0].lost_posts), (7, 2));
        assert_eq!(
            lines[5].lost_cycles, 4,
            "a count alone is a line of its own"
        );
    }

    #[test]
    fn op_log_round_trips_and_bad_lines_are_named() {
        let dir = std::env::temp_dir().join(format!("ttprof-oplog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ops.jsonl");
        let op = OpRecord {
            run_id: 3,
            device: 0,
            op_code: "Matmul".into(),
            op_type: "tt_dnn_device".into(),
            attributes: Default::default(),
            inputs: vec![],
            outputs: vec![],
            host_start_ns: 10,
            host_end_ns: 20,
            kernels: vec![KernelBinding {
                risc: "TRISC_1".into(),
                elf: "k/math".into(),
                cores: vec![[1, 1]],
            }],
            counters: vec![TileCounters {
                core: [1, 1],
                cycles: 900,
                values: vec![CounterValue {
                    bank: "FPU".into(),
                    name: "FPU_COUNTER".into(),
                    value: 35,
                }],
                noc_read_bytes: Some(4_096),
                noc_write_bytes: None,
            }],
        };
        let mut w = OpLogWriter::create(&path, &crate::inputs::Inputs::none()).unwrap();
        w.op(&op).unwrap();
        w.signpost(&Signpost {
            name: "s".into(),
            device: 0,
            host_ns: 30,
        })
        .unwrap();
        drop(w);
        let log = OpLog::read(&path, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!(log.op(0, 3), Some(&op));
        assert_eq!(
            log.op(0, 3)
                .unwrap()
                .kernel_for(NocCoord::new(1, 1), Risc::Trisc1)
                .unwrap()
                .elf,
            PathBuf::from("k/math")
        );
        assert_eq!(log.resolve_path(Path::new("k/math")), dir.join("k/math"));
        std::fs::write(&path, "{\"op\":{\"run_id\":1}}\n").unwrap();
        let e = OpLog::read(&path, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(e.contains(":1:") && e.contains("missing field"), "{e}");
        // An op that ends before it starts was accepted silently.
        let mut w = OpLogWriter::create(&path, &crate::inputs::Inputs::none()).unwrap();
        w.op(&op).unwrap();
        w.op(&OpRecord {
            run_id: 4,
            host_start_ns: 50,
            host_end_ns: 49,
            ..op.clone()
        })
        .unwrap();
        w.op(&OpRecord {
            run_id: 5,
            host_start_ns: 60,
            host_end_ns: 60,
            ..op.clone()
        })
        .unwrap();
        drop(w);
        let e = OpLog::read(&path, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ops.jsonl:2: op Matmul (run 4, device 0) ends before it starts: host_end_ns 49 < host_start_ns 50"),
            "{e}"
        );
    }

    #[test]
    fn tensor_ids_round_trip_and_op_logs_without_them_still_load() {
        let dir = crate::testing::temp_dir("oplog-ids");
        let path = dir.join("ops.jsonl");
        let t = |id: Option<u64>| TensorDesc {
            id,
            shape: [1, 1, 32, 32],
            layout: "TILE".into(),
            dtype: "BFLOAT16".into(),
            memory: "DEV_0_L1_INTERLEAVED".into(),
        };
        let op = OpRecord {
            run_id: 1,
            device: 0,
            op_code: "Add".into(),
            op_type: "tt_dnn_device".into(),
            attributes: Default::default(),
            inputs: vec![t(Some(7)), t(None)],
            outputs: vec![t(Some(8))],
            host_start_ns: 1,
            host_end_ns: 2,
            kernels: vec![],
            counters: vec![],
        };
        let mut w = OpLogWriter::create(&path, &crate::inputs::Inputs::none()).unwrap();
        w.op(&op).unwrap();
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("{\"id\":7,\"shape\"") && text.matches("\"id\"").count() == 2,
            "no id written for None: {text}"
        );
        assert_eq!(
            OpLog::read(&path, &crate::inputs::Inputs::none())
                .unwrap()
                .op(0, 1),
            Some(&op)
        );
        // A line from before ids existed.
        let old = "{\"op\":{\"run_id\":2,\"device\":0,\"op_code\":\"Relu\",\"op_type\":\"tt_dnn_device\",\
                   \"inputs\":[{\"shape\":[1,1,32,32],\"layout\":\"TILE\",\"dtype\":\"BFLOAT16\",\
                   \"memory\":\"DEV_0_L1_INTERLEAVED\"}],\"host_start_ns\":3,\"host_end_ns\":4}}\n";
        std::fs::write(&path, old).unwrap();
        let log = OpLog::read(&path, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!(log.op(0, 2).unwrap().inputs, [t(None)]);
        // An id that is not a non-negative integer is named.
        std::fs::write(&path, old.replace("{\"shape\"", "{\"id\":-1,\"shape\"")).unwrap();
        let e = OpLog::read(&path, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(e.contains(":1:") && e.contains("-1"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_that_are_not_op_logs_are_named_and_non_files_refused() {
        let dir = crate::testing::temp_dir("oplog-kinds");
        let err = |name: &str, bytes: &[u8]| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            OpLog::read(&path, &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string()
        };
        let mut image = riscv_linker::devfile::MAGIC.to_vec();
        image.resize(8192, 0);
        let e = err("device.img", &image);
        assert!(
            e.contains("device.img: is a device image")
                && e.contains("did you swap --device and --oplog?"),
            "{e}"
        );
        let mut snap = crate::devmem::SNAPSHOT_MAGIC.to_vec();
        snap.extend_from_slice(&[1, 0, 0, 0, 0xff]);
        let e = err("run.snap", &snap);
        assert!(
            e.contains("run.snap: is a device-memory snapshot") && e.contains("did you swap"),
            "{e}"
        );
        let e = err("kernel.elf", b"\x7fELF\x01\x01\x01\0\0\0");
        assert!(e.contains("kernel.elf: is an ELF file"), "{e}");
        let e = err("random.bin", &[0x9c, 0xff, 0x00, 0x12, 0x80]);
        assert!(
            e.contains("random.bin: is binary data") && e.contains("did you swap"),
            "{e}"
        );
        // Bad UTF-8 on line 2 (inside the sniff): the line is named, no "swap" (before, "is
        // binary data ... did you swap").
        let e = err(
            "line2.jsonl",
            b"{\"signpost\":{\"name\":\"a\",\"device\":0,\"host_ns\":1}}\n{\"op\":\xff}\n",
        );
        assert!(
            e.contains("line2.jsonl: line 2: is not UTF-8 text") && !e.contains("swap"),
            "{e}"
        );
        // Text whose first bytes look fine: the bad line is named.
        let mut late = vec![b'\n'; SNIFF_BYTES as usize + 10];
        late.extend_from_slice(b"\xff\xfe\n");
        let e = err("late.jsonl", &late);
        assert!(
            e.contains(&format!(
                "late.jsonl:{}: not UTF-8 text",
                SNIFF_BYTES as usize + 11
            )),
            "{e}"
        );
        // A multi-byte character cut by the sniff is not binary.
        let prefix = r#"{"signpost":{"name":""#;
        let name = format!(
            "{}\u{e9}",
            "a".repeat(SNIFF_BYTES as usize - 1 - prefix.len())
        );
        let line = format!(r#"{prefix}{name}","device":0,"host_ns":1}}}}"#);
        assert_eq!(
            line.as_bytes()[SNIFF_BYTES as usize - 1],
            0xc3,
            "the cut falls inside the character"
        );
        let path = dir.join("cut.jsonl");
        std::fs::write(&path, &line).unwrap();
        let log = OpLog::read(&path, &crate::inputs::Inputs::none()).unwrap();
        assert!(matches!(&log.entries[..], [OpLogEntry::Signpost(s)] if s.name == name));
        // Not regular files: refused without reading (/dev/zero would never end).
        let e = OpLog::read(&dir, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a directory, not an op log"), "{e}");
        let e = OpLog::read(Path::new("/dev/zero"), &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/zero: is not a regular file"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
