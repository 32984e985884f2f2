//! Cycle-level checks of the coprocessor model (whole programs are in `tests/tensix_*.rs`).

use super::*;
use crate::bus::L1;

const NOP: u32 = 0x0200_0000;
const B: u32 = mmio::INSTRN_BUF_BASE;

fn push(x: &mut Tensix, t: u8, w: u32, time: u64) {
    x.push(t, w, Risc::Trisc0, B, time).unwrap();
}

#[test]
fn an_instruction_issues_two_cycles_after_its_push() {
    let mut x = Tensix::default();
    push(&mut x, 0, NOP, 10);
    x.advance_to(12).unwrap();
    assert_eq!(x.issued[0], 0);
    x.advance_to(13).unwrap();
    assert_eq!(x.issued[0], 1, "issued in cycle 12");
    assert!(x.thread_done(0, 13).unwrap());
}

#[test]
fn one_instruction_per_thread_per_cycle() {
    let mut x = Tensix::default();
    for _ in 0..10 {
        push(&mut x, 1, NOP, 0);
    }
    x.advance_to(2 + 5).unwrap();
    assert_eq!(x.issued[1], 5);
    x.advance_to(100).unwrap();
    assert_eq!(x.issued[1], 10);
    assert!(!x.active(), "nothing left to do");
}

#[test]
fn the_fifo_from_the_risc_fills_up_behind_a_wait() {
    let mut x = Tensix::default();
    // SEMWAIT C0 on semaphore 0 (Value 0), blocking everything (B0-B8).
    push(&mut x, 1, 0xA600_0000 | (0x1FF << 15) | (1 << 2) | 1, 0);
    for k in 0..(16 + 8 + 2) {
        push(&mut x, 1, NOP, 1 + k);
    }
    let e = x.push(1, NOP, Risc::Trisc1, B, 1000).unwrap_err();
    assert_eq!(
        e,
        FaultKind::Blocked {
            addr: B,
            write: true
        }
    );
    assert!(!x.active(), "waiting on a semaphore only a RISC can change");
    x.sync.risc_write(0, 0);
    x.touched();
    // Met at 1000, the block lifts at 1001, a slot frees up through the pipeline by 1002.
    assert!(x.push(1, NOP, Risc::Trisc1, B, 1001).is_err());
    x.push(1, NOP, Risc::Trisc1, B, 1002).unwrap();
}

#[test]
fn stallwait_holds_the_next_instruction_one_extra_cycle() {
    let mut x = Tensix::default();
    push(&mut x, 0, 0xA200_0000 | (0x1FF << 15), 0); // every condition is met at once
    push(&mut x, 0, NOP, 0);
    // STALLWAIT issues at 2 (a one-instruction FIFO slot pipelines it), conditions are met
    // at 3, the block lifts at 4.
    x.advance_to(4).unwrap();
    assert_eq!(x.issued[0], 1);
    x.advance_to(5).unwrap();
    assert_eq!(x.issued[0], 2);
}

#[test]
fn scalar_unit_instructions_hold_their_thread_and_the_unit() {
    let mut x = Tensix::default();
    let add = (0x58 << 24) | (2 << 12) | (5 << 6) | 1; // 4 cycles: different groups
    push(&mut x, 0, add, 0);
    push(&mut x, 0, NOP, 0);
    push(&mut x, 2, 0x6000_0000, 0); // DMANOP from T2 waits for the unit
    x.advance_to(3).unwrap();
    assert_eq!(x.issued, [1, 0, 0]);
    x.advance_to(6).unwrap();
    assert_eq!(x.issued, [1, 0, 0], "unit and T0 held for 4 cycles");
    x.advance_to(7).unwrap();
    assert_eq!(x.issued, [2, 0, 1], "cycle 6: T0's NOP and T2's DMANOP");
}

