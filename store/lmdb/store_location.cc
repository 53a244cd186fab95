#include "store/lmdb/store_location.h"

#include <errno.h>
#include <sys/stat.h>

#include <string_view>
#include <utility>

#include "platform/paths.h"
#include "store/lmdb/errors.h"

namespace nvrtc_cache::store::lmdb {

bool StoreLocation::parent_intact(platform::Env& env) const {
  struct stat st {};
  return parent.valid() && env.stat_at(parent.fd(), "", &st) == 0 && S_ISDIR(st.st_mode) &&
         platform::file_id(st) == parent_id;
}

Status locate_store(const std::string& path, int parent_fd, platform::Env& env, StoreLocation* out) {
  using platform::is_path_separator;
  std::string trimmed = path;  // without trailing "/" and "/." (other spellings of the same directory)
  while (trimmed.size() > 1 && (is_path_separator(trimmed.back()) ||
                                (trimmed.back() == '.' && is_path_separator(trimmed[trimmed.size() - 2])))) {
    trimmed.pop_back();
  }
  const std::size_t slash = trimmed.find_last_of(platform::path_separators());
  out->leaf = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  out->path = path;
  if (out->leaf.empty() || out->leaf == "." || out->leaf == ".." || out->leaf == "/") {
    return Status::invalid_argument("the store directory '" + path + "' has no name of its own");
  }
  if (parent_fd >= 0) {
    out->parent = DirectoryHandle(platform::duplicate_directory_descriptor(parent_fd));
    if (!out->parent.valid()) return to_status(errno, "dup the handle on " + path + "'s parent");
  } else {
    std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : trimmed.substr(0, slash);
    if (platform::is_bare_drive(parent))
      parent += platform::path_separator();  // "C:" alone: the drive's current directory
    DirectoryWalk walk = open_directory_path(parent, /*create=*/true, /*allow_shared=*/false, env);
    if (!walk.handle.valid()) {
      return walk.unsafe ? Status::invalid_argument(walk.detail) : to_status(walk.error, walk.detail);
    }
    out->parent = std::move(walk.handle);
  }
  struct stat st {};
  if (const int error = env.stat_at(out->parent.fd(), "", &st); error != 0) {
    return to_status(error, "stat the parent of " + path);
  }
  out->parent_id = platform::file_id(st);
  return Status::ok();
}

}  // namespace nvrtc_cache::store::lmdb
