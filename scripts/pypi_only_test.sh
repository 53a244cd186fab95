#!/usr/bin/env bash
# A user with only PyPI's CUDA, end to end (issue "Where Python users live"'s scenario): with the
# toolkit hidden (scripts/lib/hide_toolkit.sh: /usr/local/cuda* under empty tmpfs mounts in a mount
# namespace of this script, checked invisible), a fresh venv gets PyPI's CUDA wheels only (cuda-core,
# cuda-bindings, nvidia-cuda-nvrtc 13.5, nvidia-nvjitlink; from a wheelhouse kept in .venv-pypi-wheels/,
# downloaded once) and WHEEL, the nvrtc-cache wheel scripts/package_test.sh built in the same kind of
# namespace. Then:
#   - `nvrtc-cache doctor` (the venv activated) passes and names the wheel's NVRTC, found in
#     site-packages, and nothing under /usr/local/cuda;
#   - tests/data/python/pypi_only.py (cuda.core: name expressions, an LTO-IR compile linked by
#     cuda.core's Linker, a cuda_fp16.h kernel through NVRTC's bundled headers) runs plain, then cold
#     and warm through each way into the cache: `nvrtc-cache run` and nvrtc_cache.activate() in a plain
#     interpreter, and `nvrtc-cache run --proxy` (cuda.pathfinder loads by full path, so it is reached
#     through the command's sitecustomize, which activates the proxies). Every output is byte for byte the
#     plain run's; each warm run's counters (`stats --json`) show a hit for every compile and the link; one more warm run
#     with the bundled headers removed installs them again where NVRTC does, every compile still a hit.
# Prints the install time, the wheel's tag and, for each way that reaches the cache, warm against
# plain: the program's wall time and its compiles' own time.
#
#   scripts/pypi_only_test.sh WHEEL [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "pypi_only_test: $*" >&2; exit 1; }
[ $# -ge 1 ] && [ -f "$1" ] || fail "usage: $0 WHEEL [WORK_DIR]"
if [ "${NVRTC_CACHE_TOOLKIT_HIDDEN:-}" != 1 ]; then
  . scripts/lib/hide_toolkit.sh
  wheel=$(realpath "$1") work=${2:-}
  [ -z "$work" ] || mkdir -p "$work"
  [ -n "$work" ] || { work=$(mktemp -d /tmp/nvrtc-cache-pypi-only-XXXXXX); trap 'rm -rf "$work"' EXIT; }
  NVRTC_CACHE_TOOLKIT_HIDDEN=1 toolkit_hidden "$0" "$wheel" "$(realpath "$work")"
  exit
fi
wheel=$1 work=$2
python=/usr/bin/python3
program="$PWD/tests/data/python/pypi_only.py"
# PyPI's CUDA for cuda.core, pinned (cuda-pathfinder 1.9, NVRTC 13.5: bundled headers); numpy comes with cuda-core.
requirements=(cuda-core==1.2.2 cuda-bindings==13.4.4 cuda-pathfinder==1.9.1 nvidia-cuda-nvrtc==13.5.37
              nvidia-nvjitlink==13.5.37)
wheelhouse="$PWD/.venv-pypi-wheels"
"$python" -m venv "$work/venv"
venv="$work/venv" pip="$work/venv/bin/pip"
if [ "$(cat "$wheelhouse/requirements.txt" 2>/dev/null)" != "${requirements[*]}" ]; then
  rm -rf "$wheelhouse"
  timeout 900 "$pip" download --quiet --only-binary=:all: --dest "$wheelhouse" "${requirements[@]}" ||
    fail "pip download of ${requirements[*]} failed"
  echo "${requirements[*]}" >"$wheelhouse/requirements.txt"
fi
start=$(date +%s%N)
"$pip" install --quiet --no-index --find-links "$wheelhouse" "${requirements[@]}" "$wheel" ||
  fail "pip install of the wheel and PyPI's CUDA failed"
install_ms=$((($(date +%s%N) - start) / 1000000))
tag=${wheel##*-} tag=${tag%.whl}
echo "pypi_only_test: installed ${wheel##*/} and ${requirements[*]} in $install_ms ms (toolkit hidden)"
vpython="$venv/bin/python" cli="$venv/bin/nvrtc-cache"
nvrtc=$(ls "$venv"/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13) || fail "no NVRTC wheel in the venv"
"$vpython" -c 'import nvrtc_cache' || fail "nvrtc_cache does not import"
# Nothing but the venv's wheels: the venv holds no other NVRTC, nvJitLink or libNVVM.
extra=$(find "$venv" \( -name 'libnvrtc.so*' -o -name 'libnvJitLink.so*' -o -name 'libnvvm.so*' \) \
          ! -path '*/nvidia/cu13/lib/*' ! -path '*/lib/nvrtc-cache/proxy/*')
[ -z "$extra" ] || fail "the venv holds other CUDA libraries: $extra"

# doctor, as in an activated venv: the wheel's NVRTC, found in site-packages.
doctor=$(PATH="$venv/bin:$PATH" VIRTUAL_ENV="$venv" NVRTC_CACHE_DIR="$work/cache-doctor" "$cli" doctor 2>&1) ||
  { echo "$doctor" >&2; fail "doctor failed"; }
grep -qF "$nvrtc (NVRTC 13.5" <<<"$doctor" && grep -q 'found in site-packages' <<<"$doctor" ||
  { echo "$doctor" >&2; fail "doctor does not name the wheel's NVRTC ($nvrtc)"; }
grep -q 'served from the cache, byte-identical' <<<"$doctor" || { echo "$doctor" >&2; fail "doctor's sample compile was not served"; }
! grep -q /usr/local/cuda <<<"$doctor" || { echo "$doctor" >&2; fail "doctor names /usr/local/cuda"; }
echo "pypi_only_test: doctor passes; NVRTC $(sed -n 's/^ok  *NVRTC  *//p' <<<"$doctor")"

# run LABEL CMD...: the program, its output to $work/LABEL.out, its compile time to $work/LABEL.err, its
# wall time in $wall_ms; NVRTC's bundled headers in one directory for every run, as on one machine.
headers="$work/xdg/cuda-python/nvrtc-bundled-headers"
wall_ms=0
run() {
  local label=$1 t0
  shift
  t0=$(date +%s%N)
  XDG_CACHE_HOME="$work/xdg" "$@" >"$work/$label.out" 2>"$work/$label.err" ||
    { cat "$work/$label.err" >&2; fail "$label: the program failed"; }
  wall_ms=$((($(date +%s%N) - t0) / 1000000))
  [ -f "$headers/cuda_fp16.h" ] || fail "$label: no cuda_fp16.h installed in $headers"
}
compile_s() { sed -n 's/^compile seconds //p' "$work/$1.err"; }
counts() { NVRTC_CACHE_DIR="$1" "$cli" stats --json | "$python" -c '
import json, sys
s = json.load(sys.stdin)
print(s["hits"], s["misses"], s["links"]["hits"], s["links"]["misses"])'; }

run plain "$vpython" "$program"  # the first run of NVRTC on this machine (page cache, headers)
run plain "$vpython" "$program"
plain_ms=$wall_ms plain_s=$(compile_s plain)
compiles=4  # a CUBIN with name expressions, two LTO-IRs, the cuda_fp16.h CUBIN; and one link
summary=()
for way in run proxy activate; do
  export NVRTC_CACHE_DIR="$work/cache-$way"
  case $way in
    run) cmd=("$cli" run -- "$vpython" "$program") ;;
    proxy) cmd=("$cli" run --proxy -- "$vpython" "$program") ;;
    activate) cmd=("$vpython" "$program" --activate) ;;
  esac
  run "$way-cold" "${cmd[@]}"
  [ "$(counts "$NVRTC_CACHE_DIR")" = "0 $compiles 0 1" ] || fail "$way: cold run's counters (hits misses link-hits link-misses): $(counts "$NVRTC_CACHE_DIR")"
  run "$way-warm" "${cmd[@]}"
  [ "$(counts "$NVRTC_CACHE_DIR")" = "$compiles $compiles 1 1" ] || fail "$way: warm run's counters (hits misses link-hits link-misses): $(counts "$NVRTC_CACHE_DIR")"
  if [ $way = run ]; then  # a hit installs the bundled headers where NVRTC would have, when missing
    rm -rf "$headers"
    run "$way-reinstall" "${cmd[@]}"
    [ "$(counts "$NVRTC_CACHE_DIR")" = "$((2 * compiles)) $compiles 2 1" ] ||
      fail "$way: the warm run without the bundled headers: $(counts "$NVRTC_CACHE_DIR")"
    run "$way-warm" "${cmd[@]}"
    [ "$(counts "$NVRTC_CACHE_DIR")" = "$((3 * compiles)) $compiles 3 1" ] || fail "$way: the warm run: $(counts "$NVRTC_CACHE_DIR")"
  fi
  for phase in cold warm $([ $way = run ] && echo reinstall); do
    cmp -s "$work/plain.out" "$work/$way-$phase.out" ||
      { diff "$work/plain.out" "$work/$way-$phase.out" >&2; fail "$way: the $phase run's output differs from the plain run's"; }
  done
  summary+=("$("$python" -c 'import sys
way, wall, compile_s, plain_wall, plain_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
print(f"{way:<8} warm {wall:5d} ms ({wall / plain_wall:.2f}x the plain run), its compiles {compile_s:.3f} s ({compile_s / plain_s:.3f}x)")' \
    "$way" "$wall_ms" "$(compile_s "$way-warm")" "$plain_ms" "$plain_s")")
done
echo "pypi_only_test: wheel tag $tag; install $install_ms ms; plain run $plain_ms ms (compiles $plain_s s);" \
     "exact every way, warm ($compiles hits and the link's) where reached:"
printf '    %s\n' "${summary[@]}"
