#include "shim/interpose/library_identity.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace nvrtc_cache::shim::interpose {
namespace {

struct Search {
  std::uintptr_t address;
  std::string build_id;
  bool found = false;
};

bool object_contains(const dl_phdr_info* info, std::uintptr_t address) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (address >= start && address < start + ph.p_memsz) return true;
  }
  return false;
}

std::string find_build_id(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto* cursor = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = cursor + ph.p_memsz;
    while (cursor + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, cursor, sizeof note);
      const char* name = cursor + sizeof note;
      const char* desc = name + ((note.n_namesz + 3u) & ~3u);
      const char* next = desc + ((note.n_descsz + 3u) & ~3u);
      if (next > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        return std::string(desc, note.n_descsz);
      }
      cursor = next;
    }
  }
  return {};
}

int visit(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  if (!object_contains(info, search->address)) return 0;
  search->build_id = find_build_id(info);
  search->found = true;
  return 1;
}

}  // namespace

std::string build_id_of_object_containing(const void* address) {
  Search search{reinterpret_cast<std::uintptr_t>(address), {}};
  dl_iterate_phdr(visit, &search);
  return search.build_id;
}

}  // namespace nvrtc_cache::shim::interpose
