//! The tt-kmd backend (issue 10) without a card: the real backend code (`TtKmd`) over the
//! fake driver (`ttprof::devmem::ttkmd::fake`), whose windows reach the emulator's device
//! memory. Every test name contains `kmd` (`cargo test kmd`).

use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{Arch, NocCoord, Risc};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use ttprof::devmem::ttkmd::fake::{FakeCard, FakeDriver};
use ttprof::devmem::ttkmd::{
    self, ioctl, list_cards_in, parse_spec, render_cards, DeviceSpec, HarvestSource, KmdOptions,
    TtKmd,
};
use ttprof::devmem::{DeviceClock, DeviceMemory, MappedImage};
use ttprof::testing::{temp_dir, ImageBuilder};

const T0: NocCoord = NocCoord::new(1, 1);
const T1: NocCoord = NocCoord::new(2, 1);
const T2: NocCoord = NocCoord::new(3, 1);

fn image(
    name: &str,
    arch: Arch,
    tiles: Vec<NocCoord>,
    pokes: &[(NocCoord, u32, u32)],
) -> (PathBuf, Arc<MappedImage>) {
    let dir = temp_dir(name);
    let path = dir.join("dev.img");
    let mut b = ImageBuilder::new(arch, 1, tiles);
    for &(t, a, v) in pokes {
        b.poke(0, t, a, v);
    }
    b.write(&path).unwrap();
    let m = Arc::new(MappedImage::open(&path, &ttprof::inputs::Inputs::none()).unwrap());
    (dir, m)
}

fn open(
    card: FakeCard,
    options: &KmdOptions,
) -> (Arc<FakeDriver>, ttprof::Result<TtKmd<Arc<FakeDriver>>>) {
    let d = Arc::new(FakeDriver::new(card));
    let k = TtKmd::open_with(d.clone(), Some(0), options, &ttprof::inputs::Inputs::none());
    (d, k)
}

fn only(tiles: &[NocCoord]) -> KmdOptions {
    KmdOptions {
        tiles: Some(tiles.to_vec()),
        ..KmdOptions::default()
    }
}

#[test]
fn kmd_specs_name_cards_and_files() {
    match parse_spec(Path::new("tt:3")).unwrap() {
        DeviceSpec::Card {
            path,
            index,
            options,
        } => {
            assert_eq!(
                (path, index),
                (PathBuf::from("/dev/tenstorrent/3"), Some(3))
            );
            assert_eq!(options, KmdOptions::default());
        }
        s => panic!("{s:?}"),
    }
    match parse_spec(Path::new(
        "/dev/tenstorrent/1,harvest=0x21,translation=off,windows=8",
    ))
    .unwrap()
    {
        DeviceSpec::Card {
            path,
            index,
            options,
        } => {
            assert_eq!(
                (path, index),
                (PathBuf::from("/dev/tenstorrent/1"), Some(1))
            );
            assert_eq!(options.harvest, HarvestSource::Mask(0x21));
            assert_eq!((options.translation, options.windows), (Some(false), 8));
        }
        s => panic!("{s:?}"),
    }
    match parse_spec(Path::new("tt:0,cluster=/tmp/c.yaml,chip=1")).unwrap() {
        DeviceSpec::Card { options, .. } => {
            assert_eq!(
                options.harvest,
                HarvestSource::Descriptor {
                    path: "/tmp/c.yaml".into(),
                    chip: Some(1)
                }
            )
        }
        s => panic!("{s:?}"),
    }
    for file in ["dev.img", "./tt:0", "/tmp/tt:0", "run.snap"] {
        assert_eq!(
            parse_spec(Path::new(file)).unwrap(),
            DeviceSpec::File(file.into()),
            "{file}"
        );
    }
    for (bad, why) in [
        ("tt:x", "`tt:` takes a card number"),
        ("tt:0,harvest=zz", "harvest=zz: expected a mask"),
        ("tt:0,colour=red", "unknown setting `colour`"),
        ("tt:0,windows=0", "expected 1 to 64 TLB windows"),
        (
            "tt:0,chip=1",
            "chip= chooses a chip of a cluster= descriptor",
        ),
        ("tt:0,harvest=1,cluster=c.yaml", "not both"),
        ("tt:0,translation", "expected key=value"),
    ] {
        let e = parse_spec(Path::new(bad)).unwrap_err().to_string();
        assert!(e.contains(bad) && e.contains(why), "{bad}: {e}");
    }
}

