//! The devices' behaviour through the tile's dispatch ([`Devices::read`], [`Devices::write`]).

use super::*;
use crate::map::in_map;
use crate::tensix::TtSync;
use mmio::{mailbox, MAILBOX_STATUS as STATUS};
use Risc::*;

/// A load of `size` bytes at `addr` by `risc` at `time` (no NoC model).
fn ld(d: &mut Devices, addr: u32, size: u32, time: u64, risc: Risc) -> Result<u32, FaultKind> {
    let a = Access {
        addr,
        size,
        risc,
        time,
    };
    d.read(&a, None, &mut no_units)
}

/// A store of `word` (`size` bytes asked) at `addr` by `risc` at `time`, units to `unit`.
fn st(
    d: &mut Devices,
    addr: u32,
    size: u32,
    word: u32,
    risc: Risc,
    time: u64,
    unit: &mut UnitSink<'_>,
) -> Result<(), FaultKind> {
    let a = Access {
        addr,
        size,
        risc,
        time,
    };
    d.write(&a, word, None, unit)
}

fn load(d: &mut Devices, addr: u32, risc: Risc) -> Result<u32, FaultKind> {
    ld(d, addr, 4, 0, risc)
}

fn store(d: &mut Devices, addr: u32, risc: Risc, v: u32) -> Result<(), FaultKind> {
    st(d, addr, 4, v, risc, 0, &mut no_units)
}

/// The name of the device an access at `addr` by `risc` reaches, "unmapped" or "outside".
fn reached(addr: u32, risc: Risc) -> &'static str {
    match route(addr, risc) {
        Route::Device(e) => e.device(&mut Devices::default()).name(),
        Route::Unmapped(_) => "unmapped",
        Route::Outside => "outside",
    }
}

#[test]
fn mailbox_is_a_fifo_that_blocks_when_empty_or_full() {
    let mut d = Devices::default();
    // BRISC to itself: window 0 both ways.
    let b = mailbox(0);
    store(&mut d, b, Brisc, 1).unwrap();
    store(&mut d, b, Brisc, 2).unwrap();
    assert_eq!(
        load(&mut d, b + STATUS, Brisc),
        Ok(1),
        "status: something to pop"
    );
    assert_eq!(load(&mut d, b, Brisc), Ok(1));
    assert_eq!(load(&mut d, b, Brisc), Ok(2));
    assert_eq!(
        load(&mut d, b, Brisc),
        Err(FaultKind::Blocked {
            addr: b,
            write: false
        })
    );
    assert_eq!(
        load(&mut d, b + STATUS, Brisc),
        Ok(0),
        "status of an empty mailbox, no wait"
    );
    for v in 10..14 {
        store(&mut d, b + 0x10, Brisc, v).unwrap();
    }
    assert_eq!(
        store(&mut d, b, Brisc, 14),
        Err(FaultKind::Blocked {
            addr: b,
            write: true
        })
    );
    assert_eq!(
        load(&mut d, b + 0x20, Brisc),
        Ok(10),
        "any address of the window pops"
    );
    store(&mut d, b, Brisc, 14).unwrap();
    let got: Vec<u32> = (0..4).map(|_| load(&mut d, b, Brisc).unwrap()).collect();
    assert_eq!(got, [11, 12, 13, 14]);
}

#[test]
fn mailbox_addresses_follow_the_per_core_table() {
    // (writer, window it writes, reader, window it reads) for every pair.
    let cores = [Brisc, Trisc0, Trisc1, Trisc2];
    for (from_i, &from) in cores.iter().enumerate() {
        for (to_i, &to) in cores.iter().enumerate() {
            let mut d = Devices::default();
            let v = 100 + 10 * from_i as u32 + to_i as u32;
            store(&mut d, mailbox(to_i as u32), from, v).unwrap();
            // Only the reader's window of the writer sees it.
            for w in 0..4 {
                for &r in &cores {
                    let status = load(&mut d, mailbox(w as u32) + STATUS, r).unwrap();
                    assert_eq!(
                        status,
                        (w == from_i && r == to) as u32,
                        "{from}->{to}: {r} window {w}"
                    );
                }
            }
            assert_eq!(load(&mut d, mailbox(from_i as u32), to), Ok(v));
        }
    }
}

