use super::*;
use std::path::PathBuf;
use std::process::Command;
use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, println};

/// The tt-metal root of the cache `scripts/fetch-tt-metal.sh` fills (or `TT_METAL_HOME`);
/// `None` when it is absent outside CI (the test then says so and passes), a failure in CI.
fn tt_metal_root() -> Option<PathBuf> {
    let root = match std::env::var_os("TT_METAL_HOME") {
        Some(home) => PathBuf::from(home),
        None => {
            let cache = std::env::var_os("TTPROF_CACHE")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("XDG_CACHE_HOME").map(|c| PathBuf::from(c).join("ttprof"))
                })
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/ttprof"))
                })?;
            cache.join(format!("ttnn-{SOURCE_VERSION}/ttnn"))
        }
    };
    if root.join(SOURCE_HEADER).is_file() {
        return Some(root);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "tt-metal's device side is not at {} (CI=true: run scripts/fetch-tt-metal.sh)",
        root.display()
    );
    println!(
        "skipped: tt-metal's device side is not at {} (run scripts/fetch-tt-metal.sh)",
        root.display()
    );
    None
}

/// Every value of our table, by the header's name.
fn ours() -> Vec<(&'static str, u32)> {
    std::vec![
        ("MEM_L1_SIZE", L1_SIZE),
        ("MEM_BOOT_CODE_BASE", BOOT_CODE_BASE),
        ("MEM_NOC_ATOMIC_RET_VAL_ADDR", NOC_ATOMIC_RET_VAL_ADDR),
        ("MEM_L1_BARRIER", L1_BARRIER),
        ("MEM_MAILBOX_BASE", MAILBOX_BASE),
        ("MEM_MAILBOX_SIZE", MAILBOX_SIZE),
        ("MEM_ZEROS_BASE", ZEROS_BASE),
        ("MEM_ZEROS_SIZE", ZEROS_SIZE),
        ("MEM_LLK_DEBUG_BASE", LLK_DEBUG_BASE),
        ("MEM_LLK_DEBUG_SIZE", LLK_DEBUG_SIZE),
        ("MEM_BRISC_FIRMWARE_BASE", BRISC_FIRMWARE_BASE),
        ("MEM_BRISC_FIRMWARE_SIZE", BRISC_FIRMWARE_SIZE),
        ("MEM_NCRISC_FIRMWARE_BASE", NCRISC_FIRMWARE_BASE),
        ("MEM_NCRISC_FIRMWARE_SIZE", NCRISC_FIRMWARE_SIZE),
        ("MEM_TRISC0_FIRMWARE_BASE", TRISC0_FIRMWARE_BASE),
        ("MEM_TRISC1_FIRMWARE_BASE", TRISC1_FIRMWARE_BASE),
        ("MEM_TRISC2_FIRMWARE_BASE", TRISC2_FIRMWARE_BASE),
        ("MEM_TRISC0_FIRMWARE_SIZE", TRISC_FIRMWARE_SIZE),
        ("MEM_TRISC1_FIRMWARE_SIZE", TRISC_FIRMWARE_SIZE),
        ("MEM_TRISC2_FIRMWARE_SIZE", TRISC_FIRMWARE_SIZE),
        ("MEM_NOC_COUNTER_BASE", NOC_COUNTER_BASE),
        ("MEM_MAP_END", MAP_END),
        (
            "MEM_BRISC_INIT_LOCAL_L1_BASE_SCRATCH",
            local_init_scratch(Risc::Brisc)
        ),
        (
            "MEM_NCRISC_INIT_LOCAL_L1_BASE_SCRATCH",
            local_init_scratch(Risc::Ncrisc)
        ),
        (
            "MEM_TRISC0_INIT_LOCAL_L1_BASE_SCRATCH",
            local_init_scratch(Risc::Trisc0)
        ),
        (
            "MEM_TRISC1_INIT_LOCAL_L1_BASE_SCRATCH",
            local_init_scratch(Risc::Trisc1)
        ),
        (
            "MEM_TRISC2_INIT_LOCAL_L1_BASE_SCRATCH",
            local_init_scratch(Risc::Trisc2)
        ),
        (
            "MEM_NCRISC_INIT_IRAM_L1_BASE_SCRATCH",
            NCRISC_INIT_IRAM_L1_BASE_SCRATCH
        ),
        ("MEM_BANK_TO_NOC_SCRATCH", BANK_TO_NOC_SCRATCH),
        ("MEM_BANK_TO_NOC_SIZE", BANK_TO_NOC_SIZE),
        ("MEM_LOGICAL_TO_VIRTUAL_SCRATCH", LOGICAL_TO_VIRTUAL_SCRATCH),
        ("MEM_LOGICAL_TO_VIRTUAL_SIZE", LOGICAL_TO_VIRTUAL_SIZE),
        ("MEM_NCRISC_IRAM_BASE", NCRISC_IRAM_BASE),
        ("MEM_NCRISC_IRAM_SIZE", NCRISC_IRAM_SIZE),
        ("MEM_LOCAL_BASE", mmio::LOCAL_RAM_BASE),
        (
            "MEM_BRISC_LOCAL_SIZE",
            Arch::WormholeB0.local_ram_size(Risc::Brisc)
        ),
        (
            "MEM_NCRISC_LOCAL_SIZE",
            Arch::WormholeB0.local_ram_size(Risc::Ncrisc)
        ),
        (
            "MEM_TRISC_LOCAL_SIZE",
            Arch::WormholeB0.local_ram_size(Risc::Trisc0)
        ),
    ]
}

