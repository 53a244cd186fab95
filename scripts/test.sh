#!/usr/bin/env bash
# The test command: sets up and builds (warnings are errors), prepares the Python JIT stacks and the
# Windows NVRTC for the Wine tests from PyPI (tests that need them skip if PyPI is unreachable),
# cross-builds the Windows port into build/windows-prefix where mingw-w64 is present (the Wine tests
# then run through its proxy DLL), then runs every test with the real NVRTC.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -DNVRTC_CACHE_WERROR=ON
eval "$(scripts/python_env.sh)"
eval "$(scripts/windows-nvrtc.sh "${BUILD_DIR:-build}/windows-nvrtc")"
if command -v x86_64-w64-mingw32-g++-posix >/dev/null; then
  windows_prefix="$(cd "${BUILD_DIR:-build}" && pwd)/windows-prefix"
  WINDOWS_BUILD_DIR="${BUILD_DIR:-build}/windows-cross" scripts/windows-build.sh "$windows_prefix" -DNVRTC_CACHE_WERROR=ON
  export NVRTC_CACHE_WINDOWS_PREFIX="$windows_prefix"
fi
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
