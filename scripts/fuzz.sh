#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a bounded time, starting from the checked-in
# corpora (fuzz/corpus/<target>/, read only: what a run finds goes to a scratch directory).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 30 s, every target)
#
# Exits non-zero if any target crashed (a panic, an overflow, an allocation over the fuzz
# limit, a timeout or running out of memory), after running the others; each crash input is
# saved under fuzz/artifacts/<target>/ and its path printed. Reproduce one with
#   cargo fuzz run --sanitizer none <target> fuzz/artifacts/<target>/crash-...
#
# Builds on the stable toolchain: `--sanitizer none` leaves out -Zsanitizer, the one
# nightly-only flag cargo fuzz would pass. The builds have overflow checks and debug
# assertions on (cargo fuzz's default, and fuzz/Cargo.toml's release profile).
# TTPROF_FUZZ_TARGET_DIR sets cargo's target directory (default fuzz/target).
# TTPROF_FUZZ_SEED sets libFuzzer's seed (default 1): a run is then the same sequence of
# inputs wherever it runs, cut short by the time limit on a slower machine, so CI repeats
# what was run here; set another seed to explore further.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-30}
shift || true
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    targets=(decode snapshot image_header oplog elf_sites device_log run_spec)
fi
case "$seconds" in
    '' | *[!0-9]*) echo "fuzz.sh: SECONDS_PER_TARGET must be a whole number of seconds, not '$seconds'" >&2; exit 2 ;;
esac

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz from crates.io"
    cargo install cargo-fuzz --locked
fi

target_dir=${TTPROF_FUZZ_TARGET_DIR:-fuzz/target}
fuzz=(--sanitizer none --target-dir "$target_dir")
work=$(mktemp -d "${TMPDIR:-/tmp}/ttprof-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "building the fuzz targets (${targets[*]})"
cargo fuzz build "${fuzz[@]}" >"$work/build.log" 2>&1 || {
    cat "$work/build.log"
    echo "fuzz.sh: building the fuzz targets failed" >&2
    exit 1
}

passed=0
failed=0
crashed=()
for t in "${targets[@]}"; do
    mkdir -p "$work/corpus-$t"
    log="$work/$t.log"
    echo "fuzzing $t for ${seconds}s"
    rc=0
    cargo fuzz run "${fuzz[@]}" "$t" "$work/corpus-$t" "$PWD/fuzz/corpus/$t" -- \
        -max_total_time="$seconds" -seed="${TTPROF_FUZZ_SEED:-1}" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=20 \
        -print_final_stats=1 >"$log" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 | sed "s/^/  $t: /" || true
        grep -E '^stat::number_of_executed_units' "$log" | sed "s/^/  $t: /" || true
    else
        failed=$((failed + 1))
        crashed+=("$t")
        mkdir -p "fuzz/artifacts/$t"
        cp "$log" "fuzz/artifacts/$t/fuzz.log"
        echo "  $t: CRASHED (exit $rc); what failed (the whole log: fuzz/artifacts/$t/fuzz.log):"
        { grep -E -A1 'panicked at|==ttprof-fuzz== |^error' "$log" | grep -vE '^--$' | head -12
          grep -E '^SUMMARY' "$log" | head -1; } | sed 's/^/    /'
        saved=$(grep -oE 'Test unit written to [^ ]+' "$log" | sed 's/Test unit written to //' || true)
        for f in $saved; do
            echo "  $t: crash input saved to $f"
            echo "  $t: reproduce: cargo fuzz run --sanitizer none $t $f"
        done
        [ -n "$saved" ] || echo "  $t: no crash input was saved (the build or the run failed before fuzzing)"
    fi
done

# (Not cargo's "N passed, N failed" closing-line format: CI reads that as the test count.)
if [ "$failed" -eq 0 ]; then
    echo "fuzz.sh: all $passed target(s) ran ${seconds}s each without a crash"
else
    echo "fuzz.sh: $failed of $((passed + failed)) target(s) crashed: ${crashed[*]}"
    exit 1
fi
