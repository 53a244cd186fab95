#include "shim/watch/import_patch.h"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "shim/watch/libc_symbols.h"
#include "shim/watch/watched_functions.h"

namespace nvrtc_cache::shim::watch {
namespace {

// The relocations that fill a GOT slot with a symbol's address.
#if defined(__x86_64__)
constexpr std::uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr std::uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr std::uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr std::uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#else
constexpr std::uint32_t kJumpSlot = 0xffffffff;  // unknown architecture: nothing is redirected
constexpr std::uint32_t kGlobDat = 0xffffffff;
#endif

#if __ELF_NATIVE_CLASS == 64
std::uint32_t relocation_type(ElfW(Xword) info) { return static_cast<std::uint32_t>(ELF64_R_TYPE(info)); }
std::size_t relocation_symbol(ElfW(Xword) info) { return ELF64_R_SYM(info); }
#else
std::uint32_t relocation_type(ElfW(Word) info) { return ELF32_R_TYPE(info); }
std::size_t relocation_symbol(ElfW(Word) info) { return ELF32_R_SYM(info); }
#endif

struct Object {
  const dl_phdr_info* info = nullptr;
  ElfW(Addr) base = 0;
  const ElfW(Sym) * symtab = nullptr;
  const char* strtab = nullptr;
  const std::uint16_t* versym = nullptr;
  const ElfW(Verneed) * verneed = nullptr;
  std::uintptr_t relro_start = 0, relro_end = 0;
};

bool inside(const Object& o, std::uintptr_t address) {
  for (int i = 0; i < o.info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = o.info->dlpi_phdr[i];
    const std::uintptr_t start = o.base + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && address >= start && address < start + ph.p_memsz) return true;
  }
  return false;
}

// The version a symbol of the object's symbol table asks for (nullptr: unversioned).
const char* needed_version(const Object& o, std::size_t symbol) {
  if (o.versym == nullptr || o.verneed == nullptr) return nullptr;
  const std::uint16_t index = o.versym[symbol] & 0x7fff;
  if (index < 2) return nullptr;  // local or global, unversioned
  for (const ElfW(Verneed)* need = o.verneed;;) {
    const auto* aux = reinterpret_cast<const ElfW(Vernaux)*>(reinterpret_cast<const char*>(need) + need->vn_aux);
    for (unsigned n = 0; n < need->vn_cnt; ++n) {
      if ((aux->vna_other & 0x7fff) == index) return o.strtab + aux->vna_name;
      aux = reinterpret_cast<const ElfW(Vernaux)*>(reinterpret_cast<const char*>(aux) + aux->vna_next);
    }
    if (need->vn_next == 0) return nullptr;
    need = reinterpret_cast<const ElfW(Verneed)*>(reinterpret_cast<const char*>(need) + need->vn_next);
  }
}

int watched_index(const char* name) {
  const WatchedFunction* table = watched_functions();
  for (std::size_t i = 0; i < kWatchedFunctionCount; ++i) {
    if (table[i].name[0] == name[0] && std::strcmp(table[i].name, name) == 0) return static_cast<int>(i);
  }
  return -1;
}

bool store_slot(const Object& o, void** slot, void* value) {
  const auto address = reinterpret_cast<std::uintptr_t>(slot);
  if (address < o.relro_start || address >= o.relro_end) {
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    return true;
  }
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  void* first = reinterpret_cast<void*>(address & ~(page - 1));
  if (mprotect(first, page, PROT_READ | PROT_WRITE) != 0) return false;
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  mprotect(first, page, PROT_READ);  // RELRO pages are read-only once the loader is done
  return true;
}

void redirect(const Object& o, std::uint32_t type, std::size_t symbol, ElfW(Addr) offset, ImportPatch& result) {
  if (type != kJumpSlot && type != kGlobDat) return;
  const ElfW(Sym)& sym = o.symtab[symbol];
  if (sym.st_shndx != SHN_UNDEF || sym.st_name == 0) return;  // not an import
  const char* name = o.strtab + sym.st_name;
  const int index = watched_index(name);
  if (index < 0) return;
  void* hook = watched_functions()[index].hook;
  auto** slot = reinterpret_cast<void**>(o.base + offset);
  void* held = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (held == hook) {
    ++result.already;
    return;
  }
  // Not bound yet (lazy binding: the slot points back into the object's PLT): what libc defines for
  // the version the import names is what binding would find after the shim.
  void* bound =
      inside(o, reinterpret_cast<std::uintptr_t>(held)) ? libc_function(name, needed_version(o, symbol)) : held;
  void* real = real_libc(static_cast<std::size_t>(index));
  if (bound != nullptr && bound == real && store_slot(o, slot, hook)) {
    ++result.redirected;
  } else {
    ++result.left;
  }
}

template <typename Rel>
void redirect_all(const Object& o, const Rel* relocations, std::size_t bytes, std::size_t skip, ImportPatch& result) {
  if (relocations == nullptr) return;
  const std::size_t count = bytes / sizeof(Rel);
  for (std::size_t i = skip < count ? skip : count; i < count; ++i) {
    const Rel& r = relocations[i];
    redirect(o, relocation_type(r.r_info), relocation_symbol(r.r_info), r.r_offset, result);
  }
}

}  // namespace

