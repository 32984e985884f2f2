//! Tracy's network protocol, version 82 (Tracy 0.14.x): the numbers, in one place.
//!
//! Everything here is stated from Tracy's public source at tag `v0.14.0`
//! (github.com/wolfpld/tracy); each item names the file it comes from. All integers on the
//! wire are little-endian and every structure is packed (`#pragma pack(1)`).
//!
//! Roles: the profiled program (here: ttprof) *listens*; the capture tool (`tracy-capture`,
//! the GUI) connects, sends [`SHIBBOLETH`] + [`PROTOCOL_VERSION`], reads one
//! [`Handshake`] byte and, on [`Handshake::Welcome`], a [`Welcome`] message; then the program
//! streams LZ4 frames of events (see `frame.rs`) while the tool sends 13-byte
//! [`QueryPacket`]s that the program answers with more events.

use std::fmt;

/// `ProtocolVersion` in `public/common/TracyProtocol.hpp`. Tools speak exactly one version.
pub(crate) const PROTOCOL_VERSION: u32 = 82;

/// `HandshakeShibboleth` in `public/common/TracyProtocol.hpp`: the tool's first 8 bytes.
pub(crate) const SHIBBOLETH: [u8; 8] = *b"TracyPrf";

/// `TargetFrameSize` in `public/common/TracyProtocol.hpp`: the most bytes of events one
/// frame may decompress to (the server decompresses with this capacity, `TracyWorker.cpp`
/// `Worker::Network`). Events never straddle frames: the server parses each frame alone.
pub(crate) const TARGET_FRAME_SIZE: usize = 256 * 1024;

/// `Lz4CompressBound` in `public/common/TracyProtocol.hpp`: the server's buffer for one
/// compressed frame is `lz4_bound(TARGET_FRAME_SIZE)` bytes.
pub(crate) const fn lz4_bound(n: usize) -> usize {
    n + n / 255 + 16
}

/// `ProtocolOffset16Bit` / `ProtocolOffset32Bit` in `public/common/TracyProtocol.hpp`: the
/// biases of the 32- and 64-bit forms of CPU zone begin/end times (see `encode.rs`).
pub(crate) const OFFSET_16: i64 = 1 << 16;
pub(crate) const OFFSET_32: i64 = (1 << 16) + (1 << 32);

/// `HandshakeStatus` in `public/common/TracyProtocol.hpp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Handshake {
    Pending = 0,
    Welcome = 1,
    ProtocolMismatch = 2,
    NotAvailable = 3,
    Dropped = 4,
}

impl Handshake {
    pub(crate) fn from_u8(b: u8) -> Option<Handshake> {
        Some(match b {
            0 => Handshake::Pending,
            1 => Handshake::Welcome,
            2 => Handshake::ProtocolMismatch,
            3 => Handshake::NotAvailable,
            4 => Handshake::Dropped,
            _ => return None,
        })
    }
}

/// `ServerQuery` in `public/common/TracyProtocol.hpp` (what the capture tool asks for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Query {
    Terminate = 0,
    String = 1,
    ThreadString = 2,
    SourceLocation = 3,
    PlotName = 4,
    FrameName = 5,
    Parameter = 6,
    FiberName = 7,
    ExternalName = 8,
    Disconnect = 9,
    CallstackFrame = 10,
    Symbol = 11,
    SymbolCode = 12,
    SourceCode = 13,
    DataTransfer = 14,
    DataTransferPart = 15,
}

impl Query {
    pub(crate) fn from_u8(b: u8) -> Option<Query> {
        use Query::*;
        const ALL: [Query; 16] = [
            Terminate,
            String,
            ThreadString,
            SourceLocation,
            PlotName,
            FrameName,
            Parameter,
            FiberName,
            ExternalName,
            Disconnect,
            CallstackFrame,
            Symbol,
            SymbolCode,
            SourceCode,
            DataTransfer,
            DataTransferPart,
        ];
        ALL.get(b as usize).copied()
    }
}

/// `ServerQueryPacket` (`public/common/TracyProtocol.hpp`): `u8 type, u64 ptr, u32 extra`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QueryPacket {
    /// The raw type byte (unknown values are kept so they can be reported).
    pub kind: u8,
    pub ptr: u64,
    pub extra: u32,
}

/// `ServerQueryPacketSize`.
pub(crate) const QUERY_PACKET_SIZE: usize = 13;

impl QueryPacket {
    pub(crate) fn new(kind: Query, ptr: u64, extra: u32) -> QueryPacket {
        QueryPacket {
            kind: kind as u8,
            ptr,
            extra,
        }
    }

    pub(crate) fn query(&self) -> Option<Query> {
        Query::from_u8(self.kind)
    }

