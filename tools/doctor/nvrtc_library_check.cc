#include "tools/doctor/nvrtc_library_check.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <grp.h>
#include <link.h>
#include <nvrtc.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "shim/interpose/library_identity.h"
#include "util/elf_identity.h"

namespace nvrtc_cache::tools {
namespace {

#if defined(__x86_64__)
constexpr std::uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr std::uint16_t kHostMachine = EM_AARCH64;
#else
#error "nvrtc-cache runs on x86-64 and aarch64"
#endif

std::string hex(std::string_view bytes) {
  if (bytes.empty()) return "(none)";
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string user_name(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry;
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    return fmt::format("{} (uid {})", found->pw_name, uid);
  }
  return fmt::format("uid {}", uid);
}

// Whether group `gid` can only be the caller's: the caller's own group, listing no member but the
// caller (a user private group). Users whose primary group it is are not listed by the group
// database; the convention is that a private group is no one else's.
bool group_is_callers_alone(gid_t gid, std::string& shown) {
  std::vector<char> buffer(65536);
  group entry;
  group* found = nullptr;
  const bool known = getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr;
  shown = known ? fmt::format("{} (gid {})", found->gr_name, gid) : fmt::format("gid {}", gid);
  if (!known || gid != getegid()) return false;
  std::vector<char> user_buffer(16384);
  passwd me;
  passwd* me_found = nullptr;
  if (getpwuid_r(geteuid(), &me, user_buffer.data(), user_buffer.size(), &me_found) != 0 || me_found == nullptr) {
    return false;
  }
  for (char** member = found->gr_mem; member != nullptr && *member != nullptr; ++member) {
    if (std::strcmp(*member, me_found->pw_name) != 0) return false;
  }
  return true;
}

// Whether the object carries an access ACL (getxattr's size, or -1 when it has none or the file
// system has no ACLs).
bool has_access_control_list(ssize_t size_or_error) { return size_or_error > 0; }

// Why a user other than the caller and root could change `shown` (whose status is `st`, `acl` whether
// it carries an access ACL), or "". `directory_above`: a directory above the file, whose entry below
// is checked to be owned by root or the caller (so in a sticky one no one else can replace it).
std::string others_can_change(const std::string& shown, const struct stat& st, bool acl, bool directory_above) {
  if (st.st_uid != 0 && st.st_uid != geteuid()) {
    return fmt::format("{} is owned by {}, neither you nor root", shown, user_name(st.st_uid));
  }
  const bool sticky_directory = directory_above && (st.st_mode & S_ISVTX) != 0;
  if ((st.st_mode & S_IWOTH) != 0 && !sticky_directory) return fmt::format("{} is writable by every user", shown);
  if ((st.st_mode & S_IWGRP) != 0 && !sticky_directory) {
    // With an access control list, the group bits are its mask: a named user or group may write.
    if (acl) return fmt::format("{} has an access control list that may let other users write it", shown);
    std::string group;
    if (!group_is_callers_alone(st.st_gid, group)) {
      return fmt::format("{} is writable by group {}, which is not yours alone", shown, group);
    }
  }
  return {};
}

// The checks of every directory above `resolved` (absolute, every symlink resolved), up to "/".
std::string directories_above(const std::string& resolved) {
  std::string directory = resolved;
  while (directory.size() > 1) {
    const std::size_t slash = directory.find_last_of('/');
    directory = slash == 0 ? "/" : directory.substr(0, slash);
    struct stat st;
    if (::lstat(directory.c_str(), &st) != 0) {
      return fmt::format("cannot inspect {}: {}", directory, std::strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) return fmt::format("{} is no longer a directory", directory);
    const bool acl = has_access_control_list(::lgetxattr(directory.c_str(), "system.posix_acl_access", nullptr, 0));
    if (std::string why = others_can_change(directory, st, acl, true); !why.empty()) return why;
  }
  return {};
}

struct ApiTraits {
  const char* name;
  const char* soname_prefix;
  const char* version_function;
};

ApiTraits traits_of(JitApi api) {
  switch (api) {
    case JitApi::nvjitlink:
      return {"nvJitLink", "libnvJitLink.", "nvJitLinkVersion"};
    case JitApi::nvvm:
      return {"libNVVM", "libnvvm.", "nvvmVersion"};
    case JitApi::nvrtc:
      break;
  }
  return {"NVRTC", "libnvrtc.", "nvrtcVersion"};
}

// The refusal sentence: `why` the library at `path` is not loaded.
std::string refusal(const std::string& path, const std::string& why, JitApi api = JitApi::nvrtc) {
  return fmt::format("refusing to load the {} {}: {}", traits_of(api).name, path, why);
}

std::string mismatch(const std::string& path, const std::string& what, const keying::LibraryIdentity& recorded,
                     JitApi api) {
  return fmt::format(
      "{} is {}, but the recording's calls were made by {} {}.{} with build-id {}: their results would "
      "not be this library's; refusing to replay them",
      path, what, traits_of(api).name, recorded.major, recorded.minor, hex(recorded.build_id));
}

}  // namespace

NvrtcFileCheck check_nvrtc_file(const std::string& path, const keying::LibraryIdentity& recorded, JitApi api) {
  NvrtcFileCheck out;
  const auto refusal = [api](const std::string& p, const std::string& why) { return tools::refusal(p, why, api); };
  if (path.empty() || path.front() != '/') {
    out.refused = refusal(path, "it is not an absolute path");
    return out;
  }
  if (recorded.build_id.empty()) {
    out.refused = refusal(path, "the recording names no build-id for it, so it cannot be matched");
    return out;
  }
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) {
    out.refused = refusal(path, fmt::format("cannot resolve it: {}", std::strerror(errno)));
    return out;
  }
  const std::string resolved = buffer;
  const std::string shown = resolved == path ? path : fmt::format("{} (resolved from {})", resolved, path);
  // O_NONBLOCK: a FIFO put there must not hang the open; nothing is read before fstat says regular.
  const Fd fd(::open(resolved.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    out.refused = refusal(path, fmt::format("cannot open {}: {}", resolved, std::strerror(errno)));
    return out;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    out.refused = refusal(path, fmt::format("{} is not a regular file", shown));
    return out;
  }
  const bool acl = has_access_control_list(::fgetxattr(fd.get(), "system.posix_acl_access", nullptr, 0));
  std::string why = others_can_change(resolved, st, acl, false);
  if (why.empty()) why = directories_above(resolved);
  if (!why.empty()) {
    out.refused = refusal(path, why + " (a library someone else can change would run their code as you)");
    return out;
  }
  // Nothing above it can be changed by anyone else now: the path must still name the file checked.
  struct stat again;
  if (::lstat(resolved.c_str(), &again) != 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino) {
    out.refused = refusal(path, fmt::format("{} changed while it was checked", resolved));
    return out;
  }

  const int raw_fd = fd.get();
  std::string malformed;
  const std::optional<util::ElfIdentity> elf = util::read_elf_identity(
      static_cast<std::uint64_t>(st.st_size),
      [raw_fd](std::uint64_t offset, std::size_t size, char* into) {
        std::size_t done = 0;
        while (done < size) {
          const ssize_t n = ::pread(raw_fd, into + done, size - done, static_cast<off_t>(offset + done));
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) return false;
          done += static_cast<std::size_t>(n);
        }
        return true;
      },
      malformed);
  if (!elf) {
    out.refused = refusal(path, fmt::format("{} is not a shared library: {}", shown, malformed));
    return out;
  }
  if (elf->type != ET_DYN || elf->machine != kHostMachine) {
    out.refused = refusal(path, fmt::format("{} is not a shared library for this machine", shown));
    return out;
  }
  if (!elf->soname || !elf->soname->starts_with(traits_of(api).soname_prefix)) {
    out.refused =
        refusal(path, fmt::format("{} is not {} {} library (its SONAME is {})", shown, api == JitApi::nvvm ? "a" : "an",
                                  traits_of(api).name, elf->soname ? "\"" + *elf->soname + "\"" : "missing"));
    return out;
  }
  if (elf->build_id != recorded.build_id) {
    out.refused = mismatch(shown, fmt::format("a library with build-id {}", hex(elf->build_id)), recorded, api);
    return out;
  }
  out.resolved = resolved;
  return out;
}

LoadedNvrtc load_checked_nvrtc(const std::string& path, const keying::LibraryIdentity& recorded, JitApi api) {
  LoadedNvrtc out;
  const ApiTraits traits = traits_of(api);
  NvrtcFileCheck check = check_nvrtc_file(path, recorded, api);
  if (!check.refused.empty()) {
    out.refused = std::move(check.refused);
    return out;
  }
  out.resolved = std::move(check.resolved);
  void* handle = dlopen(out.resolved.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    out.refused = fmt::format("cannot load {}: {}", out.resolved, error != nullptr ? error : "unknown error");
    return out;
  }
  // Each version function takes two int* (nvJitLink's: unsigned*, the same representation).
  auto version = reinterpret_cast<int (*)(int*, int*)>(dlsym(handle, traits.version_function));
  link_map* map = nullptr;
  if (version == nullptr || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) {
    out.refused = refusal(out.resolved, fmt::format("it does not export {}", traits.version_function), api);
    return out;
  }
  int major = 0, minor = 0;
  version(&major, &minor);
  // The object dlopen() returned (found by an address inside it: its dynamic section), not
  // nvrtcVersion's: with the shim preloaded, dlsym answers with the shim's wrapper.
  const std::string build_id = shim::interpose::build_id_of_object_containing(map->l_ld);
  if (major != recorded.major || minor != recorded.minor || build_id != recorded.build_id) {
    out.refused =
        mismatch(out.resolved, fmt::format("{} {}.{} with build-id {}", traits.name, major, minor, hex(build_id)),
                 recorded, api);
    return out;
  }
  out.handle = handle;
  return out;
}

const char* jit_api_name(JitApi api) { return traits_of(api).name; }

}  // namespace nvrtc_cache::tools