#[test]
fn rmwcib_waits_a_cycle_after_wrcfg() {
    let mut x = Tensix::default();
    push(&mut x, 0, 0xB000_0000, 0); // WRCFG
    push(&mut x, 1, 0xB300_0000, 1); // RMWCIB0: not in the cycle after a WRCFG
    x.advance_to(4).unwrap();
    assert_eq!(x.issued, [1, 0, 0], "WRCFG at 2, RMWCIB held at 3");
    x.advance_to(5).unwrap();
    assert_eq!(x.issued, [1, 1, 0]);
}

#[test]
fn an_unexpanded_mop_out_of_the_replay_buffer_stops_with_a_diagnosis() {
    let mut x = Tensix::default();
    // Record a MOP_CFG into the replay buffer... a MOP_CFG push goes to the MOP expander,
    // so use a REPLAY of never-recorded entries: opcode 0 has no encoding.
    push(&mut x, 2, 0x0400_0000 | (1 << 4), 0); // play 1 from index 0
    let e = x.advance_to(10).unwrap_err();
    match e {
        FaultKind::TensixExec {
            thread: 2, word: 0, ..
        } => {}
        e => panic!("{e:?}"),
    }
    assert!(e.to_string().contains("opcode 0x00"), "{e}");
}

#[test]
fn a_mop_expands_at_one_instruction_per_cycle() {
    let mut x = Tensix::default();
    x.mop_cfg[0][3] = NOP; // template 0, InsnA0 only
    push(&mut x, 0, (1 << 24) | (9 << 16), 0); // ten iterations
    x.advance_to(11).unwrap();
    assert_eq!((x.issued[0], x.mop_emitted()[0]), (9, 10));
    x.advance_to(12).unwrap();
    assert_eq!(x.issued[0], 10);
    assert!(x.ttsync(0, TtSync::MopExpanderDone, 12).unwrap());
}

#[test]
fn a_released_mutex_goes_round_robin_when_both_other_threads_wait() {
    let mut x = Tensix::default();
    let (get, rel) = (0xA000_0003, 0xA100_0003); // mutex 3
    push(&mut x, 1, get, 0);
    x.advance_to(3).unwrap();
    assert_eq!(x.sync.mutex[3], Some(1));
    push(&mut x, 1, rel, 3);
    push(&mut x, 0, get, 10);
    push(&mut x, 2, get, 10);
    x.advance_to(13).unwrap();
    assert_eq!(
        x.sync.mutex[3],
        Some(2),
        "released by T1: T2's turn, not T0's"
    );
    push(&mut x, 2, rel, 13);
    x.advance_to(20).unwrap();
    assert_eq!(x.sync.mutex[3], Some(0), "T0 was still waiting");
}

#[test]
fn the_vector_unit_takes_one_instruction_per_cycle_from_all_threads() {
    let mut x = Tensix::default();
    let sfpnop = riscv_linker::tensix::sfpnop();
    for _ in 0..4 {
        push(&mut x, 0, sfpnop, 0);
        push(&mut x, 1, sfpnop, 0);
    }
    // Gates open at cycle 2; eight instructions share the unit: T0 wins each contested
    // cycle, so T0 finishes its four first.
    x.advance_to(2 + 4).unwrap();
    assert_eq!(x.issued, [4, 0, 0]);
    x.advance_to(2 + 8).unwrap();
    assert_eq!(x.issued, [4, 4, 0]);
}

#[test]
fn stallwait_c14_holds_until_the_threads_vector_unit_work_is_done() {
    // A long MAD latency makes the wait visible (documented: 2).
    let mut x = Tensix::new(TensixTiming {
        sfpu_mad_latency: 10,
        ..Default::default()
    });
    let t = riscv_linker::tensix::sfpmad(10, 10, 9, 0, 0);
    push(&mut x, 0, t, 0);
    // STALLWAIT B0 (Scalar Unit etc.) on C14, then DMANOP.
    push(&mut x, 0, riscv_linker::tensix::stallwait(1, 1 << 14), 0);
    push(&mut x, 0, 0x6000_0000, 0);
    // SFPMAD issues at 2 (in flight to 12), STALLWAIT at 3, C14 met at 12, block lifts
    // at 13.
    x.advance_to(13).unwrap();
    assert_eq!(x.issued[0], 2);
    x.advance_to(14).unwrap();
    assert_eq!(x.issued[0], 3);
    assert_eq!(x.vector.lreg[0][0], 0x3F80_0000, "1.0 * 1.0 + 0");
}

