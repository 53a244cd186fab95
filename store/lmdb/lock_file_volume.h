// LockFileVolumeHint: the volume serial number LMDB, on Windows, is told for the lock file it names
// its mutexes after, so that naming them asks no volume (under Wine each volume query is a round trip
// to the mount manager, a third of a millisecond: the largest single cost of a fresh process's first
// hit). LMDB's mdb.c is built for Windows with lock_file_information_windows.h forced in, which routes
// its one GetFileInformationByHandle call (on lock.mdb, when a process initialises the lock file) to
// nvrtc_cache_lock_file_information: with a hint alive on the calling thread it answers from the
// file's own information (index, size, times: no volume query) and the hinted serial; without one it
// is GetFileInformationByHandle.
// The names only have to be the same for every process using one lock file, which they are whatever
// the serial: each process after the first reads them from the lock file. A wrong serial could at
// worst give two stores the same mutexes (their writers would then take turns), never lose a lock.
// Contract: the hint is per thread and scoped (restored when it ends); no-op on other systems.
#pragma once

#include <cstdint>

namespace nvrtc_cache::store::lmdb {

class LockFileVolumeHint {
 public:
#ifdef _WIN32
  explicit LockFileVolumeHint(std::uint64_t volume_serial);
  ~LockFileVolumeHint();
#else
  explicit LockFileVolumeHint(std::uint64_t) {}
#endif
  LockFileVolumeHint(const LockFileVolumeHint&) = delete;
  LockFileVolumeHint& operator=(const LockFileVolumeHint&) = delete;

 private:
  [[maybe_unused]] std::uint64_t previous_ = 0;
};

}  // namespace nvrtc_cache::store::lmdb
