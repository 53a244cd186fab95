#include "store/memory_store.h"

#include <new>

namespace nvrtc_cache::store {
namespace {

Status closed_error() { return Status::io_error("memory store is closed"); }
Status out_of_memory() { return Status::io_error("out of memory"); }

// Two's-complement addition without signed-overflow undefined behaviour.
std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

}  // namespace

MemoryStore::MemoryStore(std::uint64_t max_bytes) : max_bytes_(max_bytes) {}

std::optional<std::string> MemoryStore::get(std::string_view key) {
  try {
    std::lock_guard lock(mu_);
    if (closed_) return std::nullopt;
    const auto found = index_.find(key);
    if (found == index_.end()) return std::nullopt;
    lru_.splice(lru_.begin(), lru_, found->second);  // iterators stay valid
    return found->second->second;
  } catch (...) {
    return std::nullopt;
  }
}

Status MemoryStore::put(std::string_view key, std::string_view value) {
  try {
    std::lock_guard lock(mu_);
    if (closed_) return closed_error();
    if (value.size() > max_bytes_) return Status::full("value is larger than the memory store cap");
    if (const auto found = index_.find(key); found != index_.end()) erase_locked(found->second);
    evict_to_fit_locked(value.size());
    lru_.emplace_front(std::string(key), std::string(value));
    try {
      index_.emplace(std::string_view(lru_.front().first), lru_.begin());
    } catch (...) {
      lru_.pop_front();
      throw;
    }
    bytes_ += value.size();
    return Status::ok();
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  } catch (...) {
    return Status::io_error("memory store put failed");
  }
}

Status MemoryStore::erase(std::string_view key) {
  std::lock_guard lock(mu_);
  if (closed_) return closed_error();
  if (const auto found = index_.find(key); found != index_.end()) erase_locked(found->second);
  return Status::ok();
}

std::uint64_t MemoryStore::entry_count() {
  std::lock_guard lock(mu_);
  return index_.size();
}

std::uint64_t MemoryStore::size_bytes() {
  std::lock_guard lock(mu_);
  return bytes_;
}

Status MemoryStore::clear() {
  std::lock_guard lock(mu_);
  if (closed_) return closed_error();
  index_.clear();
  lru_.clear();
  bytes_ = 0;
  counters_.clear();
  return Status::ok();
}

void MemoryStore::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  index_.clear();
  lru_.clear();
  bytes_ = 0;
  counters_.clear();
}

Status MemoryStore::add_counters(const Counters& deltas) {
  try {
    std::lock_guard lock(mu_);
    if (closed_) return closed_error();
    Counters updated = counters_;  // all or nothing if an allocation fails midway
    for (const auto& [name, delta] : deltas) {
      auto& value = updated[name];
      value = wrapping_add(value, delta);
    }
    counters_.swap(updated);
    return Status::ok();
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  } catch (...) {
    return Status::io_error("memory store add_counters failed");
  }
}

Counters MemoryStore::counters() {
  try {
    std::lock_guard lock(mu_);
    return counters_;
  } catch (...) {
    return {};
  }
}

void MemoryStore::evict_to_fit_locked(std::uint64_t incoming) {
  while (!lru_.empty() && bytes_ + incoming > max_bytes_) erase_locked(std::prev(lru_.end()));
}

void MemoryStore::erase_locked(Lru::iterator entry) {
  bytes_ -= entry->second.size();
  index_.erase(std::string_view(entry->first));
  lru_.erase(entry);
}

}  // namespace nvrtc_cache::store
