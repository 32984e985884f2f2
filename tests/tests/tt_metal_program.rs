//! tt-metal programs on the emulator by slow dispatch, with tt-metal's pre-compiled firmware,
//! each on Wormhole B0 and on Blackhole: kernels built unchanged by `ttprof build --tt-metal`'s path (linked where the
//! program's host writes them), runtime arguments, circular buffers, interleaved DRAM buffers
//! in tt-metal's bank layout, exact outputs. Needs tt-metal's device side
//! (scripts/fetch-tt-metal.sh); without it the tests say so and pass, except in CI
//! (`CI=true`), where they fail.

use riscv_linker::{Arch, Layout, NocCoord, Risc};
use std::path::{Path, PathBuf};
use ttprof::tt_metal_build::{self, TtMetalBuild};
use ttprof_emu::tt_metal::program::{
    brisc_text_base, ncrisc_text_base, run_program, CircularBuffer, Program, ProgramKernel,
};
use ttprof_emu::tt_metal::{firmware_build, Firmware};
use ttprof_emu::{Device, DeviceConfig, HartState};
use ttprof_tests::{tt_metal_root, workspace};

/// A bfloat16 tile: tt-metal's page of a tiled bfloat16 tensor.
const PAGE: u32 = 2048;

/// Builds `source` for BRISC at the program's text base, with `compile_args`.
fn build(arch: Arch, source: &Path, name: &str, compile_args: &[u32]) -> Vec<u8> {
    let mut b = TtMetalBuild::new(source.to_path_buf(), Risc::Brisc, arch);
    b.text_base = Some(brisc_text_base(arch));
    build_with(b, name, compile_args)
}

/// Builds `source` for NCRISC on NoC 1 (linked in its instruction RAM on Wormhole B0, in its
/// slot of the kernel configuration buffer on Blackhole), with `compile_args`.
fn build_ncrisc(arch: Arch, source: &Path, name: &str, compile_args: &[u32]) -> Vec<u8> {
    build_with(ncrisc(arch, source), name, compile_args)
}

/// An NCRISC build of `source` on NoC 1, placed for a program on `arch`.
fn ncrisc(arch: Arch, source: &Path) -> TtMetalBuild {
    let mut b = TtMetalBuild::new(source.to_path_buf(), Risc::Ncrisc, arch);
    b.noc = 1;
    if arch.ncrisc_iram().is_none() {
        b.text_base = Some(ncrisc_text_base(arch));
    }
    b
}

fn build_with(mut b: TtMetalBuild, name: &str, compile_args: &[u32]) -> Vec<u8> {
    b.compile_args = compile_args.to_vec();
    b.name = name.into();
    b.out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("tt-metal-program")
        .join(b.arch.name())
        .join(name);
    let elf = tt_metal_build::build(&b).unwrap_or_else(|e| panic!("{name}: {e}"));
    std::fs::read(elf).unwrap()
}

fn device(arch: Arch, cols: u8) -> Device {
    let mut cfg = DeviceConfig::new(arch, (cols, 1));
    cfg.layout = Layout::TtMetal;
    Device::new(cfg).expect("device")
}

fn core(arch: Arch) -> NocCoord {
    arch.worker_noc(0, 0).expect("worker (0,0)")
}

fn core_at(arch: Arch, col: u8) -> NocCoord {
    arch.worker_noc(col, 0).expect("a worker")
}

/// `pages` pages of distinct bytes (no page equals another, or zero).
fn input(pages: u32, seed: u8) -> Vec<u8> {
    (0..pages * PAGE)
        .map(|i| (i.wrapping_mul(7) ^ (i >> 11) ^ seed as u32) as u8)
        .collect()
}