#[test]
fn after_sfpswap_the_vector_unit_takes_only_sfpnop_for_a_cycle() {
    use riscv_linker::tensix as tt;
    let mut x = Tensix::default();
    push(&mut x, 0, tt::sfpswap(0, 1, 0), 0);
    push(&mut x, 0, tt::sfpmov(0, 2, 0), 0);
    // SFPSWAP issues at 2; SFPMOV is stalled at 3 and issues at 4.
    x.advance_to(4).unwrap();
    assert_eq!(x.issued[0], 1);
    x.advance_to(5).unwrap();
    assert_eq!(x.issued[0], 2);
    let mut x = Tensix::default();
    push(&mut x, 0, tt::sfpswap(0, 1, 0), 0);
    push(&mut x, 0, tt::sfpnop(), 0);
    x.advance_to(4).unwrap();
    assert_eq!(x.issued[0], 2, "SFPSWAP then SFPNOP take two cycles");
}

/// A coprocessor with an L1 of `words` zeroed words (the buffer must outlive it).
fn with_l1(buf: &mut Vec<u32>) -> Tensix {
    let mut x = Tensix::default();
    // SAFETY: the buffer is 4-byte aligned, outlives the test's coprocessor, and only this
    // test accesses it.
    x.attach_l1(unsafe { L1::new(buf.as_mut_ptr() as *mut u8, 4 * buf.len() as u32) });
    x
}

fn srcs_valid(x: &mut Tensix) {
    for w in [src_regs::A, src_regs::B] {
        x.src.banks[w][0].allowed = src_regs::Client::MatrixUnit;
    }
}

#[test]
fn dst_read_after_write_stalls_four_cycles() {
    use riscv_linker::tensix as tt;
    let mut x = Tensix::default();
    srcs_valid(&mut x);
    // Two accumulating MVMULs to Dst rows 0-7, then one to rows 8-15 after them.
    push(&mut x, 1, tt::mvmul(0, false, 0, 0), 0);
    push(&mut x, 1, tt::mvmul(0, false, 0, 0), 0);
    x.advance_to(7).unwrap();
    assert_eq!(
        x.issued[1], 1,
        "issued at 2; the block is readable from 2 + 1 + 4"
    );
    x.advance_to(8).unwrap();
    assert_eq!(x.issued[1], 2);
    // Different blocks go back to back, one per cycle.
    push(&mut x, 1, tt::mvmul(0, false, 0, 8), 20);
    push(&mut x, 1, tt::mvmul(0, false, 0, 16), 20);
    x.advance_to(23).unwrap();
    assert_eq!(x.issued[1], 3);
    x.advance_to(24).unwrap();
    assert_eq!(x.issued[1], 4);
    assert!(
        !x.thread_done(1, 24).unwrap(),
        "MVMUL latency 5: in flight until 28"
    );
    assert!(x.thread_done(1, 28).unwrap());
}

#[test]
fn the_matrix_unit_starts_one_instruction_per_cycle_across_threads() {
    use riscv_linker::tensix as tt;
    let mut x = Tensix::default();
    srcs_valid(&mut x);
    push(&mut x, 0, tt::elwadd(0, false, 0, 0, 0), 0);
    push(&mut x, 1, tt::elwadd(0, false, 0, 0, 8), 0);
    x.advance_to(3).unwrap();
    assert_eq!(x.issued, [1, 0, 0], "T0 wins cycle 2");
    x.advance_to(4).unwrap();
    assert_eq!(x.issued, [1, 1, 0]);
}

