// read_elf_identity (util/elf_identity.h) on hostile bytes, as `nvrtc-cache replay` reads a library
// a recording names before deciding whether to load it: the reader must never ask for a byte outside
// the file (the read callback checks every request), must report every file it does not read, and
// what it reads must respect its limits; the in-memory reader must agree.
#include <cstring>

#include "fuzz/fuzz_support.h"
#include "util/elf_identity.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache;
  const std::string_view file = fuzz::as_view(data, size);
  std::string why;
  const std::optional<util::ElfIdentity> id = util::read_elf_identity(
      file.size(),
      [file](std::uint64_t offset, std::size_t n, char* out) {
        NVRTC_CACHE_FUZZ_CHECK(offset <= file.size() && n <= file.size() - offset);
        std::memcpy(out, file.data() + offset, n);
        return true;
      },
      why);
  NVRTC_CACHE_FUZZ_CHECK(id.has_value() == why.empty());
  if (id) {
    NVRTC_CACHE_FUZZ_CHECK(id->build_id.size() <= util::kMaxElfBuildIdBytes);
    NVRTC_CACHE_FUZZ_CHECK(!id->soname || (id->soname->size() <= util::kMaxElfSonameBytes &&
                                           id->soname->find('\0') == std::string::npos));
  }
  std::string again_why;
  const std::optional<util::ElfIdentity> again = util::read_elf_identity(file, again_why);
  NVRTC_CACHE_FUZZ_CHECK(again.has_value() == id.has_value() && again_why == why);
  if (id) NVRTC_CACHE_FUZZ_CHECK(again->build_id == id->build_id && again->soname == id->soname);
  return 0;
}
