#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with ASan + UBSan) into build-fuzz/ (or $FUZZ_BUILD_DIR)
# and runs each for RUNS inputs (default 1000000), starting from a seed corpus of real encodings and
# the corpus earlier runs grew. Prints, per target, the inputs run and the findings; exits non-zero
# if any target found a crash, a sanitizer report, a failed invariant, a leak or a timeout
# (reproducers are kept in build-fuzz/findings/). CI runs a short pass: scripts/fuzz.sh 10000.
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-1000000}"
build_dir="${FUZZ_BUILD_DIR:-build-fuzz}"
targets=(entry handle_entry api_entry manifest dependency_set envelope access_record lmdb_layout sealed_value archive record resp_reply http_response elf_identity pe_identity program_name_scan)

. scripts/lib/apt.sh
ensure_packages clang libclang-rt-14-dev

# -O1 with line tables only, as fuzzing builds usually are: reports keep their file:line frames, and
# the build skips full debug information (most of its compile time).
flags="-O1 -gline-tables-only -DNDEBUG"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" \
  -DNVRTC_CACHE_FUZZ=ON -DNVRTC_CACHE_TESTS=OFF -DNVRTC_CACHE_BENCH=OFF >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target nvrtc_cache_fuzzers >/dev/null

seeds="$build_dir/seeds"
rm -rf "$seeds"
"$build_dir/bin/fuzz_seed_corpus" "$seeds"
mkdir -p "$build_dir/findings" "$build_dir/logs"

failed=0
for t in "${targets[@]}"; do
  corpus="$build_dir/corpus/$t"
  mkdir -p "$corpus"
  log="$build_dir/logs/$t.log"
  rm -f "$build_dir/findings/$t-"*
  set +e
  ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0" UBSAN_OPTIONS="print_stacktrace=1" \
    "$build_dir/bin/fuzz_$t" -runs="$runs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build_dir/findings/$t-" "$corpus" "$seeds/$t" >"$log" 2>&1
  rc=$?
  set -e
  inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  findings=$(find "$build_dir/findings" -name "$t-*" | wc -l)
  if [ "$rc" -ne 0 ] && [ "$findings" -eq 0 ]; then findings=1; fi  # failed before writing a reproducer
  printf '%-16s %10s inputs  %d findings\n' "$t" "${inputs:-?}" "$findings"
  if [ "$findings" -ne 0 ]; then
    failed=1
    grep -m5 -E "ERROR|runtime error|invariant failed|Done|SUMMARY" "$log" | sed 's/^/    /' >&2 || true
  fi
done
exit "$failed"
