// The verification of a store that `nvrtc-cache verify` (Linux) and `nvrtc-cache.exe verify`
// (Windows) print: every entry read once, its envelope, its format (manifests, compile results, link and libNVVM
// results), and the results manifests name that are gone. Contract: reads only (one read transaction,
// store::LmdbStore::for_each); not thread-safe per audit; never throws but std::bad_alloc.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "store/lmdb/lmdb_store.h"

namespace nvrtc_cache::tools {

struct StoreAudit {
  std::uint64_t entries = 0;
  std::uint64_t damaged = 0;  // failed the envelope checksum
  std::uint64_t manifests = 0, bad_manifests = 0;
  std::uint64_t results = 0, bad_results = 0;
  std::uint64_t handle_results = 0, bad_handle_results = 0;
  std::uint64_t api_entries = 0;  // the C API's entries (direct::kApiEntryPrefix)
  std::uint64_t markers = 0;      // working-directory markers (direct/manifest.h)
  std::uint64_t other = 0;        // keys of no known kind
  std::uint64_t dangling = 0;     // results a manifest names that are not there (evicted: a miss, not damage)
  store::Status walked;

  bool sound() const {
    return walked.is_ok() && damaged == 0 && bad_manifests == 0 && bad_results == 0 && bad_handle_results == 0 &&
           other == 0;
  }
};

// Reads every entry; `on_entry` (optional) is called with the count so far, for a progress bar.
StoreAudit audit_store(store::LmdbStore& store, const std::function<void(std::uint64_t)>& on_entry = {});

// Prints the audit of the store in `directory` to stdout; returns the exit status (0 sound, 1 not).
int print_audit(const std::string& directory, const StoreAudit& audit);

}  // namespace nvrtc_cache::tools
