use super::*;
use crate::report::fixture::{self, times};
use crate::timebase::Timebase;
use riscv_linker::Risc;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn timeline() -> Timeline {
    let r = fixture::readout();
    let res = fixture::resolution(&r);
    Timeline::build(&r, &res, Some(&fixture::oplog()), &Timebase::nominal(fixture::ARCH, 1))
}

fn page() -> String {
    let mut out = Vec::new();
    write(&mut out, &timeline()).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_page_is_one_file_that_loads_nothing_and_embeds_every_zone() {
    let html = page();
    for needle in ["http:", "https:", " src=", " href=", "@import", "url(", "fetch(", "XMLHttpRequest"] {
        assert!(!html.contains(needle), "the page must not reach the network: found {needle:?}");
    }
    let start = html.find("id=\"ttprof-data\">").unwrap() + "id=\"ttprof-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[start..end]).expect("embedded data is JSON");
    let t = timeline();
    assert_eq!(data["zones"].as_array().unwrap().len(), 8 * t.zones.len());
    assert_eq!(data["lanes"].as_array().unwrap().len(), 10);
    assert_eq!(data["ops"][1][0], "Matmul");
    let t0 = data["t0"].as_i64().unwrap();
    assert_eq!(t0, times(1, 0, Risc::Brisc).fw.0 as i64 - 50_000, "the first host launch");
    // The first zone: tile (1,1) BRISC's FW zone of run 1.
    let z: Vec<i64> = data["zones"].as_array().unwrap()[..8].iter().map(|v| v.as_i64().unwrap()).collect();
    let fw = times(1, 0, Risc::Brisc).fw;
    assert_eq!(z, [0, z[1], 0, fw.0 as i64 - t0, (fw.1 - fw.0) as i64, 0, fw.0 as i64, (fw.1 - fw.0) as i64]);
    assert_eq!(data["sites"][z[1] as usize][0], "BRISC-FW");
}

/// The zones a page embeds: (site, start, duration) in page order.
fn embedded(html: &str) -> (Value, Vec<(i64, i64, i64)>) {
    let start = html.find("id=\"ttprof-data\">").unwrap() + "id=\"ttprof-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[start..end]).unwrap();
    let z: Vec<i64> = data["zones"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    let zones = z.chunks(8).map(|c| (c[1], c[3], c[4])).collect();
    (data, zones)
}

#[test]
fn a_page_over_its_zone_budget_keeps_the_longest_and_says_so() {
    let t = timeline();
    let mut all = Vec::new();
    assert_eq!(write_limited(&mut all, &t, usize::MAX).unwrap().hidden, 0);
    let (_, every) = embedded(&String::from_utf8(all).unwrap());
    let mut longest: Vec<i64> = every.iter().map(|z| z.2).collect();
    longest.sort_unstable_by(|a, b| b.cmp(a));
    let limit = every.len() / 3;
    let mut out = Vec::new();
    let shown = write_limited(&mut out, &t, limit).unwrap();
    assert_eq!((shown.zones, shown.hidden), (limit, every.len() - limit));
    let (data, kept) = embedded(&String::from_utf8(out).unwrap());
    assert_eq!(kept.len(), limit);
    let mut kept_lengths: Vec<i64> = kept.iter().map(|z| z.2).collect();
    kept_lengths.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(kept_lengths, longest[..limit], "the longest zones");
    assert!(kept.iter().all(|z| every.contains(z)), "unchanged, in page order");
    assert!(data["summary"].as_str().unwrap().contains(&format!("{} shorter than", every.len() - limit)));
}

#[test]
fn names_cannot_close_the_script_element() {
    let mut t = timeline();
    t.sites[0].name = "</script><b>x".into();
    let mut out = Vec::new();
    write(&mut out, &t).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert_eq!(html.matches("</script>").count(), 2, "only the two real script ends");
    assert!(html.contains(r"\u003c/script>\u003cb>x"));
}

/// Debian's Chromium, or `None` with a message.
fn chromium() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].iter().map(PathBuf::from).find(|p| p.exists());
    if found.is_none() {
        eprintln!("SKIPPED: no chromium (apt-get install chromium): the HTML timeline was not checked in a browser");
    }
    found
}

/// Runs headless Chromium with `args` and returns its stdout; kills it after two minutes.
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
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish within two minutes");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn headless_chromium_draws_the_zones_and_hover_and_zoom_work() {
    let Some(bin) = chromium() else { return };
    let dir = crate::testing::temp_dir("html-chromium");
    let path = dir.join(FILE_NAME);
    write_file(&path, &timeline()).unwrap();
    let url = format!("file://{}#selftest", path.display());
    let dom = run_chromium(&bin, &dir.join("profile-dom"), &["--dump-dom".into(), url]);
    let start = dom.find("<pre id=\"selftest\">").expect("page rendered") + "<pre id=\"selftest\">".len();
    let text = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let r: Value = serde_json::from_str(&text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
        .unwrap_or_else(|e| panic!("self-test output {text:?}: {e}"));
    eprintln!("self-test: {r}");
    assert_eq!((r["zones"].as_u64(), r["lanes"].as_u64()), (Some(120), Some(10)));
    // Every lane shows at least its three FW zones, and the ops row its three ops.
    assert!(r["drawn"].as_u64().unwrap() >= 10 * 3 + 3, "{r}");
    // Zones cover a real part of the lane area with colour (not just grid lines and text).
    let (painted, area) = (r["painted"].as_f64().unwrap(), r["area"].as_f64().unwrap());
    assert!(painted > 0.02 * area, "only {painted} of {area} pixels painted");
    // Hovering the first lane's first wide zone describes it.
    let hover = r["hover"].as_str().unwrap();
    let fw = times(1, 0, Risc::Brisc).fw;
    for want in [
        "BRISC-FW  src/kernel.rs:1",
        "core: chip 0 (0,0) [x=1 y=1] BRISC",
        "op: EltwiseAdd (run 1)",
        &format!("cycle {}", group(fw.0)),
        &format!("duration: {} ns, {} cycles", group(fw.1 - fw.0), group(fw.1 - fw.0)),
    ] {
        assert!(hover.contains(want), "hover text lacks {want:?}:\n{hover}");
    }
    assert_eq!(r["hoverShown"], "block");
    // The wheel zoomed in around the pointer: the same zone is still under it.
    assert!(r["zoom"].as_f64().unwrap() > 1.5, "{r}");
    assert_eq!(r["hoverZoomed"], r["hover"]);
    // A screenshot of the page as a person would open it.
    let png = dir.join("timeline.png");
    run_chromium(
        &bin,
        &dir.join("profile-shot"),
        &[format!("--screenshot={}", png.display()), format!("file://{}", path.display())],
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 5_000, "{} bytes", bytes.len());
    let keep = std::env::var_os("TTPROF_KEEP_SCREENSHOT");
    if let Some(to) = keep {
        std::fs::copy(&png, to).unwrap();
    }
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
