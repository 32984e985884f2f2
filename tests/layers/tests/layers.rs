//! The layer check of each table in this directory: `host.txt` (host/src, crate `ttprof`)
//! and `emulator.txt` (emulator/src, crate `ttprof-emu`). Run with `--nocapture` to see the
//! report when it passes.

use std::path::Path;

fn check(table: &str) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = here.join("../..");
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let outcome = ttprof_layers::check(&workspace, &here.canonicalize().unwrap().join(table));
    println!("{}", outcome.report);
    if !outcome.failures.is_empty() {
        let mut message = format!(
            "{} problems with the layers ({table}):\n",
            outcome.failures.len()
        );
        for f in &outcome.failures {
            message.push_str(&format!("- {f}\n"));
        }
        panic!("{message}");
    }
}

#[test]
fn host_layers() {
    check("host.txt");
}

#[test]
fn emulator_layers() {
    check("emulator.txt");
}
