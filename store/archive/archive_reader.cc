#include "store/archive/archive_reader.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>

#include "store/remote/sealed_value.h"
#include "util/binary_io.h"

namespace nvrtc_cache::store::archive {

namespace {
constexpr std::size_t kChunk = 64u << 10;
constexpr int kMaxWindowLog = 27;          // 128 MiB: zstd refuses frames that ask for more
constexpr std::size_t kStoreKeySize = 33;  // 'M', 'R', 'L' or 'A' and a 32-byte key
}  // namespace

ArchiveSource memory_source(std::string_view bytes, std::size_t piece) {
  return [bytes, piece, offset = std::size_t{0}](char* buffer, std::size_t size) mutable -> std::ptrdiff_t {
    const std::size_t n = std::min({size, piece, bytes.size() - offset});
    std::copy_n(bytes.data() + offset, n, buffer);
    offset += n;
    return static_cast<std::ptrdiff_t>(n);
  };
}

struct ArchiveReader::Zstd {
  ZSTD_DStream* stream = ZSTD_createDStream();
  XXH3_state_t* hash = XXH3_createState();
  std::string in = std::string(ZSTD_DStreamInSize(), '\0');
  std::size_t in_pos = 0, in_end = 0;
  std::string out = std::string(ZSTD_DStreamOutSize(), '\0');
  std::size_t out_pos = 0, out_end = 0;
  std::size_t last_return = 1;  // 0 once zstd has verified the end of the frame
  bool source_ended = false;
  ~Zstd() {
    ZSTD_freeDStream(stream);
    XXH3_freeState(hash);
  }
};

ArchiveReader::ArchiveReader(ArchiveSource source, const remote::Secret* secret, std::uint64_t max_value_bytes)
    : source_(std::move(source)), secret_(secret), max_value_bytes_(max_value_bytes), zstd_(std::make_unique<Zstd>()) {
  if (zstd_->stream == nullptr || zstd_->hash == nullptr) {
    failed_ = true;
    problem_ = "cannot create the decompressor";
    return;
  }
  ZSTD_DCtx_setParameter(zstd_->stream, ZSTD_d_windowLogMax, kMaxWindowLog);
  XXH3_64bits_reset(zstd_->hash);
}

ArchiveReader::~ArchiveReader() = default;

ArchiveReader::Step ArchiveReader::fail(std::string problem) {
  failed_ = true;
  problem_ = std::move(problem);
  return Step::kFailed;
}

// Decompresses until at least one byte is available; false at the end of the input or on an error
// (problem_ set for an error).
bool ArchiveReader::fill() {
  Zstd& z = *zstd_;
  for (;;) {
    if (z.in_pos == z.in_end && !z.source_ended) {
      const std::ptrdiff_t n = source_(z.in.data(), z.in.size());
      if (n < 0) {
        problem_ = "cannot read the archive";
        return false;
      }
      if (n == 0) z.source_ended = true;
      z.in_pos = 0;
      z.in_end = static_cast<std::size_t>(n);
      compressed_ += static_cast<std::size_t>(n);
    }
    if (z.in_pos == z.in_end && z.last_return == 0) return false;  // the frame ended, nothing more
    ZSTD_inBuffer in{z.in.data(), z.in_end, z.in_pos};
    ZSTD_outBuffer out{z.out.data(), z.out.size(), 0};
    if (z.last_return == 0 && z.in_pos < z.in_end) {
      problem_ = "data after the end of the archive";
      return false;
    }
    const std::size_t r = ZSTD_decompressStream(z.stream, &out, &in);
    z.in_pos = in.pos;
    if (ZSTD_isError(r)) {
      // The first bytes are not a zstd frame's magic number: not an archive at all (a text file, a
      // tarball), rather than a damaged one.
      problem_ = !header_read_ && uncompressed_ == 0 && ZSTD_getErrorCode(r) == ZSTD_error_prefix_unknown
                     ? "not an nvrtc-cache archive (not zstd-compressed)"
                     : std::string("the compressed data is damaged (") + ZSTD_getErrorName(r) + ")";
      return false;
    }
    z.last_return = r;
    z.out_pos = 0;
    z.out_end = out.pos;
    if (out.pos > 0) return true;
    if (z.source_ended && z.in_pos == z.in_end) return false;  // truncated: zstd wants more
  }
}

bool ArchiveReader::read(char* out, std::size_t size) {
  Zstd& z = *zstd_;
  while (size > 0) {
    if (z.out_pos == z.out_end && !fill()) return false;
    const std::size_t n = std::min(size, z.out_end - z.out_pos);
    std::memcpy(out, z.out.data() + z.out_pos, n);
    XXH3_64bits_update(z.hash, out, n);
    z.out_pos += n;
    uncompressed_ += n;
    out += n;
    size -= n;
  }
  return true;
}

bool ArchiveReader::discard(std::uint64_t size) {
  Zstd& z = *zstd_;
  while (size > 0) {
    if (z.out_pos == z.out_end && !fill()) return false;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, z.out_end - z.out_pos));
    XXH3_64bits_update(z.hash, z.out.data() + z.out_pos, n);
    z.out_pos += n;
    uncompressed_ += n;
    size -= n;
  }
  return true;
}

