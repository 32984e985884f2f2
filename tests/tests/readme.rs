//! README.md's "Your first kernel", run as a new user would: every `<!-- file: PATH -->`
//! block is written into a folder outside the workspace (next to a `ttprof` link to this
//! checkout, as the README assumes), every `<!-- run: DIR -->` block's commands run there
//! with the workspace's `ttprof` binary, and the zones they wrote are checked exactly. So
//! the README cannot rot: changing a snippet without its expectations here fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use ttprof_tests::{csv_rows, ttprof_binary, workspace};

/// A fenced block of README.md after a marker comment.
struct Block {
    marker: String,
    body: String,
}

/// Every fenced block that follows a `<!-- file: .. -->` or `<!-- run: .. -->` line.
fn marked_blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(marker) = line
            .trim()
            .strip_prefix("<!-- ")
            .and_then(|m| m.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "README: `{line}` must be followed by a fenced block, found {fence:?}"
        );
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        out.push(Block {
            marker: marker.to_string(),
            body: body.join("\n") + "\n",
        });
    }
    out
}

fn run_line(line: &str, dir: &Path) -> Output {
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        words[0], "ttprof",
        "README run blocks hold ttprof commands: {line}"
    );
    let out = Command::new(ttprof_binary())
        .args(&words[1..])
        .current_dir(dir)
        .output()
        .unwrap();
    eprintln!(
        "$ {line}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn count(
    rows: &BTreeMap<(String, String), Vec<(String, String)>>,
    name: &str,
    kind: &str,
) -> usize {
    rows.get(&(name.to_string(), kind.to_string()))
        .map_or(0, Vec::len)
}

/// Writes every `<!-- file: DIR/.. -->` block of README.md under `root` (next to a `ttprof`
/// link to this checkout, as the README assumes), after removing `root/clean`, and returns
/// the lines of every `<!-- run: DIR -->` block, each with the directory it runs in.
fn readme_section(root: &Path, dir: &str, clean: &str) -> Vec<(PathBuf, String)> {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let blocks = marked_blocks(&readme);
    let _ = std::fs::remove_dir_all(root.join(clean));
    std::fs::create_dir_all(root).unwrap();
    let link = root.join("ttprof");
    if std::fs::symlink_metadata(&link).is_err() {
        std::os::unix::fs::symlink(workspace(), &link).unwrap();
    }
    let mut runs: Vec<(PathBuf, String)> = Vec::new();
    for b in &blocks {
        if let Some(file) = b
            .marker
            .strip_prefix("file: ")
            .filter(|f| f.starts_with(&format!("{dir}/")))
        {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &b.body).unwrap();
        } else if let Some(d) = b.marker.strip_prefix("run: ").filter(|d| *d == dir) {
            runs.extend(
                b.body
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| (root.join(d), l.to_string())),
            );
        }
    }
    runs
}

