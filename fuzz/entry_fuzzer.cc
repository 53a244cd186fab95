// decode_entry on hostile bytes (checksum recomputed), then replay of whatever decodes: the host's
// buffers are exactly the sizes replay reports, so ASan flags any write past them. The same bytes also
// go in as a compressed entry's declared size and zstd frame (core/entry_compression.h), checksummed.
#include <memory>

#include "core/compile_entry.h"
#include "core/entry_compression.h"
#include "core/replay_output.h"
#include "fuzz/fuzz_support.h"
#include "util/binary_io.h"

namespace nvrtc_cache::fuzz {
namespace {

void replay_everything(const core::CompileEntry& e) {
  for (const core::OutputKind kind : core::kOutputKinds) {
    const core::RecordedOutput* o = &e.output(kind);
    if (!o->available) continue;  // never replayed: the shim serves no entry lacking an output of the NVRTC
    size_t size = 0;
    NVRTC_CACHE_FUZZ_CHECK(core::replay_size(*o, &size) == NVRTC_SUCCESS);
    const std::unique_ptr<char[]> host(new char[size]);  // what a host allocates after the size getter
    const nvrtcResult rc = core::replay_data(*o, host.get());
    NVRTC_CACHE_FUZZ_CHECK(rc == static_cast<nvrtcResult>(o->data_rc));
    if (rc == NVRTC_SUCCESS) NVRTC_CACHE_FUZZ_CHECK(std::string_view(host.get(), size) == o->bytes);
  }
  for (const auto& n : e.lowered_names) {
    const char* lowered = "unwritten";
    (void)core::replay_lowered_name(n, &lowered);
    if (n.written) NVRTC_CACHE_FUZZ_CHECK(n.is_null ? lowered == nullptr : lowered != nullptr && lowered == n.lowered);
  }
}

void check(std::string_view framed) {
  const std::optional<core::CompileEntry> decoded = core::decode_entry(framed);
  if (!decoded) return;
  NVRTC_CACHE_FUZZ_CHECK(core::is_well_formed(*decoded));
  const std::string encoded = core::encode_entry(*decoded);
  if (core::is_compressed_entry(framed)) {
    const std::optional<std::string> expanded = core::expand_entry(framed);
    NVRTC_CACHE_FUZZ_CHECK(expanded && encoded == *expanded);  // what was compressed is canonical
  } else {
    NVRTC_CACHE_FUZZ_CHECK(encoded == framed);  // the encoding is canonical
    const std::string compressed = core::compress_entry(encoded, 1);
    const std::optional<core::CompileEntry> expanded = core::decode_entry(compressed);
    NVRTC_CACHE_FUZZ_CHECK(expanded && core::encode_entry(*expanded) == encoded);
  }
  const std::optional<core::CompileEntry> again = core::decode_entry(encoded);
  NVRTC_CACHE_FUZZ_CHECK(again && core::encode_entry(*again) == encoded);
  replay_everything(*decoded);
}

// The input as a compressed entry: its first 8 bytes the declared size, the rest the zstd frame.
std::string as_compressed_entry(std::string_view input) {
  util::ByteReader r(input);
  std::uint64_t declared = 0;
  (void)r.u64(declared);
  util::ByteWriter w;
  util::begin_frame(w, "NVRZ", core::kCompressedEntryVersion);
  w.u64(declared);
  w.bytes(input.substr(input.size() < 8 ? input.size() : 8));
  util::append_checksum(w);
  return std::move(w.str());
}

}  // namespace
}  // namespace nvrtc_cache::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache::fuzz;
  const std::string_view input = as_view(data, size);
  check(input);               // as stored (the checksum usually fails)
  check(checksummed(input));  // as a writer who recomputes the checksum stores it
  check(as_compressed_entry(input));
  return 0;
}