#[test]
fn kmd_a_card_that_is_not_there_names_the_path_and_tt_kmd() {
    for spec in ["tt:97", "/dev/tenstorrent/97"] {
        let e = ttprof::devmem::open(Path::new(spec), false, &ttprof::inputs::Inputs::none())
            .err()
            .expect("no card 97")
            .to_string();
        assert!(
            e.contains("/dev/tenstorrent/97") && e.contains("tt-kmd"),
            "{e}"
        );
        let e = ttprof::devmem::open_live(Path::new(spec), &ttprof::inputs::Inputs::none())
            .err()
            .expect("no card 97")
            .to_string();
        assert!(e.contains("/dev/tenstorrent/97: no such card"), "{e}");
    }
    let e = ttprof::devmem::file_kind(Path::new("tt:0"), &ttprof::inputs::Inputs::none())
        .unwrap_err()
        .to_string();
    assert!(e.contains("tt:0 is a card (tt-kmd)"), "{e}");
    let (_, note) = ttprof::clock::timebase_for(
        Path::new("tt:0"),
        Arch::WormholeB0,
        1,
        &ttprof::inputs::Inputs::none(),
    );
    assert!(
        note.contains("a live card has no recorded sync samples"),
        "{note}"
    );
}

#[test]
fn kmd_an_old_driver_is_refused_naming_found_and_needed_versions() {
    let (_dir, mem) = image("kmd-api", Arch::WormholeB0, vec![T0], &[]);
    let mut card = FakeCard::new(Arch::WormholeB0, mem);
    card.api_version = 1;
    card.release = None;
    let e = open(card, &KmdOptions::default())
        .1
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains(
            "/dev/tenstorrent/0: tt-kmd driver API version 1 found, version 2 or newer needed"
        ),
        "{e}"
    );
}

#[test]
fn kmd_an_unknown_pci_device_is_refused() {
    let (_dir, mem) = image("kmd-pci", Arch::WormholeB0, vec![T0], &[]);
    let mut card = FakeCard::new(Arch::WormholeB0, mem);
    card.pci.device_id = 0xFACA;
    let e = open(card, &KmdOptions::default())
        .1
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("PCI device 1e52:faca is neither a Wormhole"),
        "{e}"
    );
}

#[test]
fn kmd_window_pool_reuses_the_least_recently_used_window_with_strict_ordering() {
    let pokes = [(T0, 0x100, 10), (T1, 0x100, 11), (T2, 0x100, 12)];
    let (_dir, mem) = image("kmd-pool", Arch::WormholeB0, vec![T0, T1, T2], &pokes);
    mem.write_u32(0, T0, 0x10_0000, 13).unwrap();
    let options = KmdOptions {
        windows: 2,
        ..only(&[T0, T1, T2])
    };
    let (d, k) = open(FakeCard::new(Arch::WormholeB0, mem), &options);
    let k = k.unwrap();
    assert_eq!(k.geometry().tiles_per_chip, 3);
    assert_eq!(
        k.pool_stats().windows,
        0,
        "windows are allocated on first use"
    );
    let r = |t, a| k.read_u32(0, t, a).unwrap();
    assert_eq!((r(T0, 0x100), r(T1, 0x100)), (10, 11));
    assert_eq!(r(T0, 0x104), 0, "T0's window is still there");
    assert_eq!(
        r(T2, 0x100),
        12,
        "re-points T1's window, the least recently used"
    );
    assert_eq!(r(T0, 0x100), 10, "T0's stayed");
    assert_eq!(
        r(T0, 0x10_0000),
        13,
        "the second MiB of T0's L1 is another window position"
    );
    let s = k.pool_stats();
    assert_eq!((s.windows, s.allocations, s.configures), (2, 2, 4));
    // A read that straddles a window boundary is split.
    let mut w = [0u32; 2];
    k.read_words(0, T0, 0x0F_FFFC, &mut w).unwrap();
    assert_eq!(w, [0, 13]);
    for c in d.configs() {
        assert_eq!((c.ordering, c.noc, c.mcast), (ioctl::ORDERING_STRICT, 0, 0));
        assert_eq!(c.addr % (1 << 20), 0, "aligned to the 1 MiB window");
    }
    assert_eq!(d.misdirected(), 0);
    assert_eq!(d.windows(), (2, 2));
    drop(k);
    assert_eq!(d.windows(), (0, 0), "unmapped and freed on drop");
}

