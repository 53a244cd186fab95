#include "core/compile_record.h"

#include <algorithm>

#include "util/binary_io.h"

namespace nvrtc_cache::core {
namespace {

constexpr std::string_view kRecordMagic = "NVRR";
// magic, version, body length; then the body and the checksum.
constexpr std::size_t kHeaderBytes = 4 + util::kU32Bytes + util::kU64Bytes;
constexpr std::size_t kChecksumBytes = util::kU64Bytes;

using util::ByteReader;
using util::ByteWriter;

void write_optional(ByteWriter& w, const std::optional<std::string>& s) {
  w.flag(s.has_value());
  w.bytes(s.value_or(""));
}

bool read_optional(ByteReader& r, std::optional<std::string>& s) {
  bool present = false;
  std::string value;
  if (!r.flag(present) || !r.bytes(value)) return false;
  if (present)
    s = std::move(value);
  else if (!value.empty())
    return false;
  else
    s.reset();
  return true;
}

void write_strings(ByteWriter& w, const std::vector<std::string>& list) {
  w.u64(list.size());
  for (const std::string& s : list) w.bytes(s);
}

bool read_strings(ByteReader& r, std::vector<std::string>& list) {
  std::uint64_t n = 0;
  if (!r.count(n, util::kEmptyBytesField)) return false;
  list.resize(n);
  for (std::string& s : list) {
    if (!r.bytes(s)) return false;
  }
  return true;
}

void write_identity(ByteWriter& w, std::string_view library_path, const keying::ProgramInputs& in) {
  w.bytes(library_path);
  w.i32(in.library.major);
  w.i32(in.library.minor);
  w.bytes(in.library.build_id);
  write_optional(w, in.name);
  w.bytes(in.source);
  w.u64(in.headers.size());
  for (const keying::InMemoryHeader& h : in.headers) {
    w.bytes(h.include_name);
    w.bytes(h.content);
  }
  write_strings(w, in.options);
  write_strings(w, in.name_expressions);
  w.bytes(in.working_directory);
  write_optional(w, in.pwd_variable);
  w.u8(static_cast<std::uint8_t>(in.working_directory_use));
}

bool read_body(ByteReader& r, CompileRecord& record) {
  keying::ProgramInputs& in = record.inputs;
  if (!r.bytes(record.library_path) || !r.i32(in.library.major) || !r.i32(in.library.minor) ||
      !r.bytes(in.library.build_id) || !read_optional(r, in.name) || !r.bytes(in.source)) {
    return false;
  }
  std::uint64_t headers = 0;
  if (!r.count(headers, 2 * util::kEmptyBytesField)) return false;
  in.headers.resize(headers);
  for (keying::InMemoryHeader& h : in.headers) {
    if (!r.bytes(h.include_name) || !r.bytes(h.content)) return false;
  }
  std::uint8_t use = 0;
  if (!read_strings(r, in.options) || !read_strings(r, in.name_expressions) || !r.bytes(in.working_directory) ||
      !read_optional(r, in.pwd_variable) || !r.u8(use) ||
      use > static_cast<std::uint8_t>(keying::WorkingDirectoryUse::kAlways)) {
    return false;
  }
  in.working_directory_use = static_cast<keying::WorkingDirectoryUse>(use);
  return record.dependencies.decode(r) && r.at_end();
}

bool starts_with_a_magic(std::string_view rest) {
  return rest.starts_with(kRecordMagic) || rest.starts_with(kHandleRecordMagic);
}

// Where the next frame of either kind may begin, after `from`.
std::size_t next_magic(std::string_view file, std::size_t from) {
  return std::min(file.find(kRecordMagic, from), file.find(kHandleRecordMagic, from));
}

// The length of the frame at the start of `rest`, once its header is readable and plausible.
std::optional<std::uint64_t> frame_length(std::string_view rest) {
  if (rest.size() < kHeaderBytes + kChecksumBytes || !starts_with_a_magic(rest)) return std::nullopt;
  const std::uint64_t body = util::load_le(rest.data() + 8, 8);
  if (body > rest.size() - kHeaderBytes - kChecksumBytes) return std::nullopt;
  return kHeaderBytes + body + kChecksumBytes;
}

}  // namespace

std::string encode_record(const CompileRecord& record) {
  return encode_record(record.library_path, record.inputs, record.dependencies);
}

std::string encode_record(std::string_view library_path, const keying::ProgramInputs& inputs,
                          const direct::DependencySet& dependencies) {
  ByteWriter body;
  write_identity(body, library_path, inputs);
  dependencies.encode(body);
  ByteWriter w;
  util::begin_frame(w, kRecordMagic, kRecordFormatVersion);
  w.bytes(body.str());
  util::append_checksum(w);
  return std::move(w.str());
}

std::optional<CompileRecord> decode_record(std::string_view frame) {
  std::optional<ByteReader> r = util::open_frame(frame, kRecordMagic, kRecordFormatVersion);
  std::string body;
  if (!r || !r->bytes(body) || r->remaining() != 0) return std::nullopt;
  ByteReader body_reader(body);
  CompileRecord record;
  if (!read_body(body_reader, record)) return std::nullopt;
  return record;
}

std::string program_identity(const CompileRecord& record) {
  ByteWriter w;
  write_identity(w, record.library_path, record.inputs);
  return std::move(w.str());
}

RecordScan scan_records(std::string_view file) {
  RecordScan scan;
  std::size_t pos = 0;
  while (pos < file.size()) {
    const std::string_view rest = file.substr(pos);
    std::string what;
    if (const std::optional<std::uint64_t> length = frame_length(rest)) {
      const std::string_view frame = rest.substr(0, *length);
      const bool handle_kind = rest.starts_with(kHandleRecordMagic);
      if (handle_kind) {
        if (std::optional<HandleCallRecord> record = decode_handle_record(frame)) {
          scan.handle_records.push_back(std::move(*record));
          pos += *length;
          continue;
        }
      } else if (std::optional<CompileRecord> record = decode_record(frame)) {
        scan.records.push_back(std::move(*record));
        pos += *length;
        continue;
      }
      std::string_view body;
      const std::uint32_t version = static_cast<std::uint32_t>(util::load_le(rest.data() + 4, 4));
      if (!util::verify_checksummed(frame, body))
        what = "checksum mismatch";
      else if (version != (handle_kind ? kHandleRecordFormatVersion : kRecordFormatVersion))
        what = "a record of format version " + std::to_string(version);
      else
        what = "a malformed record";
      if (!what.starts_with("checksum")) {  // intact frame, unusable content: skip exactly it
        scan.damage.push_back({pos, *length, what});
        pos += *length;
        continue;
      }
    } else {
      const bool starts_a_frame =
          starts_with_a_magic(rest) || kRecordMagic.starts_with(rest) || kHandleRecordMagic.starts_with(rest);
      what = starts_a_frame ? "a truncated record" : "bytes that are not a record";
    }
    // Resynchronise at the next magic.
    const std::size_t next = next_magic(file, pos + 1);
    const std::size_t end = next == std::string_view::npos ? file.size() : next;
    scan.damage.push_back({pos, end - pos, what});
    pos = end;
  }
  return scan;
}

}  // namespace nvrtc_cache::core
