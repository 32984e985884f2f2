use super::samples::positions;
use super::*;
use std::collections::HashMap;

fn side(exact: bool, zones: &[(&str, &[u64])]) -> Samples {
    let mut s = Samples {
        source: "test".into(),
        exact,
        ..Default::default()
    };
    for (z, c) in zones {
        s.zones.insert(
            ("op".into(), 1, z.to_string()),
            c.iter()
                .map(|&c| Sample {
                    cycles: c,
                    ns: c as f64,
                })
                .collect(),
        );
    }
    s
}

#[test]
fn stats_take_nearest_rank_percentiles() {
    let s: Vec<Sample> = (1..=100)
        .map(|c| Sample {
            cycles: c,
            ns: c as f64 * 2.0,
        })
        .collect();
    let st = SideStats::of(&s);
    assert_eq!(
        (st.count, st.total_cycles, st.p50_cycles, st.p99_cycles),
        (100, 5050, 50, 99)
    );
    assert_eq!((st.mean_cycles, st.p50_ns), (50.5, 100.0));
    assert_eq!(SideStats::of(&[]).count, 0);
}

#[test]
fn identical_exact_runs_have_no_change_and_a_doubled_zone_regresses() {
    let a = side(true, &[("loop", &[100, 100, 100]), ("other", &[5])]);
    let d = diff(&a, &a);
    assert!(d.unchanged() && d.regressions(0.0, FewSamples::Pass).is_empty());
    let b = side(true, &[("loop", &[200, 200, 200]), ("other", &[5])]);
    let d = diff(&a, &b);
    assert_eq!(d.rows[0].zone, "loop", "largest change first");
    assert_eq!(
        (d.rows[0].total_change_pct, d.rows[0].mean_change_pct),
        (100.0, 100.0)
    );
    let r = d.regressions(50.0, FewSamples::Pass);
    assert_eq!(r.len(), 1);
    assert!(regression_message(r[0], 50.0).contains("op / loop: total 300 -> 600 cycles (+100.0%)"));
    assert!(
        d.regressions(100.0, FewSamples::Pass).is_empty(),
        "exactly +100% is not above 100%"
    );
}

#[test]
fn noisy_runs_need_confidence() {
    // Overlapping samples with a slightly higher mean: not significant.
    let a = side(false, &[("z", &[100, 104, 98, 101, 99, 103])]);
    let b = side(false, &[("z", &[101, 105, 97, 102, 100, 104])]);
    let d = diff(&a, &b);
    assert!(
        !d.rows[0].real && !d.rows[0].too_few_samples,
        "{:?}",
        d.rows[0]
    );
    assert!(d.regressions(0.1, FewSamples::Fail).is_empty());
    // Every new sample above every base sample: p = 2/C(12,6) = 0.0022.
    let c = side(false, &[("z", &[200, 204, 198, 201, 199, 203])]);
    let d = diff(&a, &c);
    let conf = d.rows[0].confidence.unwrap();
    assert!((conf - (1.0 - 2.0 / 924.0)).abs() < 1e-9, "{conf}");
    assert_eq!(d.regressions(50.0, FewSamples::Pass).len(), 1);
}