#[test]
fn mailboxes_of_different_pairs_are_independent() {
    let mut d = Devices::default();
    store(&mut d, mailbox(1), Brisc, 1).unwrap(); // BRISC -> TRISC0
    store(&mut d, mailbox(0), Trisc0, 9).unwrap(); // TRISC0 -> BRISC
    store(&mut d, mailbox(1), Trisc1, 5).unwrap(); // TRISC1 -> TRISC0
    assert_eq!(
        load(&mut d, mailbox(1), Brisc),
        Ok(9),
        "BRISC reads TRISC0's window: TRISC0 -> BRISC"
    );
    assert_eq!(load(&mut d, mailbox(2), Trisc0), Ok(5));
    assert_eq!(load(&mut d, mailbox(0), Trisc0), Ok(1));
    assert!(matches!(
        load(&mut d, mailbox(0), Trisc0),
        Err(FaultKind::Blocked { .. })
    ));
}

#[test]
fn the_mailboxes_a_core_writes_hold_four_values_together() {
    let mut d = Devices::default();
    store(&mut d, mailbox(1), Brisc, 1).unwrap();
    store(&mut d, mailbox(1), Brisc, 2).unwrap();
    store(&mut d, mailbox(2), Brisc, 3).unwrap();
    store(&mut d, mailbox(3), Brisc, 4).unwrap();
    let to_self = mailbox(0);
    assert_eq!(
        store(&mut d, to_self, Brisc, 5),
        Err(FaultKind::Blocked {
            addr: to_self,
            write: true
        })
    );
    // Another writer is not affected.
    store(&mut d, mailbox(1), Trisc2, 6).unwrap();
    assert_eq!(load(&mut d, mailbox(0), Trisc1), Ok(3));
    store(&mut d, to_self, Brisc, 5).unwrap();
}

#[test]
fn pc_bufs_carry_sixteen_values_from_brisc_to_each_trisc() {
    let mut d = Devices::default();
    for v in 0..16 {
        store(&mut d, mmio::PC1_BUF_BASE + 4 * v, Brisc, v).unwrap();
    }
    assert!(matches!(
        store(&mut d, mmio::PC1_BUF_BASE, Brisc, 16),
        Err(FaultKind::Blocked { write: true, .. })
    ));
    store(&mut d, mmio::PC_BUF_BASE + 0x100, Brisc, 77).unwrap();
    assert_eq!(load(&mut d, mmio::PC_BUF_BASE, Trisc0), Ok(77));
    assert_eq!(load(&mut d, mmio::PC_BUF_BASE, Trisc1), Ok(0));
    assert_eq!(load(&mut d, mmio::PC_BUF_BASE, Trisc1), Ok(1));
    assert!(matches!(
        load(&mut d, mmio::PC_BUF_BASE, Trisc2),
        Err(FaultKind::Blocked { write: false, .. })
    ));
    store(&mut d, mmio::PC_BUF_BASE, Trisc2, 5).unwrap(); // discarded
    assert!(matches!(
        load(&mut d, mmio::PC_BUF_BASE, Trisc2),
        Err(FaultKind::Blocked { .. })
    ));
}

