#!/usr/bin/env bash
# Runs every test of the workspace (the README's second command; .ci/run calls it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-tools.sh
# The habits: formatting, lints and the docs' links (each fails the run on a warning).
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
# The crates' layers are one of these tests (tests/layers, package ttprof-layers): no import
# in host/src or emulator/src goes up a layer, and no import cycle joins two units, except
# those listed in tests/layers/host.txt and tests/layers/emulator.txt, the tables of layers
# (a module missing from a table, or a listed exception that no longer happens, fails too).
# The tables are read when the test runs; `cargo test -p ttprof-layers` checks them alone in
# seconds, and `-- --nocapture` prints what they allow.
cargo test --workspace --release "$@"
# The parsers of untrusted input under libFuzzer, 30 s each from the checked-in corpora
# (fixed seed: the same inputs as every earlier run, as far as the time allows).
scripts/fuzz.sh 30
