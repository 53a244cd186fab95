// Env::system() on Windows: UTF-8 paths converted to UTF-16 for the wide Win32 calls. A directory
// "descriptor" is an index into a process-wide table of directory handles (CreateFileW with
// FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, shared for read, write and delete, so a
// held directory can still be renamed, like an O_PATH descriptor). A call on (dir, name) that opens
// one entry (open_directory_at, stat_at, read_file_at) opens it relative to the handle (NtCreateFile
// with a root directory: openat); the others name the entry by the handle's current path
// (GetFinalPathNameByHandleW). Either way it follows the directory the handle holds, not the path it
// was opened by. A reparse point (junction, symbolic link) is never followed by the handle-based
// calls: it is reported as S_IFLNK, and open_directory_at refuses it with ELOOP. rename_at replaces an
// existing file, as rename(2) does (MOVEFILE_REPLACE_EXISTING). struct stat gets the
// volume serial number and the 64-bit file index (file_id(), platform/env.h), the size in 64 bits
// (_FILE_OFFSET_BITS=64) and one-second times; no owner. The volume serial is asked for once per walk
// (its root, or a path opened as given): what is reached from a held directory without following a
// reparse point inherits it, and so does an open file whose present full path is an entry of a held
// directory (stat_open_file_in), because asking for it costs a round trip to the mount manager (about
// a millisecond under Wine, for each stat).
#include <windows.h>
#include <winternl.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <cwchar>
#include <string_view>
#include <mutex>
#include <vector>

#include "platform/env.h"
#include "platform/windows/directory_paths.h"
#include "platform/windows/file_information.h"
#include "platform/windows/last_error.h"
#include "platform/windows/wide.h"

namespace nvrtc_cache::platform {
namespace {

class SystemEnv final : public Env {
 public:
  std::int64_t now_seconds() override { return static_cast<std::int64_t>(std::time(nullptr)); }
};

// Every call keeps the thread's last-error value (the proxy runs inside the host's calls).
using windows::LastErrorKept;

// The table of directory handles; a descriptor is kFirstDescriptor + its index. Each holds its
// directory's volume serial number, so that what is reached from it without following a reparse
// point (on the same volume) is stat'ed without asking for the volume again.
constexpr int kFirstDescriptor = 1000;
struct Descriptor {
  HANDLE handle = INVALID_HANDLE_VALUE;
  DWORD volume = 0;
};
std::mutex g_handles_mu;
std::vector<Descriptor>& handles() {
  static auto* table = new std::vector<Descriptor>();  // leaked: usable from exit paths
  return *table;
}

Descriptor descriptor_of(int fd) {
  std::lock_guard lock(g_handles_mu);
  const std::size_t index = static_cast<std::size_t>(fd - kFirstDescriptor);
  return fd >= kFirstDescriptor && index < handles().size() ? handles()[index] : Descriptor{};
}

HANDLE handle_of(int fd) { return descriptor_of(fd).handle; }

int add_handle(HANDLE handle, DWORD volume) {
  std::lock_guard lock(g_handles_mu);
  std::vector<Descriptor>& table = handles();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].handle == INVALID_HANDLE_VALUE) {
      table[i] = {handle, volume};
      return kFirstDescriptor + static_cast<int>(i);
    }
  }
  table.push_back({handle, volume});
  return kFirstDescriptor + static_cast<int>(table.size() - 1);
}

// The volume serial of the entry `name` of the directory `dir` opened without following a reparse
// point: the directory's when `name` is one entry in it (no separator, not ".."); 0 (to be asked)
// otherwise, since a path through a junction or a volume's parent may be on another volume.
DWORD volume_of_entry(int dir, const std::string& name) {
  if (name.empty() || name == ".." || name.find_first_of("/\\") != std::string::npos) return 0;
  return descriptor_of(dir).volume;
}

// The current full path of an open handle ("\\?\C:\..."), or "" if it cannot be had.
std::wstring path_of_handle(HANDLE handle) {
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetFinalPathNameByHandleW(handle, path.data(), static_cast<DWORD>(path.size()), VOLUME_NAME_DOS);
    if (n == 0) return {};
    if (n < path.size()) {
      path.resize(n);
      return path;
    }
    path.resize(n);
  }
}

