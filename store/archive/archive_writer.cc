#include "store/archive/archive_writer.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>
#include <zstd.h>

#include "store/remote/sealed_value.h"
#include "util/binary_io.h"

namespace nvrtc_cache::store::archive {

struct ArchiveWriter::Zstd {
  ZSTD_CStream* stream = ZSTD_createCStream();
  XXH3_state_t* hash = XXH3_createState();
  std::string out = std::string(ZSTD_CStreamOutSize(), '\0');
  ~Zstd() {
    ZSTD_freeCStream(stream);
    XXH3_freeState(hash);
  }
};

namespace {
constexpr std::size_t kPendingFlush = 128u << 10;
}

ArchiveWriter::ArchiveWriter(ArchiveSink sink, const remote::Secret* secret, int level)
    : sink_(std::move(sink)), secret_(secret), zstd_(std::make_unique<Zstd>()) {
  if (zstd_->stream == nullptr || zstd_->hash == nullptr) {
    failed_ = true;
    problem_ = "cannot create the compressor";
    return;
  }
  ZSTD_CCtx_setParameter(zstd_->stream, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(zstd_->stream, ZSTD_c_checksumFlag, 1);
  XXH3_64bits_reset(zstd_->hash);
}

ArchiveWriter::~ArchiveWriter() = default;

bool ArchiveWriter::pump(bool end) {
  ZSTD_inBuffer in{pending_.data(), pending_.size(), 0};
  for (;;) {
    ZSTD_outBuffer out{zstd_->out.data(), zstd_->out.size(), 0};
    const std::size_t left = ZSTD_compressStream2(zstd_->stream, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(left)) {
      failed_ = true;
      problem_ = std::string("compression failed: ") + ZSTD_getErrorName(left);
      return false;
    }
    if (out.pos > 0) {
      compressed_ += out.pos;
      if (!sink_(std::string_view(zstd_->out.data(), out.pos))) {
        failed_ = true;
        problem_ = "cannot write the archive";
        return false;
      }
    }
    if (end ? left == 0 : in.pos == in.size) break;
  }
  pending_.clear();
  return true;
}

bool ArchiveWriter::write(std::string_view bytes) {
  XXH3_64bits_update(zstd_->hash, bytes.data(), bytes.size());
  uncompressed_ += bytes.size();
  pending_.append(bytes);
  return pending_.size() < kPendingFlush || pump(false);
}

bool ArchiveWriter::frame(std::uint8_t type, std::string_view body) {
  const auto prefix = frame_prefix(type, static_cast<std::uint32_t>(body.size()));
  char checksum[kFrameChecksumSize];
  util::store_le(checksum, frame_checksum(type, body), kFrameChecksumSize);
  return write(std::string_view(prefix.data(), prefix.size())) && write(body) &&
         write(std::string_view(checksum, sizeof checksum));
}

bool ArchiveWriter::write_header() {
  util::ByteWriter header;
  header.raw(kArchiveMagic);
  header.u32(kArchiveVersion);
  header.u32(secret_ != nullptr ? kArchiveSigned : 0);
  header.u64(XXH3_64bits(header.str().data(), header.str().size()));
  header_written_ = true;
  return write(header.str());
}

bool ArchiveWriter::add(const ArchiveRecord& record) {
  if (failed_ || finished_) return false;
  if (!header_written_ && !write_header()) return false;
  util::ByteWriter body;
  body.u8(static_cast<std::uint8_t>(record.kind));
  body.i64(record.created);
  body.i64(record.last_used);
  body.bytes(record.program_name.substr(0, kMaxProgramName));
  body.bytes(record.key);
  body.bytes(remote::seal_value(record.key, record.payload, secret_));
  if (body.str().size() > UINT32_MAX) {
    failed_ = true;
    problem_ = "an entry is too large for the archive";
    return false;
  }
  ++records_;
  return frame(kFrameRecord, body.str());
}

bool ArchiveWriter::finish() {
  if (failed_ || finished_) return false;
  if (!header_written_ && !write_header()) return false;
  const auto prefix = frame_prefix(kFrameTrailer, kTrailerBodySize);
  XXH3_state_t stream_so_far;
  XXH3_copyState(&stream_so_far, zstd_->hash);
  XXH3_64bits_update(&stream_so_far, prefix.data(), prefix.size());
  util::ByteWriter body;
  body.u64(records_);
  body.u64(XXH3_64bits_digest(&stream_so_far));
  if (!frame(kFrameTrailer, body.str())) return false;
  finished_ = true;
  return pump(true);
}

}  // namespace nvrtc_cache::store::archive
