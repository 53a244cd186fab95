// The cache's one little-endian codec: store_le/load_le for fixed-width fields at known offsets
// (envelope, key framing), and ByteWriter / ByteReader for the length-prefixed encoding of the
// binary formats (compile entries, manifests, dependency sets). Contract: pure, no I/O; a reader treats its input as
// hostile: it never reads past it, never trusts a length or count the remaining bytes cannot hold, and reports
// malformed input by returning false; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nvrtc_cache::util {

// Writes the low `n` (<= 8) bytes of `value` at `out`, least significant first.
inline void store_le(char* out, std::uint64_t value, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xffu);
}
// Reads `n` (<= 8) bytes at `in` as a little-endian number.
inline std::uint64_t load_le(const char* in, std::size_t n) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < n; ++i) value |= std::uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return value;
}

// Encoded sizes of the fixed-width fields, for the minimum size of one element of a count.
// Whether `size` bytes at `offset` lie inside a file of `file_size` bytes (no overflow).
inline constexpr bool range_inside(std::uint64_t offset, std::uint64_t size, std::uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

inline constexpr std::size_t kFlagBytes = 1;
inline constexpr std::size_t kU32Bytes = 4;
inline constexpr std::size_t kU64Bytes = 8;
inline constexpr std::size_t kEmptyBytesField = kU64Bytes;  // bytes(""): its length only

class ByteWriter {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void flag(bool v) { u8(v ? 1 : 0); }
  void u32(std::uint32_t v) { fixed(v, 4); }
  void i32(std::int32_t v) { fixed(static_cast<std::uint32_t>(v), 4); }
  void u64(std::uint64_t v) { fixed(v, 8); }
  void i64(std::int64_t v) { fixed(static_cast<std::uint64_t>(v), 8); }
  void bytes(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  void raw(std::string_view s) { out_.append(s); }
  std::string& str() { return out_; }

 private:
  void fixed(std::uint64_t v, std::size_t n) {
    char buffer[8];
    store_le(buffer, v, n);
    out_.append(buffer, n);
  }
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
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
  bool i64(std::int64_t& v) {
    std::uint64_t x;
    if (!fixed(x, 8)) return false;
    v = static_cast<std::int64_t>(x);
    return true;
  }
  bool bytes(std::string& s) {
    std::string_view view;
    if (!bytes_view(view)) return false;
    s.assign(view);
    return true;
  }
  // As bytes(), without a copy: a view into the input (valid while the input is).
  bool bytes_view(std::string_view& s) {
    std::uint64_t n;
    if (!u64(n) || n > in_.size() - pos_) return false;
    s = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool raw(std::size_t n, std::string& s) {
    if (n > in_.size() - pos_) return false;
    s.assign(in_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  // A count of items that each take at least `min_bytes_per_item` (> 0) bytes to encode: rejects a
  // count the rest of the input cannot hold, before the caller allocates anything for it.
  bool count(std::uint64_t& n, std::size_t min_bytes_per_item) {
    return u64(n) && n <= remaining() / min_bytes_per_item;
  }
  std::size_t remaining() const { return in_.size() - pos_; }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  bool fixed(std::uint64_t& v, std::size_t n) {
    if (in_.size() - pos_ < n) return false;
    v = load_le(in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::string_view in_;
  std::size_t pos_ = 0;
};

// Appends an XXH3-64 of everything written so far; verify_checksummed() checks and strips it.
void append_checksum(ByteWriter& w);
bool verify_checksummed(std::string_view framed, std::string_view& body);

// A versioned binary format's frame: a 4-byte magic, a u32 version, the body, then the checksum.
// begin_frame() writes the magic and the version (the caller writes the body, then append_checksum);
// open_frame() returns a reader over the body when the magic, the checksum and the version hold.
void begin_frame(ByteWriter& w, std::string_view magic, std::uint32_t version);
std::optional<ByteReader> open_frame(std::string_view framed, std::string_view magic, std::uint32_t version);

}  // namespace nvrtc_cache::util
