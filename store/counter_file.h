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
// Faults: the mapping can fault (SIGBUS) when another process truncates the file (any member of a
// shared cache can) or a write needs a block a full filesystem does not have. So space is reserved
// at open (a file whose space cannot be reserved is read, never counted into), and the mapping is
// watched by the fault handler (platform::watch_mapping): a fault in it, on any thread, replaces it
// with zero pages and stops all counting into counters files in this process (counting_stopped():
// cells are no longer handed out, add_to() says so and callers keep their counts themselves).
// Counts are lost, never the host.
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
  // name (empty, too long, not printable), every slot is taken, the file's space is not reserved
  // or counting has stopped. A cell is only ever added to through add_to().
  std::atomic<std::int64_t>* cell(std::string_view name);
  // Adds `delta` to a cell; false once counting has stopped (then the add went nowhere that counts:
  // the caller keeps it), even when it was this add's fault that stopped it.
  static bool add_to(std::atomic<std::int64_t>* cell, std::int64_t delta) noexcept {
    if (counting_stopped()) return false;
    cell->fetch_add(delta, std::memory_order_relaxed);
    return !counting_stopped();
  }
  // True once a fault in any counters file's mapping stopped counting in this process.
  static bool counting_stopped() noexcept { return stopped_.load(std::memory_order_acquire); }
  // False when the add could not be made (see add_to()).
  bool add(std::string_view name, std::int64_t delta);
  // Every named counter that is not zero, duplicates summed; empty after a fault.
  Counters read() const;
  // Sets every counter to zero (counts made meanwhile may be kept or not); false after a fault, or
  // when the file is only read (not this user's to write).
  bool zero();

 private:
  struct Slot;
  CounterFile(void* mapping, bool reserved);
  Slot* slot(std::size_t i) const;
  Slot* find(std::string_view name) const;
  Slot* claim(std::string_view name) const;

  // The fault handler's callback (platform::watch_mapping): lock-free atomics only.
  static void on_mapping_replaced();
  inline static std::atomic<bool> stopped_{false};
  static_assert(std::atomic<bool>::is_always_lock_free);

  void* mapping_;
  bool reserved_;
};

}  // namespace nvrtc_cache::store
