#!/usr/bin/env bash
# The prewarm recipe, end to end on this machine: record a real client's compiles on one GPU
# architecture, replay them for three others into an empty store, ship that store (export/import),
# and run the client for each other architecture from another working directory: every compile
# must be a hit, with exactly NVRTC's bytes. A JIT pipeline (NVRTC -dlto, then nvJitLink -lto) is
# recorded and replayed beside it: every link must be a hit too, with exactly nvJitLink's bytes.
#
#   scripts/prewarm_recipe.sh [BUILD_DIR]   (default: build; needs the CLI, the shim, nvrtc_probe, link_client)
#
# The client is nvrtc_probe (tests/clients/nvrtc_probe.cc; source_file scenario: one program per run,
# its architecture option from PROBE_ARCH, headers on disk through -I), which prints every observable
# result, so the output under the cache can be compared byte for byte with a run against the real NVRTC.
# The pipeline is link_client (tests/clients/link_client.cc; lto scenario, its architecture from
# LINK_ARCH), which prints every nvJitLink output the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
cli="$PWD/$build/bin/nvrtc-cache"
probe="$PWD/$build/bin/nvrtc_probe"
link_client="$PWD/$build/bin/link_client"
for f in "$cli" "$probe" "$link_client"; do [ -x "$f" ] || { echo "prewarm_recipe: $f is missing; build first" >&2; exit 2; }; done

work=$(mktemp -d /tmp/nvrtc-cache-prewarm-XXXXXX)
trap 'rm -rf "$work"' EXIT
unset NVRTC_CACHE_RECORD NVRTC_CACHE_DISABLE LD_PRELOAD
recorded_arch=sm_80
other_archs=(sm_90 sm_100 sm_120)

# The app's programs: sources and a header directory, as a JIT stack ships them.
mkdir -p "$work/app/include" "$work/app/kernels"
cat >"$work/app/include/app_config.h" <<'H'
#pragma once
#define APP_SCALE 3
H
cat >"$work/app/kernels/scale.cu" <<'K'
#include "app_config.h"
extern "C" __global__ void scale(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= APP_SCALE; }
K
cat >"$work/app/kernels/reduce.cu" <<'K'
#include <cub/block/block_reduce.cuh>
extern "C" __global__ void reduce(const int* in, int* out) {
  using Reduce = cub::BlockReduce<int, 128>;
  __shared__ typename Reduce::TempStorage tmp;
  int sum = Reduce(tmp).Sum(in[threadIdx.x]);
  if (threadIdx.x == 0) *out = sum;
}
K
cat >"$work/app/kernels/poly.cu" <<'K'
template <int N> struct Poly { __device__ static float eval(float x) { return x * Poly<N - 1>::eval(x) + N; } };
template <> struct Poly<0> { __device__ static float eval(float) { return 1.0f; } };
extern "C" __global__ void poly(float* x) { x[threadIdx.x] = Poly<24>::eval(x[threadIdx.x]); }
K
kernels=(scale reduce poly)
include_dirs="$work/app/include:/usr/local/cuda/include/cccl:/usr/local/cuda/include"

# Runs the client once per kernel with architecture option $1; the rest is the command prefix.
run_app() {
  local arch="$1"; shift
  for k in "${kernels[@]}"; do
    PROBE_SOURCE_FILE="$work/app/kernels/$k.cu" PROBE_PROGRAM_NAME="$k.cu" PROBE_INCLUDE_DIR="$include_dirs" \
      PROBE_ARCH="-arch=$arch" PROBE_OPTIONS="-std=c++17" "$@" "$probe" source_file
  done
}
counter() {  # counter CACHE_DIR NAME
  NVRTC_CACHE_DIR="$1" "$cli" stats --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}