#[test]
fn the_readme_s_first_kernel_builds_and_profiles_outside_the_workspace() {
    let root = workspace().join("target/test-readme");
    // The crate's target directory survives (its `core` build is slow); its sources do not.
    let runs = readme_section(&root, "my-kernels", "my-kernels/src");
    assert_eq!(runs.len(), 3, "README runs: build, run, run --manifest");
    let crate_dir = root.join("my-kernels");

    // ttprof build: one `NAME PATH` line per binary, absolute paths that exist.
    let build = run_line(&runs[0].1, &runs[0].0);
    assert!(build.status.success());
    let built: BTreeMap<String, PathBuf> = String::from_utf8_lossy(&build.stdout)
        .lines()
        .map(|l| {
            let (name, path) = l.split_once(' ').unwrap();
            (name.to_string(), PathBuf::from(path))
        })
        .collect();
    assert_eq!(built.keys().collect::<Vec<_>>(), ["compute", "reader"]);
    assert!(
        built.values().all(|p| p.is_absolute() && p.is_file()),
        "{built:?}"
    );

    // ttprof run on a 2x2 grid, 4 tiles of work: every zone counted exactly.
    let run = run_line(&runs[1].1, &runs[1].0);
    assert_eq!(run.status.code(), Some(0));
    let out = crate_dir.join("target/ttprof-run");
    for f in [
        "profile_log_device.csv",
        "ttprof_trace.json",
        "ttprof_timeline.html",
        "ttprof_summary.txt",
        "ops.jsonl",
        "device.snap",
    ] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    let rows = csv_rows(&out.join("profile_log_device.csv"));
    assert_eq!(count(&rows, "read-tile", "ZONE_START"), 4 * 8);
    assert_eq!(count(&rows, "copy", "ZONE_END"), 4 * 8);
    assert_eq!(count(&rows, "BRISC-KERNEL", "ZONE_START"), 4);
    assert_eq!(count(&rows, "TRISC-KERNEL", "ZONE_START"), 4);
    let math = &rows[&("math-tile".to_string(), "ZONE_START".to_string())];
    let mut values: Vec<&str> = math.iter().map(|r| r.1.as_str()).collect();
    values.sort();
    assert_eq!(
        values,
        [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3].map(|v| format!("{{\"value\": {v}}}"))
    );
    let waits = &rows[&("wait-cb".to_string(), "ZONE_TOTAL".to_string())];
    assert_eq!(waits.len(), 4, "one sum record per tile");
    for (total, meta) in waits {
        assert_eq!(meta, "{\"count\": 8}");
        let total: u64 = total.parse().unwrap();
        assert!(
            (8 * 50..8 * 50 * 20).contains(&total),
            "wait-cb total {total} cycles for 8 x 50 steps"
        );
    }
    assert!(rows[&("bytes".to_string(), "TS_DATA".to_string())]
        .iter()
        .all(|r| r.0 == "2048"));
    assert_eq!(count(&rows, "bytes", "TS_DATA"), 32);
    assert_eq!(count(&rows, "done", "TS_EVENT"), 4);
    // The screen names the slowest zones and every file; the summary file holds every zone.
    let screen = String::from_utf8_lossy(&run.stdout);
    assert!(
        screen.contains("read-tile") && screen.contains("target/ttprof-run/device.snap"),
        "{screen}"
    );
    let summary = std::fs::read_to_string(out.join("ttprof_summary.txt")).unwrap();
    assert!(
        summary.contains("wait-cb") && summary.contains("read-tile"),
        "{summary}"
    );

    // The manifest: read once, then compute twice with 2 tiles of work.
    let ci = run_line(&runs[2].1, &runs[2].0);
    assert_eq!(ci.status.code(), Some(0));
    let rows = csv_rows(&crate_dir.join("target/ttprof-ci/profile_log_device.csv"));
    assert_eq!(count(&rows, "read-tile", "ZONE_START"), 3 * 4 * 8);
    assert_eq!(count(&rows, "math-tile", "ZONE_START"), 2 * 4 * 2);
    let oplog = std::fs::read_to_string(crate_dir.join("target/ttprof-ci/ops.jsonl")).unwrap();
    let ops: Vec<String> = oplog
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["op"]["op_code"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ops, ["read", "compute", "compute"]);

    // build.rs and kernel!(..) naming different cores: the linker says so, naming both.
    let build_rs = std::fs::read_to_string(crate_dir.join("build.rs")).unwrap();
    std::fs::write(
        crate_dir.join("build.rs"),
        build_rs.replace("(\"compute\", Risc::Trisc1)", "(\"compute\", Risc::Trisc0)"),
    )
    .unwrap();
    let wrong = run_line(&runs[0].1, &runs[0].0);
    std::fs::write(crate_dir.join("build.rs"), build_rs).unwrap();
    assert_eq!(wrong.status.code(), Some(1));
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        err.contains("kernel!(trisc1, ..) names trisc1, but build.rs links it for trisc0"),
        "{err}"
    );
}

