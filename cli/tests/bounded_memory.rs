//! Memory bounded by a ring, not by the run: `ttprof report` of a snapshot and `ttprof
//! import` of the device CSV it writes, each in a child whose address space is limited
//! (`setrlimit(RLIMIT_AS)` before `exec`) to far less than the run's records would take if
//! held (about 35 bytes a record in the model alone, 130 to 150 bytes a zone along the whole
//! path before the outputs were fed ring by ring), succeed and write every output. The page's
//! own share is made small (`TTPROF_HTML_MAX_ZONES`), the one constant that is not.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};
use ttprof::testing::{long_run, temp_dir};

/// Zones of the run: 2 M zones, 24 bytes a zone as records alone (48 MB), about 280 MB
/// along the whole path when held.
const ZONES: u64 = 2_000_000;
/// The child's address space.
const LIMIT: u64 = 160 << 20;

fn limited(args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ttprof"));
    c.args(args)
        // One malloc arena: each further one reserves 64 MiB of address space.
        .env("MALLOC_ARENA_MAX", "1")
        .env("TTPROF_HTML_MAX_ZONES", "10000");
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: LIMIT,
                rlim_max: LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().expect("run ttprof")
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn report_and_import_of_a_long_run_stay_within_a_small_address_space() {
    let dir = temp_dir("bounded-memory");
    let run = long_run::write(&dir, ZONES, 12_000).unwrap();
    assert!(run.zones >= ZONES);
    let out = dir.join("report");
    let o = limited(&[
        "report",
        "--no-summary",
        "--device",
        p(&run.snapshot),
        "--oplog",
        p(&run.oplog),
        "--out",
        p(&out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let csv = out.join("profile_log_device.csv");
    let rows = std::io::BufRead::lines(std::io::BufReader::new(std::fs::File::open(&csv).unwrap()))
        .count() as u64;
    // A start and an end row per zone: the kernels' and the producer's own stall zones.
    assert!(
        rows >= 2 + 2 * run.zones,
        "{rows} rows for {} zones",
        run.zones
    );
    let zones = (rows - 2) / 2;
    let summary = std::fs::read_to_string(out.join("ttprof_summary.txt")).unwrap();
    assert!(
        summary.contains("estimated within 1 %"),
        "past the exact limit the summary says its percentiles are estimates: {summary}"
    );
    // Disk: only the device CSV is needed from here on.
    for e in std::fs::read_dir(&out).unwrap() {
        let path = e.unwrap().path();
        if path != csv {
            std::fs::remove_file(path).unwrap();
        }
    }
    let imported = dir.join("import");
    let o = limited(&["import", p(&csv), "--no-summary", "--out", p(&imported)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains(&format!(", {zones} zones,")),
        "every zone imported: {}",
        text(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
