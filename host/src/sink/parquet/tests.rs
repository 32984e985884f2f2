use super::*;
use crate::model::fixture;
use crate::profile::Profile;
use crate::sink::{self, Sink};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt32Type};
use arrow_array::Array;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::collections::BTreeMap;
use std::path::Path;

fn profile() -> Profile {
    fixture::profile_at(0, fixture::ARCH, true)
}

/// A view's zones, held whole (what [`tables::zones_batch`] takes).
fn held(v: &crate::profile::RingView) -> Vec<crate::timeline::Zone> {
    v.zones.iter().collect()
}

fn read(path: &Path) -> Vec<arrow_array::RecordBatch> {
    let f = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// Zones per name and their summed host durations, from the model itself.
fn expected(p: &Profile) -> BTreeMap<String, (u64, i64)> {
    let mut m: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for v in p.rings() {
        let c = v.clock.as_ref();
        for z in &v.zones {
            let e = m.entry(p.labels[z.site as usize].name.clone()).or_default();
            e.0 += 1;
            e.1 += tables::whole_ns(z.end_ns(c)) - tables::whole_ns(z.start_ns(c));
        }
    }
    m
}

fn per_name(batches: &[arrow_array::RecordBatch]) -> BTreeMap<String, (u64, i64)> {
    let mut m: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for b in batches {
        let names = b
            .column_by_name("name")
            .unwrap()
            .as_dictionary::<UInt32Type>();
        let values = names.values().as_string::<i32>();
        let dur = b
            .column_by_name("duration_ns")
            .unwrap()
            .as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            let e = m
                .entry(values.value(names.keys().value(i) as usize).to_string())
                .or_default();
            e.0 += 1;
            e.1 += dur.value(i);
        }
    }
    m
}

