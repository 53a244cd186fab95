#!/usr/bin/env bash
# Cold starts on one node: N processes compile the same program (bench/nvrtc_bench.cc's CUB kernel)
# at once on an empty cache, with single-flight (the default) and without it
# (NVRTC_CACHE_WAIT_TIMEOUT=0); prints the real compiles done and the wall time against one
# compile of the real NVRTC alone (measured just before each run).
# Each cell is the median of REPEAT runs (default 3). FORMAT=tsv prints, for scripts/bench/suite.py,
# "one <ms>" then one line per N: N, then compiles hits waited wall_ms ratio with single-flight,
# then compiles hits wall_ms ratio without, tab-separated.
# usage: [REPEAT=3] [FORMAT=tsv] scripts/bench/single_flight.sh [BUILD_DIR] [KERNEL] [N...]
#        (default: build cub 1 2 4 8 16)
set -euo pipefail
build=${1:-build}
kernel=${2:-cub}
shift $(( $# > 2 ? 2 : $# ))
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(1 2 4 8 16)
bench=$build/bin/nvrtc_bench
cli=$build/bin/nvrtc-cache
shim=$(realpath "$build/lib/libnvrtc-cache.so")
unset LD_PRELOAD
for v in $(env | grep -o '^NVRTC_CACHE_[A-Z_]*' || true); do unset "$v"; done

repeat=${REPEAT:-3}
now_ns() { date +%s%N; }
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
counter() { grep -o "\"$1\": [0-9]*" <<<"$2" | grep -o '[0-9]*$'; }

# Wall time of N processes started together; sets `wall_ms` and `json` (the cache's stats).
run_together() {
  local n=$1 timeout=$2 cache
  cache=$(mktemp -d "${TMPDIR:-/tmp}/nvrtc-cache-flight-XXXXXX")
  local start pids=()
  start=$(now_ns)
  for ((i = 0; i < n; i++)); do
    if [[ $timeout == direct ]]; then
      "$bench" "$kernel" 1 >/dev/null &
    else
      LD_PRELOAD=$shim NVRTC_CACHE_DIR=$cache NVRTC_CACHE_WAIT_TIMEOUT=$timeout "$bench" "$kernel" 1 >/dev/null &
    fi
    pids+=($!)
  done
  wait "${pids[@]}"
  wall_ms=$(( ($(now_ns) - start) / 1000000 ))
  json=$([[ $timeout == direct ]] && echo '{}' || NVRTC_CACHE_DIR=$cache "$cli" stats --json)
  if [[ -d $cache/claims && -n $(ls -A "$cache/claims") ]]; then echo "claim files left in $cache/claims" >&2; exit 1; fi
  rm -rf "$cache"
}

# Runs `repeat` times: one compile alone, then run_together "$@"; sets `wall_ms` to the median wall
# time and `ratio` to the median of each run's wall time over the single compile just before it
# (robust to a machine whose speed drifts); `json` is the last run's.
median_wall() {
  local walls=() ratios=()
  for ((r = 0; r < repeat; r++)); do
    run_together 1 direct
    local alone=$wall_ms
    run_together "$@"
    walls+=("$wall_ms")
    ratios+=("$(bc -l <<<"scale=2; $wall_ms / $alone")")
  done
  wall_ms=$(median "${walls[@]}")
  ratio=$(median "${ratios[@]}")
}

run_together 1 direct >/dev/null
one_walls=()
for ((r = 0; r < repeat; r++)); do run_together 1 direct; one_walls+=("$wall_ms"); done
one=$(median "${one_walls[@]}")
tsv=$([[ ${FORMAT:-} == tsv ]] && echo 1 || true)
if [[ -n $tsv ]]; then
  printf 'one\t%s\n' "$one"
else
  echo "kernel: $kernel; one compile by the real NVRTC alone: $one ms; $(nproc) CPUs; median of $repeat runs"
  echo
  printf '%4s | %-38s | %-31s\n' "" "single-flight (default)" "without (NVRTC_CACHE_WAIT_TIMEOUT=0)"
  printf '%4s | %8s %6s %6s %15s | %8s %6s %15s\n' N compiles hits waited "wall (x one)" compiles hits "wall (x one)"
fi
for n in "${counts[@]}"; do
  median_wall "$n" 600
  sf_compiles=$(counter misses "$json"); sf_hits=$(counter hits "$json"); sf_waited=$(counter waited "$json")
  sf_wall=$wall_ms sf_ratio=$ratio
  median_wall "$n" 0
  if [[ -n $tsv ]]; then
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$sf_compiles" "$sf_hits" "$sf_waited" "$sf_wall" \
      "$sf_ratio" "$(counter misses "$json")" "$(counter hits "$json")" "$wall_ms" "$ratio"
    continue
  fi
  printf '%4d | %8s %6s %6s %5d ms %4.1fx | %8s %6s %5d ms %4.1fx\n' "$n" "$sf_compiles" "$sf_hits" "$sf_waited" \
    "$sf_wall" "$sf_ratio" "$(counter misses "$json")" "$(counter hits "$json")" "$wall_ms" "$ratio"
done
