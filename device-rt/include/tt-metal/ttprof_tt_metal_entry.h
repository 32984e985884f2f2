// ttprof_tt_metal_entry.h - the entry of a tt-metal kernel built by `ttprof build --tt-metal`,
// included after the kernel's source.
//
// tt-metal's firmware calls the kernel's entry once per launch: on BRISC, the TRISCs (and NCRISC
// on Blackhole) `_start` at the start of the kernel's text; on Wormhole's NCRISC the firmware
// resets the core into its instruction RAM, where `_start` restores the registers the firmware
// saved (at MEM_NCRISC_HALT_STACK_MAILBOX_ADDRESS) and continues in `kernel_launch(offset)`.
// The entry does what the firmware's kernel wrappers do (brisck.cc, ncrisck.cc, trisck.cc: copy
// the kernel's data image to local memory, set up the NoC state, wait for the go message, run
// the kernel, return the stack usage) and runs the kernel inside ttprof's launch
// (`TTPROF_KERNEL`: the *-FW and *-KERNEL zones, the Run record, the sum zones).
//
// Registers: tt-metal's firmware keeps its global pointer in `gp` (it addresses its globals
// gp-relative) and ttprof's runtime keeps the ring's limit in `gp` and its write pointer in `tp`.
// The entry saves both, starts the launch with them zeroed (as the runtime's own `_start`
// does), and restores them before returning to the firmware. The link defines no
// `__global_pointer$`, so no code of the kernel is relaxed to gp-relative addressing (trisck.cc
// asks for that relaxation; this entry does not).
#pragma once

#if defined(COMPILE_FOR_BRISC)
#define TTPROF__TT_CORE brisc
#elif defined(COMPILE_FOR_NCRISC)
#define TTPROF__TT_CORE ncrisc
#elif defined(COMPILE_FOR_TRISC) && COMPILE_FOR_TRISC == 0
#define TTPROF__TT_CORE trisc0
#elif defined(COMPILE_FOR_TRISC) && COMPILE_FOR_TRISC == 1
#define TTPROF__TT_CORE trisc1
#elif defined(COMPILE_FOR_TRISC) && COMPILE_FOR_TRISC == 2
#define TTPROF__TT_CORE trisc2
#else
#error "ttprof: tt-metal kernels are built for BRISC, NCRISC or a TRISC (COMPILE_FOR_TRISC 0..2)"
#endif

#if defined(COMPILE_FOR_TRISC)
// What trisck.cc defines for the compute API and tt-llk (the kernel is chlkc_list.h's
// run_kernel(): the math thread zeroes Dest, the unpack thread the source registers, then
// kernel_main()).
uint32_t unp_cfg_context = 0;
uint32_t pack_sync_tile_dst_ptr = 0;
uint32_t math_sync_tile_dst_index = 0;
uint32_t gl_alu_format_spec_reg = 0;
uint32_t op_info_offset = 0;
namespace ckernel {
volatile tt_reg_ptr uint *regfile = reinterpret_cast<volatile uint *>(REGFILE_BASE);
volatile tt_reg_ptr uint *pc_buf_base = reinterpret_cast<volatile uint *>(PC_BUF_BASE);
#if defined(__INSTRN_BUFFER_TOS)
volatile tt_reg_ptr uint32_t *const instrn_buffer = reinterpret_cast<volatile uint32_t *>(INSTRN_BUF_BASE);
#endif
volatile tt_reg_ptr uint *mailbox_base[4] = {
    reinterpret_cast<volatile uint tt_reg_ptr *>(TENSIX_MAILBOX0_BASE),
    reinterpret_cast<volatile uint tt_reg_ptr *>(TENSIX_MAILBOX1_BASE),
    reinterpret_cast<volatile uint tt_reg_ptr *>(TENSIX_MAILBOX2_BASE),
    reinterpret_cast<volatile uint tt_reg_ptr *>(TENSIX_MAILBOX3_BASE)};
}  // namespace ckernel

