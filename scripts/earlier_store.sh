#!/usr/bin/env bash
# Writes tests/data/earlier-store/ (tests/integration/store_compatibility_test.cc): one run of the
# probe's trivial, template and headers scenarios through the shim of BUILD_DIR (default build/), keeping
# only store/data.mdb, and the build-id of the NVRTC it compiled with. Run it only where a format
# change is intended (the test then proves nothing about the stores users have: they need a migration).
# usage: scripts/earlier_store.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=tests/data/earlier-store
rm -rf "$out" && mkdir -p "$out"
env NVRTC_CACHE_DIR="$PWD/$out" LD_PRELOAD="$PWD/$build/lib/libnvrtc-cache.so" NVRTC_CACHE_REMOTE= \
  "$build/bin/nvrtc_probe" trivial template headers >/dev/null
find "$out" -mindepth 1 ! -path "$out/store" ! -path "$out/store/data.mdb" -delete
nvrtc=$(cmake -L -N "$build" 2>/dev/null | sed -n 's/^CUDAToolkit_LIBRARY_DIR:PATH=//p')
readelf -n "${nvrtc:-/usr/local/cuda/lib64}/libnvrtc.so.13" | sed -n 's/.*Build ID: *//p' > "$out/NVRTC_BUILD_ID"
ls -l "$out" "$out/store"
