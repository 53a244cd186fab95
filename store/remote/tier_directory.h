// The directories and file names of a file:// tier, walked by handle. The tier's own path (the URL's
// directory) is opened as configured; below it, <prefix> and each <2 hex> bucket are opened one
// component at a time with openat(O_DIRECTORY | O_NOFOLLOW) (platform::Env, store/directory_handle.h),
// fstat-checked, and then used only by handle (*at() calls on that descriptor), so a component that
// is, or becomes, a symbolic link is refused and never followed.
// A directory below the tier's path is the tier's own when it is a directory owned by the caller,
// root or the owner of the directory holding it (any, where the system reports no owner: Windows,
// whose ACLs decide), or by anyone when the directory holding it admits other writers (group- or other-writable: a tier
// shared on purpose, whose writers are all trusted; docs/shared-tiers.md). Tier directories are created 0777 less the
// umask (the umask decides who else may write). Names: an entry is <32 hex>, in the bucket named by its first two
// digits; a temporary file is
// ".tmp-<32 hex>-<16 random hex>" (earlier versions: ".tmp-<32 hex>-<pid>-<n>-<n>"). Nothing else
// in a bucket is the tier's.
// Contract: filesystem access through the given Env (directories) or *at() calls on its handles
// (files); handles are O_CLOEXEC and owned by their TierDirectory (nothing is kept across calls,
// so fork needs nothing); thread-safe (no shared state); never throws except std::bad_alloc.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

#include "store/directory_handle.h"
#include "platform/env.h"

namespace nvrtc_cache::store::remote {

struct TierDirectory {
  DirectoryHandle handle;  // O_PATH, valid once opened
  struct stat st {};       // its fstat, made on the handle
  std::string shown;       // its path, for messages
};

// What opening a tier directory came to. On failure, `error` is the errno (ENOENT: missing) and
// `refused` says it was there but is not the tier's own (a symbolic link, not a directory, another
// owner), with one line in `detail` either way.
struct TierDirectoryOpen {
  TierDirectory directory;
  int error = 0;
  bool refused = false;
  std::string detail;

  bool ok() const { return directory.handle.valid(); }
};

// Opens the tier's own path (links in it are followed: it is the configuration's); never created.
TierDirectoryOpen open_tier_path(const std::string& path, platform::Env& env);
// Opens the directory `name` in `parent` by the rule above, creating it when missing and `create`.
TierDirectoryOpen open_tier_subdirectory(const TierDirectory& parent, const std::string& name, bool create,
                                         platform::Env& env);

// Whether `name` is a bucket's name (2 lowercase hex digits).
bool is_bucket_name(std::string_view name);
// Whether `name` is an entry's name in `bucket` (<32 hex>, starting with the bucket's digits).
bool is_entry_name(std::string_view name, std::string_view bucket);
// Whether `name` is a temporary file's name in `bucket`, in this version's form or an earlier one.
bool is_temporary_name(std::string_view name, std::string_view bucket);
// A new temporary file name for the entry `entry` (random: the system's, platform/file_at.h, or a hash of the time and
// process when that fails).
std::string temporary_name(std::string_view entry);

}  // namespace nvrtc_cache::store::remote
