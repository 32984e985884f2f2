//! tt-metal's mailboxes on a worker tile: where the host and the firmware meet
//! (`mailboxes_t` at `MEM_MAILBOX_BASE`, [`mailboxes`]). Offsets are our own table, from
//! `tt_metal/hw/inc/hostdev/dev_msgs.h` of the pinned wheel (a test compiles the header
//! with the host C++ compiler for each arch and checks every value when the cache is
//! present). The two arches share every offset up to `watcher`; Blackhole's watcher area is
//! 128 bytes larger (its debug ring is multi-producer), so `core_info` and `profiler` move.
//!
//! Slow dispatch, as tt-metal's host does it without dispatch cores: write the kernel into
//! the kernel configuration buffer, a launch message (`launch[0]`, `mode` =
//! [`DISPATCH_MODE_HOST`]) and then `go_messages[0].signal` = [`RUN_MSG_GO`]; the firmware
//! runs the kernel and writes [`RUN_MSG_DONE`] back.

use crate::Arch;

/// Where the mailboxes of one arch are, as L1 addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mailboxes {
    /// `mailboxes_t::ncrisc_halt` (`resume_addr`, `stack_save`): the start of the mailboxes.
    pub ncrisc_halt: u32,
    /// `mailboxes_t::subordinate_sync`: one byte per subordinate (NCRISC, TRISC0-2).
    pub subordinate_sync: u32,
    /// `mailboxes_t::launch_msg_rd_ptr`.
    pub launch_msg_rd_ptr: u32,
    /// `mailboxes_t::launch`: [`LAUNCH_ENTRIES`] launch messages of [`LAUNCH_MSG_SIZE`] bytes.
    pub launch: u32,
    /// `mailboxes_t::go_messages`: `go_msg_t` words (`signal` in the top byte).
    pub go_messages: u32,
    /// `mailboxes_t::go_message_index`.
    pub go_message_index: u32,
    /// `mailboxes_t::core_info`.
    pub core_info: u32,
    /// `mailboxes_t::profiler`: tt-metal's profiler area.
    pub profiler: u32,
}

impl Mailboxes {
    const fn at(base: u32, core_info: u32, profiler: u32) -> Mailboxes {
        Mailboxes {
            ncrisc_halt: base,
            subordinate_sync: base + 8,
            launch_msg_rd_ptr: base + 12,
            launch: base + 16,
            go_messages: base + 1168,
            go_message_index: base + 1216,
            core_info: base + core_info,
            profiler: base + profiler,
        }
    }

    /// The L1 address of byte `signal` of go message `index`.
    pub const fn go_signal(&self, index: u32) -> u32 {
        self.go_messages + 4 * index + 3
    }

    /// The L1 address of launch message `index`.
    pub const fn launch_msg(&self, index: u32) -> u32 {
        self.launch + LAUNCH_MSG_SIZE * index
    }
}

/// The mailboxes on `arch`.
pub const fn mailboxes(arch: Arch) -> Mailboxes {
    let base = super::l1_map(arch).mailbox.start;
    match arch {
        Arch::WormholeB0 => Mailboxes::at(base, 2544, 2816),
        Arch::Blackhole => Mailboxes::at(base, 2672, 2944),
    }
}

/// `launch_msg_buffer_num_entries`.
pub const LAUNCH_ENTRIES: u32 = 8;
/// `sizeof(launch_msg_t)`.
pub const LAUNCH_MSG_SIZE: u32 = 144;

/// Offsets inside `kernel_config_msg_t` (the launch message), the same on both arches.
pub mod launch {
    /// `kernel_config_base[ProgrammableCoreType]` (u32 each; TENSIX is index 0).
    pub const KERNEL_CONFIG_BASE: u32 = 0;
    /// `sem_offset[ProgrammableCoreType]` (u16 each).
    pub const SEM_OFFSET: u32 = 16;
    /// `local_cb_offset` (u16).
    pub const LOCAL_CB_OFFSET: u32 = 24;
    /// `remote_cb_offset` (u16).
    pub const REMOTE_CB_OFFSET: u32 = 26;
    /// `rta_offset[processor]`: `rta_offset`, `crta_offset` (u16 each).
    pub const RTA_OFFSET: u32 = 28;
    /// `mode` (u8): [`super::DISPATCH_MODE_HOST`] for slow dispatch.
    pub const MODE: u32 = 48;
    /// `kernel_text_offset[processor]` (u32 each), from the kernel configuration base.
    pub const KERNEL_TEXT_OFFSET: u32 = 52;
    /// `kernel_text_size[processor]` (u32 each).
    pub const KERNEL_TEXT_SIZE: u32 = 72;
    /// `local_cb_mask` (u64).
    pub const LOCAL_CB_MASK: u32 = 96;
    /// `brisc_noc_id` (u8).
    pub const BRISC_NOC_ID: u32 = 104;
    /// `brisc_noc_mode` (u8): 0 dedicated, 1 dynamic.
    pub const BRISC_NOC_MODE: u32 = 105;
    /// `min_remote_cb_start_index` (u8).
    pub const MIN_REMOTE_CB_START_INDEX: u32 = 106;
    /// `host_assigned_id` (u32).
    pub const HOST_ASSIGNED_ID: u32 = 108;
    /// `enables` (u32): bit i runs processor i (DM0 = BRISC, DM1 = NCRISC, MATH0..2).
    pub const ENABLES: u32 = 112;
    /// `reload_table_addr` (u32).
    pub const RELOAD_TABLE_ADDR: u32 = 116;
    /// `ncrisc_kernel_size16` (u16): NCRISC's kernel text in 16-byte units, what Wormhole's
    /// NCRISC firmware copies into its instruction RAM (Blackhole's does not read it).
    pub const NCRISC_KERNEL_SIZE16: u32 = 130;
    /// `preload` (u8), the last byte.
    pub const PRELOAD: u32 = 143;
}

/// Offsets inside `core_info_msg_t`, the same on both arches.
pub mod core_info {
    /// `noc_size_x`, `noc_size_y`, `worker_grid_size_x`, `worker_grid_size_y` (u8 each).
    pub const NOC_SIZE_X: u32 = 231;
    /// `absolute_logical_x`, then `absolute_logical_y` (u8 each).
    pub const ABSOLUTE_LOGICAL_X: u32 = 235;
    /// `l1_unreserved_start` (u32).
    pub const L1_UNRESERVED_START: u32 = 240;
    /// `core_magic_number` (u32): [`super::WORKER_MAGIC`] on a worker.
    pub const CORE_MAGIC_NUMBER: u32 = 244;
}

/// `RUN_MSG_INIT`.
pub const RUN_MSG_INIT: u8 = 0x40;
/// `RUN_MSG_GO`.
pub const RUN_MSG_GO: u8 = 0x80;
/// `RUN_MSG_DONE`.
pub const RUN_MSG_DONE: u8 = 0;
/// `RUN_SYNC_MSG_ALL_SUBORDINATES_DONE`: every subordinate byte done.
pub const RUN_SYNC_MSG_ALL_SUBORDINATES_DONE: u32 = 0;
/// `DISPATCH_MODE_HOST`.
pub const DISPATCH_MODE_HOST: u8 = 1;
/// `CoreMagicNumber::WORKER`.
pub const WORKER_MAGIC: u32 = 0x50ec_09a3;
/// Bit of `enables` for BRISC (`TensixProcessorTypes::DM0`).
pub const ENABLE_BRISC: u32 = 1;
