//! Differential test against QEMU: thousands of generated RV32IM instruction sequences
//! (seeded, reproducible) run on the emulator and on `qemu-system-riscv32` (Debian's
//! `qemu-system-misc`), and the architectural state (all 32 registers and the memory the
//! sequences touch) must agree.
//!
//! Each sequence is one ELF that both run unchanged at the same addresses: code on
//! TRISC0's reset PC, registers and scratch memory in TRISC0's data region. QEMU runs it
//! bare-metal in machine mode on its empty machine (`-M none`, whose RAM starts at address
//! 0 and so holds the same addresses), loaded by its ELF loader device. A prologue loads
//! random (often edge-case) values into x1..x30 and points x31 at the scratch area; the
//! body is random ALU, M-extension, load/store (aligned, through x31), forward branch and
//! jump instructions; the epilogue stores every register next to the scratch area, then
//! makes three semihosting calls: open the console, write the dump to it, exit. QEMU
//! prints the dump; the emulator stops at the first semihosting `ebreak` (the harness
//! checks it stopped exactly there) and the host reads the same bytes from L1.
//!
//! CSRs are not compared (their reset values differ between the machines; the directed
//! tests cover them). `TTPROF_DIFF_SEED` and `TTPROF_DIFF_COUNT` override the seed and the
//! number of sequences. `qemu-system-riscv32` comes from `scripts/install-test-tools.sh`.

mod common;

use common::*;
use riscv_linker::{memory_map, Arch, Risc};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use ttprof_emu::asm::*;
use ttprof_emu::disasm::disassemble;
use ttprof_emu::{Device, DeviceConfig, FaultKind};

const ARCH: Arch = Arch::WormholeB0;
const RISC: Risc = Risc::Trisc0;
const BODY: usize = 48;
const SCRATCH: u32 = 256;
const DUMP: u32 = 128 + SCRATCH;
/// After the dump in the data region: the console's name, then the semihosting parameter
/// blocks of `SYS_OPEN` (name, mode "w", name length) and `SYS_WRITE` (handle, dump, size).
const CONSOLE: u32 = DUMP;
const OPEN_BLOCK: u32 = DUMP + 4;
const WRITE_BLOCK: u32 = DUMP + 16;
const BASE_REG: u32 = 31;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % n as u64) as u32
    }
    fn value(&mut self) -> u32 {
        const EDGE: [u32; 10] = [
            0,
            1,
            2,
            0x7FF,
            0x800,
            0x7FFF_FFFF,
            0x8000_0000,
            0xFFFF_FFFF,
            0xFFFF_FFFE,
            31,
        ];
        match self.below(4) {
            0 => EDGE[self.below(EDGE.len() as u32) as usize],
            1 => self.below(64),
            _ => self.next() as u32,
        }
    }
    fn reg(&mut self) -> u32 {
        self.below(32)
    }
    /// A destination other than the scratch base (x0 now and then, to test discarding).
    fn rd(&mut self) -> u32 {
        self.below(BASE_REG)
    }
    fn imm12(&mut self) -> i32 {
        match self.below(3) {
            0 => [0, 1, -1, 2047, -2048, 31, 32][self.below(7) as usize],
            _ => (self.below(4096) as i32) - 2048,
        }
    }
}

/// A generated unit: instructions that stay together, or a forward branch/jump (after
/// `prefix`) that skips whole units, so it never lands inside an `auipc`/`jalr` pair.
/// `make` gets the byte offset from the jump instruction to its target.
enum Unit {
    Words(Vec<u32>),
    Forward {
        prefix: Vec<u32>,
        make: Box<dyn Fn(i32) -> u32>,
        skip: usize,
    },
}