/// Issue 25: on hardware runs a zone with 3 samples per side could never fail the gate
/// (the test's smallest p is 0.1) and was printed as no change.
#[test]
fn too_few_samples_are_said_and_the_gate_treats_them_as_asked() {
    assert!(
        !can_reach_confidence(3, 3) && !can_reach_confidence(3, 4) && !can_reach_confidence(1, 30)
    );
    assert!(can_reach_confidence(4, 4) && can_reach_confidence(3, 5) && can_reach_confidence(2, 8));
    assert!(can_reach_confidence(1000, 1000) && !can_reach_confidence(0, 10));
    let a = side(false, &[("z", &[100, 101, 102])]);
    let b = side(false, &[("z", &[200, 201, 202])]);
    let d = diff(&a, &b);
    let r = &d.rows[0];
    assert!(!r.real && r.too_few_samples, "{r:?}");
    assert!(
        (r.confidence.unwrap() - 0.9).abs() < 1e-9,
        "the best 3 against 3 can do"
    );
    assert!(!d.unchanged());
    let text = render(&d, false);
    assert!(!text.contains("no change"), "{text}");
    assert!(
        text.contains("(too few samples: 3 vs 3)")
            && text.contains("1 changed row(s) have too few samples"),
        "{text}"
    );
    // The gate: passed by default, failed when asked.
    assert!(d.regressions(50.0, FewSamples::Pass).is_empty());
    assert_eq!(d.unjudged_growth(50.0).len(), 1);
    let failed = d.regressions(50.0, FewSamples::Fail);
    assert_eq!(failed.len(), 1);
    assert!(regression_message(failed[0], 50.0).ends_with("(too few samples to tell: 3 vs 3)"));
    assert!(
        d.regressions(100.0, FewSamples::Fail).is_empty(),
        "+99% is not above 100%"
    );
    let json = to_json(&d, Some(50.0), FewSamples::Fail);
    assert_eq!(
        (
            json["too_few_samples"].as_str(),
            json["failed"].as_array().unwrap().len()
        ),
        (Some("fail"), 1)
    );
    assert_eq!(json["rows"][0]["too_few_samples"], true);
    // Identical samples are no change, whatever their number.
    let d = diff(&a, &a);
    assert!(d.unchanged() && !d.rows[0].too_few_samples);
    // Exact runs never have too few samples: every change is real.
    let d = diff(&side(true, &[("z", &[100])]), &side(true, &[("z", &[101])]));
    assert!(d.rows[0].real && !d.rows[0].too_few_samples);
}

/// Issue 25: sum zones were never compared (a 64% slower sum zone went unnoticed).
#[test]
fn sum_zones_are_compared() {
    let sums = |exact: bool, per_record: &[(u64, u32)]| {
        let mut s = side(exact, &[("loop", &[100, 100])]);
        let v = per_record
            .iter()
            .map(|&(t, c)| SumSample {
                total_cycles: t,
                count: c,
                ns: t as f64,
            })
            .collect();
        s.sums.insert(("op".into(), 1, "wait".into()), v);
        s
    };
    let a = sums(true, &[(1000, 10), (1000, 10)]);
    let b = sums(true, &[(1640, 10), (1640, 10)]);
    let d = diff(&a, &b);
    assert_eq!(d.rows.len(), 2);
    let r = &d.rows[0];
    assert_eq!(
        (r.zone.as_str(), r.kind, r.zone_label().as_str()),
        ("wait", RowKind::Sum, "wait (sum)")
    );
    assert_eq!(
        (
            r.base.count,
            r.base.samples,
            r.base.total_cycles,
            r.base.mean_cycles
        ),
        (20, 2, 2000, 100.0)
    );
    assert_eq!((r.new.total_cycles, r.new.p50_cycles), (3280, 164));
    assert!((r.total_change_pct - 64.0).abs() < 1e-9 && (r.mean_change_pct - 64.0).abs() < 1e-9);
    let failed = d.regressions(50.0, FewSamples::Pass);
    assert_eq!(failed.len(), 1);
    assert!(regression_message(failed[0], 50.0)
        .starts_with("op / wait (sum): total 2000 -> 3280 cycles (+64.0%)"));
    assert!(render(&d, false).contains("wait (sum)"));
    assert_eq!(
        to_json(&d, Some(50.0), FewSamples::Pass)["failed"][0]["kind"],
        "sum"
    );
    // Noisy runs: the test runs over each record's cycles per measurement.
    let a = sums(false, &(0..10).map(|i| (1000 + i, 10)).collect::<Vec<_>>());
    let b = sums(false, &(0..10).map(|i| (1640 + i, 10)).collect::<Vec<_>>());
    let d = diff(&a, &b);
    let r = d.rows.iter().find(|r| r.kind == RowKind::Sum).unwrap();
    assert!(r.real && r.confidence.unwrap() > 0.999, "{r:?}");
}