#[test]
fn math_waits_for_the_banks_and_setdvalid_hands_them_over() {
    use riscv_linker::tensix as tt;
    let mut x = Tensix::default();
    push(&mut x, 1, tt::elwadd(0, false, 0, 0, 0), 0);
    x.advance_to(50).unwrap();
    assert_eq!(x.issued[1], 0, "SrcA/SrcB still the unpackers'");
    assert!(!x.active(), "nothing can change by itself");
    let why = &x.waits()[0];
    assert!(
        why.contains("ELWADD") && why.contains("SrcA and SrcB data valid"),
        "{why}"
    );
    push(&mut x, 0, tt::setdvalid(0b11), 50);
    x.advance_to(53).unwrap();
    assert_eq!(
        x.issued,
        [1, 1, 0],
        "SETDVALID at 52, ELWADD in the same cycle after it"
    );
    // STALLWAIT C10 (SrcA not the Matrix Unit's) holds until a bank is handed over.
    push(&mut x, 1, tt::elwadd(0b11, false, 0, 0, 8), 60);
    push(&mut x, 1, tt::stallwait(1 << 5, 1 << 10), 60);
    push(&mut x, 1, tt::setdmareg(1, 0), 60);
    x.advance_to(80).unwrap();
    assert_eq!(x.issued[1], 3, "ELWADD gave the banks back; SETDMAREG held");
    push(&mut x, 0, tt::setdvalid(0b01), 80);
    x.advance_to(86).unwrap();
    assert_eq!(x.issued[1], 4);
}

/// Configures unpacker `u` for 1024 BF16 datums at L1 `addr` (`SrcA` through
/// `SetOvrdWithAddr`) and packer 0 for 1024 BF16 datums to `out`.
fn configure(x: &mut Tensix, addr: u32, out: u32) {
    let c = &mut x.config.cfg[0];
    for u in 0..2 {
        let sec = 52 + 40 * u;
        c[sec] = 5 | (1 << 4) | (1024 << 16);
        c[sec + 1] = 1;
        c[sec + 8] = 5;
        c[sec + 9] = 1; // Disable_zero_compress_cntx0 (UNPACR's MultiContextMode, context 0)
        c[sec + 12] = addr / 16 - 1;
    }
    c[72] = 64; // Dest_cntx0_address: datum 64, SrcA row 4 - 4 = 0
    c[74] = 1024; // Tile_x_dim_cntx0
    c[57] = out / 16 - 1;
    c[58] = 1 | (5 << 4) | (5 << 8);
    c[1] = (5 << 17) | (5 << 25);
    c[20] = 0xffff;
    x.config.thread[0][3] = 4;
    for t in 0..3 {
        for set in &mut x.adcs[t].sets {
            set.channel[1].xyzw[0].v = 1023;
        }
    }
}

#[test]
fn unpack_takes_two_setup_cycles_then_sixteen_bytes_a_cycle() {
    use riscv_linker::tensix as tt;
    let mut buf = vec![0u32; 0x4000];
    buf[0x1000] = 0x4000_3f80; // L1 0x4000: BF16 1.0, 2.0
    let mut x = with_l1(&mut buf);
    configure(&mut x, 0x4000, 0x8000);
    push(&mut x, 0, tt::unpacr(0, 0, true, false), 0);
    push(&mut x, 0, tt::nop(), 0);
    push(&mut x, 0, tt::stallwait(1 << 5, 1 << 1), 0);
    push(&mut x, 0, tt::setdmareg(1, 0), 0);
    x.advance_to(4).unwrap();
    assert_eq!(x.issued[0], 1, "UNPACR at 2 holds the thread for 2 cycles");
    x.advance_to(5).unwrap();
    assert_eq!(x.issued[0], 2);
    // 2048 bytes at 16 a cycle from cycle 4: done at 132; C1 lifts the cycle after.
    x.advance_to(133).unwrap();
    assert_eq!(x.issued[0], 3);
    assert!(
        x.src.banks[A][0].allowed == src_regs::Client::MatrixUnit,
        "FlipSrc at 132"
    );
    x.advance_to(134).unwrap();
    assert_eq!(x.issued[0], 4);
    assert_eq!(
        x.src.banks[A][0].rows[0][..2],
        [float::write_src_bf16(0x3f80), float::write_src_bf16(0x4000)]
    );
}