/// tt-metal's unary reader from the wheel, unchanged, on BRISC: N pages of an interleaved
/// DRAM buffer (pages spread over the 12 or 8 banks as tt-metal lays them out) land in circular
/// buffer 0, in order, byte for byte.
#[test]
fn the_wheels_unary_reader_fills_a_circular_buffer_from_interleaved_dram() {
    for arch in Arch::ALL {
        the_wheels_unary_reader_fills_a_circular_buffer_from_interleaved_dram_on(arch);
    }
}

fn the_wheels_unary_reader_fills_a_circular_buffer_from_interleaved_dram_on(arch: Arch) {
    let Some(root) = tt_metal_root() else { return };
    let fw = Firmware::open(&root, &firmware_build(arch), arch).expect("firmware");
    let src = root.join(
        "ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/\
         reader_unary_interleaved_start_id.cpp",
    );
    // TensorAccessorArgs of an interleaved DRAM buffer: IsDram (2), then the page size.
    let elf = build(arch, &src, "unary-reader", &[2, PAGE]);
    let pages = 14; // more than the 12 (Wormhole) or 8 (Blackhole) banks: pages share a bank
    let src_addr = 0x10_0000;
    let data = input(pages, 0x5a);
    let mut dev = device(arch, 1);
    dev.write_dram_interleaved(0, src_addr, PAGE, &data)
        .expect("input");
    let t = core(arch);
    let p = Program {
        cores: vec![t],
        kernels: vec![ProgramKernel {
            risc: Risc::Brisc,
            elf: &elf,
            name: "unary-reader".into(),
            args: vec![vec![src_addr, pages, 0]],
            common_args: vec![],
        }],
        cbs: vec![CircularBuffer {
            index: 0,
            page_size: PAGE,
            pages,
        }],
        semaphores: vec![],
        host_assigned_id: 3,
    };
    let r = run_program(&mut dev, &fw, &p).expect("the program runs");
    println!(
        "booted after {} cycles, kernel {} cycles",
        r.booted, r.kernel
    );
    let cb = r.cb_addresses[0];
    let mut got = Vec::new();
    for w in 0..pages * PAGE / 4 {
        got.extend_from_slice(&dev.read_u32(0, t, cb + 4 * w).unwrap().to_le_bytes());
    }
    assert!(got == data, "circular buffer 0 differs from the DRAM input");
    assert_eq!(
        dev.hart_state(0, t, Risc::Brisc).unwrap(),
        HartState::Running,
        "the firmware waits again"
    );
}

/// Our loopback kernel (tt-metal's dataflow API, one RISC): DRAM -> CB -> DRAM on two cores
/// at once, each its half of the pages by its runtime arguments (start page, count); the
/// output equals the input.
#[test]
fn a_loopback_program_copies_interleaved_dram_exactly() {
    for arch in Arch::ALL {
        a_loopback_program_copies_interleaved_dram_exactly_on(arch);
    }
}

fn a_loopback_program_copies_interleaved_dram_exactly_on(arch: Arch) {
    let Some(root) = tt_metal_root() else { return };
    let fw = Firmware::open(&root, &firmware_build(arch), arch).expect("firmware");
    let src = workspace().join("examples/tt-metal/loopback_one_risc.cpp");
    let elf = build(arch, &src, "loopback", &[2, PAGE, 2, PAGE]);
    let pages = 6;
    let (src_addr, dst_addr) = (0x10_0000, 0x20_0000);
    let data = input(pages, 0x33);
    let mut dev = device(arch, 2);
    dev.write_dram_interleaved(0, src_addr, PAGE, &data)
        .expect("input");
    let p = Program {
        cores: vec![core_at(arch, 0), core_at(arch, 1)],
        kernels: vec![ProgramKernel {
            risc: Risc::Brisc,
            elf: &elf,
            name: "loopback".into(),
            args: vec![
                vec![src_addr, dst_addr, pages / 2, 0],
                vec![src_addr, dst_addr, pages - pages / 2, pages / 2],
            ],
            common_args: vec![],
        }],
        cbs: vec![CircularBuffer {
            index: 0,
            page_size: PAGE,
            pages: 2,
        }],
        semaphores: vec![],
        host_assigned_id: 1,
    };
    assert_eq!(
        dev.read_dram_interleaved(0, dst_addr, PAGE, data.len())
            .unwrap(),
        vec![0; data.len()],
        "the output starts zero"
    );
    run_program(&mut dev, &fw, &p).expect("the program runs");
    let out = dev
        .read_dram_interleaved(0, dst_addr, PAGE, data.len())
        .unwrap();
    assert!(out == data, "the output differs from the input");
}

