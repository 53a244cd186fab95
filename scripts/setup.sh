#!/usr/bin/env bash
# Installs the build dependencies (Debian packages) if any is missing, then configures and builds
# nvrtc-cache into build/ (or $BUILD_DIR). Extra arguments go to the CMake configure step.
#
#   scripts/setup.sh [CMAKE-ARGS...]            everything: the cache, its CLI, every test and benchmark
#   scripts/setup.sh --minimal [CMAKE-ARGS...]  only what the demo needs: the packages that the shim, the
#       CLI and the demo client (bench/nvrtc_demo.cc) are built from, without their recommends (no test
#       framework, Wine, mingw-w64 or redis-server), configured without tests (NVRTC_CACHE_TESTS=OFF)
#       and without debug information (-O2, as the full build), building only those three targets (no
#       proxy: `cmake --install` needs the full build). scripts/demo.sh uses it, into its own build
#       directory.
set -euo pipefail
cd "$(dirname "$0")/.."
minimal=0 apt_options=()
if [ "${1:-}" = --minimal ]; then minimal=1 apt_options=(--no-install-recommends); shift; fi

# What the shim, the proxy and the CLI are built from: the toolchain, CMake, dpkg-source (dpkg-dev) for
# LMDB's source package, the libraries linked in (BLAKE2, xxHash, zstd, http-parser), OpenSSL's headers (rediss:// tiers
# load libssl.so.3 at run time, only when one is configured), the CLI's header libraries, and
# Google Benchmark, which bench/ (where the demo client lives) finds at configure time. The shared liblmdb
# is the fallback when LMDB's source cannot be had.
packages=(build-essential cmake dpkg-dev liblmdb-dev liblmdb0 libxxhash-dev libb2-dev libzstd-dev libssl-dev
          libhttp-parser-dev libcli11-dev nlohmann-json3-dev libfmt-dev libbenchmark-dev)
if ((!minimal)); then
  # The tests and the packages' checks: gtest, Python venvs, the ELF tools, Redis (with TLS and cluster
  # mode; redis-tools for `redis-cli --cluster create`), hiredis, nginx (nginx-light has WebDAV PUT/DELETE
  # and TLS: the HTTP tier's tests serve a cache with it), and the openssl CLI that makes the TLS tests'
  # certificates and htpasswd entries.
  packages+=(pkg-config libgtest-dev python3 python3-venv binutils file redis-server redis-tools libhiredis-dev
             nginx-light openssl)
  # Windows under Wine (tests/integration/wine_test.cc): the loader and the mingw-w64 cross compiler, x86-64 hosts only.
  if [ "$(uname -m)" = x86_64 ]; then packages+=(wine64 g++-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64); fi
fi
. scripts/lib/apt.sh
ensure_packages "${apt_options[@]}" "${packages[@]}"
if [ ! -e /usr/local/cuda/include/nvrtc.h ]; then
  echo "setup: the CUDA toolkit (NVRTC) is expected at /usr/local/cuda" >&2
  exit 1
fi

# LMDB's source from the distribution's source package, built into the cache (CMakeLists.txt); without
# it the build falls back to loading the shared liblmdb at run time.
scripts/fetch_lmdb_source.sh || echo "setup: LMDB's source package is unavailable; liblmdb.so.0 will be loaded at run time" >&2

build_dir="${BUILD_DIR:-build}"
if ((minimal)); then
  # Debug information adds about 40% to this build's compile time.
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DNVRTC_CACHE_TESTS=OFF "$@" >/dev/null
  cmake --build "$build_dir" -j"$(nproc)" --target nvrtc_cache_shim nvrtc_cache_cli nvrtc_demo
else
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$build_dir" -j"$(nproc)"
fi