/// The README's `cargo run --release -p ttprof-cli -- <command> --help`: cargo can only run
/// it if the package's one binary (or its default one) is `ttprof`, and every command the
/// README lists answers `--help`.
#[test]
fn the_readme_s_help_command_runs_for_every_listed_command() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    assert!(readme.contains("`cargo run --release -p ttprof-cli -- <command> --help`"));
    let meta = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(
        meta.status.success(),
        "{}",
        String::from_utf8_lossy(&meta.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&meta.stdout).unwrap();
    let cli = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "ttprof-cli")
        .unwrap();
    let bins: Vec<&str> = cli["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"][0] == "bin")
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        bins == ["ttprof"] || cli["default_run"] == "ttprof",
        "`cargo run -p ttprof-cli` must pick the ttprof binary: {bins:?}"
    );
    let commands: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("ttprof "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| c.chars().all(|ch| ch.is_ascii_lowercase()))
        .collect();
    for c in [
        "build", "run", "report", "read", "capture", "tracy", "clock", "snapshot", "import", "diff",
    ] {
        assert!(
            commands.contains(&c),
            "README lists `ttprof {c}`: {commands:?}"
        );
        let help = Command::new(ttprof_binary())
            .args([c, "--help"])
            .output()
            .unwrap();
        assert!(
            help.status.success()
                && String::from_utf8_lossy(&help.stdout).contains("Usage: ttprof"),
            "ttprof {c} --help"
        );
    }
}

