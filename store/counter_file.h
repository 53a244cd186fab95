// CounterFile: the cache's statistics as named 64-bit counters in one small file (`counters`, beside
// data.mdb) that every process maps shared and adds to atomically. A count is in the file the
// moment it is made: a process that leaves through _exit, is killed (SIGKILL, SIGTERM) or forks
// loses nothing, and counting takes no LMDB write transaction (a hit adds to a few counters: tens
// of nanoseconds). Readers sum every slot of a name.
// Layout (64 KiB, native byte order, never moved): a 64-byte header (magic "NVRCCTR1", version u32,
// slot count u32) and 1023 slots of 64 bytes: state u32 (0 free, 1 being named, 2 named), 4 bytes
// padding, name (48 bytes, NUL-terminated, printable), value s64. A name is added lock-free: a slot
// is taken by compare-and-swap on its state, named, then published (state 2); two processes adding
// the same name at once may each take a slot, and readers add them up. A slot whose namer died
// while naming stays unused.
// Contract: thread-safe and process-safe; never throws except std::bad_alloc; never blocks (no
// lock, no wait); errno preserved. The file is opened without following a link and used only if it
// is a regular file of the right size owned by the user (or, for a shared cache, by its group); a
// file that is not (or whose header is another version's) is not used (open() says why) and the
// caller counts elsewhere. Every byte read back is validated (a damaged name is skipped). fork: the
// mapping is shared with the child, whose counts go to the same file.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "store/store.h"

namespace nvrtc_cache::store {

// Changes whenever the counters file a store counts into may have changed (an environment opened,
// a damaged store moved aside): holders of cells look again (core/stats.h). One relaxed load.
std::uint64_t counter_file_generation();
void note_counter_file_replaced();

class CounterFile {
 public:
  static constexpr std::size_t kSlotCount = 1023;
  static constexpr std::size_t kMaxName = 47;
  static constexpr std::size_t kFileSize = 64 + kSlotCount * 64;

  // Maps `directory`/counters, creating it (mode 0600, 0660 when `shared`) when `create`. nullptr
  // with *problem set when it cannot be used.
  static std::unique_ptr<CounterFile> open(const std::string& directory, bool create, bool shared,
                                           std::string* problem);
  ~CounterFile();
  CounterFile(const CounterFile&) = delete;
  CounterFile& operator=(const CounterFile&) = delete;

  // The cell of `name` (adding the name when it is new); nullptr when the name is not a counter
  // name (empty, too long, not printable) or every slot is taken.
  std::atomic<std::int64_t>* cell(std::string_view name);
  void add(std::string_view name, std::int64_t delta);
  void add(const Counters& deltas);
  // Every named counter that is not zero, duplicates summed.
  Counters read() const;
  // Sets every counter to zero (counts made meanwhile may be kept or not).
  void zero();

 private:
  struct Slot;
  CounterFile(void* mapping);
  Slot* slot(std::size_t i) const;
  Slot* find(std::string_view name) const;

  void* mapping_;
};

}  // namespace nvrtc_cache::store