#[test]
fn the_bank_is_the_matrix_units_only_when_the_unpack_completes() {
    use riscv_linker::tensix as tt;
    let mut buf = vec![0u32; 0x4000];
    let mut x = with_l1(&mut buf);
    configure(&mut x, 0x4000, 0x8000);
    x.config.cfg[0][52 + 8] |= 2 << 4; // Throttle_mode x4: 32 cycles
    x.src.banks[src_regs::B][0].allowed = src_regs::Client::MatrixUnit;
    push(&mut x, 0, tt::unpacr(0, 0, true, false), 0);
    push(&mut x, 1, tt::elwadd(0, false, 0, 0, 0), 0);
    x.advance_to(2 + 2 + 32).unwrap();
    assert_eq!(x.issued[1], 0);
    x.advance_to(2 + 2 + 32 + 1).unwrap();
    assert_eq!(x.issued[1], 1, "ELWADD in the cycle the bank arrives");
}

#[test]
fn pack_writes_l1_and_keeps_its_thread_in_the_packer_pipeline() {
    use riscv_linker::tensix as tt;
    let mut buf = vec![0u32; 0x4000];
    let mut x = with_l1(&mut buf);
    configure(&mut x, 0x4000, 0x8000);
    x.dst.write16(63, 15, float::write_dst_bf16(0xbf80));
    push(
        &mut x,
        2,
        tt::pacr(0, false, 1, false, false, false, true),
        0,
    );
    push(&mut x, 2, tt::stallwait(1 << 5, 1 << 3), 0);
    push(&mut x, 2, tt::setdmareg(1, 0), 0);
    // PACR at 2, first datum at 4, 2048 bytes at 16 a cycle: done at 132.
    x.advance_to(132).unwrap();
    assert_eq!(x.issued[2], 2);
    x.advance_to(134).unwrap();
    assert_eq!(x.issued[2], 3);
    drop(x);
    assert_eq!(buf[(0x8000 + 2046) / 4] >> 16, 0xbf80);
    assert_eq!(buf[0x8000 / 4], 0);
}

#[test]
fn a_pack_of_a_block_just_written_waits_for_it() {
    use riscv_linker::tensix as tt;
    let mut buf = vec![0u32; 0x4000];
    let mut x = with_l1(&mut buf);
    configure(&mut x, 0x4000, 0x8000);
    srcs_valid(&mut x);
    push(&mut x, 1, tt::elwadd(0, false, 0, 0, 56), 0); // rows 56-63, issued at 2
    push(
        &mut x,
        2,
        tt::pacr(0, false, 1, false, false, false, true),
        0,
    );
    x.advance_to(7).unwrap();
    assert_eq!(
        x.issued,
        [0, 1, 0],
        "PACR reads rows 0-63: waits for 2 + 1 + 4"
    );
    x.advance_to(8).unwrap();
    assert_eq!(x.issued, [0, 1, 1]);
}

#[test]
fn unmodelled_configuration_stops_at_the_gate_naming_it() {
    use riscv_linker::tensix as tt;
    let mut buf = vec![0u32; 0x4000];
    let mut x = with_l1(&mut buf);
    configure(&mut x, 0x4000, 0x8000);
    x.config.cfg[0][58] &= !1; // compression on
    push(
        &mut x,
        2,
        tt::pacr(0, false, 1, false, false, false, true),
        0,
    );
    let e = x.advance_to(10).unwrap_err();
    assert!(e.to_string().contains("compression"), "{e}");
    let mut x = with_l1(&mut buf);
    configure(&mut x, 0x4000, 0x8000);
    x.config.cfg[0][52] = 6 | (1 << 4) | (1024 << 16); // BFP8 input
    push(&mut x, 0, tt::unpacr(0, 0, false, false), 0);
    let e = x.advance_to(10).unwrap_err();
    assert!(e.to_string().contains("BFP8"), "{e}");
}

