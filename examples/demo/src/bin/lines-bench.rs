//! The cost of `--lines` (exact per-line cycles): wall time of `ttprof run --lines` and
//! `ttprof-demo --lines` against the same command without `--lines`, in one run, the two
//! taking turns.
//!
//! * `bench`: the compute-bound BRISC kernel of `runtime-bench` (examples/kernels,
//!   `bench` mode 4: 20,000 x 2 x 1,000 loop steps and 40,000 wall-clock reads, 160 M
//!   instructions) on one tile, through the `ttprof` binary;
//! * `demo`: the demo's four ops (data-movement and Tensix kernels on 2x2 tiles), through
//!   the `ttprof-demo` binary.
//!
//! Each pair runs `--rounds` times (default 5); the ratio is the median of the rounds'
//! ratios (lines / plain). Also times one `--lines` run of each forced onto the interpreter
//! (`TTPROF_EMU_JIT=0`, what `--lines` cost before the JIT did the accounting) and checks
//! that it wrote the same `ttprof_lines.parquet`. Build both binaries first:
//! `cargo build --release -p ttprof-cli -p ttprof-demo`. Writes `target/bench/lines.json`.

use riscv_linker::Arch;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use ttprof::kernels::{self, KernelBuild};
use ttprof_demo::{target_root, workspace};

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

/// A command to time: the binary, its arguments but `--out`, and its output directory.
struct Case {
    name: &'static str,
    bin: PathBuf,
    args: Vec<String>,
}

impl Case {
    /// Runs once (`lines`: with `--lines`; `interpret`: on the interpreter) into `out`;
    /// returns the wall time in seconds.
    fn time(&self, lines: bool, interpret: bool, out: &Path) -> Fallible<f64> {
        let _ = std::fs::remove_dir_all(out);
        let mut c = Command::new(&self.bin);
        c.args(&self.args).arg("--out").arg(out);
        if lines {
            c.arg("--lines");
        }
        if interpret {
            c.env(ttprof_emu::JIT_VAR, "0");
        } else {
            c.env_remove(ttprof_emu::JIT_VAR);
        }
        let start = Instant::now();
        let o = c.output()?;
        let secs = start.elapsed().as_secs_f64();
        if !o.status.success() {
            return Err(format!(
                "{} {:?} failed: {}",
                self.bin.display(),
                self.args,
                String::from_utf8_lossy(&o.stderr)
            )
            .into());
        }
        Ok(secs)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() -> Fallible<()> {
    let mut rounds = 5usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or("--rounds needs a positive number")?
            }
            _ => return Err("usage: lines-bench [--rounds N]".into()),
        }
    }
    let ws = workspace();
    let out = target_root().join("bench");
    let runs = out.join("lines-runs");
    std::fs::create_dir_all(&runs)?;
    let dir = std::env::current_exe()?
        .parent()
        .ok_or("no directory of lines-bench")?
        .to_path_buf();
    let (ttprof, demo) = (dir.join("ttprof"), dir.join("ttprof-demo"));
    for b in [&ttprof, &demo] {
        if !b.exists() {
            return Err(format!(
                "{} is missing: cargo build --release -p ttprof-cli -p ttprof-demo",
                b.display()
            )
            .into());
        }
    }
    eprintln!("building the bench kernel...");
    let built = kernels::build(&KernelBuild {
        crate_dir: ws.join("examples/kernels"),
        arch: Arch::WormholeB0,
        target_dir: target_root().join("kernels").join(Arch::WormholeB0.name()),
        features: Vec::new(),
        no_default_features: false,
    })?;
    let bench = built.elf("bench")?.display().to_string();
    let cases = [
        Case {
            name: "bench",
            bin: ttprof,
            args: [
                "run",
                "--grid",
                "1x1",
                "--kernel",
                &format!("brisc={bench}"),
                "--l1",
                "0x30000=4",
                "--l1",
                "0x30004=20000",
                "--l1",
                "0x30008=1000",
            ]
            .map(String::from)
            .to_vec(),
        },
        Case {
            name: "demo",
            bin: demo,
            args: Vec::new(),
        },
    ];
    let mut json = serde_json::Map::new();
    for case in &cases {
        let (plain_dir, lines_dir) = (
            runs.join(format!("{}-plain", case.name)),
            runs.join(format!("{}-lines", case.name)),
        );
        // One of each first, untimed (caches, the demo's kernel build).
        case.time(false, false, &plain_dir)?;
        case.time(true, false, &lines_dir)?;
        let (mut plain, mut lines, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let p = case.time(false, false, &plain_dir)?;
            let l = case.time(true, false, &lines_dir)?;
            eprintln!("{}: plain {p:.3} s, --lines {l:.3} s", case.name);
            plain.push(p);
            lines.push(l);
            ratios.push(l / p);
        }
        let interp_dir = runs.join(format!("{}-interpreted", case.name));
        let interpreted = case.time(true, true, &interp_dir)?;
        let table = |d: &Path| std::fs::read(d.join("ttprof_lines.parquet"));
        let same = table(&lines_dir)? == table(&interp_dir)?;
        let ratio = median(ratios.clone());
        println!(
            "{}: --lines / plain = {ratio:.2} (median of {rounds}; plain {:.3} s, --lines {:.3} s median); \
             --lines on the interpreter {interpreted:.3} s = {:.2}x plain; same table as the JIT's: {same}",
            case.name,
            median(plain.clone()),
            median(lines.clone()),
            interpreted / median(plain.clone()),
        );
        if !same {
            return Err(format!(
                "{}: the JIT's ttprof_lines.parquet differs from the interpreter's ({} vs {})",
                case.name,
                lines_dir.display(),
                interp_dir.display()
            )
            .into());
        }
        json.insert(
            case.name.to_string(),
            serde_json::json!({
                "lines_vs_plain": ratio,
                "ratios": ratios,
                "plain_seconds": plain,
                "lines_seconds": lines,
                "interpreted_lines_seconds": interpreted,
                "interpreted_vs_plain": interpreted / median(plain),
            }),
        );
    }
    let path = out.join("lines.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&serde_json::Value::Object(json))? + "\n",
    )?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