#[test]
fn a_brisc_pc_buf_load_waits_for_the_trisc_to_drain_and_wait() {
    let mut d = Devices::default();
    let b = mmio::PC_BUF_BASE;
    store(&mut d, b, Brisc, 1).unwrap();
    assert!(
        matches!(load(&mut d, b, Brisc), Err(FaultKind::Blocked { .. })),
        "FIFO not empty"
    );
    assert_eq!(load(&mut d, b, Trisc0), Ok(1));
    assert!(
        matches!(load(&mut d, b, Brisc), Err(FaultKind::Blocked { .. })),
        "TRISC0 not waiting yet"
    );
    assert!(load(&mut d, b, Trisc0).is_err());
    assert_eq!(
        load(&mut d, b, Brisc),
        Ok(0),
        "drained, TRISC0 waiting, Tensix idle"
    );
    assert!(
        matches!(
            load(&mut d, mmio::PC1_BUF_BASE, Brisc),
            Err(FaultKind::Blocked { .. })
        ),
        "other PCBufs"
    );
    store(&mut d, b, Brisc, 2).unwrap();
    assert_eq!(load(&mut d, b, Trisc0), Ok(2));
    assert!(load(&mut d, b, Brisc).is_err(), "TRISC0 no longer waiting");
}

#[test]
fn pc_buf_override_bits() {
    let mut d = Devices::default();
    // PCBuf 1: OverrideEn with value 0x5A; PCBuf 2: OverrideEn + OverrideBusy.
    let reg = ((1 | (0x5A << 2)) << 10) | (3 << 20);
    d.pc_bufs.override_reg = reg;
    let rd = |d: &mut Devices, addr, risc| load(d, addr, risc);
    assert_eq!(
        rd(&mut d, mmio::PC_BUF_BASE, Trisc1),
        Ok(0x5A),
        "empty FIFO: the override value"
    );
    store(&mut d, mmio::PC1_BUF_BASE, Brisc, 7).unwrap();
    assert_eq!(
        rd(&mut d, mmio::PC_BUF_BASE, Trisc1),
        Ok(7),
        "values in the FIFO come first"
    );
    assert_eq!(
        rd(&mut d, mmio::PC2_BUF_BASE, Brisc),
        Ok(0),
        "OverrideEn + OverrideBusy"
    );
    assert!(
        rd(&mut d, mmio::PC_BUF_BASE, Brisc).is_err(),
        "PCBuf 0 has no override"
    );
}

#[test]
fn ttsync_and_semaphores() {
    let mut d = Devices::default();
    assert_eq!(
        d.waits_on(mmio::TTSYNC_COPROCESSOR_DONE, Trisc1, false),
        Wait::Tensix {
            thread: 1,
            hold: Hold::Sync(TtSync::CoprocessorDone)
        }
    );
    assert_eq!(
        d.waits_on(mmio::TTSYNC_MOP_EXPANDER_DONE, Trisc2, false),
        Wait::Tensix {
            thread: 2,
            hold: Hold::Sync(TtSync::MopExpanderDone)
        }
    );
    store(&mut d, mmio::TTSYNC_COPROCESSOR_DONE, Trisc0, 0).unwrap();
    assert_eq!(
        load(&mut d, mmio::TTSYNC_COPROCESSOR_DONE, Trisc0),
        Ok(0),
        "returns at once"
    );
    let s3 = mmio::SEMAPHORE_BASE + 12;
    assert_eq!(load(&mut d, s3, Trisc0), Ok(0));
    store(&mut d, s3, Trisc0, 0).unwrap(); // post
    store(&mut d, s3, Trisc1, 2).unwrap(); // post (even)
    assert_eq!(load(&mut d, s3, Trisc2), Ok(2), "shared by the TRISCs");
    store(&mut d, s3, Trisc2, 1).unwrap(); // get
    assert_eq!(load(&mut d, s3, Trisc0), Ok(1));
    for _ in 0..3 {
        store(&mut d, s3, Trisc0, 0xFFFF_FFFF).unwrap();
    }
    assert_eq!(load(&mut d, s3, Trisc0), Ok(0), "SEMGET stops at 0");
    for _ in 0..20 {
        store(&mut d, s3, Trisc0, 0).unwrap();
    }
    assert_eq!(load(&mut d, s3, Trisc0), Ok(15), "SEMPOST stops at 15");
    assert_eq!(
        load(&mut d, mmio::SEMAPHORE_BASE, Trisc0),
        Ok(0),
        "other semaphores untouched"
    );
    assert_eq!(reached(mmio::SEMAPHORE_BASE + 0x20, Trisc0), "storage");
    assert_eq!(reached(mmio::PC_BUF_BASE + 0xC, Trisc0), "storage");
    assert_eq!(reached(mmio::SEMAPHORE_BASE, Brisc), "PCBufs");
}

