#include "store/lmdb/store_location.h"

#include <errno.h>
#include <sys/stat.h>

#include <string_view>
#include <utility>

#include "store/lmdb/errors.h"

namespace nvrtc_cache::store::lmdb {

bool StoreLocation::parent_intact(Env& env) const {
  struct stat st {};
  return parent.valid() && env.stat_at(parent.fd(), "", &st) == 0 && S_ISDIR(st.st_mode) &&
         file_id(st) == parent_id;
}

Status locate_store(const std::string& path, int parent_fd, Env& env, StoreLocation* out) {
#ifdef _WIN32
  constexpr const char* kSeparators = "/\\";
#else
  constexpr const char* kSeparators = "/";
#endif
  const auto separator = [&](char c) { return std::string_view(kSeparators).find(c) != std::string_view::npos; };
  std::string trimmed = path;  // without trailing "/" and "/." (other spellings of the same directory)
  while (trimmed.size() > 1 &&
         (separator(trimmed.back()) || (trimmed.back() == '.' && separator(trimmed[trimmed.size() - 2])))) {
    trimmed.pop_back();
  }
  const std::size_t slash = trimmed.find_last_of(kSeparators);
  out->leaf = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  out->path = path;
  if (out->leaf.empty() || out->leaf == "." || out->leaf == ".." || out->leaf == "/") {
    return Status::invalid_argument("the store directory '" + path + "' has no name of its own");
  }
  if (parent_fd >= 0) {
    out->parent = DirectoryHandle(duplicate_directory_descriptor(parent_fd));
    if (!out->parent.valid()) return to_status(errno, "dup the handle on " + path + "'s parent");
  } else {
    std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : trimmed.substr(0, slash);
#ifdef _WIN32
    if (parent.size() == 2 && parent[1] == ':') parent += '\\';  // "C:" alone is the drive's current directory
#endif
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
  out->parent_id = file_id(st);
  return Status::ok();
}

}  // namespace nvrtc_cache::store::lmdb
