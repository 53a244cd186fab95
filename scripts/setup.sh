#!/usr/bin/env bash
# Installs the build dependencies (Debian packages) if any is missing, then configures and builds
# nvrtc-cache into build/ (or $BUILD_DIR). Extra arguments go to the CMake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config liblmdb-dev liblmdb0 libxxhash-dev libb2-dev libgtest-dev
          libbenchmark-dev python3 python3-venv binutils dpkg-dev file redis-server libhiredis-dev
          libzstd-dev libcli11-dev nlohmann-json3-dev libfmt-dev)
# Windows under Wine (tests/integration/wine_test.cc): the loader and the mingw-w64 cross compiler, x86-64 hosts only.
if [ "$(uname -m)" = x86_64 ]; then packages+=(wine64 g++-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64); fi
. scripts/lib/apt.sh
ensure_packages "${packages[@]}"
if [ ! -e /usr/local/cuda/include/nvrtc.h ]; then
  echo "setup: the CUDA toolkit (NVRTC) is expected at /usr/local/cuda" >&2
  exit 1
fi

# LMDB's source from the distribution's source package, built into the cache (CMakeLists.txt); without
# it the build falls back to loading the shared liblmdb at run time.
scripts/fetch_lmdb_source.sh || echo "setup: LMDB's source package is unavailable; liblmdb.so.0 will be loaded at run time" >&2

build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