/// Issue 25: cycle totals were summed in u64 and wrapped silently.
#[test]
fn cycle_totals_do_not_wrap() {
    let half = 1u64 << 63;
    let s = SideStats::of(&[
        Sample {
            cycles: half,
            ns: 1.0,
        },
        Sample {
            cycles: half,
            ns: 1.0,
        },
        Sample { cycles: 5, ns: 1.0 },
    ]);
    assert_eq!(s.total_cycles, (1u128 << 64) + 5);
    let r = SideStats::of_sums(
        &[SumSample {
            total_cycles: u64::MAX,
            count: 1,
            ns: 0.0,
        }; 2],
    );
    assert_eq!(r.total_cycles, 2 * u64::MAX as u128);
    // JSON: a total above 2^64 - 1 is a string (a number would be rounded).
    let v = serde_json::to_value(s).unwrap();
    assert_eq!(v["total_cycles"], "18446744073709551621");
    assert_eq!(
        serde_json::to_value(SideStats::of(&[Sample { cycles: 7, ns: 7.0 }])).unwrap()
            ["total_cycles"],
        7
    );
    let a = side(true, &[("z", &[half, half])]);
    let b = side(true, &[("z", &[half, half, half])]);
    let d = diff(&a, &b);
    assert_eq!(d.rows[0].total_change_pct, 50.0);
    assert_eq!(
        to_json(&d, None, FewSamples::Pass)["rows"][0]["new"]["total_cycles"],
        (3u128 << 63).to_string()
    );
}

/// Distinct ops that share an op code (ttnn's add and multiply are both
/// `BinaryNgDeviceOperation`) were merged; they are matched by position and code.
#[test]
fn ops_that_share_an_op_code_are_matched_by_position() {
    let log = |ops: &[(u32, &str)]| -> HashMap<(u32, u32), (String, u32)> {
        positions(ops.iter().map(|&(run, code)| (0u32, run, code)))
    };
    let names = log(&[(1, "BinaryNg"), (2, "Matmul"), (3, "Relu"), (4, "BinaryNg")]);
    assert_eq!(names[&(0, 1)], ("BinaryNg".to_string(), 1));
    assert_eq!(names[&(0, 4)], ("BinaryNg".to_string(), 2));
    assert_eq!(names[&(0, 2)], ("Matmul".to_string(), 1));
    let run = |add: u64, mul: u64| {
        let mut s = Samples {
            exact: true,
            ..Default::default()
        };
        for (k, c) in [(1, add), (2, mul)] {
            s.zones.insert(
                ("BinaryNg".into(), k, "tile".into()),
                Durations::from_iter([Sample {
                    cycles: c,
                    ns: c as f64,
                }]),
            );
        }
        s.zones.insert(
            ("Matmul".into(), 1, "tile".into()),
            Durations::from_iter([Sample { cycles: 9, ns: 9.0 }]),
        );
        s
    };
    // Only the second BinaryNg op (mul) got slower: it alone regresses, by its own +50%.
    let d = diff(&run(100, 200), &run(100, 300));
    let changed: Vec<(&str, f64)> = d
        .rows
        .iter()
        .filter(|r| r.real)
        .map(|r| (r.op.as_str(), r.total_change_pct))
        .collect();
    assert_eq!(changed, [("BinaryNg #2", 50.0)]);
    assert_eq!(
        d.rows.iter().find(|r| r.op_code == "Matmul").unwrap().op,
        "Matmul",
        "a code that occurs once"
    );
    assert_eq!(d.ops.0, ["BinaryNg #1", "BinaryNg #2", "Matmul"]);
}

