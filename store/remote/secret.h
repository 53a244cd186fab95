// Secret: the key that signs every value written to a shared tier (NVRTC_CACHE_REMOTE_SECRET_FILE).
// The file's bytes (one trailing newline ignored) are the BLAKE2b key when they fit its 64 bytes,
// else their unkeyed BLAKE2b-512 is. The secret is never logged: messages name the file only.
// Contract: read_secret_file reads one regular file (opened non-blocking: a FIFO is refused, never
// waited on); thread-safe; never throws except std::bad_alloc. Filesystem: a file readable by group
// or others is used, with a warning (anyone who can read it can sign values every node trusts).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace nvrtc_cache::store::remote {

struct Secret {
  std::array<std::uint8_t, 64> key{};
  std::size_t size = 0;  // 1..64
};

// The fewest bytes a secret file may hold (one trailing newline aside): a shorter key is found by
// trying (a one-byte key in 256 tries), and a value signed with it could be planted.
inline constexpr std::size_t kMinimumSecretBytes = 16;

// The secret in `path`, or nullopt with *problem set (unreadable, not a regular file, over 1 MiB,
// shorter than kMinimumSecretBytes or with fewer than half as many distinct bytes). *warning is set
// when the file is readable by group or others.
std::optional<Secret> read_secret_file(const std::string& path, std::string* problem, std::string* warning);

// The secret made from `bytes` directly (tests, and the file's contents).
Secret secret_from_bytes(std::string_view bytes);

}  // namespace nvrtc_cache::store::remote