/// The header's values of `names`, computed by the host C compiler (the header is all
/// `#define`s; `MaxDMProcessorsPerCoreType` comes from Wormhole's `core_config.h`, 2).
fn header_values(root: &std::path::Path, names: &[&str]) -> Vec<u32> {
    let dir = std::env::temp_dir().join(format!("ttprof-devmemmap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut c = String::from(
        "#include <stdint.h>\n#include <stdio.h>\n#define MaxDMProcessorsPerCoreType 2\n",
    );
    c += &format!(
        "#include \"{}\"\nint main(void) {{\n",
        root.join(SOURCE_HEADER).display()
    );
    for n in names {
        c += &format!("    printf(\"%lu\\n\", (unsigned long)({n}));\n");
    }
    c += "    return 0;\n}\n";
    std::fs::write(dir.join("m.c"), c).expect("write m.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .arg(dir.join("m.c"))
        .arg("-o")
        .arg(dir.join("m"))
        .output()
        .unwrap_or_else(|e| panic!("the host C compiler `{cc}` (CC) could not run: {e}"));
    assert!(
        out.status.success(),
        "{cc} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(dir.join("m")).output().expect("run m");
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(run.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| l.parse().expect("a number"))
        .collect()
}

#[test]
fn table_matches_the_pinned_header() {
    let Some(root) = tt_metal_root() else { return };
    let ours = ours();
    let names: Vec<&str> = ours.iter().map(|(n, _)| *n).collect();
    let theirs = header_values(&root, &names);
    assert_eq!(theirs.len(), ours.len());
    let wrong: Vec<String> = ours
        .iter()
        .zip(&theirs)
        .filter(|((_, v), h)| v != *h)
        .map(|((n, v), h)| format!("{n}: ours {v:#x}, header {h:#x}"))
        .collect();
    assert!(wrong.is_empty(), "differs from {SOURCE_HEADER}: {wrong:?}");
}

#[test]
fn the_map_is_disjoint_and_inside_l1() {
    let map = |r| memory_map(Arch::WormholeB0, r).expect("wormhole map");
    let mut regions: Vec<Region> = Risc::ALL.iter().map(|&r| map(r).code).collect();
    regions.push(Region::new(MAILBOX_BASE, MAILBOX_SIZE));
    regions.push(Region::new(BOOT_CODE_BASE, 4));
    regions.push(kernel_config());
    for (i, a) in regions.iter().enumerate() {
        assert!(a.end() <= L1_SIZE as u64);
        for b in &regions[i + 1..] {
            assert!(
                a.end() <= b.start as u64 || b.end() <= a.start as u64,
                "{a:?} {b:?}"
            );
        }
    }
    assert_eq!(L1_SIZE, Arch::WormholeB0.l1_size());
    assert_eq!(map(Risc::Brisc).reset_pc, 0);
    assert_eq!(map(Risc::Trisc1).reset_pc, 0xA000, "the chip's default");
    assert!(memory_map(Arch::Blackhole, Risc::Brisc).is_none());
    assert_eq!(
        crate::Layout::Ttprof.memory_map(Arch::Blackhole, Risc::Brisc),
        Some(crate::memory_map(Arch::Blackhole, Risc::Brisc))
    );
}

/// `(expression, our value)` for the mailbox table: C++ expressions over `dev_msgs.h`.
fn our_msgs() -> Vec<(&'static str, u32)> {
    use msgs::*;
    let m = |off: u32| off - MAILBOX_BASE;
    std::vec![
        ("offsetof(mailboxes_t, ncrisc_halt)", m(NCRISC_HALT)),
        (
            "offsetof(mailboxes_t, subordinate_sync)",
            m(SUBORDINATE_SYNC)
        ),
        (
            "offsetof(mailboxes_t, launch_msg_rd_ptr)",
            m(LAUNCH_MSG_RD_PTR)
        ),
        ("offsetof(mailboxes_t, launch)", m(LAUNCH)),
        ("launch_msg_buffer_num_entries", LAUNCH_ENTRIES),
        ("sizeof(launch_msg_t)", LAUNCH_MSG_SIZE),
        ("offsetof(mailboxes_t, go_messages)", m(GO_MESSAGES)),
        (
            "offsetof(mailboxes_t, go_message_index)",
            m(GO_MESSAGE_INDEX)
        ),
        ("offsetof(mailboxes_t, core_info)", m(CORE_INFO)),
        ("offsetof(mailboxes_t, profiler)", m(PROFILER)),
        ("sizeof(mailboxes_t)", MAILBOX_SIZE),
        (
            "offsetof(kernel_config_msg_t, kernel_config_base)",
            launch::KERNEL_CONFIG_BASE
        ),
        (
            "offsetof(kernel_config_msg_t, sem_offset)",
            launch::SEM_OFFSET
        ),
        (
            "offsetof(kernel_config_msg_t, local_cb_offset)",
            launch::LOCAL_CB_OFFSET
        ),
        (
            "offsetof(kernel_config_msg_t, remote_cb_offset)",
            launch::REMOTE_CB_OFFSET
        ),
        (
            "offsetof(kernel_config_msg_t, rta_offset)",
            launch::RTA_OFFSET
        ),
        ("offsetof(kernel_config_msg_t, mode)", launch::MODE),
        (
            "offsetof(kernel_config_msg_t, kernel_text_offset)",
            launch::KERNEL_TEXT_OFFSET
        ),
        (
            "offsetof(kernel_config_msg_t, kernel_text_size)",
            launch::KERNEL_TEXT_SIZE
        ),
        (
            "offsetof(kernel_config_msg_t, local_cb_mask)",
            launch::LOCAL_CB_MASK
        ),
        (
            "offsetof(kernel_config_msg_t, brisc_noc_id)",
            launch::BRISC_NOC_ID
        ),
        (
            "offsetof(kernel_config_msg_t, brisc_noc_mode)",
            launch::BRISC_NOC_MODE
        ),
        (
            "offsetof(kernel_config_msg_t, min_remote_cb_start_index)",
            launch::MIN_REMOTE_CB_START_INDEX
        ),
        (
            "offsetof(kernel_config_msg_t, host_assigned_id)",
            launch::HOST_ASSIGNED_ID
        ),
        ("offsetof(kernel_config_msg_t, enables)", launch::ENABLES),
        (
            "offsetof(kernel_config_msg_t, reload_table_addr)",
            launch::RELOAD_TABLE_ADDR
        ),
        (
            "offsetof(kernel_config_msg_t, ncrisc_kernel_size16)",
            launch::NCRISC_KERNEL_SIZE16
        ),
        ("offsetof(kernel_config_msg_t, preload)", launch::PRELOAD),
        (
            "offsetof(core_info_msg_t, noc_size_x)",
            core_info::NOC_SIZE_X
        ),
        (
            "offsetof(core_info_msg_t, absolute_logical_x)",
            core_info::ABSOLUTE_LOGICAL_X
        ),
        (
            "offsetof(core_info_msg_t, l1_unreserved_start)",
            core_info::L1_UNRESERVED_START
        ),
        (
            "offsetof(core_info_msg_t, core_magic_number)",
            core_info::CORE_MAGIC_NUMBER
        ),
        ("RUN_MSG_INIT", RUN_MSG_INIT as u32),
        ("RUN_MSG_GO", RUN_MSG_GO as u32),
        ("RUN_MSG_DONE", RUN_MSG_DONE as u32),
        (
            "RUN_SYNC_MSG_ALL_SUBORDINATES_DONE",
            RUN_SYNC_MSG_ALL_SUBORDINATES_DONE
        ),
        ("DISPATCH_MODE_HOST", DISPATCH_MODE_HOST as u32),
        ("(uint32_t)CoreMagicNumber::WORKER", WORKER_MAGIC),
        ("1u << (int)TensixProcessorTypes::DM0", ENABLE_BRISC),
    ]
}

#[test]
fn mailbox_table_matches_the_pinned_dev_msgs() {
    let Some(root) = tt_metal_root() else { return };
    let hw = root.join("tt_metal/hw/inc");
    let mut src = String::from(
        "#include <cstdio>\n#include <cstddef>\n#include \"core_config.h\"\n\
         #include \"dev_mem_map.h\"\n#include \"hostdev/dev_msgs.h\"\nint main() {\n",
    );
    let ours = our_msgs();
    for (e, _) in &ours {
        src += &format!("    printf(\"%lu\\n\", (unsigned long)({e}));\n");
    }
    src += "    return 0;\n}\n";
    let dir = std::env::temp_dir().join(format!("ttprof-devmsgs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("m.cc"), src).expect("write m.cc");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let mut cmd = Command::new(&cxx);
    // The defines of a Wormhole firmware build, so that the header needs no host library.
    cmd.args([
        "-std=c++20",
        "-DARCH_WORMHOLE",
        "-DFW_BUILD",
        "-DTENSIX_FIRMWARE",
    ]);
    for inc in [
        "",
        "internal/tt-1xx/wormhole",
        "internal/tt-1xx",
        "internal/tt-1xx/wormhole/wormhole_b0_defines",
        "internal",
    ] {
        cmd.arg(format!("-I{}", hw.join(inc).display()));
    }
    cmd.arg(format!(
        "-I{}",
        root.join("tt_metal/hostdevcommon/api").display()
    ));
    cmd.arg(dir.join("m.cc")).arg("-o").arg(dir.join("m"));
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("the host C++ compiler `{cxx}` (CXX) could not run: {e}"));
    assert!(
        out.status.success(),
        "{cxx} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(dir.join("m")).output().expect("run m");
    let _ = std::fs::remove_dir_all(&dir);
    let theirs: Vec<u32> = String::from_utf8(run.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| l.parse().expect("a number"))
        .collect();
    assert_eq!(theirs.len(), ours.len());
    let wrong: Vec<String> = ours
        .iter()
        .zip(&theirs)
        .filter(|((_, v), h)| v != *h)
        .map(|((n, v), h)| format!("{n}: ours {v}, header {h}"))
        .collect();
    assert!(wrong.is_empty(), "differs from dev_msgs.h: {wrong:?}");
}
