// WindowsLmdbStore: the Store (store/store.h) of the Windows port, one LMDB environment in a
// directory, with the Linux store's on-disk layout: the databases "entries" (enveloped values,
// store/envelope.h), "access" (store/lmdb/records.h access records), "meta" (entry_count,
// payload_bytes) and "counters" (le64), so entries, counters and the CLI mean the same on both.
// Contract: the directory (a UTF-8 path) is created where missing (CreateDirectoryW, each
// component); LMDB is opened on it with MDB_NOTLS (read transactions per call, any thread) and
// MDB_NOSUBDIR off; any number of processes may share it, writers serialise. Every method is
// thread-safe, never throws (std::bad_alloc is reported as an error or a miss) and keeps the
// thread's last-error value; a value that fails its envelope check is a miss and is dropped.
// Not (yet) as on Linux: no size-cap eviction (a full map fails the put, reported as Status::full),
// no move-aside of a damaged store, no fault guard around mapped reads, no owner/ACL checks of the
// directory (Windows gives %LOCALAPPDATA% to its user).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "store/store.h"

namespace nvrtc_cache::store {

struct WindowsLmdbOptions {
  std::string directory;                      // UTF-8
  std::uint64_t map_size_bytes = 1ull << 30;  // the data file's size limit
  bool read_only = false;
};

class WindowsLmdbStore final : public Store {
 public:
  static std::unique_ptr<WindowsLmdbStore> open(const WindowsLmdbOptions& options, Status* status);
  ~WindowsLmdbStore() override;

  std::optional<std::string> get(std::string_view key) override;
  Status put(std::string_view key, std::string_view value) override;
  Status erase(std::string_view key) override;
  std::uint64_t entry_count() override;
  std::uint64_t size_bytes() override;
  Status clear() override;
  void close() override;
  Status add_counters(const Counters& deltas) override;
  Counters counters() override;
  std::uint64_t corrupt_entries_dropped() const override;

  // Visits every entry in key order in one read transaction; `payload` is nullopt when the entry
  // fails its envelope check. Nothing is modified.
  Status for_each(const std::function<void(std::string_view key, std::optional<std::string_view> payload)>& visit);

  struct Impl;

 private:
  explicit WindowsLmdbStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Creates `directory` and its missing parents (UTF-8 path); false if it is not a directory after.
bool create_directories(const std::string& directory);

}  // namespace nvrtc_cache::store
