#!/usr/bin/env bash
# Full corruption trials (default 500 per damage kind): byte flips and garbage pages in data.mdb,
# each read back by a separate process; prints host crashes and wrong bytes (both must be 0).
set -uo pipefail
cd "$(dirname "$0")/.."
trials="${1:-500}"
echo "== reads of a damaged store (what every host process does first)"
NVRTC_CACHE_CORRUPTION_TRIALS="$trials" "${BUILD_DIR:-build}/bin/unit_tests" --gtest_filter='Store/Corruption.*' || true
echo "== reads, then a write"
NVRTC_CACHE_CORRUPTION_WRITES=1 NVRTC_CACHE_CORRUPTION_TRIALS="$trials" "${BUILD_DIR:-build}/bin/unit_tests" \
  --gtest_filter='Store/Corruption.*' || true