#[test]
fn gprs_brisc_sees_all_threads_a_trisc_its_own() {
    let mut d = Devices::default();
    let r = mmio::REGFILE_BASE;
    store(&mut d, r + 0x100 + 8, Brisc, 42).unwrap(); // thread 1, GPR 2
    assert_eq!(load(&mut d, r + 8, Trisc1), Ok(42));
    assert_eq!(load(&mut d, r + 8, Trisc0), Ok(0));
    store(&mut d, r + 0xFC, Trisc2, 7).unwrap();
    assert_eq!(load(&mut d, r + 0x2FC, Brisc), Ok(7));
    assert_eq!(reached(r + 0x300, Brisc), "storage");
    assert_eq!(reached(r + 0x100, Trisc0), "storage");
}

#[test]
fn per_core_mapping() {
    let unmapped = |addr, risc| reached(addr, risc) == "unmapped";
    let mut d = Devices::default();
    for addr in [
        mmio::MAILBOX_BASE,
        mmio::PC_BUF_BASE,
        mmio::SEMAPHORE_BASE,
        mmio::REGFILE_BASE,
        mmio::INSTRN_BUF_BASE,
        mmio::TENSIX_CFG_BASE,
    ] {
        assert!(unmapped(addr, Ncrisc), "{addr:#x}");
    }
    for risc in [Trisc0, Trisc1, Trisc2, Ncrisc] {
        assert!(unmapped(mmio::PC1_BUF_BASE, risc) && unmapped(mmio::PC2_BUF_BASE + 4, risc));
        assert!(unmapped(mmio::INSTRN1_BUF_BASE, risc) && unmapped(mmio::INSTRN2_BUF_BASE, risc));
    }
    assert!(unmapped(mmio::MOP_CFG_BASE, Brisc) && unmapped(mmio::MOP_CFG_BASE, Ncrisc));
    store(&mut d, mmio::MOP_CFG_BASE + 0x20, Trisc2, 5).unwrap();
    assert_eq!(
        d.tensix.mop_cfg[2][8], 5,
        "MOP configuration word 8 of thread 2"
    );
    assert_eq!(reached(mmio::MOP_CFG_BASE + 0x24, Trisc2), "outside");
    let push = |thread, after_mop| Wait::Tensix {
        thread,
        hold: Hold::Push { after_mop },
    };
    assert_eq!(
        d.waits_on(mmio::INSTRN_BUF_BASE, Brisc, true),
        push(0, true)
    );
    assert_eq!(
        d.waits_on(mmio::INSTRN_BUF_BASE + 0x40, Trisc2, true),
        push(2, false)
    );
    assert_eq!(
        d.waits_on(mmio::INSTRN2_BUF_BASE, Brisc, true),
        push(2, true)
    );
    for risc in Risc::ALL {
        assert_eq!(reached(mmio::TDMA_REGS_BASE, risc), "TDMA-RISC");
        assert_eq!(reached(mmio::PIC_REGS_BASE + 0xFFC, risc), "storage");
        assert_eq!(
            reached(mmio::NOC_OVERLAY_BASE + 0x3_FFFC, risc),
            "overlay streams"
        );
        assert_eq!(reached(mmio::SOFT_RESET_0, risc), "soft reset");
        assert_eq!(reached(0xFFE1_0000, risc), "outside");
        assert_eq!(
            reached(0xFFC0_0000, risc),
            "outside",
            "NCRISC IRAM: not reachable by loads/stores"
        );
    }
    assert_eq!(reached(mmio::TENSIX_CFG_BASE + 0xFFFC, Trisc1), "storage");
}

