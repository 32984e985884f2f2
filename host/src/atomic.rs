//! Writing output files atomically: into a temporary file beside the target, then renamed
//! over it, so a reader never sees a half-written file and a failed write leaves the old one.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `path` through `fill`, atomically. The temporary file is removed on failure.
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> Result<()> {
    let tmp = temp_path(path);
    let result = (|| -> std::io::Result<()> {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        fill(&mut out)?;
        out.flush()?;
        out.get_ref().sync_all()?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, "write", e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, "rename temporary file onto", e)
    })
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    path.with_file_name(format!(".{name}.tmp.{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_writes_leave_the_old_file_and_no_temporary() {
        let dir = crate::testing::temp_dir("atomic");
        let path = dir.join("out.txt");
        write_atomic(&path, |w| w.write_all(b"first")).unwrap();
        let e = write_atomic(&path, |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("disk full"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "temporary removed");
        let e = write_atomic(&dir.join("missing-dir/x.csv"), |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("missing-dir"), "{e}");
    }
}
