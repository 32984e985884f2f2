#!/usr/bin/env bash
# Fetches tt-metal's device side (headers, tt-llk, firmware sources, pre-compiled firmware ELFs,
# the kernels of tt-metal's own ops) from PyPI's `ttnn` wheel, pinned, into a cache; prints the
# tt-metal root (the directory holding `tt_metal/hw/inc`), the same layout as a tt-metal checkout's
# $TT_METAL_HOME. Nothing from it is ever committed; ttprof reads it where it is.
#
#   TTPROF_TTNN_VERSION  the wheel's version (default 0.81.1, the one ttprof is tested with)
#   TTPROF_CACHE         the cache (default ${XDG_CACHE_HOME:-$HOME/.cache}/ttprof)
#
# Idempotent: a complete cache is reused (a `.complete` file marks it). Needs PyPI.
set -euo pipefail

version="${TTPROF_TTNN_VERSION:-0.81.1}"
cache="${TTPROF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ttprof}"
root="$cache/ttnn-$version/ttnn"
if [ -f "$cache/ttnn-$version/.complete" ]; then
    echo "$root"
    exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetching tt-metal's device side: ttnn==$version from PyPI (~100 MB, once)" >&2
python3 -m pip download -q --no-deps "ttnn==$version" --python-version 3.12 \
    --only-binary=:all: --platform manylinux_2_34_x86_64 -d "$tmp" >&2
wheel=("$tmp"/ttnn-"$version"-*.whl)
# The device side only: the host libraries (~1 GB unpacked) are not needed.
python3 - "${wheel[0]}" "$tmp/unpacked" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
keep = ("ttnn/tt_metal/", "ttnn/ttnn/cpp/", "tracy/")
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(keep) and not name.endswith(".so"):
            z.extract(name, dest)
PY
rm -rf "$cache/ttnn-$version"
mkdir -p "$cache"
mv "$tmp/unpacked" "$cache/ttnn-$version"
touch "$cache/ttnn-$version/.complete"
echo "$root"
