// scan_records, decode_record (core/compile_record.h) and decode_handle_record (core/handle_record.h)
// on hostile bytes: the input as a whole recording file, and as a record body of either kind inside a
// valid frame (checksum recomputed, as a writer of the file could), so both body decoders are reached.
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
  for (const core::HandleCallRecord& r : scan.handle_records) {
    const std::string frame = core::encode_handle_record(r);
    covered += frame.size();
    const std::optional<core::HandleCallRecord> again = core::decode_handle_record(frame);
    NVRTC_CACHE_FUZZ_CHECK(again && core::encode_handle_record(*again) == frame);
  }
  for (const core::RecordDamage& d : scan.damage) {
    NVRTC_CACHE_FUZZ_CHECK(d.length > 0 && d.offset + d.length <= file.size());
    covered += d.length;
  }
  NVRTC_CACHE_FUZZ_CHECK(covered == file.size());  // every byte is a record or reported
}

std::string framed(std::string_view magic, std::uint32_t version, std::string_view body) {
  util::ByteWriter w;
  util::begin_frame(w, magic, version);
  w.bytes(body);
  util::append_checksum(w);
  return std::move(w.str());
}

void check_body(std::string_view body) {
  const std::string frame = framed("NVRR", core::kRecordFormatVersion, body);
  if (const std::optional<core::CompileRecord> decoded = core::decode_record(frame)) {
    NVRTC_CACHE_FUZZ_CHECK(core::encode_record(*decoded) == frame);
    check_file(frame + frame);
  }
  const std::string handle_frame = framed(core::kHandleRecordMagic, core::kHandleRecordFormatVersion, body);
  if (const std::optional<core::HandleCallRecord> decoded = core::decode_handle_record(handle_frame)) {
    NVRTC_CACHE_FUZZ_CHECK(core::encode_handle_record(*decoded) == handle_frame);
    check_file(handle_frame + frame + handle_frame);
  }
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