/// README.md's "C and C++ kernels (tt-metal)": the trio written as the README shows it,
/// built and run with the commands it gives, every zone counted exactly.
#[test]
fn the_readme_s_cxx_trio_profiles_with_tt_metal_s_macros() {
    let root = workspace().join("target/test-readme-cxx");
    let runs = readme_section(&root, "cxx-kernels", "cxx-kernels");
    assert_eq!(runs.len(), 3, "README runs: build, run, run --manifest");
    let dir = root.join("cxx-kernels");

    // ttprof build --core: `NAME PATH`, the ELF linked for BRISC with a site per page.
    let build = run_line(&runs[0].1, &runs[0].0);
    assert!(build.status.success());
    let stdout = String::from_utf8_lossy(&build.stdout);
    let (name, path) = stdout.trim().split_once(' ').unwrap();
    assert_eq!(name, "reader");
    let elf =
        ttprof::elf::KernelElf::load(Path::new(path), &ttprof::inputs::Inputs::none()).unwrap();
    assert!(Path::new(path).is_absolute() && elf.risc == riscv_linker::Risc::Brisc);
    assert_eq!(
        elf.sites
            .iter()
            .filter(|(_, m)| m.name.starts_with("read-"))
            .count(),
        80 + 1
    );

    // The trio on a 2x2 grid (the compute kernel on the three TRISCs), two tiles of work each.
    let run = run_line(&runs[1].1, &runs[1].0);
    assert_eq!(run.status.code(), Some(0));
    let csv =
        std::fs::read_to_string(dir.join("target/ttprof-cxx/profile_log_device.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(2)
        .map(|l| l.splitn(15, ',').collect())
        .collect();
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for f in &rows {
        *counts.entry((f[10], f[11])).or_default() += 1;
    }
    let count = |name: &str, kind: &str| counts.get(&(name, kind)).copied().unwrap_or(0);
    let (tiles, work) = (4, 2);
    for stage in ["read", "unpack", "math", "pack", "write"] {
        for i in 0..80 {
            let name = format!("{stage}-{i:02}");
            assert_eq!(
                (count(&name, "ZONE_START"), count(&name, "ZONE_END")),
                (tiles * work, tiles * work),
                "{name}"
            );
        }
    }
    for z in ["read-tile", "write-tile"] {
        assert_eq!(
            (count(z, "ZONE_START"), count(z, "ZONE_END")),
            (tiles * work, tiles * work),
            "{z}"
        );
    }
    assert_eq!(
        count("compute-tile", "ZONE_START"),
        3 * tiles * work,
        "the multi-line call keeps its name"
    );
    assert_eq!(
        count("compute-debug", "ZONE_START"),
        0,
        "NIf with a false flag records nothing"
    );
    let sums: Vec<&Vec<&str>> = rows.iter().filter(|f| f[10] == "wait-noc").collect();
    assert!(
        sums.len() == tiles
            && sums
                .iter()
                .all(|f| f[11] == "ZONE_TOTAL" && f[14] == "{\"count\": 2}"),
        "{sums:?}"
    );
    assert!(rows
        .iter()
        .filter(|f| f[10] == "bytes")
        .all(|f| f[11] == "TS_DATA" && f[6] == "2560"));
    assert_eq!(count("bytes", "TS_DATA"), tiles * work);
    assert_eq!(
        (
            count("reader-done", "TS_EVENT"),
            count("writer-done", "TS_EVENT")
        ),
        (tiles, tiles)
    );
    for (k, cores) in [
        ("BRISC-KERNEL", 1),
        ("NCRISC-KERNEL", 1),
        ("TRISC-KERNEL", 3),
    ] {
        assert_eq!(count(k, "ZONE_START"), cores * tiles, "{k}");
    }
    let sites: std::collections::BTreeSet<&str> = rows
        .iter()
        .filter(|f| f[11] == "ZONE_START")
        .map(|f| f[10])
        .collect();
    assert!(sites.len() >= 400, "{} distinct zone names", sites.len());
    // More than tt-metal's 125 zones per RISC per launch, on every core: (x, y, RISC, run).
    let mut per_core: BTreeMap<(&str, &str, &str, &str), usize> = BTreeMap::new();
    for f in rows.iter().filter(|f| f[11] == "ZONE_START") {
        *per_core.entry((f[1], f[2], f[3], f[7])).or_default() += 1;
    }
    assert_eq!(per_core.len(), tiles * 5);
    assert!(
        per_core.values().all(|z| *z == 2 + work + work * 80),
        "zones per RISC per launch: {per_core:?}"
    );

    // The manifest: the trio twice, one tile of work.
    let ci = run_line(&runs[2].1, &runs[2].0);
    assert_eq!(ci.status.code(), Some(0));
    let csv =
        std::fs::read_to_string(dir.join("target/ttprof-cxx-ci/profile_log_device.csv")).unwrap();
    let starts = |name: &str| {
        csv.lines()
            .filter(|l| l.contains(&format!(",{name},ZONE_START,")))
            .count()
    };
    assert_eq!(
        (starts("read-00"), starts("pack-79"), starts("write-tile")),
        (8, 8, 8)
    );
}

/// README.md's "With tt-metal": the reader written as the README shows it, built with the
/// two commands it gives (a define on Wormhole B0's NCRISC; Blackhole's BRISC on NoC 1 into
/// `--target-dir`), in a temporary directory. Without tt-metal's device tree (the cache of
/// scripts/fetch-tt-metal.sh) it says why and passes, except in CI.
/// A temporary directory for a README section that needs tt-metal's device tree; `None`
/// (the test says why and passes) without it, except in CI.
fn tt_metal_root() -> Option<tempfile::TempDir> {
    if let Err(e) = ttprof::tt_metal_build::root() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI needs tt-metal's device tree: {e}"
        );
        eprintln!("skipped: {e}");
        return None;
    }
    Some(tempfile::tempdir().unwrap())
}

