// Env::system() on Windows: the path-based reads direct mode needs (direct/dependencies.cc), with
// UTF-8 paths converted to UTF-16 for the wide Win32 and CRT calls; the handle-based calls of the
// POSIX cache-directory walk fail with ENOSYS (the Windows store opens its directory by path,
// store/windows/lmdb_store.h). File times have the CRT's one-second resolution.
#include <windows.h>

#include <cerrno>
#include <ctime>

#include "store/env.h"
#include "store/windows/wide.h"

namespace nvrtc_cache::store {
namespace {

class SystemEnv final : public Env {
 public:
  std::int64_t now_seconds() override { return static_cast<std::int64_t>(std::time(nullptr)); }
};

}  // namespace

int Env::stat(const std::string& path, struct stat* out) {
  struct _stat64 st;
  if (_wstat64(windows::to_wide(path).c_str(), &st) != 0) return errno != 0 ? errno : ENOENT;
  *out = {};
  out->st_dev = static_cast<decltype(out->st_dev)>(st.st_dev);
  out->st_ino = static_cast<decltype(out->st_ino)>(st.st_ino);
  out->st_mode = static_cast<decltype(out->st_mode)>(st.st_mode);
  out->st_size = static_cast<decltype(out->st_size)>(st.st_size);
  out->st_mtime = static_cast<decltype(out->st_mtime)>(st.st_mtime);
  out->st_ctime = static_cast<decltype(out->st_ctime)>(st.st_ctime);
  return 0;
}

int Env::open_directory_at(int, const std::string&, int*) { return ENOSYS; }
int Env::make_directory_at(int, const std::string&, mode_t) { return ENOSYS; }
int Env::stat_at(int, const std::string&, struct stat*) { return ENOSYS; }
int Env::statfs_at(int, struct statfs*) { return ENOSYS; }
int Env::read_link_at(int, const std::string&, std::string*) { return ENOSYS; }
int Env::rename_at(int, const std::string&, const std::string&) { return ENOSYS; }
int Env::remove_at(int, const std::string&, bool) { return ENOSYS; }
int Env::list_directory(int, std::vector<std::string>*) { return ENOSYS; }
int Env::read_file_at(int, const std::string&, void*, std::size_t, off_t, std::size_t*) { return ENOSYS; }

int Env::read_file(const std::string& path, std::size_t max_bytes, std::string* content) {
  const HANDLE file = CreateFileW(windows::to_wide(path).c_str(), GENERIC_READ,
                                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                                  FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE) return ENOENT;
  content->clear();
  int error = 0;
  char buffer[65536];
  for (;;) {
    DWORD got = 0;
    if (!ReadFile(file, buffer, sizeof buffer, &got, nullptr)) {
      error = EIO;
      break;
    }
    if (got == 0) break;
    if (content->size() + got > max_bytes) {
      error = EFBIG;
      break;
    }
    content->append(buffer, got);
  }
  CloseHandle(file);
  return error;
}

// No link is followed: the full path, as NVRTC's own GetFullPathNameW computes it.
int Env::real_path(const std::string& path, std::string* resolved) {
  const std::wstring wide = windows::to_wide(path);
  std::wstring full(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetFullPathNameW(wide.c_str(), static_cast<DWORD>(full.size()), full.data(), nullptr);
    if (n == 0) return ENOENT;
    if (n < full.size()) {
      full.resize(n);
      break;
    }
    full.resize(n);
  }
  if (GetFileAttributesW(full.c_str()) == INVALID_FILE_ATTRIBUTES) return ENOENT;
  *resolved = windows::to_utf8(full);
  return 0;
}

int Env::read_link(const std::string&, std::string*) { return EINVAL; }

std::optional<std::string> Env::environment_variable(const std::string& name) {
  return windows::environment_variable(windows::to_wide(name));
}

// The wall clock in nanoseconds since the Unix epoch (file times are compared with it).
std::int64_t Env::now_realtime_ns() {
  FILETIME now;
  GetSystemTimePreciseAsFileTime(&now);
  const std::int64_t ticks = (static_cast<std::int64_t>(now.dwHighDateTime) << 32) | now.dwLowDateTime;
  constexpr std::int64_t kUnixEpochTicks = 116444736000000000;  // 1970-01-01 in 100 ns since 1601
  return (ticks - kUnixEpochTicks) * 100;
}

Env* Env::system() {
  static auto* env = new SystemEnv();  // leaked: usable from exit paths
  return env;
}

}  // namespace nvrtc_cache::store