bool ArchiveReader::read_header() {
  char header[kArchiveHeaderSize];
  if (!read(header, sizeof header)) {
    if (problem_.empty()) problem_ = "not an nvrtc-cache archive (too short)";
    return false;
  }
  if (std::string_view(header, kArchiveMagic.size()) != kArchiveMagic ||
      util::load_le(header + 16, 8) != XXH3_64bits(header, 16)) {
    problem_ = "not an nvrtc-cache archive (bad header)";
    return false;
  }
  const auto version = static_cast<std::uint32_t>(util::load_le(header + 8, 4));
  if (version != kArchiveVersion) {
    problem_ = "archive format version " + std::to_string(version) + " (this build reads " +
               std::to_string(kArchiveVersion) + ")";
    return false;
  }
  const auto flags = static_cast<std::uint32_t>(util::load_le(header + 12, 4));
  if ((flags & ~kArchiveSigned) != 0) {
    problem_ = "unknown archive flags";
    return false;
  }
  signed_ = (flags & kArchiveSigned) != 0;
  if (secret_ != nullptr && !signed_) {
    problem_ = "the archive is not signed and a secret is set (NVRTC_CACHE_REMOTE_SECRET_FILE): refused";
    return false;
  }
  header_read_ = true;
  return true;
}

bool ArchiveReader::at_clean_end() {
  Zstd& z = *zstd_;
  if (z.out_pos != z.out_end) return false;
  // Drain: zstd verifies its content checksum when the frame's last block is consumed.
  if (fill()) return false;  // more decompressed bytes: data after the trailer
  return problem_.empty() && z.last_return == 0 && z.in_pos == z.in_end;
}

ArchiveReader::Step ArchiveReader::read_trailer(std::uint32_t body_size) {
  XXH3_state_t before;
  XXH3_copyState(&before, zstd_->hash);
  const std::uint64_t expected_stream = XXH3_64bits_digest(&before);
  if (body_size != kTrailerBodySize) return fail("the archive's trailer is damaged");
  char body[kTrailerBodySize + kFrameChecksumSize];
  if (!read(body, sizeof body)) return fail("the archive is truncated (in its trailer)");
  if (frame_checksum(kFrameTrailer, std::string_view(body, kTrailerBodySize)) !=
      util::load_le(body + kTrailerBodySize, 8)) {
    return fail("the archive's trailer is damaged");
  }
  const std::uint64_t count = util::load_le(body, 8);
  if (count != frames_) {
    return fail("the archive's trailer counts " + std::to_string(count) + " records, " + std::to_string(frames_) +
                " were found");
  }
  if (util::load_le(body + 8, 8) != expected_stream) return fail("the archive's contents do not match its checksum");
  if (!at_clean_end()) {
    if (!problem_.empty()) return fail(problem_);
    return fail(zstd_->last_return != 0 ? "the archive is truncated (the end of its compressed frame is missing)"
                                        : "data after the end of the archive");
  }
  complete_ = true;
  return Step::kEnd;
}

