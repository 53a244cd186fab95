#!/usr/bin/env bash
# Crash trials for the LMDB store: a child writer is SIGKILLed at a random point (0-20 ms) TRIALS
# times (default 200), then the store must open, hold every entry the child reported committed with
# the right bytes, and keep totals equal to a recount. Runs once with a roomy map (nothing may be
# missing) and once with an 8 MiB map (the child also evicts while it is killed).
# usage: scripts/crash_trials.sh [TRIALS]     (BUILD_DIR defaults to build)
set -euo pipefail
cd "$(dirname "$0")/.."
trials="${1:-200}"
build="${BUILD_DIR:-build}"
if [[ ! -f "$build/CMakeCache.txt" ]]; then cmake -S . -B "$build" >/dev/null; fi
cmake --build "$build" --target store_crash_trials -j"$(nproc)" >/dev/null
status=0
echo "== $trials trials, 512 MiB map (no eviction)"
"$build/bin/store_crash_trials" "$trials" || status=1
echo "== $trials trials, 8 MiB map (evicting)"
"$build/bin/store_crash_trials" "$trials" --evicting || status=1
exit "$status"