/// tt-metal's unary reader on NCRISC (NoC 1) and unary writer on BRISC (NoC 0), both from
/// the wheel, unchanged, as tt-metal's unary ops pair them: on Wormhole the firmware copies
/// the reader into NCRISC's instruction RAM with the mover and BRISC restarts NCRISC there
/// (Blackhole's runs it in place); 14 pages go
/// DRAM -> circular buffer 0 -> DRAM through a 2-page buffer, byte for byte, on two cores.
/// Then a second program, on the second core only, copies the output again: its firmware,
/// booted by the first, takes the next launch as tt-metal's does (no second boot).
#[test]
fn the_wheels_unary_reader_on_ncrisc_and_writer_on_brisc_copy_dram_exactly() {
    for arch in Arch::ALL {
        the_wheels_unary_reader_on_ncrisc_and_writer_on_brisc_copy_dram_exactly_on(arch);
    }
}

fn the_wheels_unary_reader_on_ncrisc_and_writer_on_brisc_copy_dram_exactly_on(arch: Arch) {
    let Some(root) = tt_metal_root() else { return };
    let fw = Firmware::open(&root, &firmware_build(arch), arch).expect("firmware");
    let dir = root.join("ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow");
    let reader = build_ncrisc(
        arch,
        &dir.join("reader_unary_interleaved_start_id.cpp"),
        "unary-reader-ncrisc",
        &[2, PAGE],
    );
    let writer = build(
        arch,
        &dir.join("writer_unary_interleaved_start_id.cpp"),
        "unary-writer",
        &[0, 2, PAGE],
    );
    let pages = 14;
    let (src_addr, dst_addr) = (0x10_0000, 0x20_0000);
    let data = input(pages, 0x6c);
    let mut dev = device(arch, 2);
    dev.write_dram_interleaved(0, src_addr, PAGE, &data)
        .expect("input");
    let half = pages / 2;
    let p = Program {
        cores: vec![core_at(arch, 0), core_at(arch, 1)],
        kernels: vec![
            ProgramKernel {
                risc: Risc::Ncrisc,
                elf: &reader,
                name: "unary-reader".into(),
                args: vec![vec![src_addr, half, 0], vec![src_addr, pages - half, half]],
                common_args: vec![],
            },
            ProgramKernel {
                risc: Risc::Brisc,
                elf: &writer,
                name: "unary-writer".into(),
                args: vec![vec![dst_addr, half, 0], vec![dst_addr, pages - half, half]],
                common_args: vec![],
            },
        ],
        cbs: vec![CircularBuffer {
            index: 0,
            page_size: PAGE,
            pages: 2,
        }],
        semaphores: vec![],
        host_assigned_id: 5,
    };
    let r = run_program(&mut dev, &fw, &p).expect("the program runs");
    println!("kernel {} cycles", r.kernel);
    let out = dev
        .read_dram_interleaved(0, dst_addr, PAGE, data.len())
        .unwrap();
    assert!(out == data, "the output differs from the input");
    assert!(r.booted > 0, "the first program booted the firmware");
    // As on a card: no host wrote the tile block or the rings' headers (run_program does
    // not); the kernels' runtime initialised them at entry and took the run id from the
    // launch message, and a readout of the device's memory (what `ttprof capture` does)
    // finds each ring by tt-metal's layout: the firmware and kernel zones, run id 5.
    let readout = ttprof::readout::read(&ttprof::devmem::EmuMemory::new(&dev), false).unwrap();
    for t in [core_at(arch, 0), core_at(arch, 1)] {
        for risc in [Risc::Brisc, Risc::Ncrisc] {
            let ring = readout
                .rings()
                .iter()
                .find(|r| r.id.tile == t && r.id.risc == risc)
                .unwrap_or_else(|| panic!("{risc} on {t}: no ring found"));
            assert_eq!(ring.zones(), 2, "{risc} on {t}: FW and KERNEL zones");
            assert!(
                ring.records.runs().all(|id| id == 5),
                "{risc} on {t}: run ids {:?}",
                ring.records.runs().collect::<Vec<_>>()
            );
        }
    }
    // The second program: every page of dst into dst2, on core 1 alone, with the same kernels.
    let dst2 = 0x28_0000;
    let mut p2 = p.clone();
    p2.cores = vec![core_at(arch, 1)];
    p2.kernels[0].args = vec![vec![dst_addr, pages, 0]];
    p2.kernels[1].args = vec![vec![dst2, pages, 0]];
    p2.host_assigned_id = 6;
    let r2 = run_program(&mut dev, &fw, &p2).expect("the second program runs");
    assert_eq!(r2.booted, 0, "no core booted again");
    let out2 = dev
        .read_dram_interleaved(0, dst2, PAGE, data.len())
        .unwrap();
    assert!(
        out2 == data,
        "the second program's output differs from the input"
    );
    for t in [core_at(arch, 0), core_at(arch, 1)] {
        for risc in [Risc::Brisc, Risc::Ncrisc] {
            assert_eq!(
                dev.hart_state(0, t, risc).unwrap(),
                HartState::Running,
                "{risc} on {t}: the firmware waits again"
            );
        }
    }
}

