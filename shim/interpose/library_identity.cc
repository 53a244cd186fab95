#include "shim/interpose/library_identity.h"

#include "libraries/nvrtc/real_nvrtc.h"
#include "util/elf_notes.h"

#include <elf.h>
#include <link.h>

#include <nvrtc.h>

#include <algorithm>
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

// The build-id of a loaded object, read from its mapped PT_NOTE segments exactly as a file's are
// (util/elf_notes.h), so the shim and `nvrtc-cache replay` name a library by the same bytes.
std::string find_build_id(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const std::string_view notes(reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr), ph.p_memsz);
    std::string build_id, why;
    if (util::find_gnu_build_id(notes, ph.p_align, util::kMaxBuildIdBytes, build_id, why)) return build_id;
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

// The dynamic section's entries glibc has relocated in place on the architectures the shim supports;
// an unrelocated one (below the load address) is made absolute here.
template <typename T>
const T* dynamic_pointer(const link_map* library, ElfW(Addr) value) {
  if (value < library->l_addr) value += library->l_addr;
  return reinterpret_cast<const T*>(value);
}

// How many symbols the dynamic symbol table holds: DT_HASH says so; DT_GNU_HASH's chains end at it.
std::size_t symbol_count(const link_map* library, const ElfW(Word) * sysv_hash, const std::uint32_t* gnu_hash) {
  if (sysv_hash != nullptr) return sysv_hash[1];
  if (gnu_hash == nullptr) return 0;
  const std::uint32_t buckets = gnu_hash[0];
  const std::uint32_t symbol_offset = gnu_hash[1];
  const std::uint32_t bloom_words = gnu_hash[2];
  const auto* bucket = reinterpret_cast<const std::uint32_t*>(reinterpret_cast<const char*>(gnu_hash + 4) +
                                                              bloom_words * sizeof(ElfW(Addr)));
  const std::uint32_t* chain = bucket + buckets;
  std::uint32_t last = 0;
  for (std::uint32_t i = 0; i < buckets; ++i) last = std::max(last, bucket[i]);
  if (last < symbol_offset) return symbol_offset;
  while ((chain[last - symbol_offset] & 1u) == 0) ++last;
  (void)library;
  return last + 1;
}

}  // namespace

std::vector<std::string> exported_function_names(const link_map* library, const char* prefix) {
  std::vector<std::string> names;
  if (library == nullptr || library->l_ld == nullptr) return names;
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  const ElfW(Word)* sysv_hash = nullptr;
  const std::uint32_t* gnu_hash = nullptr;
  for (const ElfW(Dyn)* d = library->l_ld; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        symbols = dynamic_pointer<ElfW(Sym)>(library, d->d_un.d_ptr);
        break;
      case DT_STRTAB:
        strings = dynamic_pointer<char>(library, d->d_un.d_ptr);
        break;
      case DT_HASH:
        sysv_hash = dynamic_pointer<ElfW(Word)>(library, d->d_un.d_ptr);
        break;
      case DT_GNU_HASH:
        gnu_hash = dynamic_pointer<std::uint32_t>(library, d->d_un.d_ptr);
        break;
      default:
        break;
    }
  }
  if (symbols == nullptr || strings == nullptr) return names;
  const std::size_t count = symbol_count(library, sysv_hash, gnu_hash);
  const std::size_t prefix_size = std::strlen(prefix);
  for (std::size_t i = 1; i < count; ++i) {
    const ElfW(Sym)& sym = symbols[i];
    const unsigned type = ELF64_ST_TYPE(sym.st_info);
    const unsigned binding = ELF64_ST_BIND(sym.st_info);
    const unsigned visibility = ELF64_ST_VISIBILITY(sym.st_other);
    if (sym.st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC)) continue;
    if ((binding != STB_GLOBAL && binding != STB_WEAK) || (visibility != STV_DEFAULT && visibility != STV_PROTECTED)) {
      continue;
    }
    const char* name = strings + sym.st_name;
    if (std::strncmp(name, prefix, prefix_size) != 0) continue;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
  }
  return names;
}

bool is_known_nvrtc_function(const char* name) {
  static constexpr const char* kTable[] = {
#define NVRTC_API(kind, ret, fn, params, args) #fn,
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
  };
  for (const char* known : kTable) {
    if (std::strcmp(known, name) == 0) return true;
  }
  for (const char* known : kPrivateNvrtcFunctions) {
    if (std::strcmp(known, name) == 0) return true;
  }
  return false;
}

std::vector<std::string> unknown_nvrtc_functions(const link_map* library) {
  std::vector<std::string> unknown;
  for (const char* prefix : {"nvrtc", "__nvrtc"}) {
    for (const std::string& name : exported_function_names(library, prefix)) {
      if (!is_known_nvrtc_function(name.c_str())) unknown.push_back(name);
    }
  }
  return unknown;
}

std::string build_id_of_object_containing(const void* address) {
  Search search{reinterpret_cast<std::uintptr_t>(address), {}};
  dl_iterate_phdr(visit, &search);
  return search.build_id;
}

}  // namespace nvrtc_cache::shim::interpose
