// Where an LMDB store lives: its directory, named by its last component inside a directory handle on
// its parent, and the identity (st_dev, st_ino) by which the process shares one environment per
// directory.
// Contract: filesystem: the parent is held as an O_PATH handle for the store's lifetime; every
// reopen, identity check and move-aside goes through it, never through the parent's path. Threads:
// a StoreLocation is immutable once located and may be read from any thread. fork: the handle is
// inherited like any descriptor.
#pragma once

#include <sys/types.h>

#include <compare>
#include <string>

#include "store/directory_handle.h"
#include "platform/env.h"
#include "store/status.h"

namespace nvrtc_cache::store::lmdb {

using DirectoryId = platform::FileId;  // st_dev, st_ino (platform/env.h)

struct StoreLocation {
  DirectoryHandle parent;
  DirectoryId parent_id;
  std::string leaf;
  std::string path;  // for messages, and for LMDB when /proc is missing

  // Whether `parent` still holds the directory it was opened on: a host that closes descriptors it
  // does not own (a daemon's close-all loop) may have renumbered it to a file of its own.
  bool parent_intact(platform::Env& env) const;
};

// `path` split into its parent (walked and created as store/directory_handle.h describes, unless
// `parent_fd` already holds it: then a duplicate is kept) and its last component.
Status locate_store(const std::string& path, int parent_fd, platform::Env& env, StoreLocation* out);

}  // namespace nvrtc_cache::store::lmdb
