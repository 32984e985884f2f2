//! `ttprof run --lines` and `--sample` on TRISCs driving the Tensix coprocessor: the cycles
//! a TRISC is held by its coprocessor are charged to the holding line as `tensix-fifo: W`
//! (a push into a full instruction FIFO) or `ttsync: W` (a TTSync read), W naming what the
//! Tensix thread waits on, and the lines still add up exactly to each core's cycles.

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use ttprof_tests::{ttprof_binary, workspace};

/// TRISC0 latches a `SEMWAIT` on semaphore 3 and keeps pushing: its FIFOs fill behind the
/// wait gate. TRISC1 latches one on semaphore 4 and waits on TTSync. TRISC2 spins, then
/// posts both semaphores from its side, then waits on TTSync itself (its thread is idle).
const KERNEL: &str = r#"
#include <cstdint>
#include "ttprof.h"
#include "ttprof_tensix.h"

static volatile uint32_t *const SEM = (volatile uint32_t *)0xFFE80020u;
static volatile uint32_t *const TTSYNC = (volatile uint32_t *)0xFFE80004u;
static volatile uint32_t sink;

static inline void ttsync() {
    *TTSYNC = 0;
    (void)*TTSYNC;
}

namespace NAMESPACE {
void MAIN {
#if defined(TRISC_UNPACK)
    ttprof_tensix_push(TTPROF_TENSIX_SEMINIT(1, 0, 1 << 3));
    ttprof_tensix_push(TTPROF_TENSIX_SEMWAIT(0x1FF, 1 << 3, 1));
    for (uint32_t i = 0; i < 64; i++) {
        ttprof_tensix_push(TTPROF_TENSIX_NOP());
    }
    ttsync();
#elif defined(TRISC_MATH)
    ttprof_tensix_push(TTPROF_TENSIX_SEMINIT(1, 0, 1 << 4));
    ttprof_tensix_push(TTPROF_TENSIX_SEMWAIT(0x1FF, 1 << 4, 1));
    ttprof_tensix_push(TTPROF_TENSIX_NOP());
    ttsync();
#elif defined(TRISC_PACK)
    for (uint32_t i = 0; i < 600; i++) {
        sink = sink + i;
    }
    SEM[3] = 0; // SEMPOST from the RISC
    SEM[4] = 0;
    ttsync();
#endif
}
}
"#;

fn run(dir: &Path, args: &[&str]) {
    let o = Command::new(ttprof_binary())
        .arg("run")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "ttprof run {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The source line (1-based) of `marker` in the kernel.
fn line_of(marker: &str) -> usize {
    KERNEL.lines().position(|l| l.contains(marker)).unwrap() + 1
}

/// The listing row of `file:line` under the header of `risc`.
fn row<'a>(text: &'a str, risc: &str, file_line: &str) -> &'a str {
    let kernel = text
        .split("== op ")
        .find(|k| k.contains(&format!("| {risc} |")))
        .unwrap_or_else(|| panic!("no {risc}: {text}"));
    kernel
        .lines()
        .find(|l| l.contains(file_line) && l.contains('%'))
        .unwrap_or_else(|| panic!("no {file_line} for {risc}: {text}"))
}

fn setup(name: &str) -> std::path::PathBuf {
    let dir = workspace().join("target/test-tensix-lines").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("held.cpp"), KERNEL).unwrap();
    dir
}

/// Cycles per cause over a Parquet lines table.
fn parquet_causes(path: &Path) -> BTreeMap<String, u64> {
    let f = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap();
    let mut m = BTreeMap::new();
    for b in reader {
        let b = b.unwrap();
        let cause = b.column_by_name("cause").unwrap().as_string::<i32>();
        let cycles = b
            .column_by_name("cycles")
            .unwrap()
            .as_primitive::<UInt64Type>();
        for i in 0..b.num_rows() {
            *m.entry(cause.value(i).to_string()).or_default() += cycles.value(i);
        }
    }
    m
}