// `name` in the directory `dir` (AT_FDCWD: `name` as given), or "" (with `*error`) when `dir` is not
// a descriptor of the table.
std::wstring path_at(int dir, const std::string& name, int* error) {
  *error = 0;
  if (dir == AT_FDCWD) return windows::to_wide(name);
  const HANDLE handle = handle_of(dir);
  std::wstring base = handle == INVALID_HANDLE_VALUE ? std::wstring() : path_of_handle(handle);
  if (base.empty()) {
    *error = EBADF;
    return {};
  }
  if (name.empty()) return base;
  if (base.back() != L'\\') base += L'\\';
  return base + windows::to_wide(name);
}

using windows::kShareAll;
using windows::open_for_attributes;
using windows::stat_of;
using windows::stat_path;
int errno_of(DWORD error) { return windows::errno_of_error(error); }

// NtCreateFile relative to a directory handle (OBJECT_ATTRIBUTES.RootDirectory: openat), and the
// status-to-error translation, from ntdll; null where they are missing.
using CreateFileFunction = LONG(WINAPI*)(HANDLE*, ACCESS_MASK, OBJECT_ATTRIBUTES*, IO_STATUS_BLOCK*, LARGE_INTEGER*,
                                         ULONG, ULONG, ULONG, ULONG, void*, ULONG);
using StatusToErrorFunction = ULONG(WINAPI*)(LONG);
template <typename Function>
Function ntdll_function(const char* name) {
  return reinterpret_cast<Function>(reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"ntdll.dll"), name)));
}

// Whether `name` is one entry of a directory (no separator, not "." or "..").
bool is_single_entry(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find_first_of("/\\") == std::string::npos;
}

// Opens the entry `name` of the directory `dir` without following a reparse point, for `access`
// (`file_only`: never a directory). A single entry is opened relative to the directory's handle,
// without asking for the directory's path (one call less, and no path to race with); anything else
// by the path of the handle. INVALID_HANDLE_VALUE and `*error` on failure.
HANDLE open_entry(int dir, const std::string& name, DWORD access, bool file_only, int* error) {
  static const auto create_file = ntdll_function<CreateFileFunction>("NtCreateFile");
  static const auto status_to_error = ntdll_function<StatusToErrorFunction>("RtlNtStatusToDosError");
  const HANDLE directory = dir == AT_FDCWD ? INVALID_HANDLE_VALUE : handle_of(dir);
  if (directory != INVALID_HANDLE_VALUE && create_file != nullptr && status_to_error != nullptr &&
      is_single_entry(name)) {
    std::wstring wide = windows::to_wide(name);
    UNICODE_STRING object_name;
    object_name.Buffer = wide.data();
    object_name.Length = static_cast<USHORT>(wide.size() * sizeof(wchar_t));
    object_name.MaximumLength = object_name.Length;
    OBJECT_ATTRIBUTES attributes;
    InitializeObjectAttributes(&attributes, &object_name, OBJ_CASE_INSENSITIVE, directory, nullptr);
    IO_STATUS_BLOCK io_status{};
    constexpr ULONG kOpen = 1;  // FILE_OPEN
    constexpr ULONG kNonDirectory = 0x40, kSynchronousIo = 0x20, kForBackup = 0x4000, kReparsePoint = 0x00200000;
    HANDLE handle = nullptr;
    const LONG status = create_file(
        &handle, access | SYNCHRONIZE | FILE_READ_ATTRIBUTES, &attributes, &io_status, nullptr, 0, kShareAll, kOpen,
        kSynchronousIo | kReparsePoint | (file_only ? kNonDirectory : kForBackup), nullptr, 0);
    if (status >= 0 && handle != nullptr) return handle;
    *error = errno_of(status_to_error(status));
    return INVALID_HANDLE_VALUE;
  }
  const std::wstring path = path_at(dir, name, error);
  if (*error != 0) return INVALID_HANDLE_VALUE;
  const DWORD flags = FILE_FLAG_OPEN_REPARSE_POINT | (file_only ? 0 : FILE_FLAG_BACKUP_SEMANTICS);
  const HANDLE handle = CreateFileW(path.c_str(), access, kShareAll, nullptr, OPEN_EXISTING, flags, nullptr);
  if (handle == INVALID_HANDLE_VALUE) *error = errno_of(GetLastError());
  return handle;
}

}  // namespace

