//! What the fuzz targets share: an allocator that turns a giant allocation into a crash,
//! an unnamed scratch file for the parsers that read paths, and the ring-decoder oracle
//! (the fast decoders against the reference `ttprof_rt::wire::decode`, compared the way
//! `host/src/decode/tests.rs` compares them).

use std::alloc::{GlobalAlloc, Layout, System};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

pub use ttprof_rt::wire;

/// The largest single allocation a target may make: no parser of these inputs (at most a
/// few MiB each) needs more, so a larger one comes from a size read from the input and
/// not checked. (libFuzzer's `-malloc_limit_mb` needs a sanitizer's allocator hooks; with
/// `--sanitizer none` this allocator is what enforces it.)
pub const ALLOC_LIMIT: usize = 256 << 20;

/// The system allocator, aborting (a crash libFuzzer saves) on an allocation over
/// [`ALLOC_LIMIT`], with the size and a backtrace on stderr.
pub struct LimitedAlloc;

static REPORTING: AtomicBool = AtomicBool::new(false);

impl LimitedAlloc {
    #[cold]
    fn over_limit(size: usize) -> ! {
        use std::io::Write;
        if !REPORTING.swap(true, Ordering::SeqCst) {
            let mut err = std::io::stderr();
            let _ = writeln!(err, "==ttprof-fuzz== allocation of {size} bytes exceeds the fuzz limit of {ALLOC_LIMIT} bytes");
            let _ = writeln!(err, "{}", std::backtrace::Backtrace::force_capture());
        }
        std::process::abort()
    }

    fn check(size: usize) {
        if size > ALLOC_LIMIT && !REPORTING.load(Ordering::Relaxed) {
            Self::over_limit(size)
        }
    }
}

unsafe impl GlobalAlloc for LimitedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::check(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Installs [`LimitedAlloc`] as the global allocator of a fuzz target.
#[macro_export]
macro_rules! limit_allocations {
    () => {
        #[global_allocator]
        static ALLOC: $crate::LimitedAlloc = $crate::LimitedAlloc;
    };
}

/// A regular file with no name (created and unlinked at once, on tmpfs where there is one),
/// reachable by path as `/proc/self/fd/N` for as long as the process lives: nothing is left
/// behind, whatever way the fuzzer ends.
pub struct Scratch {
    file: File,
    path: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let shm = std::path::Path::new("/dev/shm");
        let dir = if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() };
        for n in 0u32.. {
            let name = dir.join(format!("ttprof-fuzz-{}-{n}", std::process::id()));
            match std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&name) {
                Ok(file) => {
                    std::fs::remove_file(&name).expect("unlink the scratch file");
                    let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
                    return Scratch { file, path };
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => panic!("cannot create a scratch file in {}: {e}", dir.display()),
            }
        }
        unreachable!()
    }

    /// The path through which the file's contents are read.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Replaces the contents with `bytes`, then sets the length to `len` (zeros after the
    /// bytes, as a sparse file) when that is larger.
    pub fn set(&self, bytes: &[u8], len: u64) {
        self.file.set_len(0).expect("truncate the scratch file");
        self.file.write_all_at(bytes, 0).expect("write the scratch file");
        if len > bytes.len() as u64 {
            self.file.set_len(len).expect("extend the scratch file");
        }
    }
}

/// The process's scratch file (fuzz targets run one input at a time).
pub fn scratch() -> std::sync::MutexGuard<'static, Scratch> {
    static SCRATCH: OnceLock<Mutex<Scratch>> = OnceLock::new();
    SCRATCH.get_or_init(|| Mutex::new(Scratch::new())).lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether inputs that reach a known issue are skipped instead of being crashes: set
/// `TTPROF_FUZZ_SKIP_KNOWN=1` to explore past bugs that are already reported (never in CI).
pub fn skip_known() -> bool {
    static SKIP: OnceLock<bool> = OnceLock::new();
    *SKIP.get_or_init(|| std::env::var_os("TTPROF_FUZZ_SKIP_KNOWN").is_some_and(|v| !v.is_empty() && v != "0"))
}

/// Known issues, reported and being fixed: an arithmetic overflow panic in one of these
/// files (u64 time wraps in the decoders near 2^64; size computations of the device-image
/// header and the snapshot loader).
const KNOWN_OVERFLOWS: [&str; 4] =
    ["device-rt/src/wire.rs", "host/src/decode/", "riscv-linker/src/devfile.rs", "host/src/devmem/snapshot.rs"];

