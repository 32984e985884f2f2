//! tt-metal's pre-compiled firmware on the emulator: Wormhole B0's and Blackhole's boot to
//! their wait for a go message, and a slow-dispatch host runs a kernel of ours through
//! Wormhole's mailboxes.
//! Needs tt-metal's device side (`scripts/fetch-tt-metal.sh`); without it these tests say
//! so and pass, except in CI (`CI=true`), where they fail.

mod common;

use riscv_linker::tt_metal::{self, msgs};
use riscv_linker::{Arch, Layout, NocCoord, Risc};
use ttprof_emu::asm::{addi, jalr, li, lw, sw, Elf};
use ttprof_emu::tt_metal::dispatch::{run_brisc_kernel, BriscKernel};
use ttprof_emu::tt_metal::{firmware_build, tt_metal_root, Firmware};
use ttprof_emu::{Device, DeviceConfig, HartState, Program};

const ARCH: Arch = Arch::WormholeB0;
const MAP: &tt_metal::L1Map = tt_metal::l1_map(ARCH);
const MB: msgs::Mailboxes = msgs::mailboxes(ARCH);
/// Wormhole NCRISC's instruction RAM.
const IRAM: u32 = 0xFFC0_0000;

/// The tt-metal root, or `None` (said why) when the cache is absent outside CI.
fn root() -> Option<std::path::PathBuf> {
    let root = tt_metal_root().filter(|r| r.join("tt_metal/pre-compiled").is_dir());
    if root.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "tt-metal's device side is missing (CI=true): run scripts/fetch-tt-metal.sh"
        );
        println!("skipped: tt-metal's device side is not cached (run scripts/fetch-tt-metal.sh)");
    }
    root
}

fn firmware() -> Option<Firmware> {
    Some(Firmware::open(&root()?, &firmware_build(ARCH), ARCH).expect("firmware"))
}

fn device() -> Device {
    let mut cfg = DeviceConfig::new(ARCH, (1, 1));
    cfg.layout = Layout::TtMetal;
    Device::new(cfg).expect("device")
}

fn go_signal(d: &Device, t: NocCoord) -> u32 {
    d.read_u32(0, t, MB.go_signal(0) & !3).unwrap() >> 24
}

#[test]
fn the_five_firmwares_boot_and_wait_for_a_go_message() {
    for arch in Arch::ALL {
        boot_and_wait(arch);
    }
}

/// The firmware of `arch` boots: BRISC's done, every core running in its slot, BRISC in its
/// go-message wait, the subordinates idle.
fn boot_and_wait(arch: Arch) {
    let Some(root) = root() else { return };
    let fw = Firmware::open(&root, &firmware_build(arch), arch).expect("firmware");
    let mut cfg = DeviceConfig::new(arch, (1, 1));
    cfg.layout = Layout::TtMetal;
    let mut dev = Device::new(cfg).expect("device");
    let (map, mb) = (tt_metal::l1_map(arch), msgs::mailboxes(arch));
    let go_signal = |d: &Device, t| d.read_u32(0, t, mb.go_signal(0) & !3).unwrap() >> 24;
    let t = common::t0(arch);
    fw.load(&mut dev, 0, t).expect("load");
    assert_eq!(go_signal(&dev, t), msgs::RUN_MSG_INIT as u32);
    // Run until BRISC reports its init done, then 20 looks more (10,000 cycles apart).
    let (mut looks, mut done_at) = (0, None);
    let mut pcs = Vec::new();
    let s = dev
        .run_until(10_000, &mut |d| {
            looks += 1;
            if done_at.is_none() && go_signal(d, t) == msgs::RUN_MSG_DONE as u32 {
                done_at = Some(looks);
            }
            if let Some(at) = done_at {
                assert_eq!(go_signal(d, t), msgs::RUN_MSG_DONE as u32);
                // After its done, BRISC still sets up the NoC before it waits.
                if looks > at + 5 {
                    pcs.push(d.hart_registers(0, t, Risc::Brisc).unwrap().0);
                }
            }
            done_at.is_some_and(|at| looks >= at + 20) || looks > 1000
        })
        .unwrap_or_else(|e| panic!("{arch}: {e}"));
    assert!(done_at.is_some(), "{arch}: no done from BRISC's firmware");
    // Every core left reset (BRISC released the others) and is still running: waiting.
    for risc in Risc::ALL {
        assert_eq!(
            dev.hart_state(0, t, risc).unwrap(),
            HartState::Running,
            "{arch} {risc}"
        );
        let h = s.hart(0, t, risc).unwrap();
        assert!(
            h.instructions > 1000,
            "{arch} {risc} ran {} instructions",
            h.instructions
        );
        let pc = dev.hart_registers(0, t, risc).unwrap().0;
        assert!(
            map.firmware(risc).contains(pc, 4),
            "{arch} {risc} at {pc:#x}"
        );
    }
    // BRISC spins in its go-message wait (the `while` at brisc.cc:403-410 of the pinned wheel),
    // the subordinates report idle.
    let (_, name, bytes) = &fw.elves[Risc::Brisc.index()];
    let brisc_map = Layout::TtMetal.memory_map(arch, Risc::Brisc);
    let brisc = Program::parse(bytes, &name.display().to_string(), &brisc_map).unwrap();
    assert!(pcs.len() >= 10);
    for pc in pcs {
        let line = brisc.source_line(pc).unwrap_or_default();
        let n: u32 = line.rsplit(':').next().unwrap_or("").parse().unwrap_or(0);
        // Blackhole's wait also invalidates its L1 data cache (`invalidate_l1_cache`, a
        // `fence` in cache.h) on every look.
        let in_wait = line.contains("brisc.cc:") && (403..=410).contains(&n)
            || arch == Arch::Blackhole && line.contains("tt-1xx/cache.h:");
        assert!(in_wait, "{arch}: {pc:#x} at {line}");
    }
    assert_eq!(dev.read_u32(0, t, mb.subordinate_sync).unwrap(), 0);
}