    pub(crate) fn to_bytes(self) -> [u8; QUERY_PACKET_SIZE] {
        let mut b = [0u8; QUERY_PACKET_SIZE];
        b[0] = self.kind;
        b[1..9].copy_from_slice(&self.ptr.to_le_bytes());
        b[9..13].copy_from_slice(&self.extra.to_le_bytes());
        b
    }

    pub(crate) fn from_bytes(b: &[u8; QUERY_PACKET_SIZE]) -> QueryPacket {
        QueryPacket {
            kind: b[0],
            ptr: u64::from_le_bytes(b[1..9].try_into().unwrap_or_default()),
            extra: u32::from_le_bytes(b[9..13].try_into().unwrap_or_default()),
        }
    }
}

impl fmt::Display for QueryPacket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.query() {
            Some(q) => write!(f, "{q:?}({:#x})", self.ptr),
            None => write!(f, "unknown query type {} ({:#x})", self.kind, self.ptr),
        }
    }
}

/// `QueueType` in `public/common/TracyQueue.hpp`: the first byte of every event. Only the
/// types ttprof sends (or its test client must recognise) are listed, with their values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(crate) enum Ev {
    ZoneText = 0,
    Message = 2,
    ZoneBegin = 19,
    ZoneBegin32 = 20,
    ZoneBegin16 = 21,
    ZoneEnd = 25,
    ZoneEnd32 = 26,
    ZoneEnd16 = 27,
    GpuZoneBeginSerial = 50,
    GpuZoneEndSerial = 54,
    GpuTime = 60,
    GpuContextName = 61,
    Terminate = 73,
    KeepAlive = 74,
    ThreadContext = 75,
    ZoneValidation = 80,
    SourceLocation = 87,
    GpuNewContext = 95,
    AckServerQueryNoop = 108,
    AckSourceCodeNotAvailable = 109,
    AckSymbolCodeNotAvailable = 110,
    SingleStringData = 112,
    SingleStringData8 = 114,
    /// From here on every type is a "string transfer": `u64 ptr, u16 len, bytes`
    /// (`QueueDataSize` comment "keep all QueueStringTransfer below").
    StringData = 119,
    ThreadName = 120,
    PlotName = 121,
    FrameName = 125,
    ExternalName = 127,
    ExternalThreadName = 128,
    FiberName = 131,
}

impl Ev {
    /// Bytes of the event including its type byte (`QueueDataSize` in `TracyQueue.hpp`),
    /// not counting a string transfer's length and bytes.
    pub(crate) const fn size(self) -> usize {
        match self {
            Ev::ZoneText
            | Ev::Terminate
            | Ev::KeepAlive
            | Ev::AckServerQueryNoop
            | Ev::AckSymbolCodeNotAvailable => 1,
            Ev::SingleStringData | Ev::SingleStringData8 => 1,
            // QueueMessageMetadata: i64 time, u8 metadata
            Ev::Message => 1 + 9,
            // QueueZoneBegin: i64 time, u64 srcloc; 32/16: u32/u16 time, u64 srcloc
            Ev::ZoneBegin => 1 + 16,
            Ev::ZoneBegin32 => 1 + 12,
            Ev::ZoneBegin16 => 1 + 10,
            Ev::ZoneEnd => 1 + 8,
            Ev::ZoneEnd32 => 1 + 4,
            Ev::ZoneEnd16 => 1 + 2,
            // QueueGpuZoneBegin: i64 cpuTime, u32 thread, u16 queryId, u8 context, u64 srcloc
            Ev::GpuZoneBeginSerial => 1 + 23,
            // QueueGpuZoneEnd: i64 cpuTime, u32 thread, u16 queryId, u8 context
            Ev::GpuZoneEndSerial => 1 + 15,
            // QueueGpuTime: i64 gpuTime, u16 queryId, u8 context
            Ev::GpuTime => 1 + 11,
            // QueueGpuContextName: u8 context (the name is the preceding single string)
            Ev::GpuContextName => 1 + 1,
            // QueueThreadContext / QueueZoneValidation: u32
            Ev::ThreadContext | Ev::ZoneValidation => 1 + 4,
            // QueueSourceLocation: u64 name, u64 function, u64 file, u32 line, u8 b, g, r
            Ev::SourceLocation => 1 + 31,
            // QueueGpuNewContext: i64 cpuTime, i64 gpuTime, u32 thread, f32 period,
            // u8 context, u8 flags, u8 type
            Ev::GpuNewContext => 1 + 27,
            // QueueSourceCodeNotAvailable: u32 id
            Ev::AckSourceCodeNotAvailable => 1 + 4,
            // QueueStringTransfer: u64 ptr
            Ev::StringData
            | Ev::ThreadName
            | Ev::PlotName
            | Ev::FrameName
            | Ev::ExternalName
            | Ev::ExternalThreadName
            | Ev::FiberName => 1 + 8,
        }
    }