#[test]
fn kmd_enomem_caps_the_pool_or_says_tt_metal_may_hold_the_windows() {
    let (_dir, mem) = image(
        "kmd-enomem",
        Arch::WormholeB0,
        vec![T0, T1],
        &[(T1, 0x200, 7)],
    );
    let mut card = FakeCard::new(Arch::WormholeB0, mem.clone());
    card.free_windows = 1;
    let (_d, k) = open(card, &only(&[T0, T1]));
    let k = k.unwrap();
    k.read_u32(0, T0, 0).unwrap();
    assert_eq!(
        k.read_u32(0, T1, 0x200).unwrap(),
        7,
        "one window serves both tiles"
    );
    assert_eq!((k.pool_stats().windows, k.pool_stats().limit), (1, 1));

    let mut none = FakeCard::new(Arch::WormholeB0, mem);
    none.free_windows = 0;
    let (_d, k) = open(none, &only(&[T0]));
    let e = k.unwrap().read_u32(0, T0, 0).unwrap_err().to_string();
    assert!(
        e.contains("/dev/tenstorrent/0: ALLOCATE_TLB failed")
            && e.contains(
                "no 1024 KiB TLB window is free; a running tt-metal may hold the windows"
            ),
        "{e}"
    );
}

#[test]
fn kmd_fake_driver_keeps_the_drivers_rules() {
    use ttprof::devmem::ttkmd::Driver;
    let (_dir, mem) = image("kmd-rules", Arch::Blackhole, vec![NocCoord::new(1, 2)], &[]);
    let d = FakeDriver::new(FakeCard::new(Arch::Blackhole, mem));
    let errno = |e: std::io::Error| e.raw_os_error().unwrap();
    assert_eq!(
        errno(d.allocate_tlb(1 << 20).unwrap_err()),
        nix::libc::EINVAL,
        "Blackhole has no 1 MiB window"
    );
    let t = d.allocate_tlb(2 << 20).unwrap();
    let mut c = ioctl::NocTlbConfig {
        addr: 1 << 20,
        x_end: 1,
        y_end: 2,
        ordering: 1,
        ..Default::default()
    };
    assert_eq!(
        errno(d.configure_tlb(t.id, &c).unwrap_err()),
        nix::libc::EINVAL,
        "misaligned"
    );
    c.addr = 0;
    d.configure_tlb(t.id, &c).unwrap();
    assert_eq!(
        errno(d.configure_tlb(99, &c).unwrap_err()),
        nix::libc::EPERM,
        "not allocated"
    );
    d.map_window(&t).unwrap();
    assert_eq!(
        errno(d.free_tlb(t.id).unwrap_err()),
        nix::libc::EBUSY,
        "still mapped"
    );
    d.unmap_window(t.id).unwrap();
    d.free_tlb(t.id).unwrap();
    assert_eq!(errno(d.free_tlb(t.id).unwrap_err()), nix::libc::EPERM);
}

#[test]
fn kmd_a_card_that_went_away_is_an_error_and_a_real_all_ones_word_is_not() {
    let (_dir, mem) = image(
        "kmd-gone",
        Arch::WormholeB0,
        vec![T0],
        &[(T0, 0x300, u32::MAX)],
    );
    let (d, k) = open(FakeCard::new(Arch::WormholeB0, mem), &only(&[T0]));
    let k = k.unwrap();
    assert_eq!(
        k.read_u32(0, T0, 0x300).unwrap(),
        u32::MAX,
        "confirmed against NOC_NODE_ID: the card is there"
    );
    k.check().unwrap();
    d.set_gone(true);
    let e = k.read_u32(0, T0, 0x300).unwrap_err().to_string();
    assert!(
        e.contains("/dev/tenstorrent/0: card went away / reset") && e.contains("NOC_NODE_ID too"),
        "{e}"
    );
    d.set_gone(false);
    let e = k.read_u32(0, T0, 0x304).unwrap_err().to_string();
    assert!(
        e.contains("card went away / reset (an earlier access found it gone)"),
        "gone for good: {e}"
    );
    assert!(k
        .check()
        .unwrap_err()
        .to_string()
        .contains("card went away"));
    assert!(ttprof::readout::read(&k, false)
        .unwrap_err()
        .to_string()
        .contains("card went away"));
}