std::wstring windows::path_in_directory(int dir, const std::string& name, int* error) {
  const LastErrorKept kept;
  return path_at(dir, name, error);
}

FileId file_id(const struct stat& st) {
  return {static_cast<std::uint32_t>(st.st_dev),
          static_cast<std::uint64_t>(st.st_ino) |
              static_cast<std::uint64_t>(static_cast<std::uint16_t>(st.st_uid)) << 16 |
              static_cast<std::uint64_t>(static_cast<std::uint16_t>(st.st_gid)) << 32 |
              static_cast<std::uint64_t>(static_cast<std::uint16_t>(st.st_rdev)) << 48};
}

// The CRT's struct stat has whole seconds (platform/windows/file_information.cc).
std::int64_t modified_time_ns(const struct stat& st) { return std::int64_t{st.st_mtime} * 1'000'000'000; }
std::int64_t changed_time_ns(const struct stat& st) { return std::int64_t{st.st_ctime} * 1'000'000'000; }

// No owner: a directory's ACL says who may use it (the cache directory defaults to one under the
// user's profile), and st_uid carries bits of the file index.
Owner owner_of(const struct stat&) { return Owner::kUnknown; }

// No statfs on Windows: no directory is found to be on a network filesystem.
const char* network_filesystem_at(Env&, int) { return nullptr; }
std::optional<std::uint64_t> free_bytes_at(Env&, int) { return std::nullopt; }

int stat_open_file(std::intptr_t file, struct stat* out) {
  const LastErrorKept kept;
  return stat_of(reinterpret_cast<HANDLE>(file), out);
}

int stat_open_file_in(std::intptr_t file, int dir, const std::string& name, struct stat* out) {
  const LastErrorKept kept;
  const HANDLE handle = reinterpret_cast<HANDLE>(file);
  const Descriptor descriptor = descriptor_of(dir);
  DWORD volume = 0;
  if (descriptor.handle != INVALID_HANDLE_VALUE && descriptor.volume != 0) {
    // The file's present path is the entry `name` of the directory's present path: it is on the
    // directory's volume (two volumes never share a full path).
    std::wstring expected = path_of_handle(descriptor.handle);
    if (!expected.empty()) {
      if (expected.back() != L'\\') expected += L'\\';
      expected += windows::to_wide(name);
      const std::wstring actual = path_of_handle(handle);
      if (!actual.empty() && actual == expected) volume = descriptor.volume;
    }
  }
  return stat_of(handle, out, volume);
}

std::string path_naming_directory(int dir) {
  const LastErrorKept kept;
  const HANDLE handle = handle_of(dir);
  std::wstring path = handle == INVALID_HANDLE_VALUE ? std::wstring() : path_of_handle(handle);
  // Without the "\\?\" prefix, under which '/' is no separator (LMDB appends "/data.mdb").
  if (path.starts_with(L"\\\\?\\UNC\\"))
    path = L"\\\\" + path.substr(8);
  else if (path.starts_with(L"\\\\?\\"))
    path = path.substr(4);
  return windows::to_utf8(path);
}

bool path_naming_directory_is_read_from_it() { return true; }

bool whole_path_open_is_the_walk() { return true; }

void close_directory_descriptor(int fd) {
  HANDLE handle = INVALID_HANDLE_VALUE;
  {
    std::lock_guard lock(g_handles_mu);
    const std::size_t index = static_cast<std::size_t>(fd - kFirstDescriptor);
    if (fd < kFirstDescriptor || index >= handles().size()) return;
    handle = handles()[index].handle;
    handles()[index] = {};
  }
  if (handle != INVALID_HANDLE_VALUE) {
    const LastErrorKept kept;
    CloseHandle(handle);
  }
}

int duplicate_directory_descriptor(int fd) {
  const LastErrorKept kept;
  const Descriptor descriptor = descriptor_of(fd);
  HANDLE copy = INVALID_HANDLE_VALUE;
  if (descriptor.handle == INVALID_HANDLE_VALUE ||
      !DuplicateHandle(GetCurrentProcess(), descriptor.handle, GetCurrentProcess(), &copy, 0, FALSE,
                       DUPLICATE_SAME_ACCESS)) {
    return -1;
  }
  try {
    return add_handle(copy, descriptor.volume);
  } catch (...) {
    CloseHandle(copy);
    return -1;
  }
}

int Env::stat(const std::string& path, struct stat* out) {
  const LastErrorKept kept;
  return stat_path(windows::to_wide(path), /*follow=*/true, out);
}

int Env::open_directory_at(int dir, const std::string& name, int* fd) {
  const LastErrorKept kept;
  *fd = -1;
  int error = 0;
  const HANDLE handle = open_entry(dir, name, FILE_READ_ATTRIBUTES | FILE_LIST_DIRECTORY, /*file_only=*/false, &error);
  if (handle == INVALID_HANDLE_VALUE) return error;
  struct stat st {};
  // An entry opened in a directory without following a reparse point is on the directory's volume.
  error = stat_of(handle, &st, dir == AT_FDCWD ? 0 : volume_of_entry(dir, name));
  if (error == 0 && S_ISLNK(st.st_mode)) error = ELOOP;
  if (error == 0 && !S_ISDIR(st.st_mode)) error = ENOTDIR;
  if (error != 0) {
    CloseHandle(handle);
    return error;
  }
  try {
    *fd = add_handle(handle, static_cast<DWORD>(st.st_dev));
  } catch (...) {
    CloseHandle(handle);
    return ENOMEM;
  }
  return 0;
}

int Env::change_mode_at(int, const std::string&, mode_t) { return 0; }          // no POSIX modes on Windows
int Env::reserve_file_at(int, const std::string&, mode_t, off_t) { return 0; }  // an extended file is not sparse

int Env::make_directory_at(int dir, const std::string& name, mode_t) {
  const LastErrorKept kept;
  int error = 0;
  const std::wstring path = path_at(dir, name, &error);
  if (error != 0) return error;
  return CreateDirectoryW(path.c_str(), nullptr) ? 0 : errno_of(GetLastError());
}

int Env::stat_at(int dir, const std::string& name, struct stat* out) {
  const LastErrorKept kept;
  const Descriptor descriptor = descriptor_of(dir);
  if (name.empty()) {
    return descriptor.handle == INVALID_HANDLE_VALUE ? EBADF : stat_of(descriptor.handle, out, descriptor.volume);
  }
  int error = 0;
  const HANDLE handle = open_entry(dir, name, FILE_READ_ATTRIBUTES, /*file_only=*/false, &error);
  if (handle == INVALID_HANDLE_VALUE) return error;
  error = stat_of(handle, out, volume_of_entry(dir, name));
  CloseHandle(handle);
  return error;
}

int Env::statfs_at(int, struct statfs*) { return ENOSYS; }

// A reparse point's target, as the system resolves it (the walk follows links above the last
// component only).
int Env::read_link_at(int dir, const std::string& name, std::string* target) {
  const LastErrorKept kept;
  int error = 0;
  const std::wstring path = path_at(dir, name, &error);
  if (error != 0) return error;
  const HANDLE handle = open_for_attributes(path, /*follow=*/true);
  if (handle == INVALID_HANDLE_VALUE) return errno_of(GetLastError());
  std::wstring resolved = path_of_handle(handle);
  CloseHandle(handle);
  if (resolved.empty()) return EINVAL;
  if (resolved.starts_with(L"\\\\?\\UNC\\"))
    resolved = L"\\\\" + resolved.substr(8);
  else if (resolved.starts_with(L"\\\\?\\"))
    resolved = resolved.substr(4);
  *target = windows::to_utf8(resolved);
  return 0;
}

int Env::rename_at(int dir, const std::string& from, const std::string& to) {
  const LastErrorKept kept;
  int error = 0;
  const std::wstring source = path_at(dir, from, &error);
  const std::wstring destination = error == 0 ? path_at(dir, to, &error) : std::wstring();
  if (error != 0) return error;
  return MoveFileExW(source.c_str(), destination.c_str(), MOVEFILE_REPLACE_EXISTING) ? 0 : errno_of(GetLastError());
}

int Env::remove_at(int dir, const std::string& name, bool directory) {
  const LastErrorKept kept;
  int error = 0;
  const std::wstring path = path_at(dir, name, &error);
  if (error != 0) return error;
  const BOOL removed = directory ? RemoveDirectoryW(path.c_str()) : DeleteFileW(path.c_str());
  return removed ? 0 : errno_of(GetLastError());
}

int Env::list_directory(int dir, std::vector<std::string>* names) {
  const LastErrorKept kept;
  int error = 0;
  const std::wstring path = path_at(dir, "*", &error);
  if (error != 0) return error;
  WIN32_FIND_DATAW found;
  const HANDLE search = FindFirstFileW(path.c_str(), &found);
  if (search == INVALID_HANDLE_VALUE) {
    return GetLastError() == ERROR_FILE_NOT_FOUND ? 0 : errno_of(GetLastError());
  }
  do {
    const std::wstring name = found.cFileName;
    if (name != L"." && name != L"..") names->push_back(windows::to_utf8(name));
  } while (FindNextFileW(search, &found));
  error = GetLastError() == ERROR_NO_MORE_FILES ? 0 : errno_of(GetLastError());
  FindClose(search);
  return error;
}

int Env::read_file_at(int dir, const std::string& name, void* buffer, std::size_t size, off_t offset,
                      std::size_t* read) {
  const LastErrorKept kept;
  *read = 0;
  int error = 0;
  const HANDLE file = open_entry(dir, name, GENERIC_READ, /*file_only=*/true, &error);
  if (file == INVALID_HANDLE_VALUE) return error;
  while (*read < size) {
    OVERLAPPED at = {};
    const std::uint64_t position = static_cast<std::uint64_t>(offset) + *read;
    at.Offset = static_cast<DWORD>(position);
    at.OffsetHigh = static_cast<DWORD>(position >> 32);
    DWORD got = 0;
    const DWORD want = static_cast<DWORD>(std::min<std::size_t>(size - *read, 1u << 30));
    if (!ReadFile(file, static_cast<char*>(buffer) + *read, want, &got, &at)) {
      if (GetLastError() != ERROR_HANDLE_EOF) error = errno_of(GetLastError());
      break;
    }
    if (got == 0) break;
    *read += got;
  }
  CloseHandle(file);
  return error;
}

int Env::read_file(const std::string& path, std::size_t max_bytes, std::string* content) {
  const HANDLE file =
      CreateFileW(windows::to_wide(path).c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                  nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
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

std::optional<std::string> Env::current_directory() {
  std::wstring dir(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetCurrentDirectoryW(static_cast<DWORD>(dir.size()), dir.data());
    if (n == 0) return std::nullopt;
    if (n < dir.size()) {
      dir.resize(n);
      return windows::to_utf8(dir);
    }
    dir.resize(n);
  }
}

std::vector<std::string> Env::environment_variable_names() {
  std::vector<std::string> names;
  wchar_t* block = GetEnvironmentStringsW();
  if (block == nullptr) return names;
  for (const wchar_t* entry = block; *entry != L'\0'; entry += std::wcslen(entry) + 1) {
    const std::wstring_view text = entry;
    if (text.starts_with(L'=')) continue;  // "=C:=C:\dir": the per-drive current directories
    names.push_back(windows::to_utf8(std::wstring(text.substr(0, text.find(L'=')))));
  }
  FreeEnvironmentStringsW(block);
  return names;
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

}  // namespace nvrtc_cache::platform
