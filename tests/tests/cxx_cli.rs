//! `ttprof build` and `ttprof run` on C and C++ kernels, as a user calls them: sources of
//! both languages, tt-metal's compute entry on every TRISC, runtime arguments from the
//! command line and from a manifest, `--no-profile`, and the mistakes (a compiler error shown
//! as the compiler prints it, no entry point, the wrong core, arguments for a core that runs
//! nothing), each an exit 1 that says what and where.

use std::path::{Path, PathBuf};
use ttprof_tests::{ttprof, workspace};

/// A fresh directory of sources under target/test-cxx-cli/`name`.
fn sources(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = workspace().join("target/test-cxx-cli").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

/// Rows of a run's device CSV: (zone name, type) -> data column of each row.
fn rows(csv: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    text.lines()
        .skip(2)
        .map(|l| {
            let f: Vec<&str> = l.splitn(15, ',').collect();
            (f[10].to_string(), f[11].to_string(), f[6].to_string())
        })
        .collect()
}

fn count(rows: &[(String, String, String)], name: &str, kind: &str) -> usize {
    rows.iter().filter(|r| r.0 == name && r.1 == kind).count()
}

const COMPUTE: &str = r#"
#include <cstdint>
#include "tools/profiler/kernel_profiler.hpp"
namespace NAMESPACE {
void MAIN {
    for (uint32_t t = 0; t < get_arg_val<uint32_t>(0); t++) {
        DeviceZoneScopedN("tile");
    }
#if defined(TRISC_UNPACK)
    DeviceRecordEvent("unpack-done");
#elif defined(TRISC_MATH) && COMPILE_FOR_TRISC == 1
    DeviceRecordEvent("math-done");
#elif defined(TRISC_PACK) && defined(UCK_CHLKC_PACK)
    DeviceRecordEvent("pack-done");
#endif
}
}
"#;

/// A C data-movement kernel in two files, C and C++ mixed: `kernel_main` in C.
const READER_C: &str = r#"
#include <ttprof.h>
uint32_t scale(uint32_t v);
void kernel_main(void) {
    for (uint32_t i = 0; i < ttprof_arg(0); i++) {
        TTPROF_ZONE("c-zone");
        TTPROF_DATA("scaled", scale(ttprof_arg(1)));
    }
}
"#;
const SCALE_CPP: &str = r#"
#include <cstdint>
extern "C" uint32_t scale(uint32_t v) { return v * SCALE; }
"#;

#[test]
fn c_and_cxx_kernels_build_and_run_with_their_arguments() {
    let dir = sources(
        "trio",
        &[
            ("compute.cpp", COMPUTE),
            ("reader.c", READER_C),
            ("scale.cpp", SCALE_CPP),
        ],
    );
    // ttprof build: one `NAME PATH` line; flags after `--` reach the compiler.
    let b = ttprof(
        Some(&dir),
        &[
            "build",
            "--core",
            "brisc",
            "reader.c",
            "scale.cpp",
            "--",
            "-DSCALE=3",
        ],
    );
    assert_eq!(b.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&b.stdout);
    let (name, path) = stdout.trim().split_once(' ').unwrap();
    assert_eq!(name, "reader");
    assert!(Path::new(path).is_absolute());
    assert!(
        path.ends_with("target/ttprof-kernels/wormhole_b0/brisc/reader.elf"),
        "{path}"
    );
    let elf =
        ttprof::elf::KernelElf::load(Path::new(path), &ttprof::inputs::Inputs::none()).unwrap();
    assert_eq!(
        (elf.arch, elf.risc),
        (riscv_linker::Arch::WormholeB0, riscv_linker::Risc::Brisc)
    );
    // For Blackhole, and without profiling: every macro gone, no site of the kernel's own.
    let bh = ttprof(
        Some(&dir),
        &[
            "build",
            "--core",
            "ncrisc",
            "--arch",
            "blackhole",
            "--no-profile",
            "reader.c",
            "scale.cpp",
            "--",
            "-DSCALE=3",
        ],
    );
    assert_eq!(bh.status.code(), Some(0));
    let bh_path = String::from_utf8_lossy(&bh.stdout)
        .trim()
        .split_once(' ')
        .unwrap()
        .1
        .to_string();
    assert!(
        bh_path.ends_with("target/ttprof-kernels/blackhole/ncrisc-noprofile/reader.elf"),
        "{bh_path}"
    );
    let plain =
        ttprof::elf::KernelElf::load(Path::new(&bh_path), &ttprof::inputs::Inputs::none()).unwrap();
    assert_eq!(
        (plain.arch, plain.risc),
        (riscv_linker::Arch::Blackhole, riscv_linker::Risc::Ncrisc)
    );
    assert!(
        plain.sites.iter().all(|(_, m)| m.package == "ttprof-rt"),
        "only the runtime's own site: {:?}",
        plain.sites
    );

    // ttprof run: the compute kernel built for each of the three TRISCs (with that TRISC's
    // defines), the reader as the ELF built above (with -DSCALE=3).
    let o = ttprof(
        Some(&dir),
        &[
            "run",
            "--grid",
            "2x1",
            "--kernel",
            "trisc=compute.cpp",
            "--kernel",
            &format!("brisc={path}"),
            "--arg",
            "trisc=3",
            "--arg",
            "brisc=5,0x10",
            "--out",
            "target/run",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let r = rows(&dir.join("target/run/profile_log_device.csv"));
    assert_eq!(
        count(&r, "tile", "ZONE_START"),
        2 * 3 * 3,
        "2 tiles x 3 TRISCs x 3 iterations"
    );
    for e in ["unpack-done", "math-done", "pack-done"] {
        assert_eq!(
            count(&r, e, "TS_EVENT"),
            2,
            "{e}: each TRISC's build has its own defines"
        );
    }
    assert_eq!(count(&r, "c-zone", "ZONE_START"), 2 * 5);
    assert!(
        r.iter().filter(|x| x.0 == "scaled").all(|x| x.2 == "48")
            && count(&r, "scaled", "TS_DATA") == 10,
        "16 x 3"
    );
}

#[test]
fn a_manifest_takes_cxx_sources_and_runtime_arguments() {
    let dir = sources("manifest", &[("compute.cpp", COMPUTE)]);
    std::fs::write(
        dir.join("ops.toml"),
        r#"
grid = "1x1"

[[op]]
name = "two"
kernels = { trisc1 = "compute.cpp" }
args = { trisc1 = [2] }

[[op]]
name = "four"
kernels = { trisc = "compute.cpp" }
args = { trisc = "0x4" }
launches = 2
"#,
    )
    .unwrap();
    let o = ttprof(
        Some(&dir),
        &["run", "--manifest", "ops.toml", "--out", "target/ci"],
    );
    assert_eq!(o.status.code(), Some(0));
    let r = rows(&dir.join("target/ci/profile_log_device.csv"));
    assert_eq!(count(&r, "tile", "ZONE_START"), 2 + 2 * 3 * 4);
    assert_eq!(count(&r, "math-done", "TS_EVENT"), 1 + 2);
    assert_eq!(count(&r, "pack-done", "TS_EVENT"), 2);
}

#[test]
fn mistakes_exit_1_and_say_what_and_where() {
    let broken = "void kernel_main() {\n    int x = ;\n}\n";
    let no_entry = "#include <ttprof.h>\nvoid helper() { TTPROF_ZONE(\"z\"); }\n";
    // A `%` in a name would be an operand reference in the site's asm: refused by name, in C
    // as in C++ (issue 41: C's check missed it and GCC said "invalid 'asm'").
    let percent = "#include <ttprof.h>\nvoid kernel_main(void) { TTPROF_ZONE(\"50%\"); }\n";
    let dir = sources(
        "mistakes",
        &[
            ("broken.cpp", broken),
            ("no_entry.cpp", no_entry),
            ("percent.c", percent),
            ("percent.cpp", percent),
            ("compute.cpp", COMPUTE),
            ("reader.c", READER_C),
        ],
    );
    let refused =
        "ttprof: a name is one non-empty string literal without \", \\, % or control characters";
    let cases: [(&[&str], &str); 11] = [
        (&["build", "--core", "brisc", "percent.c"], refused),
        (&["build", "--core", "brisc", "percent.cpp"], refused),
        // The compiler's own message, as it prints it: file, line and column.
        (&["build", "--core", "brisc", "broken.cpp"], "broken.cpp:2:13: error: expected primary-expression before ';' token"),
        (&["build", "--core", "brisc", "no_entry.cpp"], "the kernel defines no entry: define `void kernel_main()`"),
        (&["build", "--core", "trisc0", "no_entry.cpp"], "tt-metal's compute form `namespace NAMESPACE { void MAIN { .. } }` (chlkc_unpack::unpack_main here)"),
        (&["build", "broken.cpp"], "give --core brisc|ncrisc|trisc0|trisc1|trisc2"),
        (&["build", "--core", "trisc3", "broken.cpp"], "unknown RISC \"trisc3\""),
        (&["build", "--core", "brisc", "broken.cpp", "."], "not both"),
        (&["build", "--core", "brisc", "missing.cpp"], "missing.cpp: no such source file"),
        // A compute kernel on a data-movement core: tt-metal's NAMESPACE and MAIN are a TRISC's.
        (&["run", "--kernel", "brisc=compute.cpp", "--out", "target/x"], "compiling compute.cpp failed"),
        (&["run", "--kernel", "trisc1=compute.cpp", "--arg", "brisc=1", "--out", "target/x"], "gives runtime arguments to BRISC, which runs no kernel"),
    ];
    for (args, want) in cases {
        let o = ttprof(Some(&dir), args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {want:?} missing from {err}");
    }
}

/// A kernel that opens a wait and then polls an L1 word nothing writes: on `core`, waiting
/// on `resource`.
fn stuck(resource: &str) -> String {
    format!(
        r#"
#include <ttprof.h>
#include <stdint.h>
void kernel_main(void) {{
    TTPROF_ZONE("setup");
    TTPROF_WAIT("stuck-wait", {resource});
    while (*(volatile uint32_t*)0x30000 == 0) {{}}
}}
"#
    )
}

/// Issue 40: a deadlock is said once, the cores one line each (pc, function, source line,
/// what each polls), and the op that stopped is not asked "did it run?".
#[test]
fn a_deadlock_is_reported_once_with_one_line_per_core() {
    let dir = sources(
        "deadlock",
        &[
            ("reader.c", &stuck("TTPROF_CB_FRONT(1)")),
            ("writer.c", &stuck("TTPROF_CB_BACK(4)")),
        ],
    );
    let o = ttprof(
        Some(&dir),
        &[
            "run",
            "--grid",
            "1x1",
            "--kernel",
            "brisc=reader.c",
            "--kernel",
            "ncrisc=writer.c",
            "--out",
            "out",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "a deadlock is a data problem");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.matches("none of the 2 running core(s) can make progress")
            .count(),
        1,
        "the deadlock is said once: {err}"
    );
    let cores: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("  chip 0 tile (1,1) "))
        .collect();
    assert_eq!(cores.len(), 2, "one line per core: {err}");
    for (core, file) in [("BRISC", "reader.c:7"), ("NCRISC", "writer.c:7")] {
        let line = cores
            .iter()
            .find(|l| l.contains(&format!(" {core} at pc 0x")))
            .unwrap_or_else(|| panic!("no line for {core}: {err}"));
        assert!(
            line.contains(file) && line.contains("polls L1 0x00030000"),
            "{line}"
        );
        // The wait it is inside (its TTPROF_WAIT, line 6 of the source), from the kernel's DWARF.
        let wait = if core == "BRISC" {
            "; in wait \"stuck-wait\" on CB 1 front (data) (reader.c:6)"
        } else {
            "; in wait \"stuck-wait\" on CB 4 back (space) (writer.c:6)"
        };
        assert!(line.ends_with(wait), "{line}");
    }
    assert!(!err.contains("did it run?"), "{err}");
    assert!(
        err.contains("it started on 1 tile(s)"),
        "the op's empty columns are explained by the stop: {err}"
    );
}

/// Issue 40 item 5: runtime arguments per core, as tt-metal's `SetRuntimeArgs` gives them:
/// `--arg brisc@1,0=..` replaces `--arg brisc=..` on that tile only; a tile outside the op is
/// refused naming it.
#[test]
fn runtime_arguments_differ_per_core() {
    let dir = sources(
        "per-core-args",
        &[(
            "k.c",
            r#"
#include <ttprof.h>
void kernel_main(void) {
    TTPROF_DATA("arg0", ttprof_arg(0));
}
"#,
        )],
    );
    let o = ttprof(
        Some(&dir),
        &[
            "run",
            "--grid",
            "2x1",
            "--kernel",
            "brisc=k.c",
            "--arg",
            "brisc=7",
            "--arg",
            "brisc@1,0=9",
            "--out",
            "out",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("out/profile_log_device.csv")).unwrap();
    let mut got: Vec<(String, String)> = csv
        .lines()
        .filter(|l| l.contains(",arg0,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                format!("{},{}", f[1].trim(), f[2].trim()),
                f[6].trim().to_string(),
            )
        })
        .collect();
    got.sort();
    // Logical (0,0) and (1,0) are NoC (1,1) and (2,1) on Wormhole B0.
    assert_eq!(
        got,
        [
            ("1,1".to_string(), "7".to_string()),
            ("2,1".to_string(), "9".to_string())
        ],
        "{csv}"
    );
    let o = ttprof(
        Some(&dir),
        &[
            "run",
            "--grid",
            "2x1",
            "--tiles",
            "0,0",
            "--kernel",
            "brisc=k.c",
            "--arg",
            "brisc@1,0=9",
            "--out",
            "out2",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("tile \"1,0\", which does not run the op"),
        "{err}"
    );
}

/// A `ttprof` binary copied out of the checkout builds and runs a C++ kernel from the runtime
/// it carries, unpacked into its cache (`TTPROF_CACHE`), never the checkout's `device-rt`
/// (issue 41: no compiled-in paths).
#[test]
fn a_copied_binary_builds_cxx_kernels_from_the_runtime_it_carries() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin/ttprof");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(ttprof_tests::ttprof_binary(), &bin).unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("k.cpp"),
        "#include \"tools/profiler/kernel_profiler.hpp\"\n\
         void kernel_main() { for (int i = 0; i < 3; i++) { DeviceZoneScopedN(\"step\"); } }\n",
    )
    .unwrap();
    let cache = tmp.path().join("cache");
    let ttprof = |args: &[&str]| {
        let o = std::process::Command::new(&bin)
            .args(args)
            .current_dir(&work)
            .env("TTPROF_CACHE", &cache)
            .env_remove("TTPROF_RT_DIR")
            .output()
            .unwrap();
        eprintln!(
            "$ ttprof {}\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(0), "ttprof {}", args.join(" "));
    };
    ttprof(&["build", "--core", "brisc", "k.cpp"]);
    let runtimes: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("runtime-")
        })
        .collect();
    assert_eq!(runtimes.len(), 1, "{runtimes:?}");
    let rt = &runtimes[0];
    assert!(rt.join("device-rt/include/ttprof.h").is_file());
    assert!(
        rt.join("target/ttprof-rt-c").is_dir(),
        "the library is built in the cache"
    );
    let elf = "target/ttprof-kernels/wormhole_b0/brisc/k.elf";
    assert!(work.join(elf).is_file());
    ttprof(&["run", "--kernel", &format!("brisc={elf}"), "--out", "prof"]);
    let steps = rows(&work.join("prof/profile_log_device.csv"));
    assert_eq!(count(&steps, "step", "ZONE_START"), 3);
}
