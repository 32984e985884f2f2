//! A second process maps the device-memory image while the emulator runs and talks to a
//! kernel through it: the kernel publishes `DATA` then `SEQ`, the other process waits for
//! `SEQ`, checks `DATA` (stores are visible in program order) and answers on `ACK`, which
//! the kernel waits for. The run can only finish if both directions work live.

mod common;

use common::*;
use memmap2::MmapMut;
use riscv_linker::{Arch, Risc};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, DeviceConfig};

const SEQ: u32 = 0x3_0000;
const ACK: u32 = 0x3_0004;
const DATA: u32 = 0x3_0008;
const ROUNDS: u32 = 25;
const IMAGE_ENV: &str = "TTPROF_EMU_CHILD_IMAGE";
const OFFSET_ENV: &str = "TTPROF_EMU_CHILD_TILE_OFFSET";

fn kernel() -> Vec<u32> {
    let mut w = lis(&[(5, SEQ), (6, 1), (7, ROUNDS + 1)]);
    w.extend([
        mul(8, 6, 6),
        sw(8, 5, (DATA - SEQ) as i32),
        sw(6, 5, 0),
        lw(9, 5, (ACK - SEQ) as i32),
        bne(9, 6, -4),
        addi(6, 6, 1),
        bne(6, 7, -24),
        ecall(),
    ]);
    w
}

#[test]
fn two_processes_share_the_image_while_kernels_run() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("two-process-{}.devmem", std::process::id()));
    let mut cfg = DeviceConfig::new(Arch::WormholeB0, (1, 1));
    cfg.image = Some(path.clone());
    cfg.instruction_budget = 4_000_000_000;
    let mut dev = Device::new(cfg).unwrap();
    let tile = dev.tiles()[0];
    dev.load_kernel(
        0,
        tile,
        Risc::Brisc,
        &elf_for(Arch::WormholeB0, Risc::Brisc, &kernel()),
        "pingpong",
    )
    .unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_answers_through_the_image",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(IMAGE_ENV, &path)
        .env(OFFSET_ENV, dev.geometry().tile_offset(0, 0).to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = dev.run();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = run.unwrap_or_else(|e| panic!("the kernel never got its answers: {e}"));
    assert_eq!(s.harts[0].exit_code, Some(0));
    assert!(
        stdout.contains(&format!("child saw {ROUNDS} rounds in order")),
        "{stdout}"
    );
    assert_eq!(dev.read_u32(0, tile, ACK).unwrap(), ROUNDS);
    drop(dev);
    let _ = std::fs::remove_file(&path);
}

#[test]
#[ignore = "the other process of two_processes_share_the_image_while_kernels_run, which starts it"]
fn child_answers_through_the_image() {
    let (Ok(path), Ok(offset)) = (std::env::var(IMAGE_ENV), std::env::var(OFFSET_ENV)) else {
        panic!("run by two_processes_share_the_image_while_kernels_run only");
    };
    let offset: usize = offset.parse().unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let mut map = unsafe { MmapMut::map_mut(&file) }.unwrap();
    let base = map.as_mut_ptr();
    let word =
        |addr: u32| unsafe { AtomicU32::from_ptr(base.add(offset + addr as usize) as *mut u32) };
    // A safety net so a broken emulator fails this test instead of hanging it (not a timing assertion).
    let give_up = Instant::now() + Duration::from_secs(120);
    for k in 1..=ROUNDS {
        while word(SEQ).load(Ordering::Acquire) != k {
            assert!(Instant::now() < give_up, "gave up waiting for round {k}");
            std::thread::yield_now();
        }
        assert_eq!(
            word(DATA).load(Ordering::Acquire),
            k * k,
            "DATA was stored before SEQ"
        );
        word(ACK).store(k, Ordering::Release);
    }
    println!("child saw {ROUNDS} rounds in order");
}
