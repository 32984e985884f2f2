//! `ttprof tracy` as a user runs it: the real binary serving a small tt-metal device log to
//! the protocol-level test client (`ttprof::tracy::test_client`) while idle connections
//! stay open beside it.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Stdio;
use std::time::Duration;
use support::{bin, p, text, Scratch};
use ttprof::tracy::test_client::{capture, ClientOptions};

/// Tracy's handshake: the shibboleth and protocol 82 (Tracy 0.14).
fn handshake() -> Vec<u8> {
    [b"TracyPrf".as_slice(), &82u32.to_le_bytes()].concat()
}

/// A device log of `zones` BRISC zones on core (1,1).
fn device_log(dir: &std::path::Path, zones: u64) -> std::path::PathBuf {
    let mut csv = "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 1\n\
PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, \
trace id counter, zone name, type, source line, source file, meta data\n"
        .to_string();
    for i in 0..zones {
        let start = 10_000 * (i + 1);
        csv.push_str(&format!(
            "0,1,1,BRISC,1,{start},0,1,,,work,ZONE_START,3,k.cpp,\n0,1,1,BRISC,65537,{},0,1,,,work,ZONE_END,3,k.cpp,\n",
            start + 5_000
        ));
    }
    std::fs::create_dir_all(dir).unwrap();
    let log = dir.join("profile_log_device.csv");
    std::fs::write(&log, csv).unwrap();
    log
}

/// Issue 41: a Tracy tool that connected, sent its handshake and then read nothing held
/// `ttprof tracy` for its 30 s stall limit (sessions ran one at a time), and two of them
/// locked the real tool out of the default 60 s serve. Now each tool is served on a thread
/// of its own: the real one gets everything at once and the command exits 0.
#[test]
fn idle_tracy_clients_do_not_lock_the_capture_tool_out() {
    let dir = Scratch(ttprof::testing::temp_dir("tracy-cli-idle-clients"));
    let log = device_log(&dir, 50);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // The default timeout (60 s) is the hang guard: before the fix, the two idle tools
    // held the serve 30 s each and it timed out.
    let child = std::process::Command::new(bin())
        .args(["tracy", "--device", p(&log), "--port", &port.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    // The first idle tool connects once the command listens and is welcomed ...
    let connect = || {
        let give_up = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            match TcpStream::connect(addr) {
                Ok(t) => break t,
                Err(e) if std::time::Instant::now() >= give_up => {
                    panic!("ttprof tracy does not listen on {addr}: {e}")
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    };
    let mut first = connect();
    first.write_all(&handshake()).unwrap();
    first
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut status = [0u8; 1];
    first.read_exact(&mut status).unwrap();
    assert_eq!(status[0], 1, "HandshakeWelcome");
    // ... a second sends its handshake, a third connection sends nothing ...
    let mut second = connect();
    second.write_all(&handshake()).unwrap();
    let _third = connect();
    // ... and the capture tool still gets everything.
    let cap = capture(
        addr,
        &ClientOptions {
            timeout: Duration::from_secs(50),
            ..Default::default()
        },
    );
    let o = child.wait_with_output().unwrap();
    let cap = cap.unwrap_or_else(|e| panic!("{e}\n{}", text(&o)));
    assert!(
        cap.complete && cap.errors().is_empty(),
        "{:?}\n{}",
        cap.errors(),
        text(&o)
    );
    assert_eq!(cap.decoded.gpu_zones.len(), 50, "{}", text(&o));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("capture complete"), "{err}");
    // Nothing waits for the idle tools once the capture is complete: their connections are
    // closed (after what was sent to them).
    for mut t in [first, second] {
        t.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut rest = Vec::new();
        let r = t.read_to_end(&mut rest);
        assert!(
            r.is_ok()
                || r.as_ref()
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
            "{r:?}"
        );
    }
}