/// Issue 25: two runs with nothing in common were "compared" with 0 rows, and the gate
/// passed.
#[test]
fn nothing_matched_is_said() {
    let a = side(true, &[("x", &[1])]);
    let mut b = Samples {
        exact: false,
        ..Default::default()
    };
    b.zones.insert(
        ("run 1".into(), 1, "x".into()),
        Durations::from_iter([Sample { cycles: 1, ns: 1.0 }]),
    );
    let d = diff(&a, &b);
    let why = d.nothing_matched().unwrap();
    assert!(
        why.starts_with("nothing to compare: no op and zone is in both runs"),
        "{why}"
    );
    assert!(
        why.contains("base ops: op; new ops: run 1") && why.contains("new run's ops are unnamed"),
        "{why}"
    );
    assert!(render(&d, false).contains("nothing to compare"));
    assert_eq!(to_json(&d, Some(5.0), FewSamples::Pass)["matched"], 0);
    assert!(diff(&a, &a).nothing_matched().is_none());
    let empty = Samples::default();
    assert!(
        diff(&empty, &empty).nothing_matched().is_none(),
        "nothing on either side: nothing to say"
    );
}

#[test]
fn added_and_removed_zones_are_listed_apart() {
    let a = side(true, &[("x", &[1])]);
    let b = side(true, &[("y", &[1])]);
    let d = diff(&a, &b);
    assert!(d.rows.is_empty() && !d.unchanged());
    assert_eq!(
        (d.added[0].zone.as_str(), d.removed[0].zone.as_str()),
        ("y", "x")
    );
    let text = render(&d, false);
    assert!(
        text.contains("only in new: op / y") && text.contains("only in base: op / x"),
        "{text}"
    );
}