#[test]
fn kmd_sigbus_while_mapped_is_an_error_not_a_crash() {
    let (_dir, mem) = image("kmd-bus", Arch::WormholeB0, vec![T0], &[]);
    let (d, k) = open(FakeCard::new(Arch::WormholeB0, mem), &only(&[T0]));
    let k = k.unwrap();
    k.read_u32(0, T0, 0).unwrap();
    d.set_bus_fault(true);
    let e = k.read_u32(0, T0, 0).unwrap_err().to_string();
    assert!(
        e.contains("card went away / reset (SIGBUS on a mapped window)"),
        "{e}"
    );
}

#[test]
fn kmd_only_the_consumer_words_are_written() {
    let (_dir, mem) = image("kmd-writes", Arch::WormholeB0, vec![T0], &[]);
    let (_d, k) = open(FakeCard::new(Arch::WormholeB0, mem.clone()), &only(&[T0]));
    let k = k.unwrap();
    let tail = profiler::ring_word(Risc::Trisc1, ring::TAIL);
    let consumer = profiler::TILE_BLOCK + tile::CONSUMER;
    k.write_u32(0, T0, tail, 0x40).unwrap();
    k.write_u32(0, T0, consumer, 9).unwrap();
    assert_eq!(
        (
            mem.read_u32(0, T0, tail).unwrap(),
            mem.read_u32(0, T0, consumer).unwrap()
        ),
        (0x40, 9)
    );
    for addr in [
        profiler::ring_word(Risc::Brisc, ring::HEAD),
        profiler::TILE_BLOCK + tile::CONTROL,
        0x3_0000,
    ] {
        let e = k.write_u32(0, T0, addr, 1).unwrap_err().to_string();
        assert!(
            e.contains("ttprof writes only the consumer's words of a real card"),
            "{addr:#x}: {e}"
        );
    }
    let ro = KmdOptions {
        writable: false,
        ..only(&[T0])
    };
    let (_d, k) = open(FakeCard::new(Arch::WormholeB0, mem), &ro);
    assert!(k
        .unwrap()
        .write_u32(0, T0, tail, 1)
        .unwrap_err()
        .to_string()
        .contains("opened read-only"));
}

#[test]
fn kmd_blackhole_with_translation_programs_translated_coordinates() {
    // A p100: NoC0 columns 7 and 10 harvested; translation on. NoC0 (11,2) is translated
    // (7,2): programming (11,2) as it is would reach another tile.
    let (a, b) = (NocCoord::new(11, 2), NocCoord::new(1, 2));
    let (_dir, mem) = image(
        "kmd-bh",
        Arch::Blackhole,
        vec![b, a],
        &[(a, 0x100, 0xA), (b, 0x100, 0xB)],
    );
    let mut card = FakeCard::new(Arch::Blackhole, mem.clone());
    card.map = riscv_linker::TileMap::new(Arch::Blackhole, 192, true).unwrap();
    let options = KmdOptions {
        harvest: HarvestSource::Mask(192),
        ..KmdOptions::default()
    };
    let (d, k) = open(card.clone(), &options);
    let k = k.unwrap();
    assert_eq!(k.geometry().tiles_per_chip, 120, "a p100's 12 x 10 workers");
    assert!(!k.tiles(0).contains(&NocCoord::new(7, 2)), "harvested");
    assert_eq!(
        (
            k.read_u32(0, a, 0x100).unwrap(),
            k.read_u32(0, b, 0x100).unwrap()
        ),
        (0xA, 0xB)
    );
    assert_eq!((d.configs()[0].x_end, d.configs()[0].y_end), (7, 2));
    assert_eq!(d.misdirected(), 0);
    assert!(
        k.describe()
            .contains("harvesting: NoC0 columns 7, 10 (mask 0xc0, given)"),
        "{}",
        k.describe()
    );
    // Not told about the harvesting, the same read reaches the wrong tile.
    let (d, k) = open(card, &KmdOptions::default());
    let k = k.unwrap();
    assert_ne!(k.read_u32(0, a, 0x100).unwrap(), 0xA);
    assert!(
        k.describe().contains("harvesting: unknown (assumed none"),
        "{}",
        k.describe()
    );
    let _ = d;
}

