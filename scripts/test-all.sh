#!/usr/bin/env bash
# Runs every test of the workspace (the README's second command; .ci/run calls it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-tools.sh
# The habits: formatting, lints and the docs' links (each fails the run on a warning).
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
cargo test --workspace --release "$@"
# The parsers of untrusted input under libFuzzer, 30 s each from the checked-in corpora
# (fixed seed: the same inputs as every earlier run, as far as the time allows).
scripts/fuzz.sh 30