    pub(crate) fn from_u8(b: u8) -> Option<Ev> {
        use Ev::*;
        const ALL: [Ev; 30] = [
            ZoneText,
            Message,
            ZoneBegin,
            ZoneBegin32,
            ZoneBegin16,
            ZoneEnd,
            ZoneEnd32,
            ZoneEnd16,
            GpuZoneBeginSerial,
            GpuZoneEndSerial,
            GpuTime,
            GpuContextName,
            Terminate,
            KeepAlive,
            ThreadContext,
            ZoneValidation,
            SourceLocation,
            GpuNewContext,
            AckServerQueryNoop,
            AckSourceCodeNotAvailable,
            AckSymbolCodeNotAvailable,
            SingleStringData,
            SingleStringData8,
            StringData,
            ThreadName,
            PlotName,
            FrameName,
            ExternalName,
            ExternalThreadName,
            FiberName,
        ];
        ALL.iter().copied().find(|e| *e as u8 == b)
    }

    /// Whether this is a string transfer (`u64 ptr, u16 len, bytes`).
    pub(crate) const fn is_string_transfer(self) -> bool {
        self as u8 >= Ev::StringData as u8
    }
}

/// `GpuContextType::Custom` in `public/common/TracyQueue.hpp` (tt-metal's fork adds its
/// own type; upstream's closest is `Custom`).
pub(crate) const GPU_CONTEXT_CUSTOM: u8 = 7;

/// The server's GPU context table has 256 entries (`m_gpuCtxMap[256]`,
/// `server/TracyWorker.hpp`) and the id is a `u8`; clients treat 255 as "no context"
/// (`tracy-client` caps contexts at 255), so ids 0..=254 are used.
pub(crate) const MAX_GPU_CONTEXTS: usize = 255;

/// The server keeps static source locations in a table indexed by `i16`
/// (`Worker::NewSourceLocation`, `server/TracyWorker.cpp`): at most 32767, with margin.
pub(crate) const MAX_SOURCE_LOCATIONS: usize = 32_000;

/// Thread ids are compressed to `u16` by the server (`server/TracyThreadCompress.cpp`).
pub(crate) const MAX_THREADS: usize = 65_000;

/// A GPU time stream jumping back by more than this reads as a counter wrap
/// (`Worker::ProcessGpuTime`, `server/TracyWorker.cpp`).
pub(crate) const GPU_WRAP_THRESHOLD: i64 = 1 << 31;

/// Tracy's `MessageSeverity` (`public/common/TracyQueue.hpp`); the metadata byte of a message is
/// `severity << 4 | source` with source `User` = 0 (`MakeMessageMetadata`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum MessageSeverity {
    Trace = 0,
    Debug = 1,
    Info = 2,
    Warning = 3,
    Error = 4,
    Fatal = 5,
}

impl MessageSeverity {
    pub const fn metadata(self) -> u8 {
        (self as u8) << 4
    }

    pub(crate) fn from_metadata(m: u8) -> Option<MessageSeverity> {
        use MessageSeverity::*;
        [Trace, Debug, Info, Warning, Error, Fatal]
            .get((m >> 4) as usize)
            .copied()
    }
}

/// `WelcomeMessageProgramNameSize` / `WelcomeMessageHostInfoSize`.
pub(crate) const PROGRAM_NAME_SIZE: usize = 64;
pub(crate) const HOST_INFO_SIZE: usize = 1024;

/// `WelcomeMessage` (`public/common/TracyProtocol.hpp`), packed: f64 timerMul, i64
/// initBegin, i64 initEnd, u64 resolution, u64 epoch, u64 exectime, u64 pid, i64
/// samplingPeriod, u8 flags, u8 cpuArch, char[12] cpuManufacturer, u32 cpuId,
/// char[64] programName, char[1024] hostInfo.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Welcome {
    /// Nanoseconds per tick; ttprof sends times in ns, so 1.0.
    pub(crate) timer_mul: f64,
    /// The server shows every time relative to this (`TscTime`: `(t - initBegin) * timerMul`).
    pub(crate) init_begin: i64,
    pub(crate) init_end: i64,
    pub resolution: u64,
    /// Capture date (Unix seconds), shown in the capture's name.
    pub(crate) epoch: u64,
    /// Executable modification time; 0 keeps the server from asking for source code.
    pub(crate) exec_time: u64,
    pub(crate) pid: u64,
    pub(crate) sampling_period: i64,
    /// `WelcomeFlag` bits; 0: not on-demand, no code transfer.
    pub flags: u8,
    /// `CpuArchitecture`; 0 = unknown.
    pub(crate) cpu_arch: u8,
    pub(crate) cpu_manufacturer: [u8; 12],
    pub(crate) cpu_id: u32,
    pub(crate) program_name: String,
    pub(crate) host_info: String,
}

