use super::*;
use crate::profile::Profile;
use crate::report::fixture;
use crate::sink::{self, Sink};
use crate::timebase::Timebase;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt32Type};
use arrow_array::Array;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::collections::BTreeMap;
use std::path::Path;

fn profile() -> Profile {
    let r = fixture::readout();
    let res = fixture::resolution(&r);
    Profile::resolved(
        r,
        res,
        Some(fixture::oplog()),
        Timebase::nominal(fixture::ARCH, 1),
    )
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
        for z in &v.zones {
            let e = m.entry(p.labels[z.site as usize].name.clone()).or_default();
            e.0 += 1;
            e.1 += tables::whole_ns(z.end_ns) - tables::whole_ns(z.start_ns);
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
    let mut s = ParquetSink::new(&dir);
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
    assert_eq!(zones[0].schema(), zones_schema(true));
    assert_eq!(per_name(&zones), expected(&p));
    // A value zone's value is a column, null for plain zones (issue 25).
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
        .flat_map(|v| v.zones.into_iter().filter_map(|z| z.value))
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
    let (done, written) = write_dataset(&dir, "node-1", &p).unwrap();
    assert_eq!(written.zones, 120);
    let zones = dir.join("zones/host=node-1/chip=0/part-0.parquet");
    assert_eq!(done.files[0], zones);
    assert!(dir
        .join("marks/host=node-1/chip=0/part-0.parquet")
        .is_file());
    assert!(dir.join("ops/host=node-1/chip=0/part-0.parquet").is_file());
    let b = read(&zones);
    assert_eq!(b[0].schema(), zones_schema(false));
    assert!(b[0].column_by_name("chip").is_none());
    assert_eq!(per_name(&b), expected(&p));
    // A host name that is not one directory name is refused before anything is written.
    for bad in ["", "..", "a/b", "x=y", "tab\there"] {
        let e = write_dataset(&dir.join("bad"), bad, &p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("dataset host name"), "{bad:?}: {e}");
    }
    assert!(!dir.join("bad").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_drive_leaves_no_file() {
    let p = profile();
    let dir = crate::testing::temp_dir("parquet-fail");
    let mut s = ParquetSink::new(&dir);
    s.begin(&p).unwrap();
    drop(s);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "uncommitted files are removed"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
