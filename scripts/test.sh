#!/usr/bin/env bash
# The test command: sets up and builds (warnings are errors), then runs every test with the real NVRTC.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -DNVRTC_CACHE_WERROR=ON
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
