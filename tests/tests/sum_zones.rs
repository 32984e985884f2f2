//! Sum zones end to end, off the demo's path: a kernel whose sum zones are not its first
//! site (`examples/kernels/src/bin/sums.rs`), run through a `Session` on two tiles, twice.
//! Every output must name each sum zone right and carry its exact measurement count, with
//! its total in the right column and within bounds of the work it measured.

use riscv_linker::{Arch, Risc};
use std::collections::BTreeMap;
use ttprof::decode::RecordKind;
use ttprof::session::{Config, L1Input, Op, Session};
use ttprof_tests::{build_kernels, workspace};

/// Loop iterations per launch (the kernel's argument).
const N: u64 = 5;
const LAUNCHES: u64 = 2;
const TILES: u64 = 2;

/// Per launch and core: (name, measurements, loop steps per measurement).
const SUMS: [(&str, u64, u64); 3] = [
    ("spin-100", N, 100),
    ("spin-10", 3 * N, 10),
    ("spin-even", N.div_ceil(2), 50),
];

/// A total is at least one cycle per loop step and at most a generous 20 cycles per step
/// plus the measurement's own cost.
fn total_in_bounds(name: &str, count: u64, steps: u64, total: u64) {
    let (lo, hi) = (count * steps, count * (steps * 20 + 100));
    assert!(
        (lo..=hi).contains(&total),
        "{name}: total {total} cycles over {count} measurements of {steps} steps, expected {lo}..={hi}"
    );
}