/// Kernels not linked where their program can run them are refused before anything runs,
/// naming why: on Wormhole an NCRISC kernel outside its instruction RAM; on Blackhole (where
/// NCRISC's kernel runs in the kernel configuration buffer, anywhere the others leave room)
/// an NCRISC kernel linked where the program's BRISC kernel lies, naming both.
#[test]
fn an_ncrisc_kernel_linked_elsewhere_is_refused_naming_where_it_belongs() {
    for arch in Arch::ALL {
        an_ncrisc_kernel_linked_elsewhere_is_refused_on(arch);
    }
}

fn an_ncrisc_kernel_linked_elsewhere_is_refused_on(arch: Arch) {
    let Some(root) = tt_metal_root() else { return };
    let fw = Firmware::open(&root, &firmware_build(arch), arch).expect("firmware");
    let src = workspace().join("examples/tt-metal/loopback_one_risc.cpp");
    // Linked for BRISC's place: not where an NCRISC kernel runs.
    let elf = build(arch, &src, "loopback-misplaced", &[2, PAGE, 2, PAGE]);
    let mut dev = device(arch, 1);
    let kernel = |risc, name: &str| ProgramKernel {
        risc,
        elf: &elf,
        name: name.into(),
        args: vec![vec![]],
        common_args: vec![],
    };
    let mut kernels = vec![kernel(Risc::Ncrisc, "writer")];
    if arch == Arch::Blackhole {
        kernels.insert(0, kernel(Risc::Brisc, "reader"));
    }
    let p = Program {
        cores: vec![core(arch)],
        kernels,
        cbs: vec![],
        semaphores: vec![],
        host_assigned_id: 0,
    };
    let e = run_program(&mut dev, &fw, &p).expect_err("refused");
    let msg = e.to_string();
    let (place, at) = match arch {
        Arch::WormholeB0 => ("instruction RAM", format!("{:#x}", ncrisc_text_base(arch))),
        Arch::Blackhole => ("overlaps reader's", format!("{:#x}", brisc_text_base(arch))),
    };
    assert!(
        msg.contains("writer") && msg.contains(place) && msg.contains(&at),
        "{arch}: {msg}"
    );
}