static void ttprof__tt_metal_kernel() { run_kernel(); }
#else
// tt-metal's older dataflow entry spelling, `namespace NAMESPACE { void MAIN }`, when a build
// defines NAMESPACE and MAIN; `void kernel_main()` otherwise.
void kernel_main() __attribute__((weak));
static void ttprof__tt_metal_kernel() {
    if (kernel_main) {
        kernel_main();
        return;
    }
#if defined(NAMESPACE) && defined(MAIN)
    NAMESPACE::MAIN;
#endif
}
#endif

TTPROF_KERNEL(TTPROF__TT_CORE, ttprof__tt_metal_kernel)

// Where this RISC's ring lives, from the pinned headers: its part of the `profiler_msg_t` area
// of the core's mailboxes (tt-metal's own profiler buffer, unused under ttprof), and the
// tt-metal core's shared control vector there, as absolute symbols for ttprof's link
// (`__ttprof_tt_profiler_area`, `__ttprof_tt_profiler_area_size`, `__ttprof_tt_control_vector`).
extern "C" __attribute__((used)) void ttprof__tt_metal_layout() {
    constexpr uint32_t mailboxes = MEM_MAILBOX_BASE;
    constexpr uint32_t profiler = mailboxes + offsetof(mailboxes_t, profiler);
    constexpr uint32_t area = profiler + offsetof(profiler_msg_t, buffer) + PROCESSOR_INDEX * sizeof(profiler_msg_buffer_t);
    static_assert(PROCESSOR_INDEX < PROCESSOR_COUNT, "ttprof: no profiler buffer for this RISC");
    __asm__(".globl __ttprof_tt_profiler_area\n\t.set __ttprof_tt_profiler_area, %0\n\t"
            ".globl __ttprof_tt_profiler_area_size\n\t.set __ttprof_tt_profiler_area_size, %1\n\t"
            ".globl __ttprof_tt_control_vector\n\t.set __ttprof_tt_control_vector, %2\n\t"
            ".globl __ttprof_tt_control_vector_size\n\t.set __ttprof_tt_control_vector_size, %3\n\t"
            ".globl __ttprof_tt_local_end\n\t.set __ttprof_tt_local_end, %4\n\t"
            ::"i"(area), "i"(sizeof(profiler_msg_buffer_t)), "i"(profiler + offsetof(profiler_msg_t, control_vector)),
            "i"(sizeof(((profiler_msg_t *)0)->control_vector)),
#if defined(COMPILE_FOR_BRISC)
            "i"(MEM_LOCAL_BASE + MEM_BRISC_LOCAL_SIZE - MEM_BRISC_STACK_MIN_SIZE)
#elif defined(COMPILE_FOR_TRISC) && COMPILE_FOR_TRISC == 0
            "i"(MEM_LOCAL_BASE + MEM_TRISC_LOCAL_SIZE - MEM_TRISC0_STACK_MIN_SIZE)
#elif defined(COMPILE_FOR_TRISC) && COMPILE_FOR_TRISC == 1
            "i"(MEM_LOCAL_BASE + MEM_TRISC_LOCAL_SIZE - MEM_TRISC1_STACK_MIN_SIZE)
#elif defined(COMPILE_FOR_TRISC)
            "i"(MEM_LOCAL_BASE + MEM_TRISC_LOCAL_SIZE - MEM_TRISC2_STACK_MIN_SIZE)
#else
            "i"(MEM_LOCAL_BASE + MEM_NCRISC_LOCAL_SIZE - MEM_NCRISC_STACK_MIN_SIZE)
#endif
    );
#if defined(ARCH_WORMHOLE) && defined(COMPILE_FOR_NCRISC)
    // Wormhole's NCRISC runs its kernel from its instruction RAM.
    __asm__(".globl __ttprof_tt_text_base\n\t.set __ttprof_tt_text_base, %0" ::"i"(MEM_NCRISC_KERNEL_BASE));
#endif
}

// The anchor's copy in core-local memory that a zone's open reads (ttprof.h's hot path): under
// tt-metal a word of the kernel's own local data (the firmware's data starts the local memory).
// (The tile control block is the first words of `profiler_msg_t::control_vector`, shared by
// the core's RISCs and written by the host: the link script's `__ttprof_tile_block`.)
extern "C" {
__attribute__((used, aligned(4))) volatile uint32_t __ttprof_hot;
}