/// One random unit; `room` units may still follow it.
fn gen(r: &mut Rng, room: usize) -> Unit {
    let rr: [fn(u32, u32, u32) -> u32; 18] = [
        add, sub, sll, slt, sltu, xor, srl, sra, or, and, mul, mulh, mulhsu, mulhu, div, divu, rem,
        remu,
    ];
    let ri: [fn(u32, u32, i32) -> u32; 6] = [addi, slti, sltiu, xori, ori, andi];
    let shifts: [fn(u32, u32, u32) -> u32; 3] = [slli, srli, srai];
    let br: [fn(u32, u32, i32) -> u32; 6] = [beq, bne, blt, bge, bltu, bgeu];
    let one = |w: u32| Unit::Words(vec![w]);
    match r.below(20) {
        0..=6 => one(rr[r.below(18) as usize](r.rd(), r.reg(), r.reg())),
        7..=9 => one(ri[r.below(6) as usize](r.rd(), r.reg(), r.imm12())),
        10 => one(shifts[r.below(3) as usize](r.rd(), r.reg(), r.below(32))),
        11 => one(if r.below(2) == 0 {
            lui(r.rd(), r.below(1 << 20))
        } else {
            auipc(r.rd(), r.below(1 << 20))
        }),
        12..=13 => {
            let (f, size): (fn(u32, u32, i32) -> u32, u32) = [
                (lb as fn(u32, u32, i32) -> u32, 1),
                (lh, 2),
                (lw, 4),
                (lbu, 1),
                (lhu, 2),
            ][r.below(5) as usize];
            one(f(r.rd(), BASE_REG, (r.below(SCRATCH / size) * size) as i32))
        }
        14..=15 => {
            let (f, size): (fn(u32, u32, i32) -> u32, u32) =
                [(sb as fn(u32, u32, i32) -> u32, 1), (sh, 2), (sw, 4)][r.below(3) as usize];
            one(f(
                r.reg(),
                BASE_REG,
                (r.below(SCRATCH / size) * size) as i32,
            ))
        }
        16..=17 => {
            let (f, a, b) = (br[r.below(6) as usize], r.reg(), r.reg());
            let skip = r.below(room.min(4) as u32 + 1) as usize;
            Unit::Forward {
                prefix: vec![],
                make: Box::new(move |off| f(a, b, off)),
                skip,
            }
        }
        18 => {
            let rd = r.rd();
            let skip = r.below(room.min(3) as u32 + 1) as usize;
            Unit::Forward {
                prefix: vec![],
                make: Box::new(move |off| jal(rd, off)),
                skip,
            }
        }
        19 => {
            // auipc t, 0; jalr rd, t, off + 4 (+1 sometimes: jalr clears bit 0).
            let (t, rd, odd) = (1 + r.below(BASE_REG - 1), r.rd(), r.below(2) as i32);
            let skip = r.below(room.min(3) as u32 + 1) as usize;
            Unit::Forward {
                prefix: vec![auipc(t, 0)],
                make: Box::new(move |off| jalr(rd, t, off + 4 + odd)),
                skip,
            }
        }
        _ => one(addi(r.rd(), r.reg(), r.imm12())),
    }
}

/// Lays units out as words; a jump past the last unit lands on the first word after it.
fn layout(units: &[Unit]) -> Vec<u32> {
    let size = |u: &Unit| match u {
        Unit::Words(w) => w.len(),
        Unit::Forward { prefix, .. } => prefix.len() + 1,
    };
    let mut starts = vec![0usize];
    for u in units {
        starts.push(starts.last().unwrap() + size(u));
    }
    let mut out = Vec::new();
    for (k, u) in units.iter().enumerate() {
        match u {
            Unit::Words(w) => out.extend(w),
            Unit::Forward { prefix, make, skip } => {
                out.extend(prefix);
                let here = out.len();
                let target = starts[(k + 1 + skip).min(units.len())];
                out.push(make(4 * (target - here) as i32));
            }
        }
    }
    out
}

struct Case {
    elf: Vec<u8>,
    body: Vec<u32>,
    /// The first semihosting `ebreak`, where the emulator stops.
    stop_pc: u32,
}

/// A RISC-V semihosting call (operation in a0, parameter in a1): the `ebreak` between these
/// two no-ops is what QEMU recognises.
fn semihost(w: &mut Vec<u32>) {
    w.extend([slli(0, 0, 0x1f), ebreak(), srai(0, 0, 7)]);
}

fn case(seed: u64) -> Case {
    let m = memory_map(ARCH, RISC);
    let (code, data) = (m.code.start, m.data.start);
    let mut r = Rng(seed);
    let mut w = Vec::new();
    for reg in 1..BASE_REG {
        w.extend(li(reg, r.value()));
    }
    w.extend(li(BASE_REG, data + 128));
    let units: Vec<Unit> = (0..BODY).map(|k| gen(&mut r, BODY - k - 1)).collect();
    let body = layout(&units);
    w.extend(&body);
    for reg in 1..32 {
        w.push(sw(reg, BASE_REG, -128 + 4 * reg as i32));
    }
    // SYS_OPEN(":tt", "w") -> the console's handle in a0.
    w.extend(li(10, 0x01));
    w.extend(li(11, data + OPEN_BLOCK));
    let stop_pc = code + 4 * (w.len() as u32 + 1);
    semihost(&mut w);
    // SYS_WRITE(handle, dump, size).
    w.extend(li(5, data + WRITE_BLOCK));
    w.push(sw(10, 5, 0));
    w.extend(li(10, 0x05));
    w.extend(li(11, data + WRITE_BLOCK));
    semihost(&mut w);
    // SYS_EXIT(ADP_Stopped_ApplicationExit): exit status 0.
    w.extend(li(10, 0x18));
    w.extend(li(11, 0x20026));
    semihost(&mut w);
    w.push(jal(0, 0));
    let mut init = vec![0u8; 128];
    init.extend((0..SCRATCH).map(|_| r.next() as u8));
    init.extend(b":tt\0");
    for v in [data + CONSOLE, 4, 3, 0, data, DUMP] {
        init.extend(v.to_le_bytes());
    }
    let elf = Elf::new(code)
        .text(code, &w)
        .segment(data, init, 0x1000)
        .build();
    Case { elf, body, stop_pc }
}