#[test]
fn kmd_harvesting_from_a_cluster_descriptor_matches_the_card_by_pci_address() {
    let (dir, mem) = image("kmd-desc", Arch::WormholeB0, vec![T0], &[]);
    let desc = dir.join("cluster.yaml");
    std::fs::write(&desc, "arch: {0: wormhole_b0, 1: wormhole_b0}\nharvesting:\n  0: {noc_translation: true, harvest_mask: 544}\n  1: {noc_translation: true, harvest_mask: 513}\nchip_pci_bdfs:\n  0: 0000:41:00.0\n  1: 0000:42:00.0\n").unwrap();
    let options = KmdOptions {
        harvest: HarvestSource::Descriptor {
            path: desc.clone(),
            chip: None,
        },
        ..KmdOptions::default()
    };
    let (_d, k) = open(FakeCard::new(Arch::WormholeB0, mem), &options);
    let k = k.unwrap();
    assert_eq!(k.card().map.mask(), 544);
    assert_eq!(k.geometry().tiles_per_chip, 64, "two of ten rows harvested");
    assert!(
        !k.tiles(0).contains(&NocCoord::new(1, 7)) && !k.tiles(0).contains(&NocCoord::new(1, 11))
    );
    assert!(
        k.card()
            .harvesting()
            .contains("NoC0 rows 7, 11 (mask 0x220, cluster descriptor"),
        "{}",
        k.card().harvesting()
    );
}

#[test]
fn kmd_devices_lists_cards_and_says_plainly_when_there_are_none() {
    let (dir, mem) = image("kmd-list", Arch::WormholeB0, vec![T0], &[]);
    let nodes = dir.join("nodes");
    assert!(list_cards_in(
        &nodes,
        &KmdOptions::default(),
        |_| -> std::io::Result<FakeDriver> { unreachable!() }
    )
    .is_empty());
    let none = render_cards(&[]);
    assert!(
        none.starts_with("no Tenstorrent card found: /dev/tenstorrent/ has no device node"),
        "{none}"
    );
    std::fs::create_dir_all(&nodes).unwrap();
    for n in ["0", "1", "control"] {
        std::fs::write(nodes.join(n), b"").unwrap();
    }
    let cards = list_cards_in(&nodes, &KmdOptions::default(), |p| {
        if p.ends_with("1") {
            Err(std::io::Error::from_raw_os_error(nix::libc::EACCES))
        } else {
            Ok(FakeDriver::new(FakeCard::new(
                Arch::WormholeB0,
                mem.clone(),
            )))
        }
    });
    assert_eq!(cards.iter().map(|c| c.index).collect::<Vec<_>>(), [0, 1]);
    let text = render_cards(&cards);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("card  device"), "{text}");
    for want in [
        "wormhole_b0",
        "0000:41:00.0",
        "tt-kmd 2.10.0 (API 2)",
        "unknown (assumed none",
    ] {
        assert!(lines[1].contains(want), "{want}: {text}");
    }
    assert!(
        lines[2].starts_with("1")
            && lines[2].contains("error:")
            && lines[2].contains("permission denied"),
        "{text}"
    );
    // This machine's own cards (none in CI): whatever there is renders without panicking.
    let _ = render_cards(&ttkmd::list_cards(&KmdOptions::default()));
}