static inline __attribute__((always_inline)) void ttprof__tt_metal_launch() {
    uint32_t fw_gp, fw_tp;
    // The launch's Run record carries tt-metal's program id: the launch message's
    // host_assigned_id (what tt-metal's own profiler logs as the run host ID) goes into the
    // tile block's RUN_ID word (riscv_linker::profiler::tile::RUN_ID, 0x14), which the
    // runtime reads as the launch starts. Every RISC of the core writes the same value (they
    // run the same launch message).
    {
        extern volatile uint32_t __ttprof_tile_block[];
        tt_l1_ptr mailboxes_t *const mb = (tt_l1_ptr mailboxes_t *)(MEM_MAILBOX_BASE);
        __ttprof_tile_block[0x14 / 4] = mb->launch[mb->launch_msg_rd_ptr].kernel_config.host_assigned_id;
    }
    __asm__ volatile("mv %0, gp\n\tmv %1, tp" : "=r"(fw_gp), "=r"(fw_tp));
    __asm__ volatile("li gp, 0\n\tli tp, 0" ::: "memory");
    __ttprof_main();
    __asm__ volatile("mv gp, %0\n\tmv tp, %1" ::"r"(fw_gp), "r"(fw_tp) : "memory");
}

#if defined(ARCH_WORMHOLE) && defined(COMPILE_FOR_NCRISC)
// The firmware saved ra, s0-s11 and its argument in a 64-byte frame whose address it left at
// MEM_NCRISC_HALT_STACK_MAILBOX_ADDRESS before the reset; gp is the firmware's
// (`__ttprof_fw_global_pointer`, its `__global_pointer$`, defined by ttprof's link).
__asm__(
    "    .pushsection .start, \"ax\", @progbits\n"
    "    .globl _start\n"
    "    .type _start, @function\n"
    "_start:\n"
    "    .option push\n"
    "    .option norelax\n"
    "    lui gp, %hi(__ttprof_fw_global_pointer)\n"
    "    addi gp, gp, %lo(__ttprof_fw_global_pointer)\n"
    "    .option pop\n"
    "    lw sp, " TTPROF__STR(MEM_NCRISC_HALT_STACK_MAILBOX_ADDRESS) "(zero)\n"
    "    lw ra, 0(sp)\n    lw s0, 4(sp)\n    lw s1, 8(sp)\n    lw s2, 12(sp)\n"
    "    lw s3, 16(sp)\n   lw s4, 20(sp)\n   lw s5, 24(sp)\n   lw s6, 28(sp)\n"
    "    lw s7, 32(sp)\n   lw s8, 36(sp)\n   lw s9, 40(sp)\n   lw s10, 44(sp)\n"
    "    lw s11, 48(sp)\n  lw a0, 52(sp)\n"
    "    addi sp, sp, 64\n"
    "    tail kernel_launch\n"
    "    .size _start, . - _start\n"
    "    .popsection\n");

extern "C" uint32_t kernel_launch(uint32_t offset) {
    extern uint32_t __kernel_data_lma[];
    mark_stack_usage();
    do_crt1((uint32_t tt_l1_ptr *)((uint32_t)&__kernel_data_lma[0] + offset));
#else
extern "C" [[gnu::section(".start")]] uint32_t _start() {
    extern uint32_t __kernel_data_lma[];
    mark_stack_usage();
    do_crt1((uint32_t tt_l1_ptr *)__kernel_data_lma);
#endif
#if defined(UCK_CHLKC_UNPACK)
    // As trisck.cc: the debug feature-disable register is cleared before every unpack kernel.
    memory_write(RISCV_DEBUG_REG_DBG_FEATURE_DISABLE, 0);
#endif
#if !defined(COMPILE_FOR_TRISC)
    if constexpr (NOC_MODE == DM_DEDICATED_NOC) {
        noc_local_state_init(NOC_INDEX);
    }
#endif
    wait_for_go_message();
    ttprof__tt_metal_launch();
    return measure_stack_usage();
}