fn emulate(dev: &mut Device, c: &Case) -> Vec<u8> {
    let tile = t0(ARCH);
    dev.load_kernel(0, tile, RISC, &c.elf, "diff.elf")
        .expect("load");
    match dev.run() {
        Err(e)
            if e.fault()
                .is_some_and(|f| matches!(f.kind, FaultKind::Ebreak) && f.pc == c.stop_pc) => {}
        Err(e) => panic!("emulator fault before the dump was written: {e}"),
        Ok(_) => panic!(
            "the emulator ran past the semihosting ebreak at {:#x}",
            c.stop_pc
        ),
    }
    let mut words = vec![0u32; DUMP as usize / 4];
    dev.read_words(0, tile, memory_map(ARCH, RISC).data.start, &mut words)
        .unwrap();
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn qemu(path: &Path) -> Vec<u8> {
    let out = Command::new("qemu-system-riscv32")
        .args(["-M", "none", "-cpu", "rv32", "-m", "2M", "-display", "none", "-monitor", "none", "-serial", "none"])
        .args(["-semihosting-config", "enable=on,target=native", "-device"])
        .arg(format!("loader,file={},cpu-num=0", path.display()))
        .output()
        .expect("qemu-system-riscv32 is needed for the differential test: run scripts/install-test-tools.sh");
    assert!(
        out.status.success(),
        "qemu-system-riscv32 on {} failed: {:?} {}",
        path.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn explain(seed: u64, c: &Case, emu: &[u8], q: &[u8]) -> String {
    let word = |b: &[u8], i: usize| {
        b.get(4 * i..4 * i + 4)
            .map(|s| u32::from_le_bytes(s.try_into().unwrap()))
    };
    let mut s = format!("seed {seed:#x}: state differs\n");
    for i in 0..DUMP as usize / 4 {
        let (e, q) = (word(emu, i), word(q, i));
        if e != q {
            let what = if i < 32 {
                format!("x{i}")
            } else {
                format!("scratch+{:#x}", 4 * (i - 32))
            };
            s += &format!("  {what}: emulator {e:x?}, qemu {q:x?}\n");
        }
    }
    let start = memory_map(ARCH, RISC).code.start + 8 * 31;
    for (k, &w) in c.body.iter().enumerate() {
        let pc = start + 4 * k as u32;
        s += &format!("  {pc:#07x}: {w:08x}  {}\n", disassemble(w, pc));
    }
    s
}

#[test]
fn generated_sequences_match_qemu() {
    let base: u64 = std::env::var("TTPROF_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_0001);
    let count: u64 = std::env::var("TTPROF_DIFF_COUNT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("qemu-diff");
    std::fs::create_dir_all(&dir).unwrap();
    let next = Mutex::new(0u64);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 8);
    std::thread::scope(|s| {
        for w in 0..workers {
            let (next, failures, dir) = (&next, &failures, &dir);
            s.spawn(move || {
                let mut cfg = DeviceConfig::new(ARCH, (1, 1));
                cfg.threads = 1;
                let mut dev = Device::new(cfg).unwrap();
                let path = dir.join(format!("worker-{w}.elf"));
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        if *n >= count {
                            break;
                        }
                        *n += 1;
                        *n - 1
                    };
                    let seed = base.wrapping_add(i);
                    let c = case(seed);
                    std::fs::write(&path, &c.elf).unwrap();
                    let (e, q) = (emulate(&mut dev, &c), qemu(&path));
                    if e != q {
                        failures.lock().unwrap().push(explain(seed, &c, &e, &q));
                    }
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(
        f.is_empty(),
        "{} of {count} sequences differ; first:\n{}",
        f.len(),
        f.first().unwrap()
    );
}

#[test]
fn the_generator_covers_every_instruction_kind() {
    use ttprof_emu::decode::{decode, Op};
    let mut seen = std::collections::HashSet::new();
    for seed in 0..300 {
        for w in case(seed).body {
            seen.insert(decode(w).op);
        }
    }
    for op in [
        Op::Lui,
        Op::Auipc,
        Op::Jal,
        Op::Jalr,
        Op::Beq,
        Op::Bne,
        Op::Blt,
        Op::Bge,
        Op::Bltu,
        Op::Bgeu,
        Op::Lb,
        Op::Lh,
        Op::Lw,
        Op::Lbu,
        Op::Lhu,
        Op::Sb,
        Op::Sh,
        Op::Sw,
        Op::Addi,
        Op::Slti,
        Op::Sltiu,
        Op::Xori,
        Op::Ori,
        Op::Andi,
        Op::Slli,
        Op::Srli,
        Op::Srai,
        Op::Add,
        Op::Sub,
        Op::Sll,
        Op::Slt,
        Op::Sltu,
        Op::Xor,
        Op::Srl,
        Op::Sra,
        Op::Or,
        Op::And,
        Op::Mul,
        Op::Mulh,
        Op::Mulhsu,
        Op::Mulhu,
        Op::Div,
        Op::Divu,
        Op::Rem,
        Op::Remu,
    ] {
        assert!(seen.contains(&op), "{op:?} never generated");
    }
}