#[test]
fn kmd_clock_samples_bracket_the_wall_clock_and_fit_its_frequency() {
    use ttprof::clock::{fit, ClockSync, FitOptions};
    let (_dir, mem) = image("kmd-clock", Arch::WormholeB0, vec![T0, T1], &[]);
    let mut card = FakeCard::new(Arch::WormholeB0, mem);
    let t0 = ttkmd::monotonic_raw_ns();
    // 985 MHz, each tile its own offset.
    card.clock = Some(Arc::new(move |t: NocCoord, ns: u64| {
        1_000_000 * t.x as u64 + (ns - t0) * 985 / 1000
    }));
    let (_d, k) = open(card, &only(&[T0, T1]));
    let k = k.unwrap();
    let s = k.sync_sample(0, T1).unwrap();
    assert!(s.host_before_ns <= s.host_after_ns);
    let lo = 2_000_000 + (s.host_before_ns - t0) * 985 / 1000;
    let hi = 2_000_000 + (s.host_after_ns - t0) * 985 / 1000;
    assert!(
        (lo..=hi).contains(&s.device_cycles),
        "{lo} <= {} <= {hi}",
        s.device_cycles
    );
    let mut sync = ClockSync::new(vec![(0, T0), (0, T1)], 20).with_spacing_ns(100_000);
    sync.window(&k).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    sync.window(&k).unwrap();
    let f = fit(
        sync.samples(),
        Arch::WormholeB0,
        1,
        &FitOptions {
            drift: false,
            ..FitOptions::default()
        },
    )
    .unwrap();
    let mhz = f.chips[0].mhz;
    assert!(
        (mhz - 985.0).abs() < 985.0 * 0.01,
        "fitted {mhz} MHz, the card runs at 985"
    );
}

