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
# One persistent wineserver for the Wine tests, with the prefix's services started here (wineboot),
# detached from the tests' pipes; both stopped when the tests end. Otherwise each test's first Wine
# program starts a server and services that inherit its output pipes (the test then waits for them
# to linger out), and a server exiting between two tests can reset the next one's connection
# ("recvmsg: Connection reset by peer").
wineserver="$(dirname "${NVRTC_CACHE_WINE:-/nonexistent/wine64}")/wineserver64"
if [ -n "${NVRTC_CACHE_WINE_NVRTC_DIR:-}" ] && [ -x "$wineserver" ]; then
  export WINEPREFIX="$NVRTC_CACHE_WINE_NVRTC_DIR/wineprefix" WINEDEBUG=-all
  trap '"$wineserver" -k </dev/null >/dev/null 2>&1 || true' EXIT
  "$wineserver" -p </dev/null >/dev/null 2>&1 || true
  "$NVRTC_CACHE_WINE" wineboot </dev/null >/dev/null 2>&1 || true
fi
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