#[test]
fn sum_zones_off_the_first_site_are_named_and_counted_in_every_output() {
    let arch = Arch::WormholeB0;
    let out = workspace().join("target/test-sum-zones");
    let _ = std::fs::remove_dir_all(&out);
    let built = build_kernels(&workspace().join("examples/kernels"), arch, false, &[]);
    let elf = built.elf("sums").unwrap();

    // The kernel's first site is a data site, not a sum zone (the demo hid the defect).
    let k = ttprof::elf::KernelElf::load(elf, &ttprof::inputs::Inputs::none()).unwrap();
    let first = k.sites.iter().min_by_key(|(id, _)| *id).unwrap().1;
    assert_eq!((first.kind.name(), first.name.as_str()), ("data", "acc"));

    let mut s = Session::start(Config::new(arch, (2, 1), &out)).unwrap();
    let op = Op::new("sums")
        .kernel(Risc::Brisc, elf)
        .l1(L1Input::word(example_abi::ARGS, N as u32));
    for _ in 0..LAUNCHES {
        s.launch(&op).unwrap();
    }
    let p = s.finish().unwrap();
    let issues: Vec<String> = p.issues().map(|i| i.to_string()).collect();
    assert!(!p.has_errors(), "{issues:#?}");
    assert!(
        p.resolution.issues.is_empty(),
        "no record of the wrong kind for its site: {:#?}",
        p.resolution.issues
    );

    // The records themselves: one Sum per (launch, core, name), count and total in place.
    let mut records: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for (ri, ring) in p.readout.rings().iter().enumerate() {
        let r = &ring.records;
        for i in (0..r.len()).filter(|&i| r.kind()[i] == RecordKind::Sum) {
            let name = p
                .resolution
                .site(ri, r.run_at(i), r.site()[i])
                .unwrap()
                .name
                .clone();
            records
                .entry(name)
                .or_default()
                .push((r.count_at(i) as u64, r.value_at(i)));
        }
    }
    assert_eq!(
        records.keys().collect::<Vec<_>>(),
        ["spin-10", "spin-100", "spin-even"]
    );
    for (name, count, steps) in SUMS {
        let got = &records[name];
        assert_eq!(
            got.len() as u64,
            LAUNCHES * TILES,
            "{name}: one record per launch and core"
        );
        for &(c, total) in got {
            assert_eq!(c, count, "{name}: measurements per launch");
            total_in_bounds(name, c, steps, total);
        }
    }

    // profile_log_device.csv: ZONE_TOTAL rows under the right name, the total in `data`, the
    // count in the meta data; the data site's value exact.
    let csv = std::fs::read_to_string(out.join("profile_log_device.csv")).unwrap();
    let mut csv_sums: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    let mut acc = Vec::new();
    for line in csv.lines().skip(2) {
        let f: Vec<&str> = line.splitn(15, ',').collect();
        match f[11] {
            "ZONE_TOTAL" => {
                let count: u64 = f[14]
                    .trim_start_matches("{\"count\": ")
                    .trim_end_matches('}')
                    .parse()
                    .unwrap();
                csv_sums
                    .entry(f[10].to_string())
                    .or_default()
                    .push((count, f[6].parse().unwrap()));
            }
            "TS_DATA" => acc.push((f[10].to_string(), f[6].parse::<u64>().unwrap())),
            _ => {}
        }
    }
    let sorted = |m: &BTreeMap<String, Vec<(u64, u64)>>| {
        m.iter()
            .map(|(k, v)| {
                (k.clone(), {
                    let mut v = v.clone();
                    v.sort();
                    v
                })
            })
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(
        sorted(&csv_sums),
        sorted(&records),
        "the CSV holds exactly the sum records"
    );
    assert_eq!(
        acc,
        vec![("acc".to_string(), N * 1000 + 7); (LAUNCHES * TILES) as usize]
    );

    // ttprof_trace.json: an instant per sum record with total_cycles and count as arguments.
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("ttprof_trace.json")).unwrap()).unwrap();
    let mut json_sums: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for e in trace["traceEvents"].as_array().unwrap() {
        if e["args"]["total_cycles"].is_u64() {
            let (count, total) = (
                e["args"]["count"].as_u64().unwrap(),
                e["args"]["total_cycles"].as_u64().unwrap(),
            );
            json_sums
                .entry(e["name"].as_str().unwrap().to_string())
                .or_default()
                .push((count, total));
        }
    }
    assert_eq!(
        sorted(&json_sums),
        sorted(&records),
        "the trace JSON holds exactly the sum records"
    );

    // ttprof_timeline.html: the page's embedded marks, kind 2 = sum zone (total, count).
    let html = std::fs::read_to_string(out.join("ttprof_timeline.html")).unwrap();
    let data = html
        .split("id=\"ttprof-data\">")
        .nth(1)
        .unwrap()
        .split("</script>")
        .next()
        .unwrap();
    let data: serde_json::Value = serde_json::from_str(data).unwrap();
    let sites = data["sites"].as_array().unwrap();
    let mut html_sums: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for m in data["marks"].as_array().unwrap().chunks(8) {
        if m[2] == 2 {
            let name = sites[m[1].as_u64().unwrap() as usize][0]
                .as_str()
                .unwrap()
                .to_string();
            html_sums
                .entry(name)
                .or_default()
                .push((m[7].as_u64().unwrap(), m[6].as_u64().unwrap()));
        }
    }
    assert_eq!(
        sorted(&html_sums),
        sorted(&records),
        "the HTML timeline holds exactly the sum records"
    );

    // The summary: a section per launch of the op ("sums #1", ...), one row per sum zone,
    // totals over that launch's records; over all sections, every record.
    let sections: Vec<_> = p
        .written
        .summary
        .ops
        .iter()
        .filter(|o| o.op == "sums" || o.op.starts_with("sums #"))
        .collect();
    assert_eq!(sections.len() as u64, LAUNCHES, "a section per launch");
    for (name, count, _) in SUMS {
        let (mut recs, mut n, mut total) = (0u64, 0u64, 0u128);
        for o in &sections {
            let r = o.sums.iter().find(|r| r.zone == name).unwrap();
            assert_eq!((r.records, r.count), (TILES, TILES * count), "{name}");
            (recs, n, total) = (recs + r.records, n + r.count, total + r.total_cycles);
        }
        let want: u128 = records[name].iter().map(|r| r.1 as u128).sum();
        assert_eq!(
            (recs, n, total),
            (LAUNCHES * TILES, LAUNCHES * TILES * count, want),
            "{name}"
        );
    }
    let text = std::fs::read_to_string(out.join("ttprof_summary.txt")).unwrap();
    for (name, count, _) in SUMS {
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_start().starts_with(&format!("{name} ")))
            .collect();
        assert_eq!(lines.len() as u64, LAUNCHES, "{name}: {text}");
        for line in lines {
            let cells: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(
                cells[1..3],
                [TILES.to_string(), (TILES * count).to_string()],
                "{line}"
            );
        }
    }

    // Tracy: one message per sum record, `name: count x, total cycles in all`.
    let stream = ttprof::tracy::TracyStream::build(
        &p.readout,
        &p.resolution,
        Some(&p.oplog),
        &p.fit.timebase,
        &Default::default(),
    )
    .unwrap();
    let server = ttprof::tracy::Server::bind(([127, 0, 0, 1], 0).into()).unwrap();
    let addr = server.local_addr();
    let opts = ttprof::tracy::ServeOptions {
        addr,
        ..Default::default()
    };
    let cap = std::thread::scope(|scope| {
        let h = scope.spawn(|| server.serve(&stream, &opts, |_| {}));
        let cap = ttprof::tracy::test_client::capture(addr, &Default::default()).unwrap();
        h.join().unwrap().unwrap();
        cap
    });
    assert!(cap.complete, "{:?}", cap.errors());
    let mut tracy_sums: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for m in &cap.decoded.messages {
        let Some((name, rest)) = m.text.split_once(": ") else {
            continue;
        };
        let Some((count, rest)) = rest.split_once(" x, ") else {
            continue;
        };
        let total = rest.strip_suffix(" cycles in all").unwrap();
        tracy_sums
            .entry(name.to_string())
            .or_default()
            .push((count.parse().unwrap(), total.parse().unwrap()));
    }
    assert_eq!(
        sorted(&tracy_sums),
        sorted(&records),
        "Tracy's messages hold exactly the sum records"
    );
}