#[test]
fn a_device_log_pairs_zone_rows_and_names_ops() {
    let dir = crate::testing::temp_dir("diff-csv");
    let csv = dir.join(DEVICE_CSV);
    std::fs::write(
        &csv,
        "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 500, Max Compute Cores: 64\nPCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data\n\
         0,1,1,BRISC,1,100,0,3,,,outer,ZONE_START,1,a.rs,\n\
         0,1,1,BRISC,2,110,0,3,,,inner,ZONE_START,2,a.rs,\n\
         0,1,1,BRISC,2,130,0,3,,,inner,ZONE_END,2,a.rs,\n\
         0,1,1,BRISC,1,200,0,3,,,outer,ZONE_END,1,a.rs,\n\
         0,1,1,BRISC,1,300,0,4,,,outer,ZONE_END,1,a.rs,\n\
         0,1,1,BRISC,5,310,90,3,,,wait,ZONE_TOTAL,5,a.rs,{\"count\": 3}\n",
    )
    .unwrap();
    let names = HashMap::from([((0, 3), ("Matmul".to_string(), 1))]);
    let s = from_device_csv(&csv, &names, &crate::inputs::Inputs::none()).unwrap();
    let outer = &s.zones[&("Matmul".to_string(), 1, "outer".to_string())];
    assert_eq!(
        outer.kept(),
        [Sample {
            cycles: 100,
            ns: 200.0
        }]
    );
    assert_eq!(
        s.zones[&("Matmul".to_string(), 1, "inner".to_string())].kept()[0].cycles,
        20
    );
    assert_eq!(
        s.sums[&("Matmul".to_string(), 1, "wait".to_string())],
        [SumSample {
            total_cycles: 90,
            count: 3,
            ns: 180.0
        }]
    );
    assert_eq!(
        s.problems.len(),
        1,
        "the unmatched end is counted: {:?}",
        s.problems
    );
    // An end before its start: a problem, not a zone of 0 cycles.
    std::fs::write(
        &csv,
        "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 500, Max Compute Cores: 64\nPCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data\n\
         0,1,1,BRISC,1,100,0,3,,,outer,ZONE_START,1,a.rs,\n\
         0,1,1,BRISC,1,90,0,3,,,outer,ZONE_END,1,a.rs,\n",
    )
    .unwrap();
    let s = from_device_csv(&csv, &names, &crate::inputs::Inputs::none()).unwrap();
    assert!(s.zones.is_empty(), "{:?}", s.zones);
    assert!(
        s.problems.len() == 1 && s.problems[0].contains("1 zone(s) whose ZONE_END is earlier"),
        "{:?}",
        s.problems
    );
    for f in ["inf", "NaN", "-500", "0", "1e400", "4.9e-324"] {
        std::fs::write(
            &csv,
            format!("ARCH: wormhole_b0, CHIP_FREQ[MHz]: {f}, Max Compute Cores: 64\nPCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data\n"),
        )
        .unwrap();
        let e = from_device_csv(&csv, &names, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(csv.to_str().unwrap())
                && e.contains("line 1: CHIP_FREQ[MHz]: ")
                && e.contains("from 0.001 to 1000000"),
            "{f}: {e}"
        );
    }
    std::fs::write(&csv, "not a device log\n").unwrap();
    let e = from_device_csv(&csv, &names, &crate::inputs::Inputs::none())
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 1: expected `ARCH"), "{e}");
    let e = load(&dir.join("missing"), &crate::inputs::Inputs::none())
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing"), "{e}");
    std::fs::remove_file(&csv).unwrap();
    let e = load(&dir, &crate::inputs::Inputs::none())
        .unwrap_err()
        .to_string();
    assert!(e.contains("nothing to compare"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 41 (Low): means of cycles were printed through an `f64` (`{:.1}`), a cycle or more
/// off past 2^53 (2^64 - 1 showed as `...616.0`), and a sum record's mean rounded through
/// one; the zones' ns were differences of two `f64` host times, a ns or more off from 2^53
/// ns on.
#[test]
fn cycle_means_and_durations_stay_exact_at_large_counts() {
    let max = u64::MAX;
    let a = side(true, &[("loop", &[max - 2, max - 2])]);
    let b = side(true, &[("loop", &[max, max - 1])]);
    let d = diff(&a, &b);
    let text = render(&d, true);
    assert!(text.contains("18446744073709551614.5"), "{text}");
    assert!(
        regression_message(&d.rows[0], 0.0)
            .contains("mean 18446744073709551613.0 -> 18446744073709551614.5 cycles"),
        "{}",
        regression_message(&d.rows[0], 0.0)
    );
    let only = diff(&a, &side(true, &[]));
    assert!(
        render(&only, true).contains("mean 18446744073709551613.0"),
        "{}",
        render(&only, true)
    );
    let sums = SideStats::of_sums(&[SumSample {
        total_cycles: max - 1,
        count: 1,
        ns: (max - 1) as f64,
    }]);
    assert_eq!(sums.p50_cycles, max - 1);
    // Durations in ns do not depend on when the zones ran.
    use crate::model::fixture;
    for arch in [
        riscv_linker::Arch::WormholeB0,
        riscv_linker::Arch::Blackhole,
    ] {
        let at = |offset: u64| {
            let p = fixture::profile_at(offset, arch, true);
            let s = samples::from_profile(&p);
            let ns: Vec<Vec<f64>> = s
                .zones
                .values()
                .map(|v| v.kept().iter().map(|s| s.ns).collect())
                .collect();
            ns
        };
        let base = at(0);
        assert!(base.iter().flatten().count() > 100);
        for offset in [(1u64 << 53) + 3, (1 << 62) + 7] {
            for (got, want) in at(offset).iter().flatten().zip(base.iter().flatten()) {
                assert!(
                    (got - want).abs() < 1e-6,
                    "{arch:?} at {offset}: {got} vs {want}"
                );
            }
        }
    }
}

/// Issue 41: `diff` held every zone's duration (16 bytes each, more while a vector grew) and
/// ran out of 1 GiB comparing two runs of a 16 M-zone ring. Past [`KEPT`] zones a side keeps
/// a uniform sample: the count and totals stay exact, the sample is the same for the same
/// input, spread over every zone (not the first ones), and its percentiles near the true ones.
#[test]
fn durations_past_the_kept_limit_are_a_uniform_sample_with_exact_totals() {
    let n = 4 * KEPT as u64;
    let sample = |c: u64| Sample {
        cycles: c,
        ns: c as f64,
    };
    let d: Durations = (0..n).map(sample).collect();
    assert_eq!(d.count, n);
    assert_eq!(d.total_cycles, (n as u128) * (n as u128 - 1) / 2);
    assert_eq!(d.kept().len(), KEPT);
    assert!(d.is_sampled());
    assert_eq!(
        d,
        (0..n).map(sample).collect::<Durations>(),
        "deterministic"
    );
    // Every quarter of the input holds about a quarter of the sample.
    for q in 0..4 {
        let inside = d
            .kept()
            .iter()
            .filter(|s| s.cycles / KEPT as u64 == q)
            .count();
        let share = inside as f64 / KEPT as f64;
        assert!((share - 0.25).abs() < 0.01, "quarter {q}: {share}");
    }
    let st = SideStats::of_durations(&d);
    assert_eq!((st.count, st.samples), (n, KEPT as u64));
    assert_eq!(st.mean_cycles, (n - 1) as f64 / 2.0);
    let near = |got: u64, want: f64| (got as f64 - want).abs() < 0.01 * n as f64;
    assert!(near(st.p50_cycles, 0.5 * n as f64), "{st:?}");
    assert!(near(st.p99_cycles, 0.99 * n as f64), "{st:?}");
    // Up to the limit, every zone is kept.
    let small: Durations = (0..KEPT as u64).map(sample).collect();
    assert!(!small.is_sampled());
    assert_eq!(SideStats::of_durations(&small), SideStats::of(small.kept()));
}

/// Sampled sides still compare: the same input shows no change, a 10 % slower zone is a
/// real change, and the text says which rows were sampled.
#[test]
fn sampled_sides_compare_and_say_so() {
    let n = 2 * KEPT as u64;
    let side_of = |slower: u64| {
        let mut s = Samples {
            source: "test".into(),
            ..Default::default()
        };
        let d = (0..n)
            .map(|i| {
                let c = (1000 + i % 97) * slower / 100;
                Sample {
                    cycles: c,
                    ns: c as f64,
                }
            })
            .collect();
        s.zones.insert(("op".into(), 1, "zone".into()), d);
        s
    };
    let same = diff(&side_of(100), &side_of(100));
    assert!(same.rows.iter().all(|r| !r.real), "{:?}", same.rows);
    let slower = diff(&side_of(100), &side_of(110));
    let r = &slower.rows[0];
    assert!(r.real, "{r:?}");
    assert_eq!((r.base.count, r.base.samples), (n, KEPT as u64));
    let text = render(&slower, true);
    assert!(
        text.contains(&format!("1 row(s) have more than {KEPT} zones on a side")),
        "{text}"
    );
}

/// Issue 41: a profile's rings given in pieces (any window, any piece size) give the samples
/// their whole rings give, zones and sum zones in the same order.
#[test]
fn rings_in_pieces_give_the_samples_whole_rings_give() {
    use crate::model::fixture;
    let p = fixture::profile_at(0, fixture::ARCH, true);
    let whole = samples::from_profile(&p);
    assert!(
        !whole.zones.is_empty() && !whole.sums.is_empty(),
        "{whole:?}"
    );
    for (window, piece) in [(1, 1), (2, 3), (5, 1), (64, 7)] {
        let mut cut = crate::ring_source::Cut {
            profile: &p,
            window,
            piece,
        };
        let got = samples::from_profile_rings(&p, &mut cut).unwrap();
        assert_eq!(
            format!("{got:?}"),
            format!("{whole:?}"),
            "window {window}, pieces of {piece}"
        );
    }
}
