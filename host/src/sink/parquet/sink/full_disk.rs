//! A disk that fills anywhere in a table: the error is the `io::Error` itself (a full
//! disk, exit 2), never Parquet's text of it (an output error, exit 1).

use super::*;
use crate::sink::parquet::tables;
use crate::sink::parquet::tests::random_profile;

/// A disk with room for `room` bytes: the write that passes it fails as a full disk does.
struct Disk {
    bytes: Vec<u8>,
    room: usize,
}

impl Write for Disk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.room - self.bytes.len());
        if n == 0 && !buf.is_empty() {
            return Err(std::io::Error::from_raw_os_error(28));
        }
        self.bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The zones table of a random profile, written to a disk of `room` bytes.
fn write_zones(p: &Profile, room: usize) -> Result<Vec<u8>> {
    let d = tables::Dictionaries::new(p);
    let schema = tables::zones_schema(true, &tables::counter_names(p.oplog.as_ref()));
    let disk = Disk {
        bytes: Vec::new(),
        room,
    };
    let mut t = Table::over("zones.parquet".into(), disk, schema.clone(), properties())?;
    for v in p.rings() {
        let zones: Vec<_> = v.zones.iter().collect();
        let batch = tables::zones_batch(&schema, &d, &v.lane, &zones, v.clock.as_ref(), true)
            .expect("a batch of the model's zones");
        t.write(batch)?;
    }
    Ok(t.finish()?.bytes)
}

#[test]
fn a_disk_full_anywhere_in_a_table_is_the_io_error_itself() {
    let p = random_profile(41);
    let whole = write_zones(&p, usize::MAX).unwrap();
    // More than Parquet's own buffer (8 KiB), so that its last flush writes.
    assert!(whole.len() > 8 << 10, "{} bytes", whole.len());
    // Every 13th byte: the last flush Parquet's writer makes is longer than that.
    for room in (0..whole.len()).step_by(13) {
        let e = write_zones(&p, room).expect_err("the disk is full before the footer's end");
        assert_eq!(
            e.disk_full(),
            Some(Path::new("zones.parquet")),
            "room for {room} of {} bytes: {e}",
            whole.len()
        );
    }
    assert_eq!(write_zones(&p, whole.len()).unwrap(), whole);
}
