#include "shim/watch/libc_symbols.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace nvrtc_cache::shim::watch {
namespace {

struct Query {
  const char* name;
  const char* version;
  void* found = nullptr;
};

std::uint32_t gnu_hash(const char* s) {
  std::uint32_t h = 5381;
  for (; *s; ++s) h = h * 33 + static_cast<unsigned char>(*s);
  return h;
}

bool is_libc(const char* path) {
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  return std::strncmp(base, "libc.so", 7) == 0;
}

// Whether the version definition with index `ndx` is named `version`.
bool version_matches(const ElfW(Verdef) * def, const char* strtab, std::uint16_t ndx, const char* version) {
  for (; def != nullptr;) {
    if (def->vd_ndx == ndx) {
      const auto* aux = reinterpret_cast<const ElfW(Verdaux)*>(reinterpret_cast<const char*>(def) + def->vd_aux);
      return std::strcmp(strtab + aux->vda_name, version) == 0;
    }
    if (def->vd_next == 0) break;
    def = reinterpret_cast<const ElfW(Verdef)*>(reinterpret_cast<const char*>(def) + def->vd_next);
  }
  return false;
}

int search_object(dl_phdr_info* info, std::size_t, void* data) {
  auto* q = static_cast<Query*>(data);
  if (info->dlpi_name == nullptr || !is_libc(info->dlpi_name)) return 0;
  const ElfW(Addr) base = info->dlpi_addr;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dynamic = dynamic_pointer<ElfW(Dyn)>(base, info->dlpi_phdr[i].p_vaddr);
  }
  if (dynamic == nullptr) return 0;
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const std::uint32_t* hash = nullptr;
  const std::uint16_t* versym = nullptr;
  const ElfW(Verdef)* verdef = nullptr;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        symtab = dynamic_pointer<ElfW(Sym)>(base, d->d_un.d_ptr);
        break;
      case DT_STRTAB:
        strtab = dynamic_pointer<char>(base, d->d_un.d_ptr);
        break;
      case DT_GNU_HASH:
        hash = dynamic_pointer<std::uint32_t>(base, d->d_un.d_ptr);
        break;
      case DT_VERSYM:
        versym = dynamic_pointer<std::uint16_t>(base, d->d_un.d_ptr);
        break;
      case DT_VERDEF:
        verdef = dynamic_pointer<ElfW(Verdef)>(base, d->d_un.d_ptr);
        break;
      default:
        break;
    }
  }
  if (symtab == nullptr || strtab == nullptr || hash == nullptr) return 0;
  const std::uint32_t nbuckets = hash[0], symoffset = hash[1], bloom_size = hash[2];
  if (nbuckets == 0) return 0;
  const auto* buckets =
      reinterpret_cast<const std::uint32_t*>(reinterpret_cast<const ElfW(Addr)*>(hash + 4) + bloom_size);
  const std::uint32_t* chain = buckets + nbuckets;
  const std::uint32_t h = gnu_hash(q->name);
  for (std::uint32_t index = buckets[h % nbuckets]; index >= symoffset && index != 0; ++index) {
    const std::uint32_t entry = chain[index - symoffset];
    const ElfW(Sym)& sym = symtab[index];
    if ((entry | 1) == (h | 1) && sym.st_shndx != SHN_UNDEF && std::strcmp(strtab + sym.st_name, q->name) == 0 &&
        (versym == nullptr || q->version == nullptr ||
         version_matches(verdef, strtab, static_cast<std::uint16_t>(versym[index] & 0x7fff), q->version))) {
      q->found = reinterpret_cast<void*>(base + sym.st_value);
      return 1;
    }
    if (entry & 1) break;
  }
  return 1;  // libc searched: stop
}

}  // namespace

void* libc_function(const char* name, const char* version) {
  Query q{name, version};
  dl_iterate_phdr(search_object, &q);
  return q.found;
}

}  // namespace nvrtc_cache::shim::watch
