#!/usr/bin/env bash
# aarch64 (GH200, GB200, Jetson) without an aarch64 machine: cross-builds nvrtc-cache with Debian's
# g++-aarch64-linux-gnu and arm64 multiarch libraries into build-aarch64/ (or $BUILD_DIR), then runs tests
# under qemu-user against the aarch64 NVRTC of the nvidia-cuda-nvrtc wheel.
#
#   scripts/aarch64.sh               build, then the emulated subset of the gtest suites (what CI runs)
#   scripts/aarch64.sh --build-only  build only
#   scripts/aarch64.sh --full        build, then the whole gtest suites under qemu-user (slow)
#
# Emulated programs run against Debian's arm64 multiarch libc (libc6:arm64, qemu's -L /), not the
# cross toolchain's sysroot /usr/aarch64-linux-gnu: that older libc6-arm64-cross build spins forever
# in the child of fork() under qemu-user (any qemu version tried, 7.2 and 10.0), the multiarch one
# does not, and the test harness forks for every child process.
#
# Installs what is missing (dpkg --add-architecture arm64; the cross compiler, qemu-user-static and the
# arm64 -dev packages), downloads the wheel once into $NVRTC_CACHE_AARCH64_DOWNLOADS (default
# ~/.cache/nvrtc-cache-aarch64). Test children run behind NVRTC_CACHE_TEST_RUNNER (tests/support/process.cc):
# containers usually have no binfmt_misc entry for aarch64, so the kernel cannot start one directly.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=subset
case "${1:-}" in
  "") ;;
  --full) mode=full ;;
  --build-only) mode=build ;;
  *) echo "usage: $0 [--build-only | --full]" >&2; exit 2 ;;
esac

nvrtc_version=13.0.88  # the toolkit's NVRTC 13.0 (/usr/local/cuda), for aarch64
build_dir="${BUILD_DIR:-build-aarch64}"
downloads="${NVRTC_CACHE_AARCH64_DOWNLOADS:-${XDG_CACHE_HOME:-$HOME/.cache}/nvrtc-cache-aarch64}"
run_root=/  # libc6:arm64 and the other arm64 multiarch libraries (see above)
qemu=/usr/bin/qemu-aarch64-static

# ---- dependencies ----
packages=(g++-aarch64-linux-gnu qemu-user-static libc6:arm64 libstdc++6:arm64 liblmdb-dev:arm64 libxxhash-dev:arm64 libb2-dev:arm64
          libgtest-dev:arm64 libfmt-dev:arm64 libzstd-dev:arm64 libssl-dev:arm64 python3-pip)
. scripts/lib/apt.sh
ensure_packages --no-install-recommends "${packages[@]}"  # the :arm64 ones add the architecture first

# libhttp-parser-dev is not multi-arch: installing its arm64 build would remove the host's, which the
# native builds link. Its arm64 package is downloaded and unpacked into $downloads instead (apt checks
# its signature), and the cross build is pointed at the static library in it.
http_parser_root="$downloads/libhttp-parser-dev-arm64"
if [ ! -e "$http_parser_root/usr/lib/aarch64-linux-gnu/libhttp_parser.a" ]; then
  mkdir -p "$downloads"
  (cd "$downloads" && rm -f libhttp-parser-dev_*_arm64.deb && apt-get download -qq libhttp-parser-dev:arm64)
  dpkg -x "$downloads"/libhttp-parser-dev_*_arm64.deb "$http_parser_root"
fi

# ---- the aarch64 NVRTC (libnvrtc.so.13 and its builtins) ----
nvrtc_dir="$downloads/nvidia-cuda-nvrtc-$nvrtc_version/nvidia/cu13/lib"
if [ ! -e "$nvrtc_dir/libnvrtc.so.13" ]; then
  mkdir -p "$downloads"
  pip=(python3 -m pip)
  [ -x .venv/bin/pip ] && pip=(.venv/bin/pip)
  "${pip[@]}" download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux2014_aarch64 --python-version 3.11 -d "$downloads" "nvidia-cuda-nvrtc==$nvrtc_version"
  python3 -m zipfile -e "$downloads"/nvidia_cuda_nvrtc-"$nvrtc_version"-*aarch64*.whl \
    "$downloads/nvidia-cuda-nvrtc-$nvrtc_version"
fi