/// Our kernel: adds 1 to the word at `target` (0 before), returns 0 to the firmware.
fn counter_kernel(at: u32, target: u32) -> Vec<u8> {
    let mut w = li(5, target).to_vec();
    w.push(lw(6, 5, 0));
    w.push(addi(6, 6, 1));
    w.push(sw(6, 5, 0));
    w.push(addi(10, 0, 0));
    w.push(jalr(0, 1, 0));
    Elf::new(at)
        .text(at, &w)
        .symbol("kernel_main", at, 4 * w.len() as u32)
        .build()
}

#[test]
fn slow_dispatch_runs_a_brisc_kernel_once_and_the_firmware_waits_again() {
    let Some(fw) = firmware() else { return };
    let mut dev = device();
    let t = common::t0(ARCH);
    let target = MAP.kernel_config.end() as u32 + 0x40;
    let elf = counter_kernel(MAP.kernel_config.start + 0x200, target);
    let k = BriscKernel {
        elf: &elf,
        name: "counter.elf",
        host_assigned_id: 7,
    };
    let r = run_brisc_kernel(&mut dev, &fw, t, &k).expect("dispatched");
    println!(
        "booted after {} cycles, kernel done after {}",
        r.booted, r.kernel
    );
    assert_eq!(
        dev.read_u32(0, t, target).unwrap(),
        1,
        "the kernel ran once"
    );
    assert_eq!(go_signal(&dev, t), msgs::RUN_MSG_DONE as u32);
    let launch = MB.launch_msg(0);
    assert_eq!(
        dev.read_u32(0, t, launch + msgs::launch::HOST_ASSIGNED_ID)
            .unwrap(),
        7
    );
    assert!(r.booted > 0 && r.kernel > 0, "{r:?}");
    // Back in the same wait loop as after boot; every core still running.
    assert!(r.idle_pc.0.abs_diff(r.idle_pc.1) < 0x80, "{:x?}", r.idle_pc);
    for risc in Risc::ALL {
        assert_eq!(
            dev.hart_state(0, t, risc).unwrap(),
            HartState::Running,
            "{risc}"
        );
    }
}

#[test]
fn a_kernel_outside_the_kernel_configuration_buffer_is_refused() {
    let Some(fw) = firmware() else { return };
    let mut dev = device();
    let t = common::t0(ARCH);
    let elf = counter_kernel(0x30000 + MAP.kernel_config.end() as u32, 0x40000);
    let k = BriscKernel {
        elf: &elf,
        name: "far.elf",
        host_assigned_id: 0,
    };
    let e = run_brisc_kernel(&mut dev, &fw, t, &k).expect_err("outside the buffer");
    let msg = e.to_string();
    assert!(
        msg.contains("far.elf") && msg.contains("kernel configuration buffer"),
        "{msg}"
    );
}

