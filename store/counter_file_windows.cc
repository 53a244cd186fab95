// CounterFile on Windows: not mapped yet (the proxy merges its counters into the store after every
// compile, shim/windows/compile.cc); open() answers that it cannot be used, so counters live in the
// "counters" database.
#include "store/counter_file.h"

namespace nvrtc_cache::store {

struct CounterFile::Slot {};

std::unique_ptr<CounterFile> CounterFile::open(const std::string& directory, bool, bool, std::string* problem) {
  *problem = directory + "/counters: not used on Windows";
  return nullptr;
}
CounterFile::CounterFile(void* mapping) : mapping_(mapping) {}
CounterFile::~CounterFile() = default;
CounterFile::Slot* CounterFile::slot(std::size_t) const { return nullptr; }
CounterFile::Slot* CounterFile::find(std::string_view) const { return nullptr; }
std::atomic<std::int64_t>* CounterFile::cell(std::string_view) { return nullptr; }
void CounterFile::add(std::string_view, std::int64_t) {}
void CounterFile::add(const Counters&) {}
Counters CounterFile::read() const { return {}; }
void CounterFile::zero() {}

}  // namespace nvrtc_cache::store
