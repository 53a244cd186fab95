#include "core/handle_entry.h"

#include "core/entry_codec.h"
#include "core/entry_compression.h"
#include "util/binary_io.h"

namespace nvrtc_cache::core {
namespace {

constexpr std::string_view kHandleEntryMagic = "NVHE";

constexpr OutputSpec kNvJitLinkOutputs[] = {
    {"cubin", false}, {"ptx", false}, {"ltoir", true}, {"error_log", false}, {"info_log", false}};
constexpr OutputSpec kNvvmOutputs[] = {{"result", false}, {"log", false}};

bool output_well_formed(JitLibrary library, const RecordedOutput& o) {
  if (!o.available) return o.size_rc == 0 && !o.size_written && o.size == 0 && o.data_rc == 0 && o.bytes.empty();
  if (!is_known_result(library, o.size_rc) || !is_known_result(library, o.data_rc)) return false;
  if (o.size_rc != 0) {
    if (o.size_written || o.size != 0) return false;
  } else if (!o.size_written) {
    return false;
  }
  if (o.data_rc == 0) return o.size_rc == 0 && o.bytes.size() >= o.size && o.bytes.size() - o.size < kMaxBytesPastSize;
  return o.bytes.empty();
}

bool known_library(std::uint8_t tag) {
  return tag == static_cast<std::uint8_t>(JitLibrary::nvjitlink) || tag == static_cast<std::uint8_t>(JitLibrary::nvvm);
}

}  // namespace

std::span<const OutputSpec> outputs_of(JitLibrary library) {
  if (library == JitLibrary::nvvm) return kNvvmOutputs;
  return kNvJitLinkOutputs;
}

std::int32_t last_known_result(JitLibrary library) { return library == JitLibrary::nvjitlink ? 18 : 10; }

std::uint64_t HandleEntry::payload_bytes() const {
  std::uint64_t total = 0;
  for (const RecordedOutput& o : outputs) total += o.bytes.size();
  return total;
}

bool is_well_formed(const HandleEntry& e) {
  const std::span<const OutputSpec> specs = outputs_of(e.library);
  if (!is_known_result(e.library, e.rc) || e.outputs.size() != specs.size()) return false;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const RecordedOutput& o = e.outputs[i];
    if (!output_well_formed(e.library, o) || (!o.available && !specs[i].optional)) return false;
  }
  return true;
}

// Layout: magic, version, library, rc, output count, each output (available, then its answers),
// nanos, the description (version 2: and the library's identity), XXH3-64 of everything before it. Little-endian
// throughout.
std::string encode_handle_entry(const HandleEntry& e) {
  util::ByteWriter w;
  const bool library = e.description.library.has_value();
  util::begin_frame(w, kHandleEntryMagic,
                    library ? kHandleEntryFormatVersion : kHandleEntryFormatVersionWithoutLibrary);
  w.u8(static_cast<std::uint8_t>(e.library));
  w.i32(e.rc);
  w.u64(e.outputs.size());
  for (const RecordedOutput& o : e.outputs) {
    w.u8(o.available);
    write_output(w, o);
  }
  w.u64(e.nanos);
  write_strings(w, e.description.options);
  write_strings(w, e.description.input_names);
  w.u64(e.description.input_bytes);
  if (library) write_library(w, e.description.library);
  util::append_checksum(w);
  return std::move(w.str());
}

namespace {

std::optional<HandleEntry> decode_plain_handle_entry(std::string_view bytes) {
  std::optional<util::ByteReader> frame = util::open_frame(bytes, kHandleEntryMagic, kHandleEntryFormatVersion);
  const bool with_library = frame.has_value();
  if (!frame) frame = util::open_frame(bytes, kHandleEntryMagic, kHandleEntryFormatVersionWithoutLibrary);
  if (!frame) return std::nullopt;
  util::ByteReader& r = *frame;
  HandleEntry e;
  std::uint8_t tag = 0;
  std::uint64_t count = 0;
  if (!r.u8(tag) || !known_library(tag) || !r.i32(e.rc)) return std::nullopt;
  e.library = static_cast<JitLibrary>(tag);
  if (!r.count(count, util::kEmptyBytesField) || count != outputs_of(e.library).size()) return std::nullopt;
  e.outputs.resize(count);
  for (RecordedOutput& o : e.outputs) {
    if (!r.flag(o.available) || !read_output(r, o)) return std::nullopt;
  }
  if (!r.u64(e.nanos) || !read_strings(r, e.description.options) || !read_strings(r, e.description.input_names) ||
      !r.u64(e.description.input_bytes)) {
    return std::nullopt;
  }
  if (with_library && (!read_library(r, e.description.library) || !e.description.library)) return std::nullopt;
  if (!r.at_end() || !is_well_formed(e)) return std::nullopt;
  return e;
}

}  // namespace

std::optional<HandleEntry> decode_handle_entry(std::string_view bytes) {
  if (!is_compressed_entry(bytes)) return decode_plain_handle_entry(bytes);
  const std::optional<std::string> expanded = expand_entry(bytes);
  if (!expanded) return std::nullopt;
  return decode_plain_handle_entry(*expanded);
}

}  // namespace nvrtc_cache::core
