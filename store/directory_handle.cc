#include "store/directory_handle.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <string_view>
#include <utility>
#include <vector>

#include "platform/paths.h"

namespace nvrtc_cache::store {
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's path resolution
constexpr mode_t kCreatedMode = 0700;

using platform::is_path_separator;
using platform::path_separators;
using platform::root_of;

// The components of `path` after its root, "" and "." left out ("..": the parent of the directory
// reached so far, as the kernel resolves it).
std::deque<std::string> components_of(const std::string& path) {
  std::deque<std::string> out;
  for (std::size_t begin = root_of(path).size(); begin <= path.size();) {
    std::size_t end = path.find_first_of(path_separators(), begin);
    if (end == std::string::npos) end = path.size();
    if (std::string name = path.substr(begin, end - begin); !name.empty() && name != ".")
      out.push_back(std::move(name));
    begin = end + 1;
  }
  return out;
}

DirectoryWalk failed(int error, bool unsafe, std::string detail) {
  DirectoryWalk out;
  out.error = error;
  out.unsafe = unsafe;
  out.detail = std::move(detail);
  return out;
}

// Opens the directory `name` in `dir`, creating it when missing and `create` (EEXIST: another process
// made it in between).
int open_or_create(int dir, const std::string& name, bool create, platform::Env& env, int* fd,
                   mode_t mode = kCreatedMode) {
  int rc = env.open_directory_at(dir, name, fd);
  if (rc == ENOENT && create) {
    rc = env.make_directory_at(dir, name, mode);
    if (rc == 0 || rc == EEXIST) rc = env.open_directory_at(dir, name, fd);
  }
  return rc;
}

// Why `name` in `dir`, which O_DIRECTORY | O_NOFOLLOW refused, was refused; `link` gets its lstat
// when it is a symbolic link.
DirectoryWalk not_a_directory(int dir, const std::string& name, const std::string& shown, platform::Env& env,
                              struct stat* link = nullptr) {
  struct stat st {};
  if (env.stat_at(dir, name, &st) == 0 && S_ISLNK(st.st_mode)) {
    if (link != nullptr) *link = st;
    return failed(ELOOP, true, shown + " is a symbolic link");
  }
  return failed(ENOTDIR, true, shown + " is not a directory");
}

DirectoryWalk cannot_open(int error, bool create, const std::string& shown) {
  return failed(error, false,
                std::string(create ? "cannot create " : "cannot open ") + shown + ": " + std::strerror(error));
}

}  // namespace

DirectoryHandle& DirectoryHandle::operator=(DirectoryHandle&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) platform::close_directory_descriptor(fd_);
    fd_ = other.release();
  }
  return *this;
}

DirectoryHandle::~DirectoryHandle() {
  if (fd_ >= 0) platform::close_directory_descriptor(fd_);
}

DirectoryHandle DirectoryHandle::duplicate() const {
  return DirectoryHandle(fd_ < 0 ? -1 : platform::duplicate_directory_descriptor(fd_));
}

DirectoryWalk open_directory_path(const std::string& path, bool create, bool allow_shared, platform::Env& env,
                                  mode_t create_mode) {
  if (path.empty()) return failed(EINVAL, false, "empty directory path");
  const std::string root = root_of(path);
  if (platform::whole_path_open_is_the_walk() && !root.empty()) {
    // (Windows) One open of the whole path is this walk; the walk below, where it fails, creates what
    // is missing and names what it refuses.
    const std::deque<std::string> names = components_of(path);
    int whole = -1;
    if (std::find(names.begin(), names.end(), "..") == names.end() &&
        env.open_directory_at(AT_FDCWD, path, &whole) == 0) {
      DirectoryWalk out;
      out.handle = DirectoryHandle(whole);
      return out;
    }
  }
  std::string shown = root;
  int fd = -1;
  if (const int rc = env.open_directory_at(AT_FDCWD, root.empty() ? "." : root, &fd); rc != 0) {
    return cannot_open(rc, false, root.empty() ? "." : root);
  }
  DirectoryHandle current(fd);
  std::deque<std::string> pending = components_of(path);
  int links = 0;
  while (!pending.empty()) {
    const std::string name = std::move(pending.front());
    pending.pop_front();
    const std::string here = platform::joined_path(shown, name);
    const int rc = open_or_create(current.fd(), name, create, env, &fd, create_mode);
    if (rc == 0) {
      current = DirectoryHandle(fd);
      shown = here;
      continue;
    }
    if (rc != ELOOP && rc != ENOTDIR) return cannot_open(rc, create, here);
    struct stat link {};
    DirectoryWalk refused = not_a_directory(current.fd(), name, here, env, &link);
    if (refused.error != ELOOP || pending.empty()) return refused;  // the last component is never followed
    // (No owner is reported on Windows: platform::Owner::kUnknown; the walk stays in the user's profile.)
    if (!allow_shared && platform::owner_of(link) == platform::Owner::kAnotherUser) {
      return failed(ELOOP, true, here + " is a symbolic link owned by another user");
    }
    if (++links > kMaxLinks) return failed(ELOOP, false, "too many symbolic links in " + path);
    std::string target;
    if (const int read = env.read_link_at(current.fd(), name, &target); read != 0)
      return cannot_open(read, false, here);
    if (target.empty()) return cannot_open(ENOENT, false, here);
    std::deque<std::string> more = components_of(target);
    pending.insert(pending.begin(), more.begin(), more.end());
    if (const std::string target_root = root_of(target); !target_root.empty()) {
      // (a relative target continues from the directory holding the link)
      if (const int error = env.open_directory_at(AT_FDCWD, target_root, &fd); error != 0) {
        return cannot_open(error, false, target_root);
      }
      current = DirectoryHandle(fd);
      shown.assign(target_root);  // (not `=`: GCC 12 misreports -Wrestrict there)
    }
  }
  DirectoryWalk out;
  out.handle = std::move(current);
  return out;
}

DirectoryWalk open_subdirectory(const DirectoryHandle& parent, const std::string& name, const std::string& shown,
                                bool create, platform::Env& env, mode_t mode) {
  int fd = -1;
  const int rc = open_or_create(parent.fd(), name, create, env, &fd, mode);
  if (rc == ELOOP || rc == ENOTDIR) return not_a_directory(parent.fd(), name, shown, env);
  if (rc != 0) return cannot_open(rc, create, shown);
  DirectoryWalk out;
  out.handle = DirectoryHandle(fd);
  return out;
}

}  // namespace nvrtc_cache::store