#[test]
fn trisc_cycles_held_by_the_coprocessor_name_what_its_thread_waits_on() {
    let dir = setup("exact");
    run(
        &dir,
        &[
            "--grid",
            "1x1",
            "--kernel",
            "trisc=held.cpp",
            "--lines",
            "--out",
            "out",
        ],
    );
    let out = dir.join("out");
    // The coprocessor's holds charged the same with the JIT counting as on the interpreter.
    ttprof_tests::assert_lines_on_jit_equal_interpreter(
        &dir,
        &["--grid", "1x1", "--kernel", "trisc=held.cpp"],
        "out-twice",
    );
    let text = std::fs::read_to_string(out.join("ttprof_lines.txt")).unwrap();
    // The push that finds T0's FIFO full (the store in the header's push function): its
    // thread waits on semaphore 3 at the gate.
    let push = row(&text, "TRISC_0", "ttprof_tensix.h:");
    assert!(push.contains("tensix-fifo: semaphore 3"), "{push}\n{text}");
    // T1's TTSync read: its thread holds a NOP behind SEMWAIT on semaphore 4.
    let sync = row(
        &text,
        "TRISC_1",
        &format!("held.cpp:{}", line_of("(void)*TTSYNC")),
    );
    assert!(sync.contains("ttsync: semaphore 4"), "{sync}\n{text}");
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("== op ") && l.contains("fifo-wait")),
        "no mailbox or PCBuf here: {text}"
    );

    // Exact: per kernel the folded stacks add up to the header's cycles (the session
    // checked every core's rows against its cycles, or the run would have failed).
    let folded = std::fs::read_to_string(out.join("ttprof_cycles.folded")).unwrap();
    let mut per_risc: BTreeMap<String, u64> = BTreeMap::new();
    for l in folded.lines() {
        let (stack, n) = l.rsplit_once(' ').unwrap();
        *per_risc
            .entry(stack.split(';').nth(1).unwrap().to_string())
            .or_default() += n.parse::<u64>().unwrap();
    }
    for (risc, n) in &per_risc {
        let header = text
            .lines()
            .find(|l| l.starts_with("== op ") && l.contains(&format!("| {risc} |")))
            .unwrap();
        assert!(
            header.contains(&format!(" {n} cycles (= the cores' cycles)")),
            "{header}"
        );
    }
    assert!(folded.contains(";[tensix-fifo: semaphore 3] "), "{folded}");
    let causes = parquet_causes(&out.join("ttprof_lines.parquet"));
    assert!(causes["tensix-fifo: semaphore 3"] > 100, "{causes:?}");
    assert!(causes["ttsync: semaphore 4"] > 100, "{causes:?}");
    assert_eq!(causes.values().sum::<u64>(), per_risc.values().sum::<u64>());
}

/// Sampled: the same holds show as `tensix-fifo` / `ttsync` samples on the same lines, and
/// the TRISCs' group D windows see their threads busy and T0's FIFO full.
#[test]
fn sampled_trisc_holds_show_the_coprocessor() {
    let dir = setup("sampled");
    run(
        &dir,
        &[
            "--grid",
            "1x1",
            "--kernel",
            "trisc=held.cpp",
            "--sample",
            "5",
            "--sample-count",
            "8",
            "--out",
            "out",
        ],
    );
    let text = std::fs::read_to_string(dir.join("out/ttprof_samples.txt")).unwrap();
    let push = row(&text, "TRISC_0", "ttprof_tensix.h:");
    assert!(push.contains("tensix-fifo"), "{push}\n{text}");
    let t0 = text
        .split("== op ")
        .find(|k| k.contains("| TRISC_0 |"))
        .unwrap();
    let d = t0
        .lines()
        .find(|l| l.contains("group D samples"))
        .unwrap_or_else(|| panic!("no group D window for TRISC_0: {text}"));
    let pct = |what: &str| -> f64 {
        let at = d.find(what).unwrap() + what.len();
        d[at..].trim().split('%').next().unwrap().parse().unwrap()
    };
    // Busy for about half of T0's samples: the rest is its launch and exit (the runtime's
    // slow-path records, whose cycles move with its code's layout: 47-53 % since 2026-12).
    assert!(pct("instructions in flight") > 40.0, "{d}");
    assert!(pct("FIFO from the RISC full") > 10.0, "{d}");
}
