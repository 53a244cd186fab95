// Secret: the key that signs every value written to a shared tier (NVRTC_CACHE_REMOTE_SECRET_FILE).
// The file's bytes (one trailing newline ignored) are the BLAKE2b key when they fit its 64 bytes,
// else their unkeyed BLAKE2b-512 is. The secret is never logged: messages name the file only.
// Contract: read_secret_file does blocking reads of one file; thread-safe; never throws except
// std::bad_alloc. Filesystem: a file readable by group or others is used, with a warning (anyone who
// can read it can sign values every node trusts).
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

// The secret in `path`, or nullopt with *problem set (unreadable, empty, not a regular file, over
// 1 MiB). *warning is set when the file is readable by group or others.
std::optional<Secret> read_secret_file(const std::string& path, std::string* problem, std::string* warning);

// The secret made from `bytes` directly (tests, and the file's contents).
Secret secret_from_bytes(std::string_view bytes);

}  // namespace nvrtc_cache::store::remote