std::thread_local! {
    static KNOWN_HIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs a target's body. With [`skip_known`], a panic that is a known issue ends the input
/// quietly (counted on stderr once per 1000); every other panic is a crash as usual.
pub fn run(body: impl FnOnce()) {
    if !skip_known() {
        return body();
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    static SKIPPED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    HOOK.call_once(|| {
        let crash = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let file = info.location().map_or("", |l| l.file());
            if msg.contains("with overflow") && KNOWN_OVERFLOWS.iter().any(|k| file.contains(k)) {
                KNOWN_HIT.with(|k| k.set(true));
            } else {
                crash(info)
            }
        }));
    });
    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        if !KNOWN_HIT.with(|k| k.replace(false)) {
            std::panic::resume_unwind(p)
        }
        if SKIPPED.fetch_add(1, Ordering::Relaxed) % 1000 == 0 {
            eprintln!("==ttprof-fuzz== TTPROF_FUZZ_SKIP_KNOWN: skipped {} input(s) that hit a known overflow", SKIPPED.load(Ordering::Relaxed));
        }
    }
}

/// 64-bit FNV-1a, the checksum that ends a snapshot file.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

pub mod ring {
    //! The decoder oracle.
    use ttprof::decode::{DecodeError, Decoder, Records, Stop, ZoneTable};
    use ttprof_rt::wire::{decode as wire_decode, DecodeError as WireError, Decoded, Record};

    /// How a decode of a piece ended.
    #[derive(Debug, PartialEq, Eq)]
    pub enum End {
        Stop(Stop),
        Error(DecodeError),
    }

    fn as_end(r: Result<Stop, DecodeError>) -> End {
        match r {
            Ok(s) => End::Stop(s),
            Err(e) => End::Error(e),
        }
    }

    /// The reference decoder's records and end for one piece, with the fast decoders' rules
    /// for where a piece ends, starting from `reference`; also the reference after the
    /// last record.
    pub fn reference(bytes: &[u8], mut reference: u64) -> (Vec<Record>, End, u64) {
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            let rest = &bytes[i..];
            if rest.len() < 4 {
                let stop = if rest.is_empty() { Stop::End } else { Stop::Short { at: i } };
                return (out, End::Stop(stop), reference);
            }
            let halves: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
            match wire_decode(&halves, reference) {
                Ok(Decoded::Pad) => return (out, End::Stop(Stop::Pad { at: i }), reference),
                // The one known divergence (see host/src/decode/tests.rs): `wire::decode`
                // returns a short zone whose duration exceeds its end without the check its
                // other zone forms make; the fast decoders report an impossible time.
                Ok(Decoded::Record(Record::Zone { end, duration, .. }, 3)) if duration > end => {
                    return (out, End::Error(DecodeError { at: i, kind: WireError::Time }), reference)
                }
                Ok(Decoded::Record(r, n)) => {
                    reference = r.ref_time().unwrap_or(reference);
                    out.push(r);
                    i += 2 * n;
                }
                Err(kind) => return (out, End::Error(DecodeError { at: i, kind }), reference),
            }
        }
    }

    /// Decodes `bytes` with both fast decoders from `decoder`'s state (left as the rich
    /// decoder ends), checks they agree with each other row for row and in their final
    /// state, and returns the records and how the decode ended.
    pub fn fast(bytes: &[u8], decoder: &mut Decoder) -> (Vec<Record>, End, Records) {
        let mut compact_decoder = *decoder;
        let mut out = Records::new();
        let end = as_end(decoder.decode(bytes, &mut out));
        let mut table = ZoneTable::new();
        let compact_end = as_end(compact_decoder.decode_compact(bytes, &mut table));
        assert_eq!(compact_end, end, "the compact and rich decoders stop alike");
        assert_eq!(compact_decoder, *decoder, "the compact and rich decoders end in the same state");
        assert_eq!(table.to_records(), out, "the compact table's rows equal the rich rows");
        let records = (0..out.len()).map(|i| out.record(i).expect("every decoded row is a record")).collect();
        (records, end, out)
    }

    /// The whole check on one piece: the fast decoders agree with each other and with the
    /// reference (the same records, or both an error at the same byte with the same
    /// error), the run column follows the latest `Run` record, an error names its byte, and
    /// the decoder state after the piece is the reference's.
    pub fn check_piece(bytes: &[u8], decoder: &mut Decoder) -> (Vec<Record>, End) {
        let start = *decoder;
        let (got, end, rows) = fast(bytes, decoder);
        let (want, want_end, want_reference) = reference(bytes, start.reference);
        assert_eq!((&got, &end), (&want, &want_end), "the fast decoders agree with wire::decode on {bytes:02x?}");
        let mut run = start.run;
        for (i, r) in got.iter().enumerate() {
            if let Record::Run { run_id, .. } = r {
                run = *run_id;
            }
            assert_eq!(rows.run_at(i), run, "record {i}'s run is that of the latest Run record");
        }
        assert_eq!(*decoder, Decoder { reference: want_reference, run }, "the state after the piece");
        if let End::Error(e) = end {
            assert!(e.at < bytes.len(), "an error lies inside the piece: {e:?}");
            assert!(e.to_string().contains(&format!("byte {}", e.at)), "the message names the byte: {e}");
        }
        if let End::Stop(Stop::Pad { at } | Stop::Short { at }) = end {
            assert!(at < bytes.len());
        }
        (got, end)
    }
}
