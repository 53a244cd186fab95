#!/usr/bin/env bash
# The test command: sets up and builds (warnings are errors), prepares the Python JIT stacks and the
# Windows NVRTC for the Wine tests from PyPI (tests that need them skip if PyPI is unreachable), then
# runs every test with the real NVRTC.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -DNVRTC_CACHE_WERROR=ON
eval "$(scripts/python_env.sh)"
eval "$(scripts/windows-nvrtc.sh "${BUILD_DIR:-build}/windows-nvrtc")"
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