#[test]
fn the_three_tables_read_back_with_every_zone_mark_and_op() {
    let p = profile();
    let dir = crate::testing::temp_dir("parquet-files");
    let mut s = ParquetSink::new(&dir, &crate::inputs::Inputs::none());
    let done = sink::drive(&p, &mut [&mut s]).unwrap().pop().unwrap();
    assert_eq!(
        done.files,
        [
            dir.join(ZONES_FILE),
            dir.join(MARKS_FILE),
            dir.join(OPS_FILE)
        ]
    );
    assert_eq!(
        (s.written.zones, s.written.marks, s.written.ops),
        (120, 90, p.ops.len() as u64)
    );
    let zones = read(&dir.join(ZONES_FILE));
    assert_eq!(zones.iter().map(|b| b.num_rows()).sum::<usize>(), 120);
    assert_eq!(
        zones[0].schema(),
        zones_schema(true, &tables::counter_names(p.oplog.as_ref()))
    );
    assert_eq!(per_name(&zones), expected(&p));
    // A value zone's value is a column, null for plain zones.
    let mut values: Vec<(String, u32)> = Vec::new();
    for b in &zones {
        let names = b
            .column_by_name("name")
            .unwrap()
            .as_dictionary::<UInt32Type>();
        let strings = names.values().as_string::<i32>();
        let v = b
            .column_by_name("value")
            .unwrap()
            .as_primitive::<UInt32Type>();
        for i in 0..b.num_rows() {
            let name = strings.value(names.keys().value(i) as usize).to_string();
            assert_eq!(v.is_valid(i), name == "inner", "{name}");
            if v.is_valid(i) {
                values.push((name, v.value(i)));
            }
        }
    }
    let mut want: Vec<(String, u32)> = p
        .rings()
        .flat_map(|v| v.zones.iter().filter_map(|z| z.value).collect::<Vec<_>>())
        .map(|v| ("inner".to_string(), v))
        .collect();
    values.sort();
    want.sort();
    assert_eq!((values.len(), &values), (30, &want));
    let marks = read(&dir.join(MARKS_FILE));
    assert_eq!(marks.iter().map(|b| b.num_rows()).sum::<usize>(), 90);
    let kinds = marks[0]
        .column_by_name("kind")
        .unwrap()
        .as_dictionary::<UInt32Type>();
    assert!(kinds
        .values()
        .as_string::<i32>()
        .iter()
        .flatten()
        .eq(["event", "data", "sum"]));
    let ops = read(&dir.join(OPS_FILE));
    let names = ops[0].column_by_name("op").unwrap().as_string::<i32>();
    assert!(names
        .iter()
        .flatten()
        .eq(p.ops.iter().map(|o| o.name.as_str())));
    // Ops the op log timed have host times.
    assert_eq!(
        ops[0].column_by_name("host_start_ns").unwrap().null_count(),
        p.ops.iter().filter(|o| o.host_ns.is_none()).count()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_dataset_is_partitioned_by_host_and_chip_without_the_chip_column() {
    let p = profile();
    let dir = crate::testing::temp_dir("parquet-dataset");
    let (done, written) =
        write_dataset(&dir, "node-1", &p, &crate::inputs::Inputs::none()).unwrap();
    assert_eq!(written.zones, 120);
    let zones = dir.join("zones/host=node-1/chip=0/part-0.parquet");
    assert_eq!(done.files[0], zones);
    assert!(dir
        .join("marks/host=node-1/chip=0/part-0.parquet")
        .is_file());
    assert!(dir.join("ops/host=node-1/chip=0/part-0.parquet").is_file());
    let b = read(&zones);
    assert_eq!(
        b[0].schema(),
        zones_schema(false, &tables::counter_names(p.oplog.as_ref()))
    );
    assert!(b[0].column_by_name("chip").is_none());
    assert_eq!(per_name(&b), expected(&p));
    // A host name that is not one directory name is refused before anything is written.
    for bad in ["", "..", "a/b", "x=y", "tab\there"] {
        let e = write_dataset(&dir.join("bad"), bad, &p, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(e.contains("dataset host name"), "{bad:?}: {e}");
    }
    assert!(!dir.join("bad").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 41 (Deliver 1): every partition's tables were made when the drive began and
/// committed at its end, about 90 KB a chip held open at once (115 MB at 1,000 chips). A
/// partition is made at its first ring and committed after its last, so rings that come
/// chip by chip hold one open; rings that interleave hold the chips between a chip's first
/// and last ring.
#[test]
fn a_dataset_holds_open_only_the_partitions_whose_rings_are_coming() {
    use crate::decode::{RecordKind, Records};
    let (chips, rings_per_chip) = (5u32, 3usize);
    let mut r = fixture::readout();
    let template = r.rings[0].clone();
    r.rings.clear();
    for chip in 0..chips {
        for k in 0..rings_per_chip {
            let mut ring = template.clone();
            ring.id.chip = chip;
            ring.id.tile.x += k as u8;
            let mut rec = Records::new();
            for z in 0..10u64 {
                rec.push(RecordKind::Zone, 1, 100 + 10 * z, 105 + 10 * z, 0, 0, 1);
            }
            ring.records = rec;
            r.rings.push(ring);
        }
    }
    let dir = crate::testing::temp_dir("parquet-dataset-open");
    let inputs = crate::inputs::Inputs::none();
    // On a timebase that knows every chip (a ring of a chip it does not know has no zones).
    let profile = |r: crate::readout::Readout| {
        let res = fixture::resolution(&r);
        let clock = crate::timebase::Timebase::nominal(fixture::ARCH, chips);
        Profile::resolved(r, res, None, clock)
    };
    let p = profile(r.clone());
    let mut s = ParquetSink::dataset(&dir.join("by-chip"), "h", &inputs);
    let done = sink::drive(&p, &mut [&mut s]).unwrap().pop().unwrap();
    assert_eq!(s.most_open, 1, "rings chip by chip hold one partition open");
    assert_eq!(s.written.zones, u64::from(chips) * 30);
    for chip in 0..chips {
        let zones = dir.join(format!("by-chip/zones/host=h/chip={chip}/part-0.parquet"));
        let rows: usize = read(&zones).iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, 30, "chip {chip}");
        for table in ["marks", "ops"] {
            let f = dir.join(format!("by-chip/{table}/host=h/chip={chip}/part-0.parquet"));
            assert!(done.files.contains(&f), "{f:?}");
        }
    }
    assert_eq!(done.files.len(), 3 * chips as usize);
    // Chip 0's last ring after chip 2's first: chip 0 stays open beside chip 1, then beside
    // chip 2 (chip 1 was committed after its last ring): two at once.
    let last = r.rings.remove(rings_per_chip - 1);
    r.rings.insert(2 * rings_per_chip + 1, last);
    let p = profile(r);
    let mut s = ParquetSink::dataset(&dir.join("interleaved"), "h", &inputs);
    sink::drive(&p, &mut [&mut s]).unwrap();
    assert_eq!(s.most_open, 2);
    let zones = dir.join("interleaved/zones/host=h/chip=0/part-0.parquet");
    assert_eq!(read(&zones).iter().map(|b| b.num_rows()).sum::<usize>(), 30);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_drive_leaves_no_file() {
    let p = profile();
    let dir = crate::testing::temp_dir("parquet-fail");
    let mut s = ParquetSink::new(&dir, &crate::inputs::Inputs::none());
    s.begin(&p).unwrap();
    drop(s);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "uncommitted files are removed"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The fixture's profile with every ring's records replaced by random ones: zones that
/// nest, overlap, touch and share starts and ends, value zones, events, data, sums and
/// records of no site (`Run`, `Time`), of runs 1 to 3 and of no run, with known and unknown
/// sites; the last ring is on a chip the timebase does not know.
pub(crate) fn random_profile(seed: u64) -> Profile {
    use crate::decode::{RecordKind, Records, NO_RUN};
    let mut r = fixture::readout();
    let mut rng = crate::testing::Rng::new(seed);
    let n = r.rings.len();
    for (ri, ring) in r.rings.iter_mut().enumerate() {
        let mut rec = Records::new();
        let mut now = 100u64;
        for _ in 0..300 {
            now += rng.below(4);
            let kind = match rng.below(20) {
                0 => RecordKind::ValueZone,
                1 => RecordKind::Event,
                2 => RecordKind::Data,
                3 => RecordKind::Sum,
                4 => RecordKind::Run,
                5 => RecordKind::Time,
                _ => RecordKind::Zone,
            };
            let zone = kind.is_zone();
            let start = if zone {
                now - rng.below(now.min(30))
            } else {
                now
            };
            let run = match rng.below(5) {
                0 => NO_RUN,
                k => k as u32 % 4,
            };
            let site = rng.below(14) as u16;
            rec.push(
                kind,
                site,
                start,
                now,
                rng.next_u64() >> rng.below(64),
                rng.below(9) as u32,
                run,
            );
        }
        ring.records = rec;
        if ri == n - 1 {
            ring.id.chip = 7;
        }
    }
    fixture::profile_of(r, fixture::ARCH, true)
}

#[test]
fn direct_batches_equal_the_general_ones() {
    let mut rows = (0, 0);
    for p in [
        profile(),
        random_profile(1),
        random_profile(2),
        nested_profile(3),
    ] {
        let d = tables::Dictionaries::new(&p);
        for with_chip in [true, false] {
            let (zs, ms) = (
                zones_schema(with_chip, &tables::counter_names(p.oplog.as_ref())),
                marks_schema(with_chip),
            );
            for i in 0..p.ring_count() {
                let v = p.ring(i);
                let want_z =
                    tables::zones_batch(&zs, &d, &v.lane, &held(&v), v.clock.as_ref(), with_chip)
                        .unwrap();
                let want_m = tables::marks_batch(&ms, &d, &v.lane, &v.marks, with_chip).unwrap();
                // With the view's zones (their order taken) and without (made from the
                // records: `direct::opening_order`).
                for (view, how) in [(&v, "view's order"), (&p.ring_records(i), "own order")] {
                    let (z, m) = direct::ring_batches(&zs, &ms, &d, &p, view, with_chip).unwrap();
                    assert_eq!(z, want_z, "zones of ring {i}, {how}");
                    assert_eq!(m, want_m, "marks of ring {i}, {how}");
                    rows.0 += z.num_rows();
                    rows.1 += m.num_rows();
                }
            }
        }
    }
    // Every kind of row was compared (and the unplaced ring's empty batches).
    assert!(rows.0 > 10_000 && rows.1 > 2_000, "{rows:?}");
}

/// The fixture's profile with every ring's records replaced by zones that nest, as a
/// runtime's do (each closes after every zone opened inside it), in closing order: zones
/// that share starts or ends, empty zones, value zones, and events between them.
pub(crate) fn nested_profile(seed: u64) -> Profile {
    use crate::decode::{RecordKind, Records};
    let mut r = fixture::readout();
    let mut rng = crate::testing::Rng::new(seed);
    for ring in r.rings.iter_mut() {
        let mut rec = Records::new();
        let mut now = 1_000u64;
        let mut open: Vec<u64> = Vec::new();
        while rec.len() < 400 {
            // Mostly forward; an eighth of the steps at the same cycle (shared starts
            // and ends, empty zones).
            now += if rng.below(8) == 0 {
                0
            } else {
                1 + rng.below(3)
            };
            let site = rng.below(14) as u16;
            match rng.below(10) {
                0..=3 if open.len() < 12 => open.push(now),
                0..=6 => {
                    if let Some(start) = open.pop() {
                        let kind = if rng.below(8) == 0 {
                            RecordKind::ValueZone
                        } else {
                            RecordKind::Zone
                        };
                        rec.push(kind, site, start, now, rng.below(99), 0, 1);
                    }
                }
                7 => rec.push(RecordKind::Event, site, now, now, 0, 0, 1),
                _ => {}
            }
        }
        ring.records = rec;
    }
    fixture::profile_of(r, fixture::ARCH, true)
}

#[test]
fn nested_zones_are_ordered_in_one_pass_and_the_rest_by_the_sort() {
    let zones = |r: &crate::decode::Records| -> Vec<u32> {
        (0..r.len() as u32)
            .filter(|&i| r.kind[i as usize].is_zone())
            .collect()
    };
    let mut one_pass = 0;
    for seed in 0..8 {
        let p = nested_profile(seed);
        for ring in &p.readout.rings {
            let rows = zones(&ring.records);
            let want = direct::sorted_order(&ring.records, &rows);
            // An empty zone at its parent's end with a sibling opening at that cycle
            // opens, by the key, after the sibling: the one pass gives up there.
            if let Some(got) = direct::nested_order(&ring.records, &rows) {
                assert_eq!(got, want);
                one_pass += 1;
            }
        }
    }
    // Zones that overlap without nesting: the one pass gives up, the sort answers.
    let mut refused = 0;
    for seed in 1..4 {
        let p = random_profile(seed);
        for ring in &p.readout.rings {
            let r = &ring.records;
            let rows = zones(r);
            let want = direct::sorted_order(r, &rows);
            match direct::nested_order(r, &rows) {
                Some(got) => assert_eq!(got, want),
                None => refused += 1,
            }
            let all = (0..r.len()).filter(|&i| r.kind[i].is_zone());
            assert_eq!(direct::opening_order(r, all), want);
        }
    }
    assert!(one_pass >= 8 && refused > 0, "{one_pass} {refused}");
}

#[test]
fn whole_ns_rounds_half_away_from_zero_like_f64_round() {
    let two52 = (1u64 << 52) as f64;
    let mut values = vec![
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        0.49999999999999994,
        -0.49999999999999994,
        two52 - 0.5,
        -(two52 - 0.5),
        two52,
        two52 + 1.0,
        -two52,
        2.0 * two52 + 2.0,
        9.3e18,
        1e300,
        -1e300,
    ];
    let mut rng = crate::testing::Rng::new(26);
    for _ in 0..100_000 {
        let scale = (1u64 << rng.below(60)) as f64;
        let v = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * scale;
        values.push(v);
        values.push(-v);
        values.push(v.floor() + 0.5);
    }
    for v in values {
        assert_eq!(tables::whole_ns(v), v.round() as i64, "{v:e}");
    }
    for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(tables::whole_ns(v), 0);
    }
}

/// Every cell of `batches` as text, row by row (dictionary strings by their value).
fn cells(batches: &[arrow_array::RecordBatch]) -> Vec<Vec<String>> {
    use arrow_array::types::{UInt16Type, UInt64Type};
    use arrow_schema::DataType;
    let text = |c: &dyn Array, i: usize| -> String {
        if c.is_null(i) {
            return "null".into();
        }
        match c.data_type() {
            DataType::Dictionary(..) => {
                let d = c.as_dictionary::<UInt32Type>();
                let k = d.keys().value(i) as usize;
                d.values().as_string::<i32>().value(k).to_string()
            }
            DataType::UInt16 => c.as_primitive::<UInt16Type>().value(i).to_string(),
            DataType::UInt32 => c.as_primitive::<UInt32Type>().value(i).to_string(),
            DataType::UInt64 => c.as_primitive::<UInt64Type>().value(i).to_string(),
            DataType::Int64 => c.as_primitive::<Int64Type>().value(i).to_string(),
            t => panic!("unexpected column type {t}"),
        }
    };
    let mut rows = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            rows.push(b.columns().iter().map(|c| text(c.as_ref(), i)).collect());
        }
    }
    rows
}

#[test]
fn every_cell_reads_back_as_the_model_s_zones_and_marks_give_it() {
    for p in [profile(), nested_profile(7), random_profile(8)] {
        let dir = crate::testing::temp_dir("parquet-cells");
        let mut s = ParquetSink::new(&dir, &crate::inputs::Inputs::none());
        sink::drive(&p, &mut [&mut s]).unwrap();
        let d = tables::Dictionaries::new(&p);
        let (zs, ms) = (
            zones_schema(true, &tables::counter_names(p.oplog.as_ref())),
            marks_schema(true),
        );
        let (mut want_z, mut want_m) = (Vec::new(), Vec::new());
        for v in p.rings() {
            want_z.push(
                tables::zones_batch(&zs, &d, &v.lane, &held(&v), v.clock.as_ref(), true).unwrap(),
            );
            want_m.push(tables::marks_batch(&ms, &d, &v.lane, &v.marks, true).unwrap());
        }
        let (zones, marks) = (read(&dir.join(ZONES_FILE)), read(&dir.join(MARKS_FILE)));
        assert_eq!(zones[0].schema(), zs);
        assert_eq!(marks[0].schema(), ms);
        let want = cells(&want_z);
        assert!(want.len() >= 120, "{}", want.len());
        assert_eq!(cells(&zones), want);
        assert_eq!(cells(&marks), cells(&want_m));
        // The zone's end in host ns, which has no column of its own, is `start_ns +
        // duration_ns`, exactly the model's end rounded.
        let column = |b: &arrow_array::RecordBatch, c: &str| {
            b.column_by_name(c)
                .unwrap()
                .as_primitive::<Int64Type>()
                .values()
                .to_vec()
        };
        let ends: Vec<i64> = zones
            .iter()
            .flat_map(|b| {
                let (s, d) = (column(b, "start_ns"), column(b, "duration_ns"));
                s.into_iter().zip(d).map(|(s, d)| s + d).collect::<Vec<_>>()
            })
            .collect();
        let want_ends: Vec<i64> = p
            .rings()
            .flat_map(|v| {
                let c = v.clock;
                held(&v)
                    .into_iter()
                    .map(move |z| tables::whole_ns(z.end_ns(c.as_ref())))
            })
            .collect();
        assert_eq!(ends, want_ends);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Issue 41 (Medium): `start_ns`, `duration_ns`, a mark's `ns` and the ops' device times
/// were `f64` ns rounded, a ns or more off from 2^53 ns on (at 2^62 cycles by up to a
/// thousand): on a chip up for months every one is the exact whole ns of its count.
#[test]
fn host_ns_columns_stay_exact_at_large_cycle_counts() {
    use arrow_array::types::UInt64Type;
    use riscv_linker::Arch;
    let offset = (1u64 << 62) + 7;
    for arch in [Arch::WormholeB0, Arch::Blackhole] {
        let p = fixture::profile_at(offset, arch, true);
        let dir = crate::testing::temp_dir("parquet-large-counts");
        let mut s = ParquetSink::new(&dir, &crate::inputs::Inputs::none());
        sink::drive(&p, &mut [&mut s]).unwrap();
        // The nearest whole ns of `c` cycles at `mhz`, in integers.
        let ns = |c: u64| fixture::whole_ns(arch, c) as i64;
        let u64s = |b: &arrow_array::RecordBatch, c: &str| {
            let col = b.column_by_name(c).unwrap();
            col.as_primitive::<UInt64Type>().values().to_vec()
        };
        let i64s = |b: &arrow_array::RecordBatch, c: &str| {
            let col = b.column_by_name(c).unwrap();
            col.as_primitive::<Int64Type>().values().to_vec()
        };
        let zones = read(&dir.join(ZONES_FILE));
        assert!(zones.iter().map(|b| b.num_rows()).sum::<usize>() > 100);
        for b in &zones {
            let (start, end) = (u64s(b, "start_cycles"), u64s(b, "end_cycles"));
            let want: Vec<i64> = start.iter().map(|&c| ns(c)).collect();
            assert_eq!(i64s(b, "start_ns"), want, "{arch:?}");
            let want: Vec<i64> = start
                .iter()
                .zip(&end)
                .map(|(&s, &e)| ns(e) - ns(s))
                .collect();
            assert_eq!(i64s(b, "duration_ns"), want, "{arch:?}");
        }
        for b in &read(&dir.join(MARKS_FILE)) {
            let want: Vec<i64> = u64s(b, "cycles").iter().map(|&c| ns(c)).collect();
            assert_eq!(i64s(b, "ns"), want, "{arch:?}");
        }
        let ops = read(&dir.join(OPS_FILE));
        let got: Vec<i64> = [
            "kernel_start_ns",
            "kernel_end_ns",
            "fw_start_ns",
            "fw_end_ns",
        ]
        .iter()
        .flat_map(|c| ops.iter().flat_map(|b| i64s(b, c)))
        .collect();
        let dev = |o: &crate::timeline::OpSpan| &p.device_ops.by_run[&(o.chip, o.run)];
        let want: Vec<i64> = [
            |d: &crate::ops::DeviceTimes| d.kernel.unwrap().start.cycles,
            |d: &crate::ops::DeviceTimes| d.kernel.unwrap().end.cycles,
            |d: &crate::ops::DeviceTimes| d.fw.unwrap().start.cycles,
            |d: &crate::ops::DeviceTimes| d.fw.unwrap().end.cycles,
        ]
        .iter()
        .flat_map(|f| p.ops.iter().map(|o| ns(f(dev(o)))))
        .collect();
        assert_eq!(got, want, "{arch:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Issue 41 (Deliver 1): a ring's row group closed only after the ring's last batch, so its
/// open row group (the encoded columns and the string columns' keys, ~21 bytes a zone of
/// those alone) grew with the longest ring. A long ring now spans row groups of at most
/// twice `ROW_GROUP_ROWS` rows (the batch that fills one and what smaller rings left in it),
/// and every row reads back as before.
#[test]
fn a_long_ring_spans_bounded_row_groups_and_reads_back_whole() {
    use crate::decode::{RecordKind, Records};
    let mut r = fixture::readout();
    let long = 2 * ROW_GROUP_ROWS + 12_345;
    let mut rec = Records::new();
    for k in 0..long as u64 {
        rec.push(
            RecordKind::Zone,
            (k % 5) as u16,
            100 + 10 * k,
            105 + 10 * k,
            0,
            0,
            1,
        );
    }
    r.rings[1].records = rec;
    let p = fixture::profile_of(r, fixture::ARCH, true);
    let dir = crate::testing::temp_dir("parquet-long-ring");
    let mut s = ParquetSink::new(&dir, &crate::inputs::Inputs::none());
    sink::drive(&p, &mut [&mut s]).unwrap();
    let f = std::fs::File::open(dir.join(ZONES_FILE)).unwrap();
    let meta = ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .metadata()
        .clone();
    let groups: Vec<i64> = meta.row_groups().iter().map(|g| g.num_rows()).collect();
    let total: i64 = groups.iter().sum();
    assert!(total > long as i64, "{groups:?}");
    assert!(groups.len() >= 3, "{groups:?}");
    assert!(
        groups.iter().all(|&n| n <= 2 * ROW_GROUP_ROWS as i64),
        "{groups:?}"
    );
    let d = tables::Dictionaries::new(&p);
    let zs = zones_schema(true, &tables::counter_names(p.oplog.as_ref()));
    let want: Vec<_> = p
        .rings()
        .map(|v| tables::zones_batch(&zs, &d, &v.lane, &held(&v), v.clock.as_ref(), true).unwrap())
        .collect();
    assert_eq!(cells(&read(&dir.join(ZONES_FILE))), cells(&want));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The fixture with, on its first ring, a zone that overlaps the zone it opens in (it
/// starts inside the first KERNEL zone and ends after the FW zone around it: a corrupt
/// record) and two events at one cycle (equal keys in opening order), then one event
/// after the last zone.
pub(crate) fn overlapping_profile() -> Profile {
    use crate::decode::RecordKind;
    let mut r = fixture::readout();
    let x = fixture::times(fixture::OPS[0].0, 0, riscv_linker::Risc::Brisc);
    let rec = &mut r.rings[0].records;
    rec.push(
        RecordKind::Zone,
        fixture::site::WORK,
        x.kernel.0 + 1,
        x.fw.1 + 50,
        0,
        0,
        fixture::OPS[0].0,
    );
    for site in [fixture::site::BARRIER, fixture::site::WAIT] {
        rec.push(
            RecordKind::Event,
            site,
            x.kernel.0 + 2,
            x.kernel.0 + 2,
            0,
            0,
            fixture::OPS[0].0,
        );
    }
    rec.push(
        RecordKind::Event,
        fixture::site::BARRIER,
        x.fw.1 + 900,
        x.fw.1 + 900,
        0,
        0,
        fixture::OPS[0].0,
    );
    fixture::profile_of(r, fixture::ARCH, true)
}

/// Counts the views it is given that are not whole rings (so a test knows the rings came
/// in pieces).
#[derive(Default)]
struct Pieces(usize);

impl Sink for Pieces {
    fn ring(&mut self, _: &Profile, v: &crate::profile::RingView) -> crate::Result<()> {
        self.0 += (v.part() != crate::sink::Part::WHOLE) as usize;
        Ok(())
    }

    fn takes_pieces(&self) -> bool {
        true
    }

    fn finish(&mut self, _: &Profile) -> crate::Result<crate::sink::Finished> {
        Ok(Default::default())
    }
}

/// Issue 41: a ring given in pieces (any window, any piece size) writes the files the whole
/// ring writes, byte for byte: the per-run tables and the dataset, on the fixture, on a
/// ring with a zone that overlaps its parent and marks with equal keys, on rings of deep
/// nesting whose zones hold many records (cut mid-zone: depths carried) and on random
/// records (zones that overlap, every kind, two chips).
#[test]
fn rings_in_pieces_write_the_files_whole_rings_do() {
    use crate::ring_source::{Cut, Held, RingSource};
    let profiles = [
        ("fixture", profile()),
        ("overlapping", overlapping_profile()),
        ("nested", nested_profile(5)),
        ("random", random_profile(6)),
    ];
    for (name, p) in profiles {
        let write = |rings: &mut dyn RingSource, dataset: bool, tag: &str| {
            let dir = crate::testing::temp_dir(&format!("parquet-pieces-{name}-{tag}"));
            let mut s = if dataset {
                ParquetSink::dataset(&dir, "h", &crate::inputs::Inputs::none())
            } else {
                ParquetSink::new(&dir, &crate::inputs::Inputs::none())
            };
            assert!(s.takes_pieces());
            let mut pieces = Pieces::default();
            sink::drive_rings(&p, rings, &mut [&mut s, &mut pieces]).unwrap();
            let files = crate::testing::files_under(&dir);
            std::fs::remove_dir_all(&dir).unwrap();
            assert!(files.len() >= 3, "{name} {tag}: zones, marks, ops");
            (files, s.written.zones, s.written.marks, pieces.0)
        };
        for dataset in [false, true] {
            let whole = write(&mut Held(&p), dataset, "whole");
            assert!(whole.1 > 0 && whole.2 > 0, "{name}");
            assert_eq!(whole.3, 0);
            for window in [1, 2, 5, 64] {
                for piece in [1, 3, 7, 1_000] {
                    let tag = format!("{dataset}-{window}-{piece}");
                    let cut = write(
                        &mut Cut {
                            profile: &p,
                            window,
                            piece,
                        },
                        dataset,
                        &tag,
                    );
                    assert_eq!(
                        cut.0.keys().collect::<Vec<_>>(),
                        whole.0.keys().collect::<Vec<_>>(),
                        "{name} {tag}"
                    );
                    for (path, bytes) in &whole.0 {
                        assert!(
                            &cut.0[path] == bytes,
                            "{name} {tag}: {} differs",
                            path.display()
                        );
                    }
                    assert_eq!((cut.1, cut.2), (whole.1, whole.2), "{name} {tag}");
                    assert!(cut.3 >= 2 * p.ring_count(), "{name} {tag}: given in pieces");
                }
            }
        }
    }
}