echo "== 1. record: the app on the build machine ($recorded_arch), nvrtc-cache run --record"
(cd "$work/app" && NVRTC_CACHE_DIR="$work/dev-cache" run_app "$recorded_arch" "$cli" run --record "$work/app.rec" -- >/dev/null)
(cd "$work/app" && LINK_ARCH="${recorded_arch#sm_}" NVRTC_CACHE_DIR="$work/dev-cache" \
  "$cli" run --record "$work/app.rec" -- "$link_client" lto >/dev/null)
ls -l "$work/app.rec" | awk '{print "   recording: " $5 " bytes"}'

echo "== 2. replay for ${other_archs[*]} into an empty store"
NVRTC_CACHE_DIR="$work/prewarmed" "$cli" replay "$work/app.rec" --arch "$(IFS=,; echo "${other_archs[*]}")" --jobs 2

echo "== 3. ship it"
NVRTC_CACHE_DIR="$work/prewarmed" "$cli" export "$work/app.nvrtc-cache"
store_bytes=$(du -sb "$work/prewarmed/store" | cut -f1)
archive_bytes=$(stat -c %s "$work/app.nvrtc-cache")
echo "   archive: $archive_bytes bytes (the store it came from: $store_bytes bytes on disk)"
NVRTC_CACHE_DIR="$work/image-cache" "$cli" import "$work/app.nvrtc-cache"

echo "== 4. the app on each GPU of the fleet, from another working directory, with the shipped cache"
mkdir -p "$work/elsewhere"
failures=0
for arch in "${other_archs[@]}"; do
  expected=$(cd "$work/elsewhere" && run_app "$arch" env)  # the real NVRTC, no cache
  hits_before=$(counter "$work/image-cache" hits)
  misses_before=$(counter "$work/image-cache" misses)
  served=$(cd "$work/elsewhere" && NVRTC_CACHE_DIR="$work/image-cache" run_app "$arch" "$cli" run --)
  hits=$(( $(counter "$work/image-cache" hits) - hits_before ))
  misses=$(( $(counter "$work/image-cache" misses) - misses_before ))
  same=no; [ "$served" == "$expected" ] && same=yes
  echo "   $arch: ${#kernels[@]} compiles, $hits hits, $misses misses, byte-identical to NVRTC: $same"
  if [ "$hits" -ne "${#kernels[@]}" ] || [ "$misses" -ne 0 ] || [ "$same" != yes ]; then failures=$((failures + 1)); fi
  # The pipeline, in the directory it was recorded in (NVRTC's -dlto output depends on the working
  # directory, so its key holds it): its two compiles and its link, served.
  expected=$(cd "$work/app" && LINK_ARCH="${arch#sm_}" "$link_client" lto)
  hits_before=$(counter "$work/image-cache" hits)
  link_hits_before=$(counter "$work/image-cache" link_hits)
  link_misses_before=$(counter "$work/image-cache" link_misses)
  misses_before=$(counter "$work/image-cache" misses)
  served=$(cd "$work/app" && LINK_ARCH="${arch#sm_}" NVRTC_CACHE_DIR="$work/image-cache" "$cli" run -- "$link_client" lto)
  hits=$(( $(counter "$work/image-cache" hits) - hits_before ))
  link_hits=$(( $(counter "$work/image-cache" link_hits) - link_hits_before ))
  misses=$(( $(counter "$work/image-cache" misses) - misses_before + $(counter "$work/image-cache" link_misses) - link_misses_before ))
  same=no; [ "$served" == "$expected" ] && same=yes
  echo "   $arch: NVRTC -dlto + nvJitLink -lto: $hits compile hits, $link_hits link hits, $misses misses, byte-identical: $same"
  if [ "$hits" -ne 2 ] || [ "$link_hits" -ne 1 ] || [ "$misses" -ne 0 ] || [ "$same" != yes ]; then failures=$((failures + 1)); fi
done
if [ "$failures" -ne 0 ]; then
  echo "prewarm_recipe: FAILED ($failures architectures not fully served)" >&2
  exit 1
fi
echo "prewarm_recipe: every compile and link of every replayed architecture was a hit, byte-identical to NVRTC and nvJitLink"
