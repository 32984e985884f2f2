use super::*;
use crate::model::fixture::{self, times};
use crate::timebase::Timebase;
use crate::timeline::{Mark, MarkKind, OpSpan, Zone};
use riscv_linker::Risc;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn timeline() -> Timeline {
    let r = fixture::readout();
    let res = fixture::resolution(&r);
    Timeline::build(
        &r,
        &res,
        Some(&fixture::oplog()),
        &Timebase::nominal(fixture::ARCH, 1),
    )
}

fn page() -> String {
    let mut out = Vec::new();
    write(&mut out, &timeline()).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_page_is_one_file_that_loads_nothing_and_embeds_every_zone() {
    let html = page();
    for needle in [
        "http:",
        "https:",
        " src=",
        " href=",
        "@import",
        "url(",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(
            !html.contains(needle),
            "the page must not reach the network: found {needle:?}"
        );
    }
    let start = html.find("id=\"ttprof-data\">").unwrap() + "id=\"ttprof-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[start..end]).expect("embedded data is JSON");
    let t = timeline();
    assert_eq!(data["zones"].as_array().unwrap().len(), 9 * t.zones.len());
    assert_eq!(data["lanes"].as_array().unwrap().len(), 10);
    assert_eq!(data["ops"][1][0], "Matmul");
    let t0 = data["t0"].as_i64().unwrap();
    assert_eq!(
        t0,
        times(1, 0, Risc::Brisc).fw.0 as i64 - 50_000,
        "the first host launch"
    );
    // The first zone: tile (1,1) BRISC's FW zone of run 1.
    let z: Vec<i64> = data["zones"].as_array().unwrap()[..9]
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let fw = times(1, 0, Risc::Brisc).fw;
    assert_eq!(
        z,
        [
            0,
            z[1],
            0,
            fw.0 as i64 - t0,
            (fw.1 - fw.0) as i64,
            0,
            fw.0 as i64,
            (fw.1 - fw.0) as i64,
            -1
        ]
    );
    assert_eq!(data["sites"][z[1] as usize][0], "BRISC-FW");
    // A value zone's value is its ninth value (it once reached only the device CSV).
    let zones: Vec<i64> = data["zones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let values: Vec<(i64, i64)> = zones
        .chunks(9)
        .filter(|c| c[8] >= 0)
        .map(|c| (c[0], c[8]))
        .collect();
    assert_eq!(values.len(), 30);
    assert!(zones
        .chunks(9)
        .all(|c| (c[8] >= 0) == (data["sites"][c[1] as usize][0] == "inner")));
    let lane0: Vec<i64> = values.iter().filter(|v| v.0 == 0).map(|v| v.1).collect();
    assert_eq!(
        lane0,
        [1, 2, 3].map(|run| fixture::inner_value(run, 0, Risc::Brisc) as i64)
    );
}

/// The JSON a page embeds.
fn data_of(html: &str) -> Value {
    let start = html.find("id=\"ttprof-data\">").unwrap() + "id=\"ttprof-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// The zones a page embeds: (site, start, duration) in page order.
fn embedded(html: &str) -> (Value, Vec<(i64, i64, i64)>) {
    let data = data_of(html);
    let z: Vec<i64> = data["zones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let zones = z.chunks(9).map(|c| (c[1], c[3], c[4])).collect();
    (data, zones)
}

#[test]
fn a_page_over_its_zone_budget_keeps_the_longest_and_says_so() {
    let t = timeline();
    let mut all = Vec::new();
    assert_eq!(
        write_limited(&mut all, &t, usize::MAX, usize::MAX)
            .unwrap()
            .hidden,
        0
    );
    let (_, every) = embedded(&String::from_utf8(all).unwrap());
    let mut longest: Vec<i64> = every.iter().map(|z| z.2).collect();
    longest.sort_unstable_by(|a, b| b.cmp(a));
    let limit = every.len() / 3;
    let mut out = Vec::new();
    let shown = write_limited(&mut out, &t, limit, MAX_MARKS).unwrap();
    assert_eq!((shown.zones, shown.hidden), (limit, every.len() - limit));
    assert_eq!(
        (shown.marks, shown.marks_hidden),
        (t.marks.len(), 0),
        "the zone budget leaves marks alone"
    );
    let (data, kept) = embedded(&String::from_utf8(out).unwrap());
    assert_eq!(kept.len(), limit);
    let mut kept_lengths: Vec<i64> = kept.iter().map(|z| z.2).collect();
    kept_lengths.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(kept_lengths, longest[..limit], "the longest zones");
    assert!(
        kept.iter().all(|z| every.contains(z)),
        "unchanged, in page order"
    );
    assert!(data["summary"]
        .as_str()
        .unwrap()
        .contains(&format!("{} shorter than", every.len() - limit)));
}

/// A mark as a page embeds it, its 8 values read exactly: lane, site, kind, time, op, cycle,
/// a, b. Checks that only a u64 above 2^53 - 1 is a string.
fn embedded_marks(data: &Value) -> Vec<[i128; 8]> {
    let exact = |v: &Value| -> i128 {
        match v {
            Value::String(s) => {
                let n: u64 = s.parse().unwrap_or_else(|e| panic!("{s:?}: {e}"));
                assert!(
                    n > (1 << 53) - 1,
                    "{n} is a string but JavaScript reads it exactly as a number"
                );
                n as i128
            }
            v => {
                let n = v
                    .as_i64()
                    .unwrap_or_else(|| panic!("{v} is not an integer"));
                assert!(
                    n.unsigned_abs() < 1 << 53,
                    "{n} is a number, which JavaScript rounds"
                );
                n as i128
            }
        }
    };
    let m = data["marks"].as_array().unwrap();
    assert_eq!(m.len() % 8, 0);
    m.chunks(8)
        .map(|c| std::array::from_fn(|i| exact(&c[i])))
        .collect()
}

/// What a page should embed for `m`.
fn expected(m: &Mark, t0: i64) -> [i128; 8] {
    let (kind, a, b) = match m.kind {
        MarkKind::Event => (0, 0, 0),
        MarkKind::Data(v) => (1, v, 0),
        MarkKind::Sum {
            total_cycles,
            count,
        } => (2, total_cycles, count as u64),
    };
    [
        m.lane as i128,
        m.site as i128,
        kind,
        (m.ns.round() as i64 - t0) as i128,
        m.op.map_or(-1, |o| o as i128),
        m.cycles as i128,
        a as i128,
        b as i128,
    ]
}

#[test]
fn the_page_embeds_every_mark_exactly_sum_totals_and_counts_and_values_beyond_2_pow_53() {
    let mut t = timeline();
    assert_eq!(t.marks.len(), 90);
    // Payloads either side of JavaScript's exact range, and a sum total just past it.
    let data: Vec<usize> = (0..t.marks.len())
        .filter(|&i| matches!(t.marks[i].kind, MarkKind::Data(_)))
        .collect();
    t.marks[data[0]].kind = MarkKind::Data(u64::MAX);
    t.marks[data[1]].kind = MarkKind::Data((1 << 53) + 1);
    t.marks[data[2]].kind = MarkKind::Data((1 << 53) - 1);
    let sum = t
        .marks
        .iter()
        .rposition(|m| matches!(m.kind, MarkKind::Sum { .. }))
        .unwrap();
    t.marks[sum].kind = MarkKind::Sum {
        total_cycles: 1 << 53,
        count: u32::MAX,
    };
    let mut out = Vec::new();
    let shown = write_limited(&mut out, &t, MAX_ZONES, MAX_MARKS).unwrap();
    assert_eq!((shown.marks, shown.marks_hidden), (90, 0));
    let html = String::from_utf8(out).unwrap();
    let page = data_of(&html);
    let t0 = page["t0"].as_i64().unwrap();
    let marks = embedded_marks(&page);
    let want: Vec<[i128; 8]> = t.marks.iter().map(|m| expected(m, t0)).collect();
    assert_eq!(marks, want, "every mark, in the timeline's order");
    // The raw JSON: the big ones are strings, the largest number JavaScript reads exactly is not.
    assert!(html.contains(",\"18446744073709551615\",0"));
    assert!(html.contains(",\"9007199254740993\",0"));
    assert!(html.contains(",9007199254740991,0"));
    assert!(html.contains(",\"9007199254740992\",4294967295"));
    // The fixture's sum zones: 30 cycles over 3 measurements, one per launch per core.
    let sums: Vec<&[i128; 8]> = marks.iter().filter(|m| m[2] == 2).collect();
    assert_eq!(sums.len(), 30);
    assert_eq!(sums.iter().filter(|m| (m[6], m[7]) == (30, 3)).count(), 29);
    assert_eq!(page["sites"][sums[0][1] as usize][0], "wait");
    let first = times(1, 0, Risc::Brisc).kernel.1;
    assert_eq!(
        (sums[0][0], sums[0][3], sums[0][4], sums[0][5]),
        (0, first as i128 - t0 as i128, 0, first as i128)
    );
    let summary = page["summary"].as_str().unwrap();
    assert!(
        summary
            .contains("120 zones on 10 lanes, 90 marks (30 events, 30 data, 30 sum zones), 3 ops"),
        "{summary}"
    );
}

#[test]
fn zone_cycle_counts_beyond_2_pow_53_are_strings() {
    let mut t = timeline();
    let z = &mut t.zones[0];
    let len = z.cycles();
    z.start_cycles = u64::MAX - len;
    z.end_cycles = u64::MAX;
    let mut out = Vec::new();
    write(&mut out, &t).unwrap();
    let page = data_of(&String::from_utf8(out).unwrap());
    let zone = &page["zones"].as_array().unwrap()[..8];
    assert_eq!(zone[6], Value::String((u64::MAX - len).to_string()));
    assert_eq!(
        zone[7].as_u64(),
        Some(len),
        "a short zone's cycles stay a number"
    );
}

#[test]
fn a_page_over_its_mark_budget_keeps_sum_zones_then_data_then_events_the_earliest_first() {
    let mut t = timeline();
    // A mark the timebase could not place (here an event) is neither shown nor counted.
    let event = t
        .marks
        .iter()
        .position(|m| m.kind == MarkKind::Event)
        .unwrap();
    t.marks[event].ns = f64::NAN;
    let placed: Vec<&Mark> = t.marks.iter().filter(|m| m.ns.is_finite()).collect();
    assert_eq!(placed.len(), 89);
    let mut all = Vec::new();
    let every = write_limited(&mut all, &t, MAX_ZONES, usize::MAX).unwrap();
    assert_eq!((every.marks, every.marks_hidden), (89, 0));
    let t0 = data_of(&String::from_utf8(all).unwrap())["t0"]
        .as_i64()
        .unwrap();
    let of_kind = |k: i128| -> Vec<[i128; 8]> {
        let mut v: Vec<[i128; 8]> = placed
            .iter()
            .map(|m| expected(m, t0))
            .filter(|m| m[2] == k)
            .collect();
        v.sort_by_key(|m| m[3]);
        v
    };
    let (events, data, sums) = (of_kind(0), of_kind(1), of_kind(2));
    assert_eq!((events.len(), data.len(), sums.len()), (29, 30, 30));
    for (limit, kept) in [
        (0, vec![]),
        (20, sums[..20].to_vec()),
        (45, [&sums[..], &data[..15]].concat()),
        (70, [&sums[..], &data[..], &events[..10]].concat()),
        (89, [&sums[..], &data[..], &events[..]].concat()),
    ] {
        let mut out = Vec::new();
        let shown = write_limited(&mut out, &t, MAX_ZONES, limit).unwrap();
        assert_eq!(
            (shown.marks, shown.marks_hidden),
            (limit, 89 - limit),
            "limit {limit}"
        );
        assert_eq!(
            (shown.zones, shown.hidden),
            (120, 0),
            "the mark budget leaves zones alone"
        );
        let page = data_of(&String::from_utf8(out).unwrap());
        let mut marks = embedded_marks(&page);
        // In the timeline's order.
        let order: Vec<[i128; 8]> = placed
            .iter()
            .map(|m| expected(m, t0))
            .filter(|m| marks.contains(m))
            .collect();
        assert_eq!(marks, order, "limit {limit}");
        let mut want = kept.clone();
        want.sort();
        marks.sort();
        assert_eq!(marks, want, "limit {limit}");
        let summary = page["summary"].as_str().unwrap();
        let (e, d, s) = (
            limit.saturating_sub(60),
            limit.saturating_sub(30).min(30),
            limit.min(30),
        );
        assert!(
            summary.contains(&format!(
                "{limit} marks ({e} events, {d} data, {s} sum zones"
            )),
            "{summary}"
        );
        assert_eq!(
            summary.contains(&format!("; {} more are not shown", 89 - limit)),
            limit < 89,
            "{summary}"
        );
    }
}

#[test]
fn names_cannot_close_the_script_element() {
    let mut t = timeline();
    t.sites[0].name = "</script><b>x".into();
    let mut out = Vec::new();
    write(&mut out, &t).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert_eq!(
        html.matches("</script>").count(),
        2,
        "only the two real script ends"
    );
    assert!(html.contains(r"\u003c/script>\u003cb>x"));
}

/// Debian's Chromium, or `None` with a message.
fn chromium() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if found.is_none() {
        eprintln!("SKIPPED: no chromium (apt-get install chromium): the HTML timeline was not checked in a browser");
    }
    found
}

/// Runs headless Chromium with `args` and returns its stdout (read as it comes: a page's
/// DOM can be more than a pipe holds); kills it after two minutes.
fn run_chromium(bin: &PathBuf, profile: &std::path::Path, args: &[String]) -> String {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1200,800",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut out).map(|_| out)
    });
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish within two minutes");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = reader.join().unwrap().unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes `t`'s page to `path`, opens it in headless Chromium (profile `dir/profile-{name}`)
/// at `#selftest` and returns what the page's self-test reported.
fn selftest(
    bin: &PathBuf,
    dir: &std::path::Path,
    path: &std::path::Path,
    t: &Timeline,
    name: &str,
) -> Value {
    write_file(path, t, &crate::inputs::Inputs::none()).unwrap();
    let url = format!("file://{}#selftest", path.display());
    let dom = run_chromium(
        bin,
        &dir.join(format!("profile-{name}")),
        &["--dump-dom".into(), url],
    );
    let start =
        dom.find("<pre id=\"selftest\">").expect("page rendered") + "<pre id=\"selftest\">".len();
    let text = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    serde_json::from_str(
        &text
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">"),
    )
    .unwrap_or_else(|e| panic!("self-test output {text:?}: {e}"))
}

#[test]
fn headless_chromium_draws_the_zones_and_hover_and_zoom_work() {
    let Some(bin) = chromium() else { return };
    let dir = crate::testing::temp_dir("html-chromium");
    let path = dir.join(FILE_NAME);
    let mut t = timeline();
    // The first data mark (lane 0, run 1) carries a payload a JavaScript number would round.
    let data = t
        .marks
        .iter()
        .position(|m| matches!(m.kind, MarkKind::Data(_)))
        .unwrap();
    t.marks[data].kind = MarkKind::Data(u64::MAX);
    let r = selftest(&bin, &dir, &path, &t, "dom");
    eprintln!("self-test: {r}");
    assert_eq!(
        (r["zones"].as_u64(), r["lanes"].as_u64()),
        (Some(120), Some(10))
    );
    // Every lane shows at least its three FW zones, and the ops row its three ops.
    assert!(r["drawn"].as_u64().unwrap() >= 10 * 3 + 3, "{r}");
    // Zones cover a real part of the lane area with colour (not just grid lines and text).
    let (painted, area) = (r["painted"].as_f64().unwrap(), r["area"].as_f64().unwrap());
    assert!(
        painted > 0.02 * area,
        "only {painted} of {area} pixels painted"
    );
    // Hovering the first lane's first wide zone describes it.
    let hover = r["hover"].as_str().unwrap();
    let fw = times(1, 0, Risc::Brisc).fw;
    for want in [
        "BRISC-FW  src/kernel.rs:1",
        "core: chip 0 (0,0) [x=1 y=1] BRISC",
        "op: EltwiseAdd (run 1)",
        &format!("cycle {}", group(fw.0)),
        &format!(
            "duration: {} ns, {} cycles",
            group(fw.1 - fw.0),
            group(fw.1 - fw.0)
        ),
    ] {
        assert!(hover.contains(want), "hover text lacks {want:?}:\n{hover}");
    }
    assert_eq!(r["hoverShown"], "block");
    // A value zone's tooltip shows its value; a plain zone's has none.
    let value = r["valueZone"].as_str().unwrap();
    let v = fixture::inner_value(1, 0, Risc::Brisc);
    assert!(
        value.contains("inner") && value.contains(&format!("value: {v} ({v:#x})")),
        "{value}"
    );
    assert!(!r["plainZone"].as_str().unwrap().contains("value:"), "{r}");
    // The wheel zoomed in around the pointer: the same zone is still under it.
    assert!(r["zoom"].as_f64().unwrap() > 1.5, "{r}");
    assert_eq!(r["hoverZoomed"], r["hover"]);
    // In the whole run every mark on a lane in view is drawn (the window may cut the last
    // lanes off), data and sum zones in their colors (a lane's event is 1 ns before its data
    // there: the data triangle covers it).
    assert_eq!(r["marks"].as_u64(), Some(90));
    let in_view = r["marksInView"].as_u64().unwrap();
    assert!(
        in_view >= 5 * 9,
        "only {in_view} marks on lanes in view: {r}"
    );
    assert_eq!(r["marksDrawn"].as_u64(), Some(in_view), "{r}");
    let px = |v: &Value, kind: usize| v[kind].as_u64().unwrap();
    assert_eq!(px(&r["markPixels"], 0), 0, "{r}");
    assert!(
        px(&r["markPixels"], 1) >= in_view / 3 * 4 && px(&r["markPixels"], 2) >= in_view / 3 * 4,
        "{r}"
    );
    // Hovering the first mark of each kind (lane 0, run 1) describes it.
    let x = times(1, 0, Risc::Brisc);
    let core = "core: chip 0 (0,0) [x=1 y=1] BRISC";
    let op = "op: EltwiseAdd (run 1)";
    let at = |cycle: u64| format!("time: {:.3} \u{b5}s host", cycle as f64 / 1e3);
    let event = [
        "barrier  src/kernel.rs:12".to_string(),
        "kind: event".into(),
        core.into(),
        op.into(),
        at(x.work.1),
        format!("cycle {}", group(x.work.1)),
    ];
    let data = [
        "bytes  src/kernel.rs:13".to_string(),
        "kind: data".into(),
        core.into(),
        op.into(),
        at(x.work.1 + 1),
        format!("cycle {}", group(x.work.1 + 1)),
        "value: 18,446,744,073,709,551,615 (0xffffffffffffffff)".into(),
    ];
    let sum = [
        "wait  src/kernel.rs:14".to_string(),
        "kind: sum zone".into(),
        core.into(),
        op.into(),
        at(x.kernel.1),
        format!("cycle {}", group(x.kernel.1)),
        "count: 3 measurements".into(),
        "total: 30 cycles".into(),
        "mean: 10 cycles".into(),
    ];
    for (kind, want) in [&event[..], &data[..], &sum[..]].into_iter().enumerate() {
        let hover = r["hoverMarks"][kind]
            .as_str()
            .unwrap_or_else(|| panic!("kind {kind} not hovered: {r}"));
        for w in want {
            assert!(
                hover.contains(w.as_str()),
                "hover text of kind {kind} lacks {w:?}:\n{hover}"
            );
        }
        assert_eq!(r["hoverMarkShown"][kind], "block");
    }
    // The sum zone stands alone: the whole-run view finds the same one.
    assert_eq!(r["hoverMarksWhole"][2], r["hoverMarks"][2]);
    // Zoomed to 40 ns around it, marks off screen are not drawn, and those on screen are:
    // the event and the data 1 ns later both, each in its color.
    assert_eq!(r["marksDrawnZoomed"], serde_json::json!([2, 2, 1]), "{r}");
    for kind in 0..3 {
        assert!(px(&r["markPixelsZoomed"][kind], kind) >= 4, "{r}");
    }
    // A screenshot of the page as a person would open it.
    let png = dir.join("timeline.png");
    run_chromium(
        &bin,
        &dir.join("profile-shot"),
        &[
            format!("--screenshot={}", png.display()),
            format!("file://{}", path.display()),
        ],
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 5_000,
        "{} bytes",
        bytes.len()
    );
    let keep = std::env::var_os("TTPROF_KEEP_SCREENSHOT");
    if let Some(to) = keep {
        std::fs::copy(&png, to).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A lane of zones each far under a pixel, back to back (a dense loop at the whole run's
/// scale), was drawn as slivers a thousandth of a pixel wide that the canvas all but
/// dropped: the lane showed empty but for a pixel or two at its start. It now paints about
/// as much as one zone over the same span does.
#[test]
fn a_lane_of_sub_pixel_zones_is_painted_like_one_zone_over_the_same_span() {
    let Some(bin) = chromium() else { return };
    let dir = crate::testing::temp_dir("html-dense");
    // 7 ns zones every 10 ns for 2 ms of a 10 ms op: ~1,000 zones a pixel in the whole run
    // (as 1 M of them over the whole run; at ~200 a pixel Chromium's slivers still add up).
    let n = 200_000;
    let painted = |dense: bool| -> f64 {
        let mut t = timeline();
        t.lanes.truncate(1);
        t.lanes[0].depth = 1;
        let z = Zone {
            lane: 0,
            depth: 0,
            op: None,
            value: None,
            ..t.zones[0]
        };
        let at = |k: u64, len: u64| Zone {
            start_cycles: 100 + 10 * k,
            end_cycles: 100 + 10 * k + len,
            ..z
        };
        t.zones = if dense {
            (0..n).map(|k| at(k, 7)).collect()
        } else {
            vec![at(0, 10 * (n - 1) + 7)]
        };
        t.marks.clear();
        // The op is not drawn (no device span), its host span sets the page's time axis.
        t.ops = vec![OpSpan {
            device_time: None,
            host_ns: Some((0, 10 * 5 * n)),
            kernel_ns: None,
            ..t.ops[0].clone()
        }];
        let name = if dense { "dense" } else { "solid" };
        let r = selftest(&bin, &dir, &dir.join(format!("{name}.html")), &t, name);
        eprintln!(
            "{name}: zones {} drawn {} painted {}",
            r["zones"], r["drawn"], r["painted"]
        );
        assert_eq!(r["zones"].as_u64(), Some(t.zones.len() as u64), "{name}");
        r["painted"].as_f64().unwrap()
    };
    let (solid, dense) = (painted(false), painted(true));
    assert!(solid > 1000.0, "the solid zone painted only {solid} pixels");
    assert!(
        dense >= 0.9 * solid,
        "the dense lane painted {dense} pixels, the solid zone {solid}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `1234567` -> `1,234,567`, as the page prints counts.
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The sink drops, ring by ring, what the page can no longer embed: the page it writes is
/// byte for byte the page of the whole timeline under the same limits, and it counts what
/// it dropped as left out.
#[test]
fn a_page_fed_ring_by_ring_with_pruning_is_the_page_of_the_whole_run() {
    use crate::profile::Profile;
    use crate::sink::{self, HtmlPage, Sink};
    // Without the op log no op's host span covers the run: the page's time axis then comes
    // from the zones themselves, dropped ones included.
    for (oplog, (zones, marks)) in [Some(fixture::oplog()), None]
        .into_iter()
        .flat_map(|o| [(10, 7), (1, 1), (0, 0), (1000, 1000)].map(move |l| (o.clone(), l)))
    {
        let r = fixture::readout();
        let res = fixture::resolution(&r);
        let p = Profile::resolved(r, res, oplog, Timebase::nominal(fixture::ARCH, 1));
        let whole = Timeline::of(&p);
        assert!(
            whole.zones.len() > 40 && whole.marks.len() > 14,
            "the fixture is larger than the limits"
        );
        let mut want = Vec::new();
        let shown = write_limited(&mut want, &whole, zones, marks).unwrap();
        let dir = crate::testing::temp_dir("html-prune");
        let path = dir.join(FILE_NAME);
        let mut page =
            HtmlPage::new(&path, vec![], &crate::inputs::Inputs::none()).with_limits(zones, marks);
        let done = sink::drive(&p, &mut [&mut page as &mut dyn Sink]).unwrap();
        let (got, want) = (
            std::fs::read_to_string(&path).unwrap(),
            String::from_utf8(want).unwrap(),
        );
        let at = got
            .bytes()
            .zip(want.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        assert!(
            got == want,
            "limits {zones}/{marks}: differ at byte {at}: {:?} vs {:?}",
            &got[at.saturating_sub(80)..(at + 80).min(got.len())],
            &want[at.saturating_sub(80)..(at + 80).min(want.len())]
        );
        assert_eq!(
            (page.shown.zones, page.shown.hidden),
            (shown.zones, shown.hidden),
            "limits {zones}/{marks}"
        );
        assert_eq!(
            (page.shown.marks, page.shown.marks_hidden),
            (shown.marks, shown.marks_hidden)
        );
        assert_eq!(page.shown.shortest_shown_ns, shown.shortest_shown_ns);
        assert_eq!(
            done[0].issues.len(),
            (shown.hidden > 0) as usize + (shown.marks_hidden > 0) as usize
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Issue 41: the page's timeline grew by doubling, and the step to its limit held the old
/// block and the new one at once (a 25 MB spike in `run`'s resident set at the 1 M-zone
/// limit). Its room is made once, at `begin`, from the profile's counts, and no ring moves it.
#[test]
fn the_page_makes_room_once_for_what_it_will_hold() {
    use crate::profile::Profile;
    use crate::sink::{HtmlPage, Sink};
    let r = fixture::readout();
    let res = fixture::resolution(&r);
    let p = Profile::resolved(
        r,
        res,
        Some(fixture::oplog()),
        Timebase::nominal(fixture::ARCH, 1),
    );
    let (zones, records) = (p.readout.zones(), p.readout.records());
    let marks = Timeline::of(&p).marks.len();
    assert!(zones > 40 && marks > 14 && records >= zones + marks);
    // Limits under the counts: room for a limit and two steps of adding (a 32nd of the zone
    // limit, a quarter of the mark limit). Limits over them: room for every record.
    for ((zl, ml), want) in [
        ((10, 7), (10 + 2, 7 + 2 * 2)),
        ((1000, 1000), (zones, records - zones)),
    ] {
        let dir = crate::testing::temp_dir("html-room");
        let mut page = HtmlPage::new(&dir.join(FILE_NAME), vec![], &crate::inputs::Inputs::none())
            .with_limits(zl, ml);
        assert_eq!(page.room(), None);
        page.begin(&p).unwrap();
        assert_eq!(page.room(), Some(want), "limits {zl}/{ml}");
        for i in 0..p.ring_count() {
            let ring = &p.readout.rings[i];
            page.ring(&p, &p.view(i, ring, true)).unwrap();
            assert_eq!(page.room(), Some(want), "limits {zl}/{ml}, after ring {i}");
        }
        page.finish(&p).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Issue 41: the page's zone and mark times were the model's `f64` ns rounded, a ns or
/// more off from 2^53 ns on; through the sink each is the exact whole ns of its count
/// (less `t0`), and each op's device span the exact whole ns of its KERNEL zones.
#[test]
fn page_times_stay_exact_at_large_cycle_counts() {
    let offset = (1u64 << 62) + 7;
    let arch = riscv_linker::Arch::WormholeB0;
    let p = fixture::profile_at(offset, arch, true);
    let dir = crate::testing::temp_dir("html-large-counts");
    let path = dir.join("page.html");
    let mut s = HtmlPage::new(&path, vec![], &crate::inputs::Inputs::none());
    crate::sink::drive(&p, &mut [&mut s]).unwrap();
    let html = std::fs::read_to_string(&path).unwrap();
    let start = html.find("id=\"ttprof-data\">").unwrap() + "id=\"ttprof-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[start..end]).unwrap();
    let t0 = data["t0"].as_i64().unwrap() as i128;
    // The nearest whole ns of `c` cycles at the arch's clock, in integers.
    let whole = |c: u64| fixture::whole_ns(arch, c) as i128;
    let count = |v: &Value| -> u64 {
        v.as_u64()
            .unwrap_or_else(|| v.as_str().unwrap().parse().unwrap())
    };
    let zones = data["zones"].as_array().unwrap();
    assert!(!zones.is_empty());
    for z in zones.chunks(9) {
        let (rel, dur) = (
            z[3].as_i64().unwrap() as i128,
            z[4].as_i64().unwrap() as i128,
        );
        let (start, cycles) = (count(&z[6]), count(&z[7]));
        assert_eq!(t0 + rel, whole(start), "zone start {z:?}");
        assert_eq!(rel + dur, whole(start + cycles) - t0, "zone end {z:?}");
    }
    let marks = data["marks"].as_array().unwrap();
    assert!(!marks.is_empty());
    for m in marks.chunks(8) {
        assert_eq!(
            t0 + m[3].as_i64().unwrap() as i128,
            whole(count(&m[5])),
            "mark {m:?}"
        );
    }
    let mut spans = 0;
    for o in data["ops"].as_array().unwrap() {
        let d =
            &p.device_ops.by_run[&(o[2].as_u64().unwrap() as u32, o[1].as_u64().unwrap() as u32)];
        let k = d.kernel.unwrap();
        assert_eq!(t0 + o[3].as_i64().unwrap() as i128, whole(k.start.cycles));
        assert_eq!(t0 + o[4].as_i64().unwrap() as i128, whole(k.end.cycles));
        spans += 1;
    }
    assert!(spans > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Counts the views of each ring a drive gives (to see that rings were cut) and keeps the
/// depth of each ring's last view.
#[derive(Default)]
struct Views {
    pieces: Vec<usize>,
    depth: Vec<u16>,
}

impl crate::sink::Sink for Views {
    fn ring(&mut self, _: &crate::profile::Profile, v: &crate::profile::RingView) -> Result<()> {
        if v.part().first {
            self.pieces.push(0);
        }
        *self.pieces.last_mut().unwrap() += 1;
        if v.part().last {
            self.depth.push(v.lane().depth);
        }
        Ok(())
    }

    fn takes_pieces(&self) -> bool {
        true
    }

    fn finish(&mut self, _: &crate::profile::Profile) -> Result<crate::sink::Finished> {
        Ok(crate::sink::Finished::default())
    }
}

/// Issue 41: a ring given in pieces (any window, any piece size, cut mid-zone) makes the
/// page of the whole ring, byte for byte, under limits small enough that the page prunes
/// in the middle of a ring (at a different place from the whole ring's): the same lanes and
/// depths, the same zones and marks in the same order, the same counts of what was left
/// out.
#[test]
fn rings_in_pieces_make_the_page_whole_rings_make() {
    use crate::profile::Profile;
    use crate::ring_source::{Cut, Held, RingSource};
    use crate::sink::{self, Sink};
    let dir = crate::testing::temp_dir("html-pieces");
    let path = dir.join(FILE_NAME);
    for oplog in [Some(fixture::oplog()), None] {
        let r = fixture::readout();
        let res = fixture::resolution(&r);
        let p = Profile::resolved(r, res, oplog, Timebase::nominal(fixture::ARCH, 1));
        for (zones, marks) in [(10, 7), (3, 2), (1, 1), (0, 0), (1000, 1000)] {
            let build = |rings: &mut dyn RingSource| {
                let mut page = HtmlPage::new(&path, vec![], &crate::inputs::Inputs::none())
                    .with_limits(zones, marks);
                let mut views = Views::default();
                let done = sink::drive_rings(&p, rings, &mut [&mut page, &mut views]).unwrap();
                let issues: Vec<String> = done[0].issues.iter().map(|i| format!("{i:?}")).collect();
                (std::fs::read(&path).unwrap(), page.shown, issues, views)
            };
            let whole = build(&mut Held(&p));
            assert!(whole.3.pieces.iter().all(|&n| n == 1));
            assert!(whole.3.depth.iter().all(|&d| d >= 2), "{:?}", whole.3.depth);
            for window in [1, 2, 5, 64] {
                for piece in [1, 3, 7, 1_000] {
                    let cut = build(&mut Cut {
                        profile: &p,
                        window,
                        piece,
                    });
                    let at = format!("limits {zones}/{marks}, window {window}, piece {piece}");
                    if piece < 10 {
                        assert!(
                            cut.3.pieces.iter().all(|&n| n > 1),
                            "{at}: {:?}",
                            cut.3.pieces
                        );
                    }
                    assert_eq!(cut.3.depth, whole.3.depth, "{at}");
                    let (got, want) = (
                        String::from_utf8(cut.0).unwrap(),
                        String::from_utf8(whole.0.clone()).unwrap(),
                    );
                    let differ = got
                        .bytes()
                        .zip(want.bytes())
                        .position(|(a, b)| a != b)
                        .unwrap_or(got.len().min(want.len()));
                    assert!(
                        got == want,
                        "{at}: differ at byte {differ}: {:?} vs {:?}",
                        &got[differ.saturating_sub(80)..(differ + 80).min(got.len())],
                        &want[differ.saturating_sub(80)..(differ + 80).min(want.len())]
                    );
                    assert_eq!(cut.1, whole.1, "{at}");
                    assert_eq!(cut.2, whole.2, "{at}");
                }
            }
        }
    }
    // The page takes pieces with its analysis (its bottleneck panel).
    let page = HtmlPage::new(&path, vec![], &crate::inputs::Inputs::none());
    assert!(page.takes_pieces());
    std::fs::remove_dir_all(&dir).unwrap();
}
