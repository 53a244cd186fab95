// Env: the store's seam to the filesystem and the clock (leveldb's Env). Production code uses
// Env::system(); tests substitute an Env that fails chosen operations (ENOSPC, EIO, EACCES, short
// reads) or moves the clock, so failure handling is tested deterministically.
// Contract: implementations are thread-safe; each call returns 0 or an errno value and never throws;
// Env::system() lives for the whole process. LMDB's own I/O does not go through this seam; faults
// in it are injected with fault_for().
#pragma once

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace nvrtc_cache::store {

// Store operations whose LMDB outcome a test Env can replace with a fault.
enum class StoreOperation { kOpen, kGet, kPut, kErase, kEvict };

class Env {
 public:
  virtual ~Env() = default;

  // Wall-clock seconds (access times for eviction are this coarse on purpose).
  virtual std::int64_t now_seconds() = 0;

  virtual int make_directory(const std::string& path, mode_t mode) = 0;
  virtual int lstat(const std::string& path, struct stat* out) = 0;
  virtual int stat(const std::string& path, struct stat* out) = 0;
  virtual int statfs(const std::string& path, struct statfs* out) = 0;
  virtual int rename(const std::string& from, const std::string& to) = 0;
  virtual int chmod(const std::string& path, mode_t mode) = 0;
  // Reads up to `size` bytes at `offset` of a file the store does not hold open; `*read` gets the
  // count (short at end of file).
  virtual int read_at(const std::string& path, void* buffer, std::size_t size, off_t offset, std::size_t* read) = 0;

  // 0 to let LMDB perform `operation`, or the LMDB/errno code to report instead.
  virtual int fault_for(StoreOperation) { return 0; }

  static Env* system();
};

}  // namespace nvrtc_cache::store