/// Bytes of a packed [`Welcome`].
pub(crate) const WELCOME_SIZE: usize = 8 * 8 + 2 + 12 + 4 + PROGRAM_NAME_SIZE + HOST_INFO_SIZE;

impl Welcome {
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(WELCOME_SIZE);
        b.extend_from_slice(&self.timer_mul.to_le_bytes());
        b.extend_from_slice(&self.init_begin.to_le_bytes());
        b.extend_from_slice(&self.init_end.to_le_bytes());
        b.extend_from_slice(&self.resolution.to_le_bytes());
        b.extend_from_slice(&self.epoch.to_le_bytes());
        b.extend_from_slice(&self.exec_time.to_le_bytes());
        b.extend_from_slice(&self.pid.to_le_bytes());
        b.extend_from_slice(&self.sampling_period.to_le_bytes());
        b.push(self.flags);
        b.push(self.cpu_arch);
        b.extend_from_slice(&self.cpu_manufacturer);
        b.extend_from_slice(&self.cpu_id.to_le_bytes());
        put_c_string(&mut b, &self.program_name, PROGRAM_NAME_SIZE);
        put_c_string(&mut b, &self.host_info, HOST_INFO_SIZE);
        b
    }

    pub(crate) fn from_bytes(b: &[u8; WELCOME_SIZE]) -> Welcome {
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        let c_string = |s: &[u8]| {
            let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
            String::from_utf8_lossy(&s[..end]).into_owned()
        };
        let names = 8 * 8 + 2 + 12 + 4;
        Welcome {
            timer_mul: f64::from_bits(u64_at(0)),
            init_begin: u64_at(8) as i64,
            init_end: u64_at(16) as i64,
            resolution: u64_at(24),
            epoch: u64_at(32),
            exec_time: u64_at(40),
            pid: u64_at(48),
            sampling_period: u64_at(56) as i64,
            flags: b[64],
            cpu_arch: b[65],
            cpu_manufacturer: b[66..78].try_into().unwrap_or_default(),
            cpu_id: u32::from_le_bytes(b[78..82].try_into().unwrap_or_default()),
            program_name: c_string(&b[names..names + PROGRAM_NAME_SIZE]),
            host_info: c_string(&b[names + PROGRAM_NAME_SIZE..]),
        }
    }
}

/// Writes `s` NUL-terminated into exactly `size` bytes, cut at a character boundary so at
/// most `size - 1` bytes of text remain (Tracy does the same, without the boundary care).
fn put_c_string(out: &mut Vec<u8>, s: &str, size: usize) {
    let text = truncate_utf8(s, size - 1);
    out.extend_from_slice(text.as_bytes());
    out.resize(out.len() + size - text.len(), 0);
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(crate) fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_sizes_match_tracy_structs() {
        assert_eq!(WELCOME_SIZE, 1170);
        let w = Welcome {
            timer_mul: 1.0,
            init_begin: -5,
            init_end: 7,
            resolution: 1,
            epoch: 2,
            exec_time: 0,
            pid: 42,
            sampling_period: 0,
            flags: 0,
            cpu_arch: 0,
            cpu_manufacturer: *b"ttprof\0\0\0\0\0\0",
            cpu_id: 9,
            program_name: "é".repeat(40),
            host_info: "host".into(),
        };
        let bytes = w.to_bytes();
        assert_eq!(bytes.len(), WELCOME_SIZE);
        let back = Welcome::from_bytes(bytes.as_slice().try_into().unwrap());
        assert_eq!(
            back.program_name,
            "é".repeat(31),
            "cut at a character boundary, NUL kept"
        );
        assert_eq!(
            Welcome {
                program_name: back.program_name.clone(),
                ..w
            },
            back
        );
        let q = QueryPacket::new(Query::SourceLocation, 0x1_0000_0003, 7);
        assert_eq!(QueryPacket::from_bytes(&q.to_bytes()), q);
        assert_eq!(q.query(), Some(Query::SourceLocation));
        assert_eq!(Query::from_u8(16), None);
        assert_eq!(Ev::from_u8(95), Some(Ev::GpuNewContext));
        assert_eq!(Ev::from_u8(255), None);
        assert_eq!(
            MessageSeverity::from_metadata(MessageSeverity::Warning.metadata()),
            Some(MessageSeverity::Warning)
        );
    }
}