ArchiveReader::Step ArchiveReader::read_record(std::uint32_t body_size, ArchiveRecord* record, SkipReason* reason) {
  ++frames_;
  const std::uint64_t limit =
      max_value_bytes_ + remote::sealed_size(kMaxArchiveKey, 0, true) + kMaxArchiveKey + kMaxProgramName + 64;
  if (body_size > limit) {
    if (!discard(std::uint64_t{body_size} + kFrameChecksumSize)) {
      return fail(problem_.empty() ? "the archive is truncated (inside an oversized record)" : problem_);
    }
    *reason = SkipReason::kSize;
    return Step::kSkipped;
  }
  std::string body;
  while (body.size() < body_size) {  // grows with the data actually present, never to a claimed size
    const std::size_t old = body.size();
    const std::size_t n = std::min<std::size_t>(kChunk, body_size - old);
    body.resize(old + n);
    if (!read(body.data() + old, n))
      return fail(problem_.empty() ? "the archive is truncated (inside a record)" : problem_);
  }
  char checksum[kFrameChecksumSize];
  if (!read(checksum, sizeof checksum))
    return fail(problem_.empty() ? "the archive is truncated (inside a record)" : problem_);
  if (frame_checksum(kFrameRecord, body) != util::load_le(checksum, 8)) {
    *reason = SkipReason::kChecksum;
    return Step::kSkipped;
  }
  util::ByteReader in(body);
  std::uint8_t kind = 0;
  std::string_view sealed;  // a view into `body`, whose bytes become the payload in place
  *reason = SkipReason::kMalformed;
  if (!in.u8(kind) || !in.i64(record->created) || !in.i64(record->last_used) || !in.bytes(record->program_name) ||
      !in.bytes(record->key) || !in.bytes_view(sealed) || !in.at_end()) {
    return Step::kSkipped;
  }
  if ((kind != static_cast<std::uint8_t>(RecordKind::kManifest) &&
       kind != static_cast<std::uint8_t>(RecordKind::kResult) &&
       kind != static_cast<std::uint8_t>(RecordKind::kHandleResult) &&
       kind != static_cast<std::uint8_t>(RecordKind::kApiEntry)) ||
      record->program_name.size() > kMaxProgramName || record->key.size() != kStoreKeySize ||
      static_cast<std::uint8_t>(record->key[0]) != kind) {
    return Step::kSkipped;
  }
  record->kind = static_cast<RecordKind>(kind);
  const remote::Unsealed unsealed = remote::unseal_value(record->key, sealed, secret_);
  switch (unsealed.code) {
    case remote::UnsealCode::kOk:
      break;
    case remote::UnsealCode::kCorrupt:
      *reason = SkipReason::kChecksum;
      return Step::kSkipped;
    case remote::UnsealCode::kWrongKey:
      *reason = SkipReason::kMalformed;
      return Step::kSkipped;
    case remote::UnsealCode::kMacRejected:
      *reason = SkipReason::kMac;
      return Step::kSkipped;
  }
  if (unsealed.payload.size() > max_value_bytes_) {
    *reason = SkipReason::kSize;
    return Step::kSkipped;
  }
  // The payload is moved to the front of `body` and `body` becomes it: a record's bytes are held
  // once, never copied.
  const std::size_t offset = static_cast<std::size_t>(unsealed.payload.data() - body.data());
  const std::size_t size = unsealed.payload.size();
  body.erase(0, offset);
  body.resize(size);
  record->payload = std::move(body);
  return Step::kRecord;
}

ArchiveReader::Step ArchiveReader::next(ArchiveRecord* record, SkipReason* reason) {
  if (failed_) return Step::kFailed;
  if (complete_) return Step::kEnd;
  if (!header_read_ && !read_header()) return fail(problem_);
  char prefix[kFramePrefixSize];
  if (!read(prefix, sizeof prefix)) {
    return fail(problem_.empty() ? "the archive is truncated after " + std::to_string(frames_) + " records (no trailer)"
                                 : problem_);
  }
  const auto type = static_cast<std::uint8_t>(prefix[0]);
  const auto body_size = static_cast<std::uint32_t>(util::load_le(prefix + 1, 4));
  if (type == kFrameTrailer) return read_trailer(body_size);
  if (type != kFrameRecord) return fail("the archive is damaged after " + std::to_string(frames_) + " records");
  return read_record(body_size, record, reason);
}

}  // namespace nvrtc_cache::store::archive