#[test]
fn a_kernel_whose_sum_table_names_another_site_is_refused_with_the_reason() {
    let arch = Arch::WormholeB0;
    let built = build_kernels(&workspace().join("examples/kernels"), arch, false, &[]);
    let elf = built.elf("sums").unwrap();
    let mut bytes = std::fs::read(elf).unwrap();
    // Point the first sum-zone table entry at the `acc` data site, as the miscompiled
    // runtime did (its site word is the entry's first 4 bytes, `ttprof_rt::SumZone`).
    use object::{Object, ObjectSection, ObjectSymbol};
    let (offset, acc) = {
        let file = object::File::parse(&*bytes).unwrap();
        let start = file
            .symbols()
            .find(|s| s.name() == Ok("__ttprof_sums_start"))
            .unwrap()
            .address();
        let section = file
            .sections()
            .find(|s| s.address() <= start && start < s.address() + s.size())
            .unwrap();
        let offset = section.file_range().unwrap().0 + (start - section.address());
        let k = ttprof::elf::KernelElf::parse(elf, &bytes).unwrap();
        (offset as usize, k.sites.find("acc").unwrap())
    };
    bytes[offset..offset + 4].copy_from_slice(&(acc as u32).to_le_bytes());
    let e = ttprof::elf::KernelElf::parse(elf, &bytes)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("sum zone 0")
            && e.contains("the data site \"acc\"")
            && e.contains("rebuild the kernel"),
        "{e}"
    );
}

#[test]
fn a_kernel_stripped_by_gnu_strip_keeps_its_sites() {
    // GNU strip --strip-debug adds a section symbol to .ttprof_sites: it is not a site.
    let built = build_kernels(
        &workspace().join("examples/kernels"),
        Arch::WormholeB0,
        false,
        &[],
    );
    let elf = built.elf("sums").unwrap();
    let stripped = workspace().join("target/test-sum-zones-stripped");
    std::fs::copy(elf, &stripped).unwrap();
    match std::process::Command::new("riscv64-unknown-elf-strip")
        .arg("--strip-debug")
        .arg(&stripped)
        .status()
    {
        Ok(s) => assert!(s.success()),
        Err(_) => {
            eprintln!("SKIPPED: riscv64-unknown-elf-strip is not installed (scripts/install-test-tools.sh installs it)");
            return;
        }
    }
    let (a, b) = (
        ttprof::elf::KernelElf::load(elf, &ttprof::inputs::Inputs::none()).unwrap(),
        ttprof::elf::KernelElf::load(&stripped, &ttprof::inputs::Inputs::none()).unwrap(),
    );
    assert_eq!(a.sites, b.sites);
    assert!(a.sites.find("spin-10").is_some());
}
