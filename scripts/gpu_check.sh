#!/usr/bin/env bash
# The checks that need an NVIDIA GPU (CI has none): tests/gpu/gpu_pipeline.py compiles with NVRTC,
# links with nvJitLink and compiles NVVM IR through cuda.core, CuPy and numba-cuda, then loads and
# launches every kernel. It runs without the cache, then through `nvrtc-cache run` cold and warm, each
# a fresh process. Fails unless every kernel computes the right numbers each time, every compiler
# output is byte-identical to the uncached run, and the warm run compiled, linked and NVVM-compiled
# nothing for real (no new misses of any kind, a hit for each cold miss).
#
# usage: scripts/gpu_check.sh [CLI]    CLI: the nvrtc-cache program (default: nvrtc-cache on PATH)
#        PYTHON=... selects the Python that has cuda.core, CuPy and numba-cuda (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:-nvrtc-cache}
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NVRTC_CACHE_DIR="$work/cache" PYTHONUNBUFFERED=1
fail() { echo "gpu_check: FAILED: $*" >&2; exit 1; }
counter() { "$cli" stats --json | "$python" -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

# run LABEL [PREFIX...]: the workload with CuPy's own kernel cache empty, so CuPy calls NVRTC.
run() {
  local label=$1; shift
  CUPY_CACHE_DIR="$work/cupy-$label" "$@" "$python" tests/gpu/gpu_pipeline.py >"$work/$label.txt" 2>"$work/$label.err" ||
    { cat "$work/$label.txt" "$work/$label.err" >&2; fail "$label: a kernel computed a wrong result or the workload failed"; }
  sed "s/^/  $label: /" "$work/$label.txt"
}

run real
run cold "$cli" run --
kinds="misses link_misses nvvm_misses hits link_hits nvvm_hits uncacheable link_uncacheable nvvm_uncacheable"
declare -A cold
for k in $kinds; do cold[$k]=$(counter "$k"); done
echo "gpu_check: cold: $(for k in $kinds; do printf '%s=%s ' "$k" "${cold[$k]}"; done)"
[ "${cold[misses]}" -gt 0 ] && [ "${cold[link_misses]}" -gt 0 ] && [ "${cold[nvvm_misses]}" -gt 0 ] ||
  fail "cold: the cache saw no compile, link or NVVM compile of some kind"
run warm env NVRTC_CACHE_LOG=info "$cli" run --
declare -A warm
for k in $kinds; do warm[$k]=$(counter "$k"); done
echo "gpu_check: warm: $(for k in $kinds; do printf '%s=%s ' "$k" "${warm[$k]}"; done)"
for k in misses link_misses nvvm_misses; do
  [ "${warm[$k]}" -eq "${cold[$k]}" ] ||
    { grep -E ': (miss|not cached) ' "$work/warm.err" >&2; fail "warm: $k grew from ${cold[$k]} to ${warm[$k]}"; }
done
for k in "" link_ nvvm_; do
  [ $((warm[${k}hits] - cold[${k}hits])) -ge "${cold[${k}misses]}" ] || fail "warm: fewer ${k}hits than cold ${k}misses"
done
cmp -s "$work/real.txt" "$work/cold.txt" || { diff "$work/real.txt" "$work/cold.txt" >&2; fail "cold output differs from the real libraries'"; }
cmp -s "$work/real.txt" "$work/warm.txt" || { diff "$work/real.txt" "$work/warm.txt" >&2; fail "warm output differs from the real libraries'"; }
echo "gpu_check: passed: every kernel computed right without the cache, cold and warm; outputs byte-identical; warm compiled nothing"