/// tt-metal's binary eltwise reader from the wheel, unchanged, on NCRISC reads two
/// interleaved inputs tile by tile into circular buffers 0 and 1; the wheel's unary writer on
/// BRISC drains buffer 0 to DRAM. With no compute between them, the output is input 0 byte
/// for byte, and buffer 1 (sized to hold every tile) holds input 1 in order.
#[test]
fn the_wheels_binary_reader_on_ncrisc_feeds_both_circular_buffers_exactly() {
    for arch in Arch::ALL {
        the_wheels_binary_reader_on_ncrisc_feeds_both_circular_buffers_exactly_on(arch);
    }
}

fn the_wheels_binary_reader_on_ncrisc_feeds_both_circular_buffers_exactly_on(arch: Arch) {
    let Some(root) = tt_metal_root() else { return };
    let fw = Firmware::open(&root, &firmware_build(arch), arch).expect("firmware");
    let ops = root.join("ttnn/cpp/ttnn/operations");
    // Not sharded, then each input's TensorAccessorArgs (interleaved DRAM, 2048-byte pages).
    let reader = build_ncrisc(
        arch,
        &ops.join("eltwise/binary/device/kernels/dataflow/reader_binary_interleaved_start_id.cpp"),
        "binary-reader",
        &[0, 2, PAGE, 2, PAGE],
    );
    let writer = build(
        arch,
        &ops.join("eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp"),
        "unary-writer-b",
        &[0, 2, PAGE],
    );
    let tiles = 5;
    let (a_addr, b_addr, out_addr) = (0x10_0000, 0x18_0000, 0x20_0000);
    let (a, bb) = (input(tiles, 0x11), input(tiles, 0x77));
    let mut dev = device(arch, 1);
    dev.write_dram_interleaved(0, a_addr, PAGE, &a).unwrap();
    dev.write_dram_interleaved(0, b_addr, PAGE, &bb).unwrap();
    let p = Program {
        cores: vec![core(arch)],
        kernels: vec![
            ProgramKernel {
                risc: Risc::Ncrisc,
                elf: &reader,
                name: "binary-reader".into(),
                // src0, src1, num_tiles, start_id, block height/width, cores in y (sharded only)
                args: vec![vec![a_addr, b_addr, tiles, 0, 0, 0, 0]],
                common_args: vec![],
            },
            ProgramKernel {
                risc: Risc::Brisc,
                elf: &writer,
                name: "unary-writer".into(),
                args: vec![vec![out_addr, tiles, 0]],
                common_args: vec![],
            },
        ],
        cbs: vec![
            CircularBuffer {
                index: 0,
                page_size: PAGE,
                pages: 2,
            },
            CircularBuffer {
                index: 1,
                page_size: PAGE,
                pages: tiles,
            },
        ],
        semaphores: vec![],
        host_assigned_id: 6,
    };
    let r = run_program(&mut dev, &fw, &p).expect("the program runs");
    let out = dev
        .read_dram_interleaved(0, out_addr, PAGE, a.len())
        .unwrap();
    assert!(out == a, "the output differs from input 0");
    let cb1 = r.cb_addresses[1];
    let mut got = Vec::new();
    for w in 0..tiles * PAGE / 4 {
        got.extend_from_slice(
            &dev.read_u32(0, core(arch), cb1 + 4 * w)
                .unwrap()
                .to_le_bytes(),
        );
    }
    assert!(got == bb, "circular buffer 1 differs from input 1");
}

/// tt-metal's matmul reader from the wheel (`reader_bmm_8bank_output_tiles_partitioned`, the
/// reader of tt-metal's multi-core matmul and of its matmul_single_core example's shape),
/// unchanged, on NCRISC of two cores, each given half of the output tiles of
/// `C[Mt x Nt] = A[Mt x Kt] * B[Kt x Nt]` (tiles). With no compute draining them, its two
/// circular buffers (sized to hold every tile) end up holding, per output tile `(m, n)` in
/// turn, A's tiles `(m, 0..Kt)` and B's tiles `(0..Kt, n)`: the order matmul needs, checked
/// tile by tile against that definition rather than the kernel's own index arithmetic.
#[test]
fn the_wheels_matmul_reader_feeds_each_core_its_output_tiles_operands_in_order() {
    for arch in Arch::ALL {
        the_wheels_matmul_reader_feeds_each_core_its_output_tiles_operands_in_order_on(arch);
    }
}

