#include "core/handle_record.h"

#include "util/binary_io.h"

namespace nvrtc_cache::core {
namespace {

using util::ByteReader;
using util::ByteWriter;

// The fewest bytes an input takes: type, from_file, name present, name and bytes (both empty).
constexpr std::size_t kMinInputBytes = util::kU32Bytes + 2 * util::kFlagBytes + 2 * util::kEmptyBytesField;

void write_body(ByteWriter& w, const HandleCallRecord& r) {
  w.u8(static_cast<std::uint8_t>(r.library));
  w.bytes(r.library_path);
  w.i32(r.inputs.library.major);
  w.i32(r.inputs.library.minor);
  w.bytes(r.inputs.library.build_id);
  w.bytes(r.working_directory);
  w.u64(r.inputs.options.size());
  for (const std::string& option : r.inputs.options) w.bytes(option);
  w.u64(r.inputs.inputs.size());
  for (const keying::HandleInput& input : r.inputs.inputs) {
    w.i32(input.type);
    w.flag(input.from_file);
    w.flag(input.name.has_value());
    w.bytes(input.name.value_or(""));
    w.bytes(input.bytes);
  }
}

bool read_body(ByteReader& r, HandleCallRecord& record) {
  std::uint8_t library = 0;
  if (!r.u8(library) || (library != static_cast<std::uint8_t>(JitLibrary::nvjitlink) &&
                         library != static_cast<std::uint8_t>(JitLibrary::nvvm))) {
    return false;
  }
  record.library = static_cast<JitLibrary>(library);
  keying::HandleInputs& in = record.inputs;
  if (!r.bytes(record.library_path) || !r.i32(in.library.major) || !r.i32(in.library.minor) ||
      !r.bytes(in.library.build_id) || !r.bytes(record.working_directory)) {
    return false;
  }
  std::uint64_t options = 0;
  if (!r.count(options, util::kEmptyBytesField)) return false;
  in.options.resize(options);
  for (std::string& option : in.options) {
    if (!r.bytes(option)) return false;
  }
  std::uint64_t inputs = 0;
  if (!r.count(inputs, kMinInputBytes)) return false;
  in.inputs.resize(inputs);
  for (keying::HandleInput& input : in.inputs) {
    bool named = false;
    std::string name;
    if (!r.i32(input.type) || !r.flag(input.from_file) || !r.flag(named) || !r.bytes(name) || !r.bytes(input.bytes)) {
      return false;
    }
    if (!named && !name.empty()) return false;  // one encoding per record
    if (named) input.name = std::move(name);
  }
  return r.at_end();
}

}  // namespace

std::string encode_handle_record(const HandleCallRecord& record) {
  ByteWriter body;
  write_body(body, record);
  ByteWriter w;
  util::begin_frame(w, kHandleRecordMagic, kHandleRecordFormatVersion);
  w.bytes(body.str());
  util::append_checksum(w);
  return std::move(w.str());
}

std::optional<HandleCallRecord> decode_handle_record(std::string_view frame) {
  std::optional<ByteReader> r = util::open_frame(frame, kHandleRecordMagic, kHandleRecordFormatVersion);
  std::string_view body;
  if (!r || !r->bytes_view(body) || r->remaining() != 0) return std::nullopt;
  ByteReader body_reader(body);
  HandleCallRecord record;
  if (!read_body(body_reader, record)) return std::nullopt;
  return record;
}

std::string handle_call_identity(const HandleCallRecord& record) {
  ByteWriter w;
  write_body(w, record);
  return std::move(w.str());
}

}  // namespace nvrtc_cache::core
