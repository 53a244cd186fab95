// LMDB's mappings watched (store/lmdb/watched_mappings.h) on Linux: mdb.c is compiled with
// mmap/munmap renamed to the two functions below (CMakeLists.txt), which map and unmap as asked and
// watch every mapping of a file.
#include "store/lmdb/watched_mappings.h"

#include <sys/mman.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>

#include "platform/fault_guard.h"

namespace nvrtc_cache::store::lmdb {
namespace {

std::atomic<std::uint64_t> g_lost{0};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

void on_lmdb_mapping_replaced() { g_lost.fetch_add(1, std::memory_order_acq_rel); }

}  // namespace

std::uint64_t lmdb_mappings_lost() { return g_lost.load(std::memory_order_acquire); }

}  // namespace nvrtc_cache::store::lmdb

// What mdb.c calls for mmap and munmap. Hidden: never a symbol of the host's.
extern "C" __attribute__((visibility("hidden"))) void* nvrtc_cache_lmdb_mmap(void* address, std::size_t length,
                                                                             int protection, int flags, int fd,
                                                                             off_t offset) {
  void* const mapping = ::mmap(address, length, protection, flags, fd, offset);
  // Unwatched when every slot is taken: LMDB's behaviour as it was, a fault there kills.
  if (mapping != MAP_FAILED && fd >= 0) {
    nvrtc_cache::platform::watch_mapping(mapping, length, &nvrtc_cache::store::lmdb::on_lmdb_mapping_replaced);
  }
  return mapping;
}

extern "C" __attribute__((visibility("hidden"))) int nvrtc_cache_lmdb_munmap(void* address, std::size_t length) {
  nvrtc_cache::platform::unwatch_mapping(address);
  return ::munmap(address, length);
}
