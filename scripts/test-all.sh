#!/usr/bin/env bash
# Runs every test of the workspace (the README's second command; .ci/run calls it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-tools.sh
cargo test --workspace --release "$@"
