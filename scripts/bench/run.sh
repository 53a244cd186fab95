#!/usr/bin/env bash
# The benchmark suite in one command: builds what it needs (into build/ or $BUILD_DIR), prepares .venv
# (scripts/python_env.sh: cuda.core, the nvidia-cutlass headers, matplotlib), runs every benchmark and
# writes docs/performance.md and docs/performance.png (see scripts/bench/suite.py).
# usage: scripts/bench/run.sh [--quick] [other scripts/bench/suite.py options]
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir=${BUILD_DIR:-build}
if [[ ! -f $build_dir/CMakeCache.txt ]]; then
  BUILD_DIR=$build_dir scripts/setup.sh >&2
fi
targets=(nvrtc_cache_shim nvrtc_cache_cli nvrtc_cache_api nvrtc_bench link_bench hit_floor store_scaling
         first_hit_bench store_open_bench tier_bench entry_compression_bench)
# The Redis round trips need hiredis, without which CMake defines no such target (the section skips).
if cmake --build "$build_dir" --target help 2>/dev/null | grep -qw redis_round_trip; then targets+=(redis_round_trip); fi
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}" >&2
eval "$(scripts/python_env.sh)"
python=${NVRTC_CACHE_TEST_PYTHON:-}
if [[ -z $python ]] || ! "$python" -c "import matplotlib, cuda.core" 2>/dev/null; then
  echo "bench/run.sh: .venv lacks cuda.core or matplotlib (scripts/python_env.sh could not install them)" >&2
  exit 1
fi
exec "$python" scripts/bench/suite.py --build "$build_dir" --python "$python" "$@"
