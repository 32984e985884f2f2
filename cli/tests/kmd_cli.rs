//! The card paths of every command on a machine without a card (`cargo test kmd`):
//! `ttprof devices` says plainly that there is none (exit 0), and each command given
//! `--device tt:N` or `/dev/tenstorrent/N` exits 1 naming the path and tt-kmd.

use std::process::Command;

fn ttprof(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ttprof"))
        .args(args)
        .output()
        .expect("run ttprof");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Whether this machine has a card (then these tests would talk to it: skip).
fn has_cards() -> bool {
    std::fs::read_dir("/dev/tenstorrent").is_ok_and(|mut d| d.next().is_some())
}

#[test]
fn kmd_devices_without_a_card_says_so_and_exits_0() {
    if has_cards() {
        eprintln!("skipped: this machine has /dev/tenstorrent/ cards");
        return;
    }
    let (code, out, err) = ttprof(&["devices"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.to_lowercase().contains("no tenstorrent card found") && out.contains("tt-kmd"),
        "{out}"
    );
}

#[test]
fn kmd_every_command_given_a_missing_card_exits_1_naming_the_path_and_tt_kmd() {
    if has_cards() {
        eprintln!("skipped: this machine has /dev/tenstorrent/ cards");
        return;
    }
    let dir = std::env::temp_dir().join(format!("ttprof-kmd-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let oplog = dir.join("ops.jsonl");
    std::fs::write(&oplog, "").unwrap();
    let (oplog, out) = (oplog.to_str().unwrap(), dir.join("out"));
    let out = out.to_str().unwrap();
    let snap = dir.join("x.snap");
    for (device, path) in [
        ("tt:0", "/dev/tenstorrent/0"),
        ("/dev/tenstorrent/7", "/dev/tenstorrent/7"),
    ] {
        let commands: [Vec<&str>; 5] = [
            vec!["read", "--device", device, "--oplog", oplog, "--out", out],
            vec!["report", "--device", device, "--oplog", oplog, "--out", out],
            vec!["clock", "--device", device],
            vec![
                "capture",
                "--device",
                device,
                "--no-oplog",
                "--seconds",
                "0",
                "--out",
                out,
            ],
            vec!["snapshot", "--device", device, "-o", snap.to_str().unwrap()],
        ];
        for args in commands {
            let (code, stdout, err) = ttprof(&args);
            assert_eq!(code, Some(1), "{args:?}: {stdout}{err}");
            assert!(
                err.contains(&format!("{path}: no such card")) && err.contains("tt-kmd"),
                "{args:?}: {err}"
            );
        }
    }
    assert!(!snap.exists(), "nothing written");
    let _ = std::fs::remove_dir_all(&dir);
}