#[test]
fn a_blackhole_build_is_refused_for_wormhole() {
    let Some(root) = root() else { return };
    // A Blackhole build of the same wheel: its BRISC firmware starts at 0x3ae0.
    let bh = "10231668919762417454";
    let e = Firmware::open(&root, bh, ARCH).expect_err("not Wormhole B0 firmware");
    let msg = e.to_string();
    assert!(
        msg.contains("entry 0x3ae0") && msg.contains("another arch"),
        "{msg}"
    );
    assert!(Firmware::open(&root, tt_metal::default_firmware_build(ARCH), ARCH).is_ok());
    // And the other way round: Wormhole's build is not Blackhole's.
    let e = Firmware::open(
        &root,
        tt_metal::default_firmware_build(ARCH),
        Arch::Blackhole,
    )
    .expect_err("not Blackhole firmware");
    assert!(e.to_string().contains("entry 0x3a20"), "{e}");
    let e = Firmware::open(&root, "no-such-build", ARCH).expect_err("missing");
    assert!(e.to_string().contains("no-such-build"), "{e}");
}

/// A few lines of C, built as tt-metal builds nothing yet: Debian's bare-metal gcc, rv32im,
/// linked at `at` in the kernel configuration buffer (`-N`: one segment, no headers in it).
fn c_kernel(at: u32, target: u32) -> Vec<u8> {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tt-metal-kernels");
    std::fs::create_dir_all(&dir).unwrap();
    let (src, elf) = (dir.join("store_word.c"), dir.join("store_word.elf"));
    let c = format!(
        "unsigned kernel_main(void) {{\n    *(volatile unsigned *){target:#x} = 0xC0FFEE;\n    return 0;\n}}\n"
    );
    std::fs::write(&src, c).unwrap();
    let out = std::process::Command::new("riscv64-unknown-elf-gcc")
        .args(["-march=rv32im", "-mabi=ilp32", "-nostdlib", "-nostartfiles"])
        .args(["-ffreestanding", "-O2", "-Wl,-N", "-Wl,-e,kernel_main"])
        .arg(format!("-Wl,-Ttext={at:#x}"))
        .arg("-o")
        .arg(&elf)
        .arg(&src)
        .output()
        .expect("riscv64-unknown-elf-gcc (scripts/install-test-tools.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(elf).unwrap()
}

#[test]
fn slow_dispatch_runs_a_kernel_built_from_c() {
    let Some(fw) = firmware() else { return };
    let mut dev = device();
    let t = common::t0(ARCH);
    let target = MAP.kernel_config.end() as u32 + 0x80;
    let elf = c_kernel(MAP.kernel_config.start + 0x200, target);
    let k = BriscKernel {
        elf: &elf,
        name: "store_word.elf",
        host_assigned_id: 1,
    };
    assert_eq!(dev.read_u32(0, t, target).unwrap(), 0);
    run_brisc_kernel(&mut dev, &fw, t, &k).expect("dispatched");
    assert_eq!(dev.read_u32(0, t, target).unwrap(), 0xC0FFEE);
    assert_eq!(go_signal(&dev, t), msgs::RUN_MSG_DONE as u32);
}

#[test]
fn a_kernel_touching_an_unmodelled_address_stops_the_run_naming_it() {
    let Some(fw) = firmware() else { return };
    let mut dev = device();
    let t = common::t0(ARCH);
    // NCRISC's instruction RAM is no window the emulator models (for any core).
    let at = MAP.kernel_config.start + 0x200;
    let mut w = li(5, IRAM).to_vec();
    w.push(lw(6, 5, 0));
    w.push(jalr(0, 1, 0));
    let elf = Elf::new(at).text(at, &w).build();
    let k = BriscKernel {
        elf: &elf,
        name: "iram.elf",
        host_assigned_id: 0,
    };
    let e = run_brisc_kernel(&mut dev, &fw, t, &k).expect_err("an access fault");
    let ttprof_emu::EmuError::Fault(f) = &e else {
        panic!("{e}")
    };
    assert_eq!((f.risc, f.pc), (Risc::Brisc, at + 8), "{e}");
    assert!(e.to_string().contains("0xffc00000"), "{e}");
}
