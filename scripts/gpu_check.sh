#!/usr/bin/env bash
# The checks that need an NVIDIA GPU (CI has none): tests/gpu/gpu_pipeline.py compiles with NVRTC,
# links with nvJitLink and compiles NVVM IR through cuda.core, CuPy and numba-cuda, then loads and
# launches every kernel. It runs without the cache, then through `nvrtc-cache run` cold and warm, each
# a fresh process. Fails unless every kernel computes the right numbers each time, every compiler
# output is byte-identical to the uncached run, and the warm run compiled, linked and NVVM-compiled
# nothing for real (no new misses of any kind, a hit for each cold miss) except the programs the
# design keys with their directory (docs/design.md, "The program's directory, only where it matters"):
# CuPy names each program by a fresh temporary directory, and where NVRTC's log names that directory
# (a warning) the result is that directory's alone. Such a warm miss passes only when the cold
# run's entry of the same file name has a log that names the cold run's directory; each is listed.
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
# The warm misses whose cold entry's log names the cold run's directory: expected, and counted out.
expected=$("$python" - "$cli" "$work/warm.err" <<'PY'
import json, os, re, subprocess, sys
cli, err = sys.argv[1], sys.argv[2]
# "miss program 'LABEL' (name 'GIVEN'; key HEX): ...": the name as given where the label differs.
misses = [given or label for label, given in
          re.findall(r": miss program '([^']*)' \((?:name '([^']*)'; )?key [0-9a-f]+\): ", open(err).read())]
entries = json.loads(subprocess.run([cli, "ls", "--json"], capture_output=True, check=True).stdout)["entries"]
explained = 0
for name in misses:
    for e in entries:
        cold = e.get("program_name", "")
        if cold == name or os.path.basename(cold) != os.path.basename(name) or not os.path.isabs(cold):
            continue
        log = subprocess.run([cli, "extract", e["key"], "--log", "-o", "-"], capture_output=True).stdout
        if os.path.dirname(cold).encode() in log:
            print(f"expected miss: {name}: the cold run's log names {os.path.dirname(cold)}", file=sys.stderr)
            explained += 1
            break
print(explained)
PY
)
[ "${warm[misses]}" -eq $((cold[misses] + expected)) ] ||
  { grep -E ': (miss|not cached) ' "$work/warm.err" >&2; fail "warm: misses grew from ${cold[misses]} to ${warm[misses]} (${expected} expected)"; }
for k in link_misses nvvm_misses; do
  [ "${warm[$k]}" -eq "${cold[$k]}" ] ||
    { grep -E ': (miss|not cached) ' "$work/warm.err" >&2; fail "warm: $k grew from ${cold[$k]} to ${warm[$k]}"; }
done
[ $((warm[hits] - cold[hits])) -ge $((cold[misses] - expected)) ] || fail "warm: fewer hits than cold misses"
for k in link_ nvvm_; do
  [ $((warm[${k}hits] - cold[${k}hits])) -ge "${cold[${k}misses]}" ] || fail "warm: fewer ${k}hits than cold ${k}misses"
done
cmp -s "$work/real.txt" "$work/cold.txt" || { diff "$work/real.txt" "$work/cold.txt" >&2; fail "cold output differs from the real libraries'"; }
cmp -s "$work/real.txt" "$work/warm.txt" || { diff "$work/real.txt" "$work/warm.txt" >&2; fail "warm output differs from the real libraries'"; }
echo "gpu_check: passed: every kernel computed right without the cache, cold and warm; outputs byte-identical; warm compiled nothing but the ${expected} program(s) whose log names their fresh directory"