#[test]
fn a_third_unpack_waits_for_the_bank_its_first_is_still_handing_over() {
    use riscv_linker::tensix as tt;
    let mut buf = vec![0u32; 0x4000];
    let mut x = with_l1(&mut buf);
    configure(&mut x, 0x4000, 0x8000);
    for _ in 0..3 {
        push(&mut x, 0, tt::unpacr(0, 0, true, false), 0);
    }
    // The first fills bank 0 until 132, the second bank 1 until 260; bank 0 then belongs
    // to the Matrix Unit, so the third waits for it to come back.
    x.advance_to(300).unwrap();
    assert_eq!(
        x.issued[0], 2,
        "regression: the third overwrote bank 0 before its hand-over"
    );
    push(&mut x, 1, tt::cleardvalid(0b01, false, false), 300);
    x.advance_to(310).unwrap();
    assert_eq!(x.issued[0], 3);
}

#[test]
fn unpacker_0_can_write_dst_in_32_bits() {
    use riscv_linker::tensix as tt;
    let mut buf = vec![0u32; 0x4000];
    buf[0x1000] = 0x4049_0fdb; // FP32 pi at L1 0x4000
    buf[0x1001] = 0xc000_0001;
    let mut x = with_l1(&mut buf);
    configure(&mut x, 0x4000, 0x8000);
    let c = &mut x.config.cfg[0];
    c[52] = (1 << 4) | (1024 << 16); // FP32 in
    c[60] = 0; // Out_data_format FP32
    c[61] = 1 | (1 << 4); // context 0: uncompressed, Unpack_if_sel_cntx0 (to Dst)
    c[72] = 64; // Dest_cntx0_address: datum 64, Dst row 4 - 4 = 0
    c[1] = 1 << 29; // Fp32_enabled, SrcA format FP32 (BF16 style)
    x.adcs[0].sets[0].channel[1].xyzw[0].v = 1; // two datums
    push(&mut x, 0, tt::unpacr(0, 0, false, false), 0);
    push(&mut x, 1, tt::movd2a(false, 0, 0, false, 0), 0);
    x.advance_to(3).unwrap();
    assert_eq!(float::read_dst_fp32(x.dst.read32(0, 0)), 0x4049_0fdb);
    assert_eq!(
        float::read_dst_fp32(x.dst.read32(0, 1)),
        0xc000_0001,
        "kept: FP32 to Dst"
    );
    // 8 bytes in one cycle after the setup: readable at 2 + 2 + 1.
    x.advance_to(5).unwrap();
    assert_eq!(
        x.issued[1], 0,
        "MOVD2A reads the block the unpack is still writing"
    );
    x.advance_to(6).unwrap();
    assert_eq!(x.issued[1], 1);
    assert_eq!(
        x.src.banks[src_regs::A][0].rows[0][0],
        float::write_src_bf16(0x4049)
    );
}

#[test]
fn a_held_push_and_ttsync_name_what_the_thread_waits_on() {
    let mut x = Tensix::default();
    let push_hold = Hold::Push { after_mop: false };
    // SEMWAIT on semaphore 3 (Value 0) blocking everything: the FIFOs fill behind it.
    push(&mut x, 1, 0xA600_0000 | (0x1FF << 15) | (1 << 5) | 1, 0);
    for k in 0..(16 + 8 + 2) {
        push(&mut x, 1, NOP, 1 + k);
    }
    assert!(x.push(1, NOP, Risc::Trisc1, B, 1000).is_err());
    assert_eq!(x.wait_reason(1, push_hold), TensixWait::Semaphore3);
    let sync = Hold::Sync(TtSync::CoprocessorDone);
    assert_eq!(x.wait_reason(1, sync), TensixWait::Semaphore3);
    let d = x.debug_state(1);
    assert!(d.in_flight && d.fifo1_full && d.fifo1_busy && !d.mop_busy);
    assert_eq!(d.mop_word, Some(NOP));
    // Thread 0 idle: nothing to wait on.
    assert_eq!(x.wait_reason(0, sync), TensixWait::InFlight);
    assert!(!x.debug_state(0).in_flight);

    // A Scalar Unit instruction still executing, nothing queued: TTSync waits on it.
    let mut x = Tensix::default();
    let add = (0x58 << 24) | (2 << 12) | (5 << 6) | 1; // 4 cycles
    push(&mut x, 0, add, 0);
    x.advance_to(3).unwrap(); // issued at 2
    assert!(!x.thread_done(0, 3).unwrap());
    assert_eq!(x.wait_reason(0, sync), TensixWait::ScalarUnit);
}

