#include "core/compile_entry.h"

#include <cstring>

#include "core/entry_codec.h"
#include "core/entry_compression.h"
#include "util/binary_io.h"

namespace nvrtc_cache::core {
namespace {

constexpr std::string_view kEntryMagic = "NVRE";

using util::ByteReader;
using util::ByteWriter;

// The fewest bytes one lowered name can take: expression (empty), rc, written, is_null, lowered.
constexpr std::size_t kMinLoweredNameBytes =
    util::kEmptyBytesField + util::kU32Bytes + 2 * util::kFlagBytes + util::kEmptyBytesField;

}  // namespace

void write_output(util::ByteWriter& w, const RecordedOutput& o) {
  w.i32(o.size_rc);
  w.u8(o.size_written);
  w.u64(o.size);
  w.i32(o.data_rc);
  w.bytes(o.bytes);
}

bool read_output(util::ByteReader& r, RecordedOutput& o) {
  return r.i32(o.size_rc) && r.flag(o.size_written) && r.u64(o.size) && r.i32(o.data_rc) && r.bytes(o.bytes);
}

void write_strings(util::ByteWriter& w, const std::vector<std::string>& strings) {
  w.u64(strings.size());
  for (const auto& s : strings) w.bytes(s);
}

bool read_strings(util::ByteReader& r, std::vector<std::string>& strings) {
  std::uint64_t n = 0;
  if (!r.count(n, util::kEmptyBytesField)) return false;
  strings.resize(n);
  for (auto& s : strings) {
    if (!r.bytes(s)) return false;
  }
  return true;
}

namespace {

void write_lowered_name(util::ByteWriter& w, const RecordedLoweredName& n) {
  w.bytes(n.expression);
  w.i32(n.rc);
  w.u8(n.written);
  w.u8(n.is_null);
  w.bytes(n.lowered);
}

bool read_lowered_name(util::ByteReader& r, RecordedLoweredName& n) {
  return r.bytes(n.expression) && r.i32(n.rc) && r.flag(n.written) && r.flag(n.is_null) && r.bytes(n.lowered);
}

bool output_well_formed(const RecordedOutput& o) {
  if (!o.available) return o.size_rc == 0 && !o.size_written && o.size == 0 && o.data_rc == 0 && o.bytes.empty();
  if (!is_known_nvrtc_result(o.size_rc) || !is_known_nvrtc_result(o.data_rc)) return false;
  if (o.size_rc != NVRTC_SUCCESS || !o.size_written) return false;  // capture stores no other
  // Every size an entry reports is backed by its bytes: a host allocates what the size getter says.
  return o.data_rc == NVRTC_SUCCESS ? o.bytes.size() == o.size : o.bytes.empty() && o.size == 0;
}

bool lowered_name_well_formed(const RecordedLoweredName& n) {
  // Both were C strings (replay hands `lowered` back as one).
  if (!is_known_nvrtc_result(n.rc) || n.expression.find('\0') != std::string::npos ||
      n.lowered.find('\0') != std::string::npos) {
    return false;
  }
  if (!n.written) return !n.is_null && n.lowered.empty();
  return !n.is_null || n.lowered.empty();
}

void write_description(util::ByteWriter& w, const EntryDescription& d) {
  w.bytes(d.program_name);
  write_strings(w, d.options);
  write_strings(w, d.header_names);
  w.u64(d.source_bytes);
}

bool read_description(util::ByteReader& r, EntryDescription& d) {
  return r.bytes(d.program_name) && read_strings(r, d.options) && read_strings(r, d.header_names) &&
         r.u64(d.source_bytes);
}

// Entries without the newer outputs and the library (versions 1 and 2) are written in their own version.
bool has_newer_outputs(const CompileEntry& e) { return e.tileir.available || e.nvvm.available; }
bool has_library(const CompileEntry& e) { return e.description && e.description->library; }

}  // namespace

void write_library(util::ByteWriter& w, const std::optional<LibraryVersion>& library) {
  w.u8(library.has_value());
  if (!library) return;
  w.i32(library->major);
  w.i32(library->minor);
  w.bytes(library->build_id);
}

bool read_library(util::ByteReader& r, std::optional<LibraryVersion>& library) {
  bool present = false;
  if (!r.flag(present)) return false;
  if (!present) return true;
  LibraryVersion& l = library.emplace();
  return r.i32(l.major) && r.i32(l.minor) && r.bytes(l.build_id);
}

std::string version_text(const std::optional<LibraryVersion>& library) {
  if (!library) return "unknown";
  return std::to_string(library->major) + "." + std::to_string(library->minor);
}

std::string build_id_hex(const std::optional<LibraryVersion>& library) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  if (!library) return hex;
  for (unsigned char c : library->build_id) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

namespace {

}  // namespace

const char* output_name(OutputKind kind) {
  switch (kind) {
    case OutputKind::log:
      return "log";
    case OutputKind::ptx:
      return "ptx";
    case OutputKind::cubin:
      return "cubin";
    case OutputKind::ltoir:
      return "ltoir";
    case OutputKind::optixir:
      return "optixir";
    case OutputKind::tileir:
      return "tileir";
    case OutputKind::nvvm:
      return "nvvm";
  }
  return "?";
}

RecordedOutput& CompileEntry::output(OutputKind kind) {
  return const_cast<RecordedOutput&>(static_cast<const CompileEntry&>(*this).output(kind));
}

const RecordedOutput& CompileEntry::output(OutputKind kind) const {
  switch (kind) {
    case OutputKind::log:
      return log;
    case OutputKind::ptx:
      return ptx;
    case OutputKind::cubin:
      return cubin;
    case OutputKind::ltoir:
      return ltoir;
    case OutputKind::optixir:
      return optixir;
    case OutputKind::tileir:
      return tileir;
    case OutputKind::nvvm:
      return nvvm;
  }
  return log;
}

bool is_well_formed(const CompileEntry& e) {
  for (std::size_t i = 0; i < kOutputCount; ++i) {
    const RecordedOutput& o = e.output(kOutputKinds[i]);
    if (!output_well_formed(o)) return false;
    if (i < kBaseOutputCount && !o.available) return false;  // every NVRTC since 12.0 has these getters
  }
  for (const auto& n : e.lowered_names) {
    if (!lowered_name_well_formed(n)) return false;
  }
  return lowered_name_well_formed(e.unknown_name) && e.unknown_name.expression.empty() &&
         is_known_nvrtc_result(e.compile_rc) && is_known_nvrtc_result(e.pch_create_status) &&
         is_known_nvrtc_result(e.pch_heap_required_rc) && (e.pch_heap_required_written || e.pch_heap_required == 0);
}

std::uint64_t CompileEntry::payload_bytes() const {
  std::uint64_t total = 0;
  for (OutputKind kind : kOutputKinds) total += output(kind).bytes.size();
  for (const auto& n : lowered_names) total += n.expression.size() + n.lowered.size();
  return total;
}

// Layout: magic, version, body..., XXH3-64 of everything before it. Little-endian throughout.
std::string encode_entry(const CompileEntry& e) {
  util::ByteWriter w;
  const bool library = has_library(e);
  const bool newer = library || has_newer_outputs(e);
  util::begin_frame(w, kEntryMagic,
                    library         ? kEntryFormatVersion
                    : newer         ? kEntryFormatVersionWithoutLibrary
                    : e.description ? kEntryFormatVersionWithoutNewerOutputs
                                    : kEntryFormatVersionWithoutDescription);
  w.i32(e.compile_rc);
  for (std::size_t i = 0; i < (newer ? kOutputCount : kBaseOutputCount); ++i) {
    const RecordedOutput& o = e.output(kOutputKinds[i]);
    if (newer) w.u8(o.available);
    write_output(w, o);
  }
  w.u64(e.lowered_names.size());
  for (const auto& n : e.lowered_names) write_lowered_name(w, n);
  write_lowered_name(w, e.unknown_name);
  w.i32(e.pch_create_status);
  w.i32(e.pch_heap_required_rc);
  w.u8(e.pch_heap_required_written);
  w.u64(e.pch_heap_required);
  w.u64(e.compile_nanos);
  if (newer) w.u8(e.description.has_value());  // versions 1 and 2 say it by their version
  if (e.description) write_description(w, *e.description);
  if (library) write_library(w, e.description->library);
  util::append_checksum(w);
  return std::move(w.str());
}

namespace {

std::optional<CompileEntry> decode_plain_entry(std::string_view bytes) {
  std::uint32_t version = kEntryFormatVersion;
  std::optional<util::ByteReader> frame;
  for (std::uint32_t v : {kEntryFormatVersion, kEntryFormatVersionWithoutLibrary, kEntryFormatVersionWithoutNewerOutputs,
                          kEntryFormatVersionWithoutDescription}) {
    if ((frame = util::open_frame(bytes, kEntryMagic, v))) {
      version = v;
      break;
    }
  }
  if (!frame) return std::nullopt;
  const bool with_library = version == kEntryFormatVersion;
  const bool newer = with_library || version == kEntryFormatVersionWithoutLibrary;
  bool described = version != kEntryFormatVersionWithoutDescription;
  util::ByteReader& r = *frame;
  CompileEntry e;
  if (!r.i32(e.compile_rc)) return std::nullopt;
  for (std::size_t i = 0; i < (newer ? kOutputCount : kBaseOutputCount); ++i) {
    RecordedOutput& o = e.output(kOutputKinds[i]);
    if (newer && !r.flag(o.available)) return std::nullopt;
    if (!read_output(r, o)) return std::nullopt;
  }
  std::uint64_t names = 0;
  if (!r.count(names, kMinLoweredNameBytes)) return std::nullopt;
  e.lowered_names.resize(names);
  for (auto& n : e.lowered_names) {
    if (!read_lowered_name(r, n)) return std::nullopt;
  }
  if (!read_lowered_name(r, e.unknown_name)) return std::nullopt;
  if (!r.i32(e.pch_create_status) || !r.i32(e.pch_heap_required_rc) || !r.flag(e.pch_heap_required_written) ||
      !r.u64(e.pch_heap_required) || !r.u64(e.compile_nanos)) {
    return std::nullopt;
  }
  if (newer && !r.flag(described)) return std::nullopt;
  if (described && !read_description(r, e.description.emplace())) return std::nullopt;
  // Version 4 writes the library only in a description (encode_entry).
  if (with_library && (!described || !read_library(r, e.description->library) || !e.description->library))
    return std::nullopt;
  if (!r.at_end() || !is_well_formed(e)) {
    return std::nullopt;
  }
  return e;
}

}  // namespace

std::optional<CompileEntry> decode_entry(std::string_view bytes) {
  if (!is_compressed_entry(bytes)) return decode_plain_entry(bytes);
  const std::optional<std::string> expanded = expand_entry(bytes);
  if (!expanded) return std::nullopt;
  return decode_plain_entry(*expanded);
}

}  // namespace nvrtc_cache::core
