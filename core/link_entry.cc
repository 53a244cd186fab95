#include "core/link_entry.h"

#include "core/entry_codec.h"
#include "util/binary_io.h"

namespace nvrtc_cache::core {
namespace {

constexpr std::string_view kMagic = "NVLK";

bool output_well_formed(const RecordedOutput& o) {
  if (!o.available) return o.size_rc == 0 && !o.size_written && o.size == 0 && o.data_rc == 0 && o.bytes.empty();
  if ( !is_known_nvjitlink_result(o.size_rc) || !is_known_nvjitlink_result(o.data_rc)) return false;
  if (o.size_rc != 0) {
    if (o.size_written || o.size != 0) return false;
  } else if (!o.size_written) {
    return false;
  }
  if (o.data_rc == 0) {
    return o.size_rc == 0 && o.bytes.size() >= o.size && o.bytes.size() - o.size < kMaxLinkBytesPastSize;
  }
  return o.bytes.empty();
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

}  // namespace

const char* link_output_name(LinkOutputKind kind) {
  switch (kind) {
    case LinkOutputKind::cubin:
      return "cubin";
    case LinkOutputKind::ptx:
      return "ptx";
    case LinkOutputKind::ltoir:
      return "ltoir";
    case LinkOutputKind::error_log:
      return "error_log";
    case LinkOutputKind::info_log:
      return "info_log";
  }
  return "?";
}

RecordedOutput& LinkEntry::output(LinkOutputKind kind) {
  return const_cast<RecordedOutput&>(static_cast<const LinkEntry&>(*this).output(kind));
}

const RecordedOutput& LinkEntry::output(LinkOutputKind kind) const {
  switch (kind) {
    case LinkOutputKind::cubin:
      return cubin;
    case LinkOutputKind::ptx:
      return ptx;
    case LinkOutputKind::ltoir:
      return ltoir;
    case LinkOutputKind::error_log:
      return error_log;
    case LinkOutputKind::info_log:
      return info_log;
  }
  return cubin;
}

std::uint64_t LinkEntry::payload_bytes() const {
  std::uint64_t total = 0;
  for (LinkOutputKind kind : kLinkOutputKinds) total += output(kind).bytes.size();
  return total;
}

bool is_well_formed(const LinkEntry& e) {
  if (!is_known_nvjitlink_result(e.complete_rc)) return false;
  for (LinkOutputKind kind : kLinkOutputKinds) {
    const RecordedOutput& o = e.output(kind);
    if (!output_well_formed(o) || (!o.available && kind != LinkOutputKind::ltoir)) return false;
  }
  return true;
}

// Layout: magic, version, complete_rc, the outputs in kLinkOutputKinds order (each: available, then
// its answers), link_nanos, the
// description, XXH3-64 of everything before it. Little-endian throughout.
std::string encode_link_entry(const LinkEntry& e) {
  util::ByteWriter w;
  util::begin_frame(w, kMagic, kLinkEntryFormatVersion);
  w.i32(e.complete_rc);
  for (LinkOutputKind kind : kLinkOutputKinds) {
    w.u8(e.output(kind).available);
    write_output(w, e.output(kind));
  }
  w.u64(e.link_nanos);
  write_strings(w, e.description.options);
  write_strings(w, e.description.input_names);
  w.u64(e.description.input_bytes);
  util::append_checksum(w);
  return std::move(w.str());
}

std::optional<LinkEntry> decode_link_entry(std::string_view bytes) {
  std::optional<util::ByteReader> frame = util::open_frame(bytes, kMagic, kLinkEntryFormatVersion);
  if (!frame) return std::nullopt;
  util::ByteReader& r = *frame;
  LinkEntry e;
  if (!r.i32(e.complete_rc)) return std::nullopt;
  for (LinkOutputKind kind : kLinkOutputKinds) {
    if (!r.flag(e.output(kind).available) || !read_output(r, e.output(kind))) return std::nullopt;
  }
  if (!r.u64(e.link_nanos) || !read_strings(r, e.description.options) ||
      !read_strings(r, e.description.input_names) || !r.u64(e.description.input_bytes)) {
    return std::nullopt;
  }
  if (!r.at_end() || !is_well_formed(e)) return std::nullopt;
  return e;
}

}  // namespace nvrtc_cache::core
