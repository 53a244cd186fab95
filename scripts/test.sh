#!/usr/bin/env bash
# The test command: sets up and builds (warnings are errors), prepares the Python JIT stacks from
# PyPI (tests that need them skip if PyPI is unreachable), then runs every test with the real NVRTC.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -DNVRTC_CACHE_WERROR=ON
eval "$(scripts/python_env.sh)"
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
