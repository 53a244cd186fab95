// scan_records and decode_record (core/compile_record.h) on hostile bytes: the input as a whole
// recording file, and as a record body inside a valid frame (checksum recomputed, as a writer of the
// file could), so the body decoder is reached.
#include "core/compile_record.h"
#include "fuzz/fuzz_support.h"

namespace nvrtc_cache::fuzz {
namespace {

void check_file(std::string_view file) {
  const core::RecordScan scan = core::scan_records(file);
  std::uint64_t covered = 0;
  for (const core::CompileRecord& r : scan.records) {
    const std::string frame = core::encode_record(r);
    covered += frame.size();
    const std::optional<core::CompileRecord> again = core::decode_record(frame);
    NVRTC_CACHE_FUZZ_CHECK(again && core::encode_record(*again) == frame);
  }
  for (const core::RecordDamage& d : scan.damage) {
    NVRTC_CACHE_FUZZ_CHECK(d.length > 0 && d.offset + d.length <= file.size());
    covered += d.length;
  }
  NVRTC_CACHE_FUZZ_CHECK(covered == file.size());  // every byte is a record or reported
}

void check_body(std::string_view body) {
  util::ByteWriter w;
  util::begin_frame(w, "NVRR", core::kRecordFormatVersion);
  w.bytes(body);
  util::append_checksum(w);
  const std::string frame = w.str();
  const std::optional<core::CompileRecord> decoded = core::decode_record(frame);
  if (!decoded) return;
  NVRTC_CACHE_FUZZ_CHECK(core::encode_record(*decoded) == frame);
  check_file(frame + frame);
}

}  // namespace
}  // namespace nvrtc_cache::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache::fuzz;
  const std::string_view input = as_view(data, size);
  check_file(input);
  check_body(input);
  return 0;
}