fn the_wheels_matmul_reader_feeds_each_core_its_output_tiles_operands_in_order_on(arch: Arch) {
    let Some(root) = tt_metal_root() else { return };
    let fw = Firmware::open(&root, &firmware_build(arch), arch).expect("firmware");
    let dir = root.join("ttnn/cpp/ttnn/operations/matmul/device/kernels/dataflow");
    let (mt, kt, nt) = (2u32, 3u32, 2u32);
    let per_core = mt * nt / 2;
    let mut b = ncrisc(
        arch,
        &dir.join("reader_bmm_8bank_output_tiles_partitioned.cpp"),
    );
    b.named_args = vec![("cb_in0".into(), 0), ("cb_in1".into(), 1)];
    // No padding of the last k tile (width, height), then A's and B's TensorAccessorArgs.
    let reader = build_with(b, "matmul-reader", &[0, 0, 2, PAGE, 2, PAGE]);
    let (a_addr, b_addr) = (0x10_0000, 0x18_0000);
    let (a, bm) = (input(mt * kt, 0x21), input(kt * nt, 0x5a));
    let mut dev = device(arch, 2);
    dev.write_dram_interleaved(0, a_addr, PAGE, &a).unwrap();
    dev.write_dram_interleaved(0, b_addr, PAGE, &bm).unwrap();
    let args = |start: u32| {
        // src0, src1, Mt, Kt, Nt, MtKt, KtNt, batch, bcast_B, first output tile, tiles, MtNt
        vec![
            a_addr,
            b_addr,
            mt,
            kt,
            nt,
            mt * kt,
            kt * nt,
            1,
            0,
            start,
            per_core,
            mt * nt,
        ]
    };
    let cb = |index| CircularBuffer {
        index,
        page_size: PAGE,
        pages: per_core * kt,
    };
    let p = Program {
        cores: vec![core_at(arch, 0), core_at(arch, 1)],
        kernels: vec![ProgramKernel {
            risc: Risc::Ncrisc,
            elf: &reader,
            name: "matmul-reader".into(),
            args: vec![args(0), args(per_core)],
            common_args: vec![],
        }],
        cbs: vec![cb(0), cb(1)],
        semaphores: vec![],
        host_assigned_id: 8,
    };
    let r = run_program(&mut dev, &fw, &p).expect("the program runs");
    let tile = |m: &[u8], i: u32| m[(i * PAGE) as usize..((i + 1) * PAGE) as usize].to_vec();
    for (c, first) in [(0u8, 0u32), (1, per_core)] {
        let mut want0 = Vec::new();
        let mut want1 = Vec::new();
        for out in first..first + per_core {
            let (m, n) = (out / nt, out % nt);
            for k in 0..kt {
                want0.extend(tile(&a, m * kt + k));
                want1.extend(tile(&bm, k * nt + n));
            }
        }
        for (cb_i, want) in [(0usize, want0), (1, want1)] {
            let at = r.cb_addresses[cb_i];
            let mut got = Vec::new();
            for w in 0..per_core * kt * PAGE / 4 {
                got.extend_from_slice(
                    &dev.read_u32(0, core_at(arch, c), at + 4 * w)
                        .unwrap()
                        .to_le_bytes(),
                );
            }
            for i in 0..per_core * kt {
                assert!(
                    tile(&got, i) == tile(&want, i),
                    "core {c}: circular buffer {cb_i}'s tile {i} is not the operand matmul needs"
                );
            }
        }
    }
}