#[test]
fn a_push_behind_a_mop_expansion_waits_on_the_mop_expander() {
    let mut x = Tensix::default();
    // Template 1: outer 1, inner 100 NOPs.
    x.mop_cfg[0] = [1, 100, NOP, NOP, NOP, NOP, NOP, NOP, NOP];
    let mop = (1 << 24) | (1 << 23);
    push(&mut x, 0, mop, 0);
    for k in 0..32 {
        push(&mut x, 0, NOP, 1 + k);
    }
    assert!(x.push(0, NOP, Risc::Trisc0, B, 40).is_err());
    assert_eq!(
        x.wait_reason(0, Hold::Push { after_mop: false }),
        TensixWait::MopExpander
    );
    assert_eq!(
        x.wait_reason(0, Hold::Sync(TtSync::MopExpanderDone)),
        TensixWait::MopExpander
    );
    let d = x.debug_state(0);
    assert!(d.mop_busy && d.fifo1_full);
    assert_eq!((d.template, d.mop_word), (Some(1), Some(mop)));
    x.advance_to(1000).unwrap();
    let d = x.debug_state(0);
    assert!(!d.mop_busy && !d.in_flight && d.template.is_none() && !d.fifo1_busy);
}

/// The thread log (issue 40): thread 1's gate holds a `NOP` behind a `SEMWAIT` on
/// semaphore 0 until thread 2 executes a `SEMPOST` of it (pushed at 50, executed two
/// cycles later, when it issues); the log has the post's cycle and the held stretch, with
/// its cause, without the gaps the model skips; thread 0's `SEMGET` of it at 62. A thread
/// waiting on its own work is not logged.
#[test]
fn the_thread_log_has_each_executed_post_and_each_held_gate_stretch() {
    let mut x = Tensix::default();
    push(&mut x, 2, (0xA3 << 24) | (1 << 2) | (1 << 20), 0); // SEMINIT 0: Value 0, Max 1
    push(&mut x, 1, 0xA600_0000 | (0x1FF << 15) | (1 << 2) | 1, 0); // SEMWAIT 0
    push(&mut x, 1, NOP, 1);
    x.advance_to(50).unwrap();
    push(&mut x, 2, (0xA4 << 24) | (1 << 2), 50); // SEMPOST 0
    push(&mut x, 0, (0xA5 << 24) | (1 << 2), 60); // SEMGET 0
    x.advance_to(100).unwrap();
    assert_eq!(x.issued[1], 2);
    assert_eq!(x.log[2].posts, [(52, 0)]);
    assert_eq!(
        (x.log[0].gets.as_slice(), x.log[0].posts.len()),
        (&[(62, 0)][..], 0)
    );
    assert!(x.log[1].posts.is_empty());
    let cause = crate::isa::lines::tensix_fifo(TensixWait::semaphore(0));
    let held: Vec<(u64, u32, usize)> = x.log[1]
        .gate
        .spans
        .iter()
        .map(|s| (s.start, s.cycles, s.cause as usize))
        .collect();
    // Held on the semaphore from 3 (the NOP reaches the gate) through 52, the post's cycle
    // (thread 1's gate looks before thread 2's issues); the cycle the block lifts is the
    // gate's own, not logged.
    assert_eq!(held, [(3, 50, cause)]);
}
