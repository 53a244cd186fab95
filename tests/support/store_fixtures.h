// Test support for the store suites of unit_tests: a scratch directory, deterministic binary values,
// and an LmdbStore opened with a test's map size. Contract: test-only; header-only; a failed open
// is a gtest failure (and a null store) in the calling test.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "store/lmdb/lmdb_store.h"

namespace nvrtc_cache::store::testing {

// A fresh directory under /tmp, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/nvrtc_cache_store_test.XXXXXX";
    const char* made = ::mkdtemp(pattern);
    if (made != nullptr) path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string binary_value(std::size_t size, unsigned seed) {
  std::string value(size, '\0');
  for (std::size_t i = 0; i < size; ++i) value[i] = static_cast<char>((i * 131 + seed * 7) & 0xff);
  return value;
}

inline std::unique_ptr<LmdbStore> open_store(const std::string& directory, std::uint64_t map_size = 64ull << 20) {
  Status status;
  auto store = LmdbStore::open(LmdbOptions{directory, map_size}, &status);
  EXPECT_TRUE(status.is_ok()) << status.message();
  return store;
}

}  // namespace nvrtc_cache::store::testing
