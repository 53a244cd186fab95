#include "shim/compile_entry.h"

#include <xxhash.h>

#include <cstring>

namespace nvrtc_cache::shim {
namespace {

constexpr char kMagic[4] = {'N', 'V', 'R', 'E'};

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) { fixed(v, 4); }
  void i32(std::int32_t v) { fixed(static_cast<std::uint32_t>(v), 4); }
  void u64(std::uint64_t v) { fixed(v, 8); }
  void bytes(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  void raw(std::string_view s) { out_.append(s); }
  std::string& str() { return out_; }

 private:
  void fixed(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool u8(std::uint8_t& v) {
    std::uint64_t x;
    if (!fixed(x, 1)) return false;
    v = static_cast<std::uint8_t>(x);
    return true;
  }
  bool flag(bool& v) {
    std::uint8_t x;
    if (!u8(x) || x > 1) return false;
    v = x == 1;
    return true;
  }
  bool u32(std::uint32_t& v) {
    std::uint64_t x;
    if (!fixed(x, 4)) return false;
    v = static_cast<std::uint32_t>(x);
    return true;
  }
  bool i32(std::int32_t& v) {
    std::uint32_t x;
    if (!u32(x)) return false;
    v = static_cast<std::int32_t>(x);
    return true;
  }
  bool u64(std::uint64_t& v) { return fixed(v, 8); }
  bool bytes(std::string& s) {
    std::uint64_t n;
    if (!u64(n) || n > in_.size() - pos_) return false;
    s.assign(in_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  bool fixed(std::uint64_t& v, int n) {
    if (in_.size() - pos_ < static_cast<std::size_t>(n)) return false;
    v = 0;
    for (int i = 0; i < n; ++i) v |= std::uint64_t{static_cast<unsigned char>(in_[pos_ + i])} << (8 * i);
    pos_ += n;
    return true;
  }
  std::string_view in_;
  std::size_t pos_ = 0;
};

void write_output(Writer& w, const RecordedOutput& o) {
  w.i32(o.size_rc);
  w.u8(o.size_written);
  w.u64(o.size);
  w.i32(o.data_rc);
  w.bytes(o.bytes);
}

bool read_output(Reader& r, RecordedOutput& o) {
  return r.i32(o.size_rc) && r.flag(o.size_written) && r.u64(o.size) && r.i32(o.data_rc) && r.bytes(o.bytes);
}

void write_lowered_name(Writer& w, const RecordedLoweredName& n) {
  w.bytes(n.expression);
  w.i32(n.rc);
  w.u8(n.written);
  w.u8(n.is_null);
  w.bytes(n.lowered);
}

bool read_lowered_name(Reader& r, RecordedLoweredName& n) {
  return r.bytes(n.expression) && r.i32(n.rc) && r.flag(n.written) && r.flag(n.is_null) && r.bytes(n.lowered);
}

std::uint64_t checksum(std::string_view body) { return XXH3_64bits(body.data(), body.size()); }

}  // namespace

std::uint64_t CompileEntry::payload_bytes() const {
  std::uint64_t total = log.bytes.size() + ptx.bytes.size() + cubin.bytes.size() + ltoir.bytes.size() +
                        optixir.bytes.size();
  for (const auto& n : lowered_names) total += n.expression.size() + n.lowered.size();
  return total;
}

// Layout: magic, version, body..., XXH3-64 of everything before it. Little-endian throughout.
std::string encode_entry(const CompileEntry& e) {
  Writer w;
  w.raw({kMagic, sizeof kMagic});
  w.u32(kEntryFormatVersion);
  w.i32(e.compile_rc);
  for (const RecordedOutput* o : {&e.log, &e.ptx, &e.cubin, &e.ltoir, &e.optixir}) write_output(w, *o);
  w.u64(e.lowered_names.size());
  for (const auto& n : e.lowered_names) write_lowered_name(w, n);
  write_lowered_name(w, e.unknown_name);
  w.i32(e.pch_create_status);
  w.i32(e.pch_heap_required_rc);
  w.u8(e.pch_heap_required_written);
  w.u64(e.pch_heap_required);
  w.u64(e.compile_nanos);
  w.u64(checksum(w.str()));
  return std::move(w.str());
}

std::optional<CompileEntry> decode_entry(std::string_view bytes) {
  if (bytes.size() < sizeof kMagic + 4 + 8 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return std::nullopt;
  }
  const std::string_view body = bytes.substr(0, bytes.size() - 8);
  Reader trailer(bytes.substr(bytes.size() - 8));
  std::uint64_t stored_checksum = 0;
  if (!trailer.u64(stored_checksum) || stored_checksum != checksum(body)) return std::nullopt;

  Reader r(body.substr(sizeof kMagic));
  std::uint32_t version = 0;
  if (!r.u32(version) || version != kEntryFormatVersion) return std::nullopt;
  CompileEntry e;
  if (!r.i32(e.compile_rc)) return std::nullopt;
  for (RecordedOutput* o : {&e.log, &e.ptx, &e.cubin, &e.ltoir, &e.optixir}) {
    if (!read_output(r, *o)) return std::nullopt;
  }
  std::uint64_t names = 0;
  if (!r.u64(names) || names > body.size()) return std::nullopt;
  e.lowered_names.resize(names);
  for (auto& n : e.lowered_names) {
    if (!read_lowered_name(r, n)) return std::nullopt;
  }
  if (!read_lowered_name(r, e.unknown_name)) return std::nullopt;
  if (!r.i32(e.pch_create_status) || !r.i32(e.pch_heap_required_rc) || !r.flag(e.pch_heap_required_written) ||
      !r.u64(e.pch_heap_required) || !r.u64(e.compile_nanos) || !r.at_end()) {
    return std::nullopt;
  }
  return e;
}

}  // namespace nvrtc_cache::shim
