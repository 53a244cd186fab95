#include "shim/interpose/slot_wrappers.h"

#include <array>
#include <cstring>
#include <utility>

#include "shim/interpose/wrapper_body.h"

namespace nvrtc_cache::shim::interpose {
namespace {

template <int Slot>
struct SlotWrappers {
#define NVRTC_API(kind, ret, name, params, args) \
  static ret name params NVRTC_CACHE_WRAPPER_BODY(kind, ret, name, args, slot_library(Slot), nullptr)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
};

struct Row {
  const char* name;
  std::array<void*, kMaxSlots> wrappers;
};

template <std::size_t... Slots>
auto build_rows(std::index_sequence<Slots...>) {
  return std::array{
#define NVRTC_API(kind, ret, name, params, args) \
  Row{#name, {reinterpret_cast<void*>(&SlotWrappers<static_cast<int>(Slots)>::name)...}},
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
  };
}

const auto& rows() {
  static const auto table = build_rows(std::make_index_sequence<kMaxSlots>{});
  return table;
}

// Built at load, so no child of a forked process inherits its creation in progress.
__attribute__((constructor)) void build_rows_at_load() { (void)rows(); }

}  // namespace

void* slot_wrapper(int slot, const char* name) {
  if (slot < 0 || slot >= kMaxSlots || name == nullptr) return nullptr;
  for (const Row& row : rows()) {
    if (std::strcmp(row.name, name) == 0) return row.wrappers[static_cast<std::size_t>(slot)];
  }
  return nullptr;
}

}  // namespace nvrtc_cache::shim::interpose
