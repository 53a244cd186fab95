#!/usr/bin/env bash
# Cross-builds the Windows port with Debian's mingw-w64 (x86_64-w64-mingw32-g++-posix) and installs
# it under PREFIX/bin: the proxy nvrtc64_130_0.dll (and its copy nvrtc-cache-inject64.dll, which
# `nvrtc-cache.exe run` injects), the stand-in nvJitLink_130_0.dll and nvrtc-cache.exe. The build tree is $WINDOWS_BUILD_DIR (default
# build/windows-cross); extra arguments go to the CMake configure step (e.g. -DNVRTC_CACHE_WERROR=ON).
# Usage: scripts/windows-build.sh PREFIX [CMAKE_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
  echo "usage: scripts/windows-build.sh PREFIX [CMAKE_ARGS...]" >&2
  exit 2
fi
prefix=$1
shift
command -v x86_64-w64-mingw32-g++-posix >/dev/null ||
  { echo "windows-build: x86_64-w64-mingw32-g++-posix is missing (apt-get install g++-mingw-w64-x86-64-posix)" >&2; exit 1; }
# LMDB, libb2 (BLAKE2b) and zstd from Debian's source packages, into .deps/.
scripts/fetch_source_package.sh lmdb libraries/liblmdb/mdb.c
scripts/fetch_source_package.sh libb2 src/blake2b-ref.c
scripts/fetch_source_package.sh libzstd lib/zstd.h
build_dir="${WINDOWS_BUILD_DIR:-build/windows-cross}"
cmake -S windows -B "$build_dir" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/x86_64-w64-mingw32.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" "$@" >/dev/null
cmake --build "$build_dir" -j"${WINDOWS_BUILD_JOBS:-2}"
cmake --install "$build_dir" >/dev/null
echo "windows-build: installed in $prefix/bin" >&2
