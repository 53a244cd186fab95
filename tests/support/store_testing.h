// Test support for the LMDB store: an independent recount of a store directory with the raw LMDB
// API, and crash trials (a child writer SIGKILLed at random points). Shared by unit_tests and the
// store_crash_trials tool. Contract: test-only; blocking; each function forks, so call it from a
// thread that holds no locks the child needs; never writes to stdout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nvrtc_cache::store::testing {

// What the databases of a store directory hold, read in one read transaction of a fresh
// environment in a forked child (the test process never opens the files itself).
struct Recount {
  bool ok = false;                      // false: the child could not read the store
  std::uint64_t entries = 0;            // records in "entries"
  std::uint64_t payload_bytes = 0;      // their payload bytes (stored size minus the envelope)
  std::uint64_t access_records = 0;     // records in "access"
  std::uint64_t access_mismatches = 0;  // entries without an access record, or whose record
                                        // names another payload size, or records without entries
  std::uint64_t recorded_entries = 0;   // the totals the store keeps, from the same snapshot
  std::uint64_t recorded_payload_bytes = 0;

  bool totals_match() const {
    return ok && entries == recorded_entries && payload_bytes == recorded_payload_bytes && access_mismatches == 0;
  }
};
Recount recount(const std::string& directory);

// The last access recorded for `key` in the "access" database; nullopt if there is none.
std::optional<std::int64_t> recorded_last_access(const std::string& directory, const std::string& key);

// Dead processes still holding reader slots (mdb_reader_check from a fresh environment in a forked
// child, which also clears them); -1 if the check failed.
int dead_reader_slots(const std::string& directory);

// The deterministic value a crash-trial child stores under crash_key(trial, index).
std::string crash_key(int trial, int index);
std::string crash_value(int trial, int index);

struct CrashTrialOptions {
  int trials = 40;
  std::uint64_t map_size_bytes = 512ull << 20;
  unsigned seed = 1;
  // The child is killed after a uniform 0..max delay, counted from its fork in even trials (kills
  // during the store's open) and from its first commit in odd ones (kills among the writes however
  // slowly the child starts, e.g. under an emulator).
  int max_kill_delay_us = 20000;
  // False when the map is small enough that entries are evicted: missing entries are then
  // counted as evicted, not lost (wrong bytes and totals are still checked).
  bool expect_everything_kept = true;
};

struct CrashTrialReport {
  int trials = 0;
  std::uint64_t committed = 0;    // puts the children reported as committed
  std::uint64_t lost = 0;         // reported committed, but absent
  std::uint64_t evicted = 0;      // absent in a run that evicts (not an error)
  std::uint64_t wrong_bytes = 0;  // present with other bytes (including the unreported put)
  int other_crashes = 0;          // children that died other than by our SIGKILL or exit 0
  int put_failures = 0;           // children that saw a put or get fail
  int open_failures = 0;          // the store could not be used after a kill
  int totals_mismatches = 0;      // totals differing from a recount after a trial
  int killed = 0;                 // children ended by SIGKILL
  std::string first_problem;      // a description of the first problem, if any

  bool clean() const {
    return lost == 0 && wrong_bytes == 0 && other_crashes == 0 && put_failures == 0 && open_failures == 0 &&
           totals_mismatches == 0;
  }
};

// Runs `options.trials` trials against the store in `directory`: each forks a child that puts
// crash_value(trial, i) for i = 0, 1, ... (reading back an earlier one after each), reporting every
// committed i on a pipe, and SIGKILLs it after a random delay; then checks that the store opens,
// that every reported entry has its bytes, and that the totals match a recount.
CrashTrialReport run_crash_trials(const std::string& directory, const CrashTrialOptions& options);

}  // namespace nvrtc_cache::store::testing