#[test]
fn pushes_queue_or_fault_and_are_write_only() {
    let mut d = Devices::default();
    store(&mut d, mmio::INSTRN1_BUF_BASE, Brisc, 0x0200_0000).unwrap(); // NOP: queued
    let dotpv = 0x2900_0000; // not modelled
    let e = store(&mut d, mmio::INSTRN1_BUF_BASE, Brisc, dotpv).unwrap_err();
    assert!(
        matches!(
            e,
            FaultKind::TensixPush {
                word: 0x2900_0000,
                addr: mmio::INSTRN1_BUF_BASE,
                risc: Brisc,
                thread: 1,
                mnemonic: "DOTPV",
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    for part in ["BRISC", "DOTPV", "0x29000000", "thread T1", "not modelled"] {
        assert!(msg.contains(part), "{part:?} missing from {msg}");
    }
    assert!(matches!(
        load(&mut d, mmio::INSTRN_BUF_BASE, Trisc0),
        Err(FaultKind::WriteOnly { .. })
    ));
    store(&mut d, mmio::MOP_CFG_BASE + 4, Trisc0, 3).unwrap();
    assert!(matches!(
        load(&mut d, mmio::MOP_CFG_BASE + 4, Trisc0),
        Err(FaultKind::WriteOnly { .. })
    ));
    assert_eq!(d.tensix.mop_cfg[0][1], 3);
}

fn rd(r: &mut Devices, addr: u32, time: u64) -> u32 {
    ld(r, addr, 4, time, Brisc).unwrap()
}

fn wr(r: &mut Devices, addr: u32, v: u32) {
    st(r, addr, 4, v, Brisc, 0, &mut no_units).unwrap()
}

#[test]
fn low_read_latches_high_word_and_live_high_moves() {
    let mut r = Devices {
        wall_offset: 5,
        ..Devices::default()
    };
    let t = (7u64 << 32) | 0xFFFF_FFF0;
    assert_eq!(rd(&mut r, mmio::WALL_CLOCK_L, t), 0xFFFF_FFF5);
    assert_eq!(
        rd(&mut r, mmio::WALL_CLOCK_H, t + 100),
        7,
        "latched, not live"
    );
    assert_eq!(
        rd(&mut r, mmio::WALL_CLOCK_H_LIVE, t + 100),
        8,
        "live high moved on"
    );
    st(&mut r, mmio::WALL_CLOCK_H, 4, 0, Brisc, t, &mut no_units).unwrap();
    st(
        &mut r,
        mmio::WALL_CLOCK_H_LIVE,
        4,
        0,
        Brisc,
        t,
        &mut no_units,
    )
    .unwrap();
    assert_eq!(
        rd(&mut r, mmio::WALL_CLOCK_H, t + 100),
        7,
        "writes to the high words are ignored"
    );
    // A write to the low word latches like a read (DebugTimestamper.md's memory map).
    st(
        &mut r,
        mmio::WALL_CLOCK_L,
        4,
        0xDEAD,
        Brisc,
        t + 100,
        &mut no_units,
    )
    .unwrap();
    assert_eq!(rd(&mut r, mmio::WALL_CLOCK_H, t), 8);
    assert_eq!(
        rd(&mut r, mmio::WALL_CLOCK_L, 0),
        5,
        "the clock itself is not written"
    );
}

fn no_units(_: u32, _: [u32; 4]) -> Result<(), String> {
    panic!("no unit expected")
}

#[test]
fn timestamper_registers_use_the_wall_clock() {
    let mut r = Devices {
        wall_offset: 1 << 32,
        ..Devices::default()
    };
    let mut units = Vec::new();
    let mut sink = |a, d| {
        units.push((a, d));
        Ok(())
    };
    st(
        &mut r,
        mmio::TIMESTAMP_BUF0_START,
        4,
        0x3000,
        Brisc,
        0,
        &mut sink,
    )
    .unwrap();
    st(
        &mut r,
        mmio::TIMESTAMP_BUF0_END,
        4,
        0x3001,
        Brisc,
        0,
        &mut sink,
    )
    .unwrap();
    st(&mut r, mmio::TIMESTAMP, 4, 0x40, Brisc, 0x10, &mut sink).unwrap();
    assert_eq!(
        units,
        [(0x30000, [0x40, 0x10, 1, 0])],
        "counter = wall clock = time + offset"
    );
    assert_eq!(rd(&mut r, mmio::TIMESTAMP_STATUS, 0x11), 1 << 14);
    assert_eq!(rd(&mut r, mmio::TIMESTAMP_BUF0_END, 0x11), 0x3001);
    assert!(
        r.debug_regs.words.is_empty() && r.storage.is_empty(),
        "not plain storage"
    );
}

#[test]
fn other_registers_read_back_and_soft_reset_is_deferred() {
    let mut r = Devices::default();
    wr(&mut r, mmio::NOC0_REGS_BASE + 8, 42);
    assert_eq!(rd(&mut r, mmio::NOC0_REGS_BASE + 8, 0), 42);
    wr(&mut r, mmio::SOFT_RESET_0, mmio::SOFT_RESET_ALL);
    assert_eq!(r.pending_reset, Some(mmio::SOFT_RESET_ALL));
    assert!(in_map(mmio::SOFT_RESET_0) && !in_map(mmio::LOCAL_RAM_BASE));
    assert!(in_map(mmio::TENSIX_CFG_BASE + 0xFFFC) && !in_map(mmio::TENSIX_CFG_BASE - 4));
}

#[test]
fn storage_windows_read_back_for_every_core_that_has_them() {
    let mut r = Devices::default();
    for (addr, risc) in [
        (mmio::TDMA_REGS_BASE + 0x24, Ncrisc),
        (mmio::PIC_REGS_BASE + 4, Trisc1),
        (mmio::NOC_OVERLAY_BASE + 0x1_2344, Brisc),
        (mmio::TENSIX_CFG_BASE + 0x40, Trisc2),
    ] {
        st(&mut r, addr, 4, addr ^ 0x5A5A, risc, 0, &mut no_units).unwrap();
        assert_eq!(
            ld(&mut r, addr, 4, 0, Trisc0),
            Ok(addr ^ 0x5A5A),
            "{addr:#x}"
        );
    }
}

#[test]
fn mailbox_reads_pop_and_an_empty_one_waits() {
    let mut r = Devices::default();
    let b = mmio::MAILBOX_BASE;
    st(&mut r, b, 4, 1, Brisc, 0, &mut no_units).unwrap();
    st(&mut r, b, 4, 2, Brisc, 0, &mut no_units).unwrap();
    assert_eq!(ld(&mut r, b, 4, 0, Brisc), Ok(1));
    assert_eq!(ld(&mut r, b, 4, 0, Brisc), Ok(2));
    assert_eq!(
        ld(&mut r, b, 4, 0, Brisc),
        Err(FaultKind::Blocked {
            addr: b,
            write: false
        })
    );
}

#[test]
fn unmapped_windows_name_region_and_core() {
    let mut r = Devices::default();
    let e = ld(&mut r, mmio::MAILBOX_BASE, 4, 0, Ncrisc).unwrap_err();
    assert!(
        matches!(
            e,
            FaultKind::Unmapped {
                risc: Ncrisc,
                write: false,
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("TENSIX_MAILBOX") && msg.contains("NCRISC"),
        "{msg}"
    );
    let e = st(&mut r, mmio::PC1_BUF_BASE, 1, 0, Trisc1, 0, &mut no_units).unwrap_err();
    assert!(
        e.to_string().contains("PC1_BUF_BASE") && e.to_string().contains("TRISC_1"),
        "{e}"
    );
    let e = st(
        &mut r,
        mmio::MOP_CFG_BASE + 0x40,
        4,
        0,
        Trisc1,
        0,
        &mut no_units,
    )
    .unwrap_err();
    assert_eq!(
        e,
        FaultKind::Access {
            addr: mmio::MOP_CFG_BASE + 0x40,
            size: 4,
            write: true
        }
    );
}

#[test]
fn instruction_fifo_debug_registers() {
    let mut r = Devices::default();
    assert_eq!(rd(&mut r, mmio::INSTRN_BUF_STATUS, 0), 0x77);
    wr(&mut r, mmio::INSTRN_BUF_STATUS, 0);
    assert_eq!(rd(&mut r, mmio::INSTRN_BUF_STATUS, 0), 0x77, "read-only");
    wr(&mut r, mmio::INSTRN_BUF_CTRL1, 0x0200_0000);
    wr(&mut r, mmio::INSTRN_BUF_CTRL0, 0x2); // the debug bus takes thread T1's FIFO
    wr(&mut r, mmio::INSTRN_BUF_CTRL0, 0x2 | 0x10); // a push bit of a thread it does not hold
    st(
        &mut r,
        mmio::INSTRN_BUF_CTRL0,
        4,
        0x2 | 0x10 | 0x20,
        Ncrisc,
        0,
        &mut no_units,
    )
    .unwrap();
    assert_eq!(
        rd(&mut r, mmio::INSTRN_BUF_STATUS, 0),
        0x57,
        "the NOP sits in T1's FIFO before the Replay Expander"
    );
    assert_eq!(rd(&mut r, mmio::INSTRN_BUF_STATUS, 3), 0x77, "then issues");
    wr(&mut r, mmio::INSTRN_BUF_CTRL1, 0x2900_0000); // DOTPV: not modelled
    wr(&mut r, mmio::INSTRN_BUF_CTRL0, 0x2);
    let e = st(
        &mut r,
        mmio::INSTRN_BUF_CTRL0,
        4,
        0x22,
        Ncrisc,
        3,
        &mut no_units,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            FaultKind::TensixPush {
                word: 0x2900_0000,
                addr: mmio::INSTRN_BUF_CTRL0,
                risc: Ncrisc,
                thread: 1,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("debug-bus push"), "{e}");
}

#[test]
fn every_map_entry_lies_in_the_address_map() {
    for e in MAP {
        let mut a = e.base;
        while a < e.base + e.size {
            assert!(crate::map::span(a).is_some(), "{:#x} of {:#x}", a, e.base);
            a += 0x100;
        }
        assert!(
            crate::map::span(e.base + e.size - 1).is_some(),
            "{:#x}",
            e.base
        );
    }
}

#[test]
fn overlay_stream_registers_read_back_and_name_tt_metals_cb_counters() {
    let mut r = Devices::default();
    let reg = |stream: u32, i: u32| mmio::NOC_OVERLAY_BASE + stream * 0x1000 + 4 * i;
    // TRISC0's firmware zeroes them; a kernel's cb_push_back adds to tiles received.
    st(&mut r, reg(5, 4), 4, 7, Trisc0, 0, &mut no_units).unwrap();
    st(&mut r, reg(5, 3), 2, 3, Brisc, 0, &mut no_units).unwrap();
    assert_eq!(
        ld(&mut r, reg(5, 4), 4, 0, Ncrisc),
        Ok(7),
        "shared by every core"
    );
    assert_eq!(ld(&mut r, reg(5, 3), 4, 0, Trisc2), Ok(3));
    assert_eq!(reached(reg(5, 4), Trisc1), "overlay streams");
    // The coprocessor writes them too (STOREREG): reads are ordered in time.
    assert!(!read_is_timeless(reg(5, 4), Trisc1));
    let mut name = |addr: u32| match route(addr, Trisc0) {
        Route::Device(e) => e.device(&mut r).register(addr, Trisc0, Arch::WormholeB0),
        _ => panic!("unmapped"),
    };
    assert_eq!(
        name(reg(5, 4)),
        "overlay stream 5 register 4 (tt-metal: CB 5 tiles received)"
    );
    assert_eq!(
        name(reg(31, 3)),
        "overlay stream 31 register 3 (tt-metal: CB 31 tiles acked)"
    );
    assert_eq!(name(reg(32, 4)), "overlay stream 32 register 4");
    assert_eq!(name(reg(0, 12)), "overlay stream 0 register 12");
}
