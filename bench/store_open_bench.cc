// store_open_bench: what a fresh process pays to open the cache before its first hit, piece by piece
// (the steps store::open_cache and Runtime::store() take, in their order): the settings, the cache
// directory's checks (prepare_directory), the data file's check (check_data_file), LMDB's open
// (LmdbStore::open: the lock file, mdb_env_open), the counters file, and the first read (a read
// transaction's first reader slot). One run is one sample, printed as one line of nanoseconds:
//   config_ns directory_ns data_file_ns lmdb_open_ns counters_ns first_get_ns total_ns
// Run it many times in fresh processes against a warm cache (NVRTC_CACHE_DIR): the benchmark
// suite's first-hit section (scripts/bench_suite.py) reports the medians.
#include <chrono>
#include <cstdint>
#include <cstdio>

#include "core/config.h"
#include "platform/paths.h"
#include "store/cache_directory.h"
#include "store/lmdb/lmdb_store.h"

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t since(Clock::time_point& mark) {
  const Clock::time_point now = Clock::now();
  const std::int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - mark).count();
  mark = now;
  return ns;
}

}  // namespace

int main() {
  using namespace nvrtc_cache;
  const Clock::time_point start = Clock::now();
  Clock::time_point mark = start;
  const core::Config config = core::config_from_process_environment();
  const store::CachePolicy policy = core::cache_policy(config);
  const std::int64_t config_ns = since(mark);
  store::DirectoryCheck check = store::prepare_directory(policy.directory, policy.allow_shared, *policy.env);
  const std::int64_t directory_ns = since(mark);
  if (check.verdict != store::DirectoryVerdict::kUsable) {
    std::fprintf(stderr, "store_open_bench: %s\n", check.detail.c_str());
    return 1;
  }
  const std::string store_dir = platform::joined_path(policy.directory, "store");
  if (check.store.valid()) (void)store::check_data_file(check.store, store_dir, *policy.env);
  const std::int64_t data_file_ns = since(mark);
  store::LmdbOptions options;
  options.directory = store_dir;
  options.parent_directory_fd = check.handle.fd();
  options.map_size_bytes = policy.max_bytes;
  options.env = policy.env;
  store::Status status;
  std::unique_ptr<store::LmdbStore> lmdb = store::LmdbStore::open(options, &status);
  const std::int64_t lmdb_open_ns = since(mark);
  if (!lmdb) {
    std::fprintf(stderr, "store_open_bench: %s\n", status.message().c_str());
    return 1;
  }
  (void)lmdb->counter_file();
  const std::int64_t counters_ns = since(mark);
  (void)lmdb->get("no such key");
  const std::int64_t first_get_ns = since(mark);
  std::printf("%lld %lld %lld %lld %lld %lld %lld\n", static_cast<long long>(config_ns),
              static_cast<long long>(directory_ns), static_cast<long long>(data_file_ns),
              static_cast<long long>(lmdb_open_ns), static_cast<long long>(counters_ns),
              static_cast<long long>(first_get_ns),
              static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count()));
  return 0;
}