/// When tt-kmd's header is installed, a C probe compiled against it prints every size and
/// offset we pin; they must agree. Otherwise the test says it was skipped.
#[test]
fn kmd_struct_layout_matches_the_installed_c_header() {
    let mut candidates: Vec<PathBuf> = std::env::var_os("TTPROF_TTKMD_HEADER")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    candidates.push("/usr/include/tenstorrent/ioctl.h".into());
    if let Ok(dirs) = std::fs::read_dir("/usr/src") {
        for d in dirs.flatten() {
            if d.file_name().to_string_lossy().starts_with("tenstorrent") {
                candidates.push(d.path().join("ioctl.h"));
            }
        }
    }
    let Some(header) = candidates.into_iter().find(|p| p.is_file()) else {
        eprintln!("kmd C probe skipped: no tt-kmd ioctl.h installed (/usr/src/tenstorrent-*/ioctl.h, /usr/include/tenstorrent/ioctl.h or $TTPROF_TTKMD_HEADER)");
        return;
    };
    let layout = ioctl::layout();
    let mut c = format!(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"{}\"\nint main(void) {{\n",
        header.display()
    );
    for (name, _, fields) in &layout {
        c += &format!("  printf(\"{name} %zu\\n\", sizeof(struct {name}));\n");
        for (field, _) in fields {
            // `in.x`/`out.x` are members of the nested in/out structs.
            c += &format!(
                "  printf(\"{name}.{field} %zu\\n\", offsetof(struct {name}, {field}));\n"
            );
        }
    }
    c += "  return 0;\n}\n";
    let dir = temp_dir("kmd-probe");
    std::fs::write(dir.join("probe.c"), c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = std::process::Command::new(&cc)
        .arg("-o")
        .arg(dir.join("probe"))
        .arg(dir.join("probe.c"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = std::process::Command::new(dir.join("probe"))
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    let mut ours = String::new();
    for (name, size, fields) in &layout {
        ours += &format!("{name} {size}\n");
        for (field, off) in fields {
            ours += &format!("{name}.{field} {off}\n");
        }
    }
    assert_eq!(
        out,
        ours,
        "{} disagrees with ttprof's structs",
        header.display()
    );
    eprintln!(
        "kmd C probe: {} agrees with every size and offset",
        header.display()
    );
}

// ---- Against a running emulator: the bench kernel writes far more than a ring holds ----

mod emulated {
    use super::*;
    use std::sync::OnceLock;
    use ttprof::launch::{self, Policy, Settings};
    use ttprof::readout::{DrainOptions, Drainer, Readout};

    /// `examples/kernels`' bench kernel: dense mode, two zones per iteration.
    const DENSE: u32 = 1;
    const ITERATIONS: u32 = 1_500;

    fn workspace() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_path_buf()
    }

    fn bench_elf() -> &'static PathBuf {
        static ELF: OnceLock<PathBuf> = OnceLock::new();
        ELF.get_or_init(|| {
            let ws = workspace();
            let b = ttprof::kernels::KernelBuild {
                crate_dir: ws.join("examples/kernels"),
                arch: Arch::WormholeB0,
                target_dir: ws.join("target/kernels").join(Arch::WormholeB0.name()),
                features: vec![],
                no_default_features: false,
            };
            let built = ttprof::kernels::build(&b).unwrap_or_else(|e| panic!("{e}"));
            let to = ws.join("target/test-kmd/bench.elf");
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(built.elf("bench").unwrap(), &to).unwrap();
            to
        })
    }

    /// A fresh emulator running the bench kernel on one tile, and its image.
    fn device(name: &str, consumer: bool) -> (ttprof_emu::Device, Arc<MappedImage>, NocCoord) {
        let dir = workspace().join("target/test-kmd").join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut cfg = ttprof_emu::DeviceConfig::new(Arch::WormholeB0, (1, 1));
        cfg.image = Some(dir.join("dev.img"));
        let mut dev = ttprof_emu::Device::new(cfg).unwrap();
        let tile = dev.tiles()[0];
        let mem =
            Arc::new(MappedImage::open(dev.image_path(), &ttprof::inputs::Inputs::none()).unwrap());
        let settings = Settings {
            recording: true,
            policy: Policy::Block,
            consumer,
        };
        launch::init_tile(&*mem, 0, tile, Arch::WormholeB0, &settings).unwrap();
        for (i, v) in [DENSE, ITERATIONS, 2].into_iter().enumerate() {
            mem.write_u32(0, tile, example_abi::ARGS + 4 * i as u32, v)
                .unwrap();
        }
        let elf = bench_elf();
        dev.load_kernel(
            0,
            tile,
            Risc::Brisc,
            &std::fs::read(elf).unwrap(),
            &elf.display().to_string(),
        )
        .unwrap();
        (dev, mem, tile)
    }

    fn card(image: Arc<MappedImage>, tile: NocCoord) -> TtKmd<FakeDriver> {
        let driver = FakeDriver::new(FakeCard::new(Arch::WormholeB0, image));
        TtKmd::open_with(
            driver,
            Some(0),
            &only(&[tile]),
            &ttprof::inputs::Inputs::none(),
        )
        .unwrap()
    }

    /// Streams the run through `memory` (drains every 200k cycles while it runs).
    fn stream(mut dev: ttprof_emu::Device, memory: &dyn DeviceMemory) -> Readout {
        let mut drainer = Drainer::attach(
            memory,
            DrainOptions {
                consume: true,
                attach_consumer: true,
            },
        )
        .unwrap();
        let mut err = None;
        dev.run_with_hook(200_000, &mut |_| {
            if err.is_none() {
                err = drainer.drain().err();
            }
        })
        .unwrap();
        assert!(err.is_none(), "{err:?}");
        drainer.drain().unwrap();
        drainer.finish().unwrap()
    }

    fn records(r: &Readout) -> Vec<(String, ttprof::decode::Records)> {
        r.rings()
            .iter()
            .map(|ring| (format!("{:?}", ring.id), ring.records.clone()))
            .collect()
    }

    #[test]
    fn kmd_streaming_capture_through_the_card_backend_matches_the_image_backend() {
        let (dev, image, _) = device("stream-image", true);
        let by_image = stream(dev, &*image);
        let (dev, image, tile) = device("stream-kmd", true);
        let kmd = card(image, tile);
        let by_card = stream(dev, &kmd);
        let zones = by_card.zones();
        assert!(
            zones as u32 >= 2 * ITERATIONS,
            "{zones} zones: far more than one ring holds, drained while running"
        );
        assert!(
            by_card.rings()[0].stalls > 0,
            "the producer waited for this consumer"
        );
        assert_eq!(records(&by_card), records(&by_image), "identical records");
        assert_eq!(by_card.rings()[0].stalls, by_image.rings()[0].stalls);
        assert!(by_card.issues().is_empty(), "{:?}", by_card.issues());
        let pool = kmd.pool_stats();
        assert!(
            kmd.bytes_read() > 0 && (1..=ttkmd::DEFAULT_WINDOWS).contains(&pool.windows),
            "{pool:?}"
        );
    }

    #[test]
    fn kmd_whole_readout_through_the_card_backend_matches_the_image_backend() {
        // No consumer: the ring keeps what fitted; both backends read the same device.
        let (mut dev, image, tile) = device("readout", false);
        dev.run().unwrap();
        let kmd = card(image.clone(), tile);
        let (a, b) = (
            ttprof::readout::read(&*image, false).unwrap(),
            ttprof::readout::read(&kmd, false).unwrap(),
        );
        assert!(a.zones() > 100, "{} zones", a.zones());
        assert_eq!(records(&b), records(&a), "identical records");
        assert_eq!(b.rings()[0].dropped, a.rings()[0].dropped);
        assert_eq!(b.issues().len(), a.issues().len());
        assert_eq!(b.bus_bytes(), a.bus_bytes(), "the same words read");
    }

    /// Runs `dev`, polling a sampler of `cfg` through `kmd` every 1000 cycles: the sampler
    /// and the error that stopped its polling.
    fn sample(
        dev: &mut ttprof_emu::Device,
        kmd: &TtKmd<FakeDriver>,
        cfg: ttprof::lines::sample::SampleConfig,
    ) -> (ttprof::lines::sample::LiveSampler, Option<ttprof::Error>) {
        let mut sampler = ttprof::lines::sample::LiveSampler::new(cfg, kmd).unwrap();
        let mut err = None;
        dev.run_with_hook(1000, &mut |_| {
            if err.is_none() {
                err = sampler.poll(kmd).err();
            }
        })
        .unwrap();
        (sampler, err)
    }

    #[test]
    fn kmd_sampling_through_the_card_backend_writes_only_a_named_buffer_and_the_daisychain() {
        use ttprof::lines::sample::SampleConfig;
        use ttprof::oplog::{KernelBinding, OpLog, OpLogWriter, OpRecord};
        let cfg = SampleConfig::new(8);
        let bytes = cfg.buffer.count * 16;

        // Not named: the sampler's first arm (the buffer's marker) is refused, saying how.
        let (mut dev, image, tile) = device("sample-refused", false);
        let kmd = card(image, tile);
        let (_, err) = sample(&mut dev, &kmd, cfg);
        let e = err
            .expect("a write outside the consumer's words")
            .to_string();
        assert!(
            e.contains("refusing to write L1") && e.contains("--sample-buffer"),
            "{e}"
        );

        // Named: windows are armed through the card's register window, taken, and named
        // from the op log.
        let (mut dev, image, tile) = device("sample", false);
        launch::set_run_id(&*image, 0, tile, 1).unwrap();
        let kmd = card(image.clone(), tile);
        kmd.allow_l1_writes(cfg.buffer.addr, bytes).unwrap();
        let (mut sampler, err) = sample(&mut dev, &kmd, cfg);
        assert!(err.is_none(), "{err:?}");
        sampler.finish();
        let counts = sampler.counts();
        assert!(counts.windows > 10, "{counts:?}");
        assert_eq!(
            image.posted_state().refused,
            0,
            "every register write taken"
        );
        let log_path = workspace().join("target/test-kmd/sample/ops.jsonl");
        let mut w = OpLogWriter::create(&log_path, &ttprof::inputs::Inputs::none()).unwrap();
        w.op(&OpRecord::device_op(
            1,
            0,
            "Bench",
            (0, 1),
            vec![KernelBinding {
                risc: "BRISC".into(),
                elf: bench_elf().clone(),
                cores: vec![[tile.x, tile.y]],
            }],
        ))
        .unwrap();
        drop(w);
        let (profile, issues) =
            sampler.into_profile(&OpLog::read(&log_path, &ttprof::inputs::Inputs::none()).unwrap());
        assert!(issues.is_empty(), "{issues:?}");
        let (key, k) = profile.kernels.iter().next().expect("the bench kernel");
        assert_eq!((key.op.as_str(), key.risc), ("Bench", Risc::Brisc));
        assert!(k.samples > 100, "{} samples", k.samples);
    }
}