ImportPatch redirect_watched_imports(const dl_phdr_info& object) {
  const int saved_errno = errno;
  ImportPatch result;
  Object o;
  o.info = &object;
  o.base = object.dlpi_addr;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < object.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = object.dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(o.base + ph.p_vaddr);
    if (ph.p_type == PT_GNU_RELRO) {
      o.relro_start = o.base + ph.p_vaddr;
      o.relro_end = o.relro_start + ph.p_memsz;
    }
  }
  if (dynamic == nullptr) return result;
  ElfW(Addr) jmprel = 0, rela = 0, rel = 0;
  std::size_t jmprel_bytes = 0, rela_bytes = 0, rel_bytes = 0, relative_rela = 0, relative_rel = 0;
  ElfW(Sxword) plt_kind = DT_RELA;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        o.symtab = dynamic_pointer<ElfW(Sym)>(o.base, d->d_un.d_ptr);
        break;
      case DT_STRTAB:
        o.strtab = dynamic_pointer<char>(o.base, d->d_un.d_ptr);
        break;
      case DT_VERSYM:
        o.versym = dynamic_pointer<std::uint16_t>(o.base, d->d_un.d_ptr);
        break;
      case DT_VERNEED:
        o.verneed = dynamic_pointer<ElfW(Verneed)>(o.base, d->d_un.d_ptr);
        break;
      case DT_JMPREL:
        jmprel = d->d_un.d_ptr;
        break;
      case DT_PLTRELSZ:
        jmprel_bytes = d->d_un.d_val;
        break;
      case DT_PLTREL:
        plt_kind = static_cast<ElfW(Sxword)>(d->d_un.d_val);
        break;
      case DT_RELA:
        rela = d->d_un.d_ptr;
        break;
      case DT_RELASZ:
        rela_bytes = d->d_un.d_val;
        break;
      case DT_RELACOUNT:
        relative_rela = d->d_un.d_val;
        break;  // leading R_*_RELATIVE: no symbol
      case DT_REL:
        rel = d->d_un.d_ptr;
        break;
      case DT_RELSZ:
        rel_bytes = d->d_un.d_val;
        break;
      case DT_RELCOUNT:
        relative_rel = d->d_un.d_val;
        break;
      default:
        break;
    }
  }
  if (o.symtab != nullptr && o.strtab != nullptr) {
    if (jmprel != 0 && plt_kind == DT_RELA) {
      redirect_all(o, dynamic_pointer<ElfW(Rela)>(o.base, jmprel), jmprel_bytes, 0, result);
    } else if (jmprel != 0) {
      redirect_all(o, dynamic_pointer<ElfW(Rel)>(o.base, jmprel), jmprel_bytes, 0, result);
    }
    if (rela != 0) redirect_all(o, dynamic_pointer<ElfW(Rela)>(o.base, rela), rela_bytes, relative_rela, result);
    if (rel != 0) redirect_all(o, dynamic_pointer<ElfW(Rel)>(o.base, rel), rel_bytes, relative_rel, result);
  }
  errno = saved_errno;
  return result;
}

}  // namespace nvrtc_cache::shim::watch
