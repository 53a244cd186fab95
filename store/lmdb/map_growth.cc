#include "store/lmdb/map_growth.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <mutex>

#include "platform/env.h"
#include "store/lmdb/library.h"

namespace nvrtc_cache::store::lmdb {
namespace {

constexpr std::uint64_t kMaxBytes = std::numeric_limits<std::uint64_t>::max();

std::uint64_t round_up(std::uint64_t bytes, std::uint64_t unit) {
  const std::uint64_t rest = bytes % unit;
  return rest == 0 || bytes > kMaxBytes - unit ? bytes : bytes + (unit - rest);
}

// data.mdb's size through LMDB's own handle; 0 when it cannot be read.
std::uint64_t data_file_bytes(MDB_env* env) {
  mdb_filehandle_t file{};
  struct stat st {};
  if (api().mdb_env_get_fd(env, &file) != MDB_SUCCESS || platform::stat_open_file(os_handle(file), &st) != 0 ||
      st.st_size < 0) {
    return 0;
  }
  return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace

std::uint64_t map_bytes_at_open(const LmdbOptions& options, std::uint64_t existing_file_bytes) {
  if (options.initial_map_bytes == 0 || options.initial_map_bytes >= options.map_size_bytes) {
    return options.map_size_bytes;
  }
  return std::max(options.initial_map_bytes, existing_file_bytes);
}

std::uint64_t next_map_bytes(std::uint64_t current, std::uint64_t record_bytes, std::uint64_t cap) {
  const std::uint64_t step = std::clamp(current / 4, kMapGrowthStepBytes, kMaxMapGrowthStepBytes);
  // Twice the record: LMDB copies the pages a write touches, and the free pages may be fragmented.
  const std::uint64_t needed = std::max(step, record_bytes > kMaxBytes / 2 ? kMaxBytes : record_bytes * 2);
  const std::uint64_t grown = current > kMaxBytes - needed ? kMaxBytes : current + needed;
  return std::min(round_up(grown, kMapGrowthStepBytes), cap);
}

std::uint64_t cap_bytes(const SharedEnv& env, std::uint64_t map_bytes) { return std::max(env.cap_bytes, map_bytes); }

bool grow_map(SharedEnv& env, std::uint64_t record_bytes) {
  if (env.read_only) return false;
  std::unique_lock exclusive(env.remap_mu);  // no transaction of this process is open
  MDB_envinfo info{};
  if (api().mdb_env_info(env.env, &info) != MDB_SUCCESS) return false;
  const std::uint64_t current = info.me_mapsize;
  if (current >= env.cap_bytes) return false;
  // Another process may have grown the file past this map already: never set the map below it.
  const std::uint64_t target =
      std::max(next_map_bytes(current, record_bytes, env.cap_bytes), data_file_bytes(env.env));
  if (api().mdb_env_set_mapsize(env.env, target) == MDB_SUCCESS) return true;
  // LMDB unmapped the map before it failed to map the larger one: map what the file holds again.
  if (api().mdb_env_set_mapsize(env.env, std::max(current, data_file_bytes(env.env))) != MDB_SUCCESS) {
    env.abandoned.store(true, std::memory_order_release);  // no map: never used again (Txn checks)
  }
  return false;
}

}  // namespace nvrtc_cache::store::lmdb
