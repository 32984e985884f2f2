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
    if root.join(source_header(Arch::WormholeB0)).is_file() {
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

/// Every value of `arch`'s table, by the header's name.
fn ours(arch: Arch) -> Vec<(&'static str, u32)> {
    let m = l1_map(arch);
    let mut v = std::vec![
        ("MEM_L1_SIZE", m.l1_size),
        ("MEM_BOOT_CODE_BASE", m.boot_code_base),
        ("MEM_NOC_ATOMIC_RET_VAL_ADDR", m.noc_atomic_ret_val_addr),
        ("MEM_L1_BARRIER", m.l1_barrier),
        ("MEM_MAILBOX_BASE", m.mailbox.start),
        ("MEM_MAILBOX_SIZE", m.mailbox.size),
        ("MEM_ZEROS_BASE", m.zeros.start),
        ("MEM_ZEROS_SIZE", m.zeros.size),
        ("MEM_LLK_DEBUG_BASE", m.llk_debug.start),
        ("MEM_LLK_DEBUG_SIZE", m.llk_debug.size),
        ("MEM_NOC_COUNTER_BASE", m.noc_counter_base),
        ("MEM_MAP_END", m.map_end),
        (
            "MEM_NCRISC_INIT_IRAM_L1_BASE_SCRATCH",
            m.ncrisc_init_iram_l1_base_scratch
        ),
        ("MEM_BANK_TO_NOC_SCRATCH", m.bank_to_noc.start),
        ("MEM_BANK_TO_NOC_SIZE", m.bank_to_noc.size),
        ("MEM_LOGICAL_TO_VIRTUAL_SCRATCH", m.logical_to_virtual.start),
        ("MEM_LOGICAL_TO_VIRTUAL_SIZE", m.logical_to_virtual.size),
        ("MEM_LOCAL_BASE", mmio::LOCAL_RAM_BASE),
        ("MEM_BRISC_LOCAL_SIZE", arch.local_ram_size(Risc::Brisc)),
        ("MEM_NCRISC_LOCAL_SIZE", arch.local_ram_size(Risc::Ncrisc)),
        ("MEM_TRISC_LOCAL_SIZE", arch.local_ram_size(Risc::Trisc0)),
    ];
    const FW: [(&str, &str, &str); 5] = [
        (
            "MEM_BRISC_FIRMWARE_BASE",
            "MEM_BRISC_FIRMWARE_SIZE",
            "MEM_BRISC_INIT_LOCAL_L1_BASE_SCRATCH",
        ),
        (
            "MEM_NCRISC_FIRMWARE_BASE",
            "MEM_NCRISC_FIRMWARE_SIZE",
            "MEM_NCRISC_INIT_LOCAL_L1_BASE_SCRATCH",
        ),
        (
            "MEM_TRISC0_FIRMWARE_BASE",
            "MEM_TRISC0_FIRMWARE_SIZE",
            "MEM_TRISC0_INIT_LOCAL_L1_BASE_SCRATCH",
        ),
        (
            "MEM_TRISC1_FIRMWARE_BASE",
            "MEM_TRISC1_FIRMWARE_SIZE",
            "MEM_TRISC1_INIT_LOCAL_L1_BASE_SCRATCH",
        ),
        (
            "MEM_TRISC2_FIRMWARE_BASE",
            "MEM_TRISC2_FIRMWARE_SIZE",
            "MEM_TRISC2_INIT_LOCAL_L1_BASE_SCRATCH",
        ),
    ];
    for (risc, (base, size, scratch)) in Risc::ALL.into_iter().zip(FW) {
        v.push((base, m.firmware(risc).start));
        v.push((size, m.firmware(risc).size));
        v.push((scratch, m.local_init_scratch(risc)));
    }
    if let Some((base, size)) = arch.ncrisc_iram() {
        v.push(("MEM_NCRISC_IRAM_BASE", base));
        v.push(("MEM_NCRISC_IRAM_SIZE", size));
    }
    v
}

/// Compiles a program with the host compiler `$var` (else `default`) and `args`: `prelude`,
/// then a `main` printing each of `exprs` as a number, one per line; runs it and returns the
/// numbers. The source is `name` in a temporary directory of its own.
fn print_values(
    (var, default): (&str, &str),
    name: &str,
    prelude: &str,
    exprs: &[&str],
    args: &[String],
) -> Vec<u32> {
    let dir = std::env::temp_dir().join(format!("ttprof-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut src = format!("{prelude}int main(void) {{\n");
    for e in exprs {
        src += &format!("    printf(\"%lu\\n\", (unsigned long)({e}));\n");
    }
    src += "    return 0;\n}\n";
    std::fs::write(dir.join(name), src).expect("write the source");
    let compiler = std::env::var(var).unwrap_or_else(|_| default.to_string());
    let out = Command::new(&compiler)
        .args(args)
        .arg(dir.join(name))
        .arg("-o")
        .arg(dir.join("m"))
        .output()
        .unwrap_or_else(|e| panic!("the host compiler `{compiler}` ({var}) could not run: {e}"));
    assert!(
        out.status.success(),
        "{compiler} failed: {}",
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

/// Asserts that each of `ours` equals the header's value `theirs` beside it, naming every one
/// that differs from `what`.
fn assert_agree(ours: &[(&str, u32)], theirs: &[u32], what: &str) {
    assert_eq!(theirs.len(), ours.len());
    let wrong: Vec<String> = ours
        .iter()
        .zip(theirs)
        .filter(|((_, v), h)| v != *h)
        .map(|((n, v), h)| format!("{n}: ours {v:#x}, header {h:#x}"))
        .collect();
    assert!(wrong.is_empty(), "differs from {what}: {wrong:?}");
}

/// The header's values of `names`, computed by the host C compiler (the header is all
/// `#define`s; `MaxDMProcessorsPerCoreType` comes from `core_config.h`, 2 on both arches).
fn header_values(root: &std::path::Path, arch: Arch, names: &[&str]) -> Vec<u32> {
    let prelude = format!(
        "#include <stdint.h>\n#include <stdio.h>\n#define MaxDMProcessorsPerCoreType 2\n\
         #include \"{}\"\n",
        root.join(source_header(arch)).display()
    );
    print_values(
        ("CC", "cc"),
        &format!("devmemmap-{arch}.c"),
        &prelude,
        names,
        &[],
    )
}

#[test]
fn tables_match_the_pinned_headers() {
    let Some(root) = tt_metal_root() else { return };
    for arch in Arch::ALL {
        let ours = ours(arch);
        let names: Vec<&str> = ours.iter().map(|(n, _)| *n).collect();
        let theirs = header_values(&root, arch, &names);
        assert_agree(&ours, &theirs, source_header(arch));
    }
}

#[test]
fn the_maps_are_disjoint_and_inside_l1() {
    for arch in Arch::ALL {
        let m = l1_map(arch);
        let mut regions: Vec<Region> = Risc::ALL.iter().map(|&r| m.firmware(r)).collect();
        regions.push(m.mailbox);
        regions.push(Region::new(m.boot_code_base, 4));
        regions.push(m.kernel_config);
        for (i, a) in regions.iter().enumerate() {
            assert!(a.end() <= m.l1_size as u64);
            for b in &regions[i + 1..] {
                assert!(
                    a.end() <= b.start as u64 || b.end() <= a.start as u64,
                    "{arch}: {a:?} {b:?}"
                );
            }
        }
        assert_eq!(m.l1_size, arch.l1_size());
        assert_eq!(memory_map(arch, Risc::Brisc).reset_pc, 0);
        assert_eq!(
            memory_map(arch, Risc::Trisc1).reset_pc,
            crate::memory_map(arch, Risc::Trisc1).reset_pc,
            "the chip's default"
        );
        // Blackhole's NCRISC runs kernels from the buffer; Wormhole's from its IRAM.
        assert_eq!(
            memory_map(arch, Risc::Ncrisc).kernel.is_some(),
            arch.ncrisc_iram().is_none()
        );
    }
}

/// `(expression, our value)` for `arch`'s mailbox table: C++ expressions over `dev_msgs.h`.
fn our_msgs(arch: Arch) -> Vec<(&'static str, u32)> {
    use msgs::*;
    let mb = mailboxes(arch);
    let m = |addr: u32| addr - l1_map(arch).mailbox.start;
    std::vec![
        ("offsetof(mailboxes_t, ncrisc_halt)", m(mb.ncrisc_halt)),
        (
            "offsetof(mailboxes_t, subordinate_sync)",
            m(mb.subordinate_sync)
        ),
        (
            "offsetof(mailboxes_t, launch_msg_rd_ptr)",
            m(mb.launch_msg_rd_ptr)
        ),
        ("offsetof(mailboxes_t, launch)", m(mb.launch)),
        ("launch_msg_buffer_num_entries", LAUNCH_ENTRIES),
        ("sizeof(launch_msg_t)", LAUNCH_MSG_SIZE),
        ("offsetof(mailboxes_t, go_messages)", m(mb.go_messages)),
        (
            "offsetof(mailboxes_t, go_message_index)",
            m(mb.go_message_index)
        ),
        ("offsetof(mailboxes_t, core_info)", m(mb.core_info)),
        ("offsetof(mailboxes_t, profiler)", m(mb.profiler)),
        ("sizeof(mailboxes_t)", l1_map(arch).mailbox.size),
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
fn mailbox_tables_match_the_pinned_dev_msgs() {
    let Some(root) = tt_metal_root() else { return };
    for arch in Arch::ALL {
        check_msgs(&root, arch);
    }
}

fn check_msgs(root: &std::path::Path, arch: Arch) {
    let hw = root.join("tt_metal/hw/inc");
    let prelude = "#include <cstdio>\n#include <cstddef>\n#include \"core_config.h\"\n\
                   #include \"dev_mem_map.h\"\n#include \"hostdev/dev_msgs.h\"\n";
    let ours = our_msgs(arch);
    // The defines of a firmware build, so that the header needs no host library.
    let (define, dir_name, defines) = match arch {
        Arch::WormholeB0 => (
            "-DARCH_WORMHOLE",
            "internal/tt-1xx/wormhole",
            "internal/tt-1xx/wormhole/wormhole_b0_defines",
        ),
        Arch::Blackhole => (
            "-DARCH_BLACKHOLE",
            "internal/tt-1xx/blackhole",
            "internal/tt-1xx/blackhole",
        ),
    };
    let mut args: Vec<String> = ["-std=c++20", define, "-DFW_BUILD", "-DTENSIX_FIRMWARE"]
        .map(String::from)
        .to_vec();
    for inc in ["", dir_name, "internal/tt-1xx", defines, "internal"] {
        args.push(format!("-I{}", hw.join(inc).display()));
    }
    args.push(format!(
        "-I{}",
        root.join("tt_metal/hostdevcommon/api").display()
    ));
    let exprs: Vec<&str> = ours.iter().map(|(e, _)| *e).collect();
    let theirs = print_values(
        ("CXX", "c++"),
        &format!("devmsgs-{arch}.cc"),
        prelude,
        &exprs,
        &args,
    );
    assert_agree(&ours, &theirs, &format!("{arch}'s dev_msgs.h"));
}