# ---- cross build ----
start=$SECONDS
cmake -S . -B "$build_dir" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNVRTC_CACHE_WERROR=ON -DNVRTC_CACHE_BENCH=OFF -DNVRTC_CACHE_TARGET_NVRTC_DIR="$nvrtc_dir" \
  -DHTTP_PARSER_INCLUDE_DIR="$http_parser_root/usr/include" \
  -DHTTP_PARSER_LIBRARY="$http_parser_root/usr/lib/aarch64-linux-gnu/libhttp_parser.a" >/dev/null
# The subset runs shim_smoke_tests (three of shim_tests' files: tests/integration/CMakeLists.txt);
# --full the whole shim, unit and watch suites (built only for it).
targets=(nvrtc_cache_shim nvrtc_cache_proxy nvrtc_cache_cli shim_smoke_tests)
[ "$mode" = full ] && targets+=(shim_tests watch_tests unit_tests)
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}"
echo "aarch64: cross build $((SECONDS - start)) s"
file "$build_dir/lib/libnvrtc-cache.so" | grep -q 'ARM aarch64' || { echo "aarch64: the shim is not aarch64" >&2; exit 1; }
[ "$mode" = build ] && exit 0

# ---- tests under qemu-user ----
runner="$qemu -L $run_root"
export QEMU_LD_PREFIX="$run_root"
export NVRTC_CACHE_TEST_RUNNER="$runner"
# The Python JIT stacks and NVRTC wheels of .venv are x86-64: those tests skip here.
unset NVRTC_CACHE_REQUIRE_PYPI NVRTC_CACHE_TEST_PYTHON NVRTC_CACHE_TEST_NVRTC11 NVRTC_CACHE_TEST_NVRTC12 NVRTC_CACHE_TEST_NVRTC13
# The aarch64 NVRTC finds libnvrtc-builtins beside itself through the library path.
export LD_LIBRARY_PATH="$nvrtc_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The subset (CI) and the first part of --full: the shim's exports and the libc coverage of the
# aarch64 NVRTC (no compiles), then a linked and a dlopen client cold then warm (byte-identical to
# NVRTC without the shim, warm served from the cache). Every NVRTC compile under qemu-user takes tens
# of seconds, so the other client kinds, dependency tracking and fork run in --full only.
subset_shim="LibcCoverage.TheWatchedTableIsWhatTheShimAndTheProxyExport:LibcCoverage.ToolkitNvrtcReadsOnlyThroughWatchedFunctions"
subset_shim+=":Shim.ExportsOnlyTheJitLibrariesAndTheObservedLibcEntryPoints"
subset_shim+=":Loading.LinkedWithLnvrtc:Loading.DlopenByAbsolutePathAndDlsym"
# Never under qemu-user without binfmt_misc: these start an aarch64 program from an aarch64 program
# other than the harness (nvrtc-cache run, doctor's sample compile, a shell script, script(1) for a
# terminal), which the kernel cannot execute, or load the aarch64 NVRTC into the host's Python.
no_emulation="Cli.RunPreloadsTheShimKeepsLdPreloadAndPassesTheExitCode:Cli.RunReachesGrandchildrenThroughShellScripts"
no_emulation+=":Cli.RunSaysWhenTheProgramIsSetuidOrTheShimIsMissing"
no_emulation+=":Cli.StatsCountAcrossProcessesAndClearEmptiesTheCache:CliDoctor.HealthySetupPassesAndARefusedDirectoryFails"
no_emulation+=":CliProgress.ABarOnATerminalAndNothingWhenPiped:Loading.ProxyMode*:Loading.PythonCtypesBySoname"
no_emulation+=":Record.*:Replay.*"
no_emulation+=":ShimRedisTls.PythonsOwnTlsKeepsWorkingWhileTheShimTalksTls:ShimRedisTls.OnlyATlsTierLoadsOpenSsl"

failed=0
run() {  # run NAME COMMAND...: one emulated gtest binary, timed
  local name=$1 t=$SECONDS; shift
  echo "aarch64: $name" >&2
  if ! "$@"; then failed=1; fi
  echo "aarch64: $name $((SECONDS - t)) s" >&2
}
cd "$build_dir"
if [ "$mode" = subset ]; then
  run shim_tests_subset $runner bin/shim_smoke_tests --gtest_filter="$subset_shim" --gtest_brief=1
else
  run unit_tests $runner bin/unit_tests --gtest_brief=1
  run watch_tests $runner bin/watch_tests --gtest_brief=1
  run shim_tests_subset $runner bin/shim_tests --gtest_filter="$subset_shim" --gtest_brief=1
  run shim_tests $runner bin/shim_tests --gtest_filter="-$no_emulation:$subset_shim" --gtest_brief=1
fi
echo "aarch64: tests $((SECONDS - start)) s in all" >&2
exit "$failed"