#[test]
fn the_readme_s_tt_metal_kernel_builds_as_shown() {
    let Some(root) = tt_metal_root() else { return };
    let runs = readme_section(root.path(), "tt-metal-kernels", "tt-metal-kernels");
    assert_eq!(
        runs.len(),
        3,
        "README runs: two dataflow builds, one compute build"
    );
    let dir = root.path().join("tt-metal-kernels");
    let sites = |elf: &Path| -> Vec<(String, String)> {
        use object::{Object, ObjectSymbol};
        let bytes = std::fs::read(elf).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let mut sites: Vec<(String, String)> = file
            .symbols()
            .filter_map(|s| {
                s.name()
                    .ok()
                    .filter(|n| n.starts_with('{'))
                    .map(str::to_string)
            })
            .map(|n| {
                let v: serde_json::Value = serde_json::from_str(&n).unwrap();
                (
                    v["k"].as_str().unwrap().into(),
                    v["n"].as_str().unwrap().into(),
                )
            })
            .collect();
        sites.sort();
        sites
    };
    let expected = [
        (
            "target/ttprof-kernels/tt-metal/wormhole_b0/ncrisc/reader.elf",
            "NCRISC-KERNEL",
            true,
        ),
        ("target/bh/reader.elf", "BRISC-KERNEL", false),
    ];
    // The compute kernel: one ELF per TRISC, each with the zone and the TRISC wrapper's.
    let (d, line) = &runs[2];
    let out = run_line(line, d);
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    for (k, t) in ["trisc0", "trisc1", "trisc2"].into_iter().enumerate() {
        let elf = dir.join(format!(
            "target/ttprof-kernels/tt-metal/wormhole_b0/compute/{t}/copy-{t}.elf"
        ));
        assert_eq!(
            printed.lines().nth(k),
            Some(format!("copy-{t} {}", elf.display()).as_str()),
            "{printed}"
        );
        let sites = sites(&elf);
        let has = |n: &str| sites.contains(&("zone".to_string(), n.to_string()));
        assert!(has("copy-tile") && has("TRISC-KERNEL"), "{t}: {sites:?}");
    }
    for ((d, line), (elf, kernel_zone, pages)) in runs[..2].iter().zip(expected) {
        let out = run_line(line, d);
        assert!(out.status.success(), "{line}");
        let elf = dir.join(elf);
        let printed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            printed.trim(),
            format!("reader {}", elf.display()),
            "{line}"
        );
        let sites = sites(&elf);
        let has = |k: &str, n: &str| sites.contains(&(k.to_string(), n.to_string()));
        assert!(
            has("zone", "read-page") && has("zone", kernel_zone),
            "{line}: {sites:?}"
        );
        assert_eq!(has("data", "pages"), pages, "-D REPORT_PAGES: {sites:?}");
        for f in ["reader.ttprof.cpp", "chlkc_descriptors.h"] {
            assert!(elf.with_file_name(f).is_file(), "{line}: no {f}");
        }
    }
}

/// The README's tt-metal program file: tt-metal's unary reader (NCRISC) and writer (BRISC)
/// from the wheel copy the two text rows through DRAM, every output is written, and every
/// record carries the program's id.
#[test]
fn the_readme_s_tt_metal_program_runs_as_shown() {
    let Some(root) = tt_metal_root() else { return };
    let runs = readme_section(root.path(), "tt-metal-program", "tt-metal-program");
    assert_eq!(runs.len(), 1, "README runs: one program");
    let (dir, line) = &runs[0];
    let out = run_line(line, dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{line}: {stdout}");
    assert!(
        stdout.contains("output dst: equal to its expected file"),
        "{stdout}"
    );
    assert!(
        stdout.contains("0 dropped; zones: NCRISC-FW x1, NCRISC-KERNEL x1;"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read(dir.join("out.txt")).unwrap(),
        std::fs::read(dir.join("rows.txt")).unwrap()
    );
    let rows = csv_rows(&dir.join("target/program/profile_log_device.csv"));
    assert_eq!(count(&rows, "NCRISC-KERNEL", "ZONE_START"), 1);
    let csv = std::fs::read_to_string(dir.join("target/program/profile_log_device.csv")).unwrap();
    assert!(
        csv.lines()
            .skip(2)
            .all(|l| l.split(',').nth(7) == Some("7")),
        "{csv}"
    );
}
