#include "store/counter_file.h"

#include <cstring>

#include "platform/fault_guard.h"
#include "platform/paths.h"
#include "store/counter_file_mapping.h"

namespace nvrtc_cache::store {
namespace {

constexpr char kMagic[8] = {'N', 'V', 'R', 'C', 'C', 'T', 'R', '1'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kFree = 0, kNaming = 1, kNamed = 2;

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t slot_count;
  char reserved[48];
};
static_assert(sizeof(Header) == 64);
static_assert(sizeof(std::atomic<std::int64_t>) == 8 && std::atomic<std::int64_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == 4 && std::atomic<std::uint32_t>::is_always_lock_free);

bool is_counter_name(std::string_view name) {
  if (name.empty() || name.size() > CounterFile::kMaxName) return false;
  for (char c : name) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

struct CounterFile::Slot {
  std::atomic<std::uint32_t> state;
  std::uint32_t padding;
  char name[48];
  std::atomic<std::int64_t> value;
};

CounterFile::Slot* CounterFile::slot(std::size_t i) const {
  static_assert(sizeof(Slot) == 64);
  return reinterpret_cast<Slot*>(static_cast<char*>(mapping_) + sizeof(Header) + i * sizeof(Slot));
}

std::unique_ptr<CounterFile> CounterFile::open(const std::string& directory, bool create, bool shared,
                                               std::string* problem) {
  const std::string path = platform::joined_path(directory, "counters");
  bool reserved = false;
  void* mapping = map_counter_file(path, create, shared, &reserved, problem);
  if (mapping == nullptr) return nullptr;
  if (!platform::watch_mapping(mapping, kFileSize, &CounterFile::on_mapping_replaced)) {
    unmap_counter_file(mapping);
    *problem = path + ": too many counters files mapped in this process";
    return nullptr;
  }
  auto* header = static_cast<Header*>(mapping);
  static constexpr char kZero[8] = {};
  if (reserved && !counting_stopped() && std::memcmp(header->magic, kZero, 8) == 0 && header->version == 0) {
    // New: every creator writes the same header (harmless when two race).
    header->version = kVersion;
    header->slot_count = static_cast<std::uint32_t>(kSlotCount);
    std::atomic_thread_fence(std::memory_order_release);
    std::memcpy(header->magic, kMagic, sizeof kMagic);
  }
  if (std::memcmp(header->magic, kMagic, sizeof kMagic) != 0 || header->version != kVersion ||
      header->slot_count != kSlotCount || counting_stopped()) {
    platform::unwatch_mapping(mapping);
    unmap_counter_file(mapping);
    *problem = counting_stopped() ? path + ": counting into counters files stopped in this process (one faulted)"
               : !reserved        ? path + ": no space can be reserved for it (the filesystem is full)"
                                  : path + " is not a counters file of this version";
    return nullptr;
  }
  note_counter_file_replaced();
  return std::unique_ptr<CounterFile>(new CounterFile(mapping, reserved));
}

void CounterFile::on_mapping_replaced() {
  stopped_.store(true, std::memory_order_release);
  note_counter_file_replaced();
}

CounterFile::CounterFile(void* mapping, bool reserved) : mapping_(mapping), reserved_(reserved) {}
CounterFile::~CounterFile() {
  platform::unwatch_mapping(mapping_);
  unmap_counter_file(mapping_);
}

CounterFile::Slot* CounterFile::find(std::string_view name) const {
  for (std::size_t i = 0; i < kSlotCount; ++i) {
    Slot* s = slot(i);
    const std::uint32_t state = s->state.load(std::memory_order_acquire);
    if (state == kFree) return nullptr;  // slots are taken in order: none named after a free one
    if (state != kNamed) continue;
    if (strnlen(s->name, sizeof s->name) == name.size() && std::memcmp(s->name, name.data(), name.size()) == 0) {
      return s;
    }
  }
  return nullptr;
}

CounterFile::Slot* CounterFile::claim(std::string_view name) const {
  if (Slot* s = find(name)) return s;
  for (std::size_t i = 0; i < kSlotCount; ++i) {
    Slot* s = slot(i);
    std::uint32_t expected = kFree;
    if (!s->state.compare_exchange_strong(expected, kNaming, std::memory_order_acq_rel)) {
      if (expected == kNamed && strnlen(s->name, sizeof s->name) == name.size() &&
          std::memcmp(s->name, name.data(), name.size()) == 0) {
        return s;  // named meanwhile by another process
      }
      continue;
    }
    std::memset(s->name, 0, sizeof s->name);
    std::memcpy(s->name, name.data(), name.size());
    s->state.store(kNamed, std::memory_order_release);
    return s;
  }
  return nullptr;
}

std::atomic<std::int64_t>* CounterFile::cell(std::string_view name) {
  if (!reserved_ || counting_stopped() || !is_counter_name(name)) return nullptr;
  Slot* s = claim(name);
  return s != nullptr ? &s->value : nullptr;
}

bool CounterFile::add(std::string_view name, std::int64_t delta) {
  if (delta == 0) return true;
  std::atomic<std::int64_t>* c = cell(name);
  return c != nullptr && add_to(c, delta);
}

Counters CounterFile::read() const {
  Counters out;
  if (counting_stopped()) return out;  // the mapping may be zero pages now
  for (std::size_t i = 0; i < kSlotCount; ++i) {
    const Slot* s = slot(i);
    const std::uint32_t state = s->state.load(std::memory_order_acquire);
    if (state == kFree) break;
    if (state != kNamed) continue;
    const std::size_t length = strnlen(s->name, sizeof s->name);
    const std::string_view name(s->name, length);
    if (length == sizeof s->name || !is_counter_name(name)) continue;  // damaged: skipped
    out[std::string(name)] += s->value.load(std::memory_order_relaxed);
  }
  std::erase_if(out, [](const auto& entry) { return entry.second == 0; });
  return out;
}

bool CounterFile::zero() {
  if (!reserved_ || counting_stopped()) return false;
  for (std::size_t i = 0; i < kSlotCount; ++i) {
    Slot* s = slot(i);
    if (s->state.load(std::memory_order_acquire) == kFree) break;
    s->value.store(0, std::memory_order_relaxed);
  }
  return !counting_stopped();
}

}  // namespace nvrtc_cache::store
