// The shared-directory tier (file:///dir): NFS, a mounted volume, a directory baked into an image.
// Layout: <dir>/<prefix>/<2 hex>/<32 hex>, the hex being the XXH3-128 of the local key (the sealed
// value echoes the full key, so a collision is a miss, never a wrong value). No LMDB, no locks:
//  - every directory below <dir> is walked by handle and never followed (store/remote/
//    tier_directory.h): a <prefix> or bucket that is a symbolic link, not a directory or not the
//    tier's own is refused (a read or write of it is a counted refusal; eviction skips it);
//  - a write goes to a new temporary file of a random name (O_CREAT | O_EXCL | O_NOFOLLOW) in the
//    destination bucket, then renameat(2), so readers see the old file, the new one or none, never a
//    partial one;
//  - a read is openat(O_NOFOLLOW) + fstat (a regular file) + read; ENOENT, ESTALE, EBUSY and ENOTDIR
//    are misses (a file replaced or evicted under the reader, a stale NFS handle);
//  - directories are created as needed (mode 0777 and files 0666, less the process umask, so the
//    umask decides who else may write); <dir> itself must exist.
// Size is capped from outside: evict_file_tier (the CLI, a cron job) removes the oldest entries
// first, only regular files of the tier's own names (entries, abandoned temporaries) in buckets that
// are the tier's own.
// Contract: thread-safe (no state besides the path), fork-safe (no descriptor kept between calls),
// never throws except std::bad_alloc, restores errno; deadlines are checked before each step (a
// filesystem call that hangs, e.g. a hard-mounted NFS server that is gone, cannot be interrupted:
// use soft mounts or timeo= on the mount for that).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote {

struct FileTierEviction {
  std::uint64_t files_before = 0;
  std::uint64_t bytes_before = 0;
  std::uint64_t files_removed = 0;
  std::uint64_t bytes_after = 0;
  std::uint64_t temporaries_removed = 0;  // abandoned ".tmp-" files over an hour old
  std::uint64_t buckets_skipped = 0;      // symbolic links, not directories, not the tier's own: not followed
  std::string first_skipped;              // why the first of them was skipped, one line
  std::string problem;                    // empty on success
};

// Removes the least recently written entries of the file:// tier `url` until its entries take at
// most `max_bytes` (store/remote/file_tier_eviction.cc).
FileTierEviction evict_file_tier(std::string_view url, std::uint64_t max_bytes);

// The file name of `key` inside the tier (<2 hex>/<32 hex>), for tests and tools.
std::string file_tier_entry_name(std::string_view key);

}  // namespace nvrtc_cache::store::remote
