//! LZ4 framing of the event stream.
//!
//! After the welcome message, everything the program sends is a sequence of frames:
//! `u32 compressed length` + one LZ4 *block* (`Profiler::SendData`,
//! `public/client/TracyProfiler.cpp`). The server decompresses each with
//! `LZ4_decompress_safe_continue` into at most [`TARGET_FRAME_SIZE`] bytes and parses the
//! result on its own (`Worker::Network` / `Worker::Exec`, `server/TracyWorker.cpp`), so a
//! frame holds whole events only.
//!
//! Tracy's client compresses with a streaming context (blocks may refer to earlier
//! frames); ttprof compresses every block on its own (`lz4_flex::block`), which a streaming
//! decoder accepts unchanged: a block without back-references into history is still a block.

use super::protocol::{lz4_bound, TARGET_FRAME_SIZE};
use std::io::{self, Write};

/// Collects whole events into frames of at most [`TARGET_FRAME_SIZE`] bytes and sends them.
pub(crate) struct FrameWriter {
    frame: Vec<u8>,
    packed: Vec<u8>,
    /// Frames sent, and bytes before and after compression (length prefixes included).
    pub frames: u64,
    pub(crate) raw_bytes: u64,
    pub wire_bytes: u64,
}

impl Default for FrameWriter {
    fn default() -> Self {
        FrameWriter::new()
    }
}

impl FrameWriter {
    pub(crate) fn new() -> FrameWriter {
        FrameWriter {
            frame: Vec::with_capacity(TARGET_FRAME_SIZE),
            packed: vec![0; 4 + lz4_flex::block::get_maximum_output_size(TARGET_FRAME_SIZE)],
            frames: 0,
            raw_bytes: 0,
            wire_bytes: 0,
        }
    }

    /// Adds whole events (`unit`, e.g. a string and the event that reads it), sending the
    /// current frame first if they would not fit in it.
    pub(crate) fn push(&mut self, out: &mut impl Write, unit: &[u8]) -> io::Result<()> {
        if unit.len() > TARGET_FRAME_SIZE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "an event group of {} bytes exceeds Tracy's frame size of {TARGET_FRAME_SIZE}",
                    unit.len()
                ),
            ));
        }
        if self.frame.len() + unit.len() > TARGET_FRAME_SIZE {
            self.flush(out)?;
        }
        self.frame.extend_from_slice(unit);
        Ok(())
    }

    /// Compresses and sends the current frame, if it holds anything.
    pub(crate) fn flush(&mut self, out: &mut impl Write) -> io::Result<()> {
        if self.frame.is_empty() {
            return Ok(());
        }
        let n = lz4_flex::block::compress_into(&self.frame, &mut self.packed[4..])
            .map_err(|e| io::Error::other(format!("LZ4 compression failed: {e}")))?;
        if n > lz4_bound(TARGET_FRAME_SIZE) {
            return Err(io::Error::other(format!(
                "an LZ4 block of {n} bytes exceeds what Tracy's server accepts ({})",
                lz4_bound(TARGET_FRAME_SIZE)
            )));
        }
        self.packed[..4].copy_from_slice(&(n as u32).to_le_bytes());
        out.write_all(&self.packed[..4 + n])?;
        out.flush()?;
        self.frames += 1;
        self.raw_bytes += self.frame.len() as u64;
        self.wire_bytes += 4 + n as u64;
        self.frame.clear();
        Ok(())
    }
}

/// Reads one frame and decompresses it into `out` (replacing its contents), the way
/// Tracy's server does; `Ok(false)` at a clean end of stream before the frame.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn read_frame(
    input: &mut impl io::Read,
    packed: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> io::Result<bool> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
        Err(e) => return Err(e),
    }
    let n = u32::from_le_bytes(len) as usize;
    if n > lz4_bound(TARGET_FRAME_SIZE) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "frame of {n} compressed bytes: Tracy's server accepts at most {}",
                lz4_bound(TARGET_FRAME_SIZE)
            ),
        ));
    }
    packed.resize(n, 0);
    input.read_exact(packed)?;
    out.resize(TARGET_FRAME_SIZE, 0);
    let size = lz4_flex::block::decompress_into(packed, out).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame does not decompress into {TARGET_FRAME_SIZE} bytes: {e}"),
        )
    })?;
    out.truncate(size);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_hold_whole_units_and_round_trip() {
        let mut w = FrameWriter::new();
        let mut wire = Vec::new();
        let unit: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        for _ in 0..600 {
            w.push(&mut wire, &unit).unwrap();
        }
        w.flush(&mut wire).unwrap();
        assert!(w.push(&mut wire, &vec![0; TARGET_FRAME_SIZE + 1]).is_err());
        let (mut packed, mut frame, mut total) = (Vec::new(), Vec::new(), 0);
        let mut r = wire.as_slice();
        let mut frames = 0;
        while read_frame(&mut r, &mut packed, &mut frame).unwrap() {
            assert!(frame.len() <= TARGET_FRAME_SIZE && frame.len() % unit.len() == 0);
            assert!(frame.chunks(unit.len()).all(|c| c == unit));
            total += frame.len();
            frames += 1;
        }
        assert_eq!((total, frames, w.frames), (600 * 1000, 3, 3));
        assert_eq!(w.wire_bytes, wire.len() as u64);
        let bad = [10u8, 0, 0, 0, 0xFF, 1, 2];
        assert!(
            read_frame(&mut bad.as_slice(), &mut packed, &mut frame).is_err(),
            "truncated frame"
        );
    }
}
