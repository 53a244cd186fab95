// read_pe_identity (util/pe_identity.h) on hostile bytes, as `nvrtc-cache.exe replay` reads a DLL a
// recording names before deciding whether to load it: the reader must never ask for a byte outside
// the file (the read callback checks every request), must report every file it does not read, and
// what it reads must respect its limits; the in-memory reader must agree, and the headers-only
// reader must give the same identity.
#include <cstring>

#include "fuzz/fuzz_support.h"
#include "util/pe_identity.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache;
  const std::string_view file = fuzz::as_view(data, size);
  std::string why;
  const std::optional<util::PeIdentity> id = util::read_pe_identity(
      file.size(),
      [file](std::uint64_t offset, std::size_t n, char* out) {
        NVRTC_CACHE_FUZZ_CHECK(offset <= file.size() && n <= file.size() - offset);
        std::memcpy(out, file.data() + offset, n);
        return true;
      },
      why);
  NVRTC_CACHE_FUZZ_CHECK(id.has_value() == why.empty());
  if (id) {
    NVRTC_CACHE_FUZZ_CHECK(id->build_id.size() == 15);
    NVRTC_CACHE_FUZZ_CHECK(!id->export_name || (id->export_name->size() <= util::kMaxPeExportNameBytes &&
                                                id->export_name->find('\0') == std::string::npos));
    std::string headers_why;
    NVRTC_CACHE_FUZZ_CHECK(util::read_pe_build_id(file, headers_why) == id->build_id);
  }
  std::string again_why;
  const std::optional<util::PeIdentity> again = util::read_pe_identity(file, again_why);
  NVRTC_CACHE_FUZZ_CHECK(again.has_value() == id.has_value() && again_why == why);
  if (id) NVRTC_CACHE_FUZZ_CHECK(again->build_id == id->build_id && again->export_name == id->export_name);
  return 0;
}
