//! A live emulator in the test process for `ttprof capture` to attach to from another
//! process: the real `bench` kernel (examples/kernels, built for riscv32im), a device whose
//! image is in a test folder, and the wait for the capture to attach.

use riscv_linker::profiler::{self, tile};
use riscv_linker::{Arch, NocCoord, Risc};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use ttprof::devmem::{DeviceMemory, MappedImage};
use ttprof::kernels::{self, KernelBuild};
use ttprof::launch::{self, Policy, Settings};
use ttprof::oplog::{KernelBinding, OpLogWriter, OpRecord};
use ttprof_emu::{Device, DeviceConfig};

/// The arch the live tests run.
pub const ARCH: Arch = Arch::WormholeB0;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ is inside the workspace")
        .to_path_buf()
}

/// The `bench` kernel, built once per test binary and copied to `target/<dir>/bench.elf`
/// (each test file its own `dir`: the copies are the op logs' ELFs).
pub fn bench_elf(dir: &str) -> &'static PathBuf {
    static ELF: OnceLock<PathBuf> = OnceLock::new();
    ELF.get_or_init(|| {
        let ws = workspace();
        let built = kernels::build(&KernelBuild {
            crate_dir: ws.join("examples/kernels"),
            arch: ARCH,
            // The per-arch target directory the demo and the other tests use.
            target_dir: ws.join("target/kernels").join(ARCH.name()),
            features: vec![],
            no_default_features: false,
        })
        .unwrap();
        let dir = ws.join("target").join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        let to = dir.join("bench.elf");
        std::fs::copy(built.elf("bench").unwrap(), &to).unwrap();
        to
    })
}

/// A device of `grid` tiles with Block policy, its image in `dir` (emptied first).
pub fn device(dir: &Path, grid: (u8, u8)) -> (Device, MappedImage) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let mut cfg = DeviceConfig::new(ARCH, grid);
    cfg.image = Some(dir.join("device.img"));
    let dev = Device::new(cfg).unwrap();
    let mem = MappedImage::open(dev.image_path(), &ttprof::inputs::Inputs::none()).unwrap();
    for t in dev.tiles() {
        launch::init_tile(
            &mem,
            0,
            t,
            ARCH,
            &Settings {
                recording: true,
                policy: Policy::Block,
                consumer: false,
            },
        )
        .unwrap();
    }
    (dev, mem)
}

/// Waits until the capture has set every tile's CONSUMER word (its lease: a non-zero
/// heartbeat), i.e. it is attached.
pub fn wait_attached(mem: &MappedImage, tiles: &[NocCoord], child: &mut Child) {
    let give_up = Instant::now() + Duration::from_secs(120);
    while !tiles.iter().all(|&t| {
        mem.read_u32(0, t, profiler::TILE_BLOCK + tile::CONSUMER)
            .unwrap()
            != 0
    }) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("ttprof capture exited before attaching: {status}");
        }
        assert!(Instant::now() < give_up, "ttprof capture did not attach");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Launch `run_id` of the bench kernel `elf` with `args` on every BRISC of `dev`; checks
/// every kernel exits cleanly and appends the launch to `log`.
pub fn launch_bench(
    dev: &mut Device,
    mem: &MappedImage,
    log: &mut OpLogWriter,
    elf: &Path,
    run_id: u32,
    args: [u32; 3],
) {
    let bytes = std::fs::read(elf).unwrap();
    let tiles = dev.tiles();
    for &t in &tiles {
        for (i, v) in args.into_iter().enumerate() {
            mem.write_u32(0, t, example_abi::ARGS + 4 * i as u32, v)
                .unwrap();
        }
        launch::set_run_id(mem, 0, t, run_id).unwrap();
        launch::set_kernel(mem, 0, t, Risc::Brisc, &bytes).unwrap();
        dev.load_kernel(0, t, Risc::Brisc, &bytes, "bench").unwrap();
    }
    let start = dev.host_time_ns() as u64;
    let s = dev.run().unwrap();
    assert!(
        s.harts.iter().all(|h| h.exit_code == Some(0)),
        "every kernel exits cleanly"
    );
    let end = dev.host_time_ns() as u64;
    let kernel = KernelBinding {
        risc: "BRISC".into(),
        elf: elf.to_path_buf(),
        cores: tiles.iter().map(|t| [t.x, t.y]).collect(),
    };
    let op = OpRecord::device_op(run_id, 0, "Bench", (start, end), vec![kernel]);
    log.op(&op).unwrap();
}
