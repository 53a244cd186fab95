// Files by name in a directory on Windows (platform/file_at.h): CreateFileW on the directory
// handle's current path (platform/windows/directory_paths.h), never following a reparse point
// (FILE_FLAG_OPEN_REPARSE_POINT: a link is opened as itself, and stat_open_file reports it as one),
// shared for read, write and delete.
#include <windows.h>

#include <algorithm>
#include <cerrno>

#include "platform/file_at.h"
#include "platform/windows/directory_paths.h"
#include "platform/windows/last_error.h"

namespace nvrtc_cache::platform {
namespace {

using windows::LastErrorKept;

HANDLE handle_of(FileHandle file) { return reinterpret_cast<HANDLE>(file); }

int open_at(int dir, const std::string& name, DWORD access, DWORD disposition, FileHandle* file) {
  *file = kNoFile;
  int error = 0;
  const std::wstring path = windows::path_in_directory(dir, name, &error);
  if (error != 0) return error;
  const HANDLE handle = CreateFileW(path.c_str(), access, windows::kShareAll, nullptr, disposition,
                                    FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (handle == INVALID_HANDLE_VALUE) return windows::errno_of_error(GetLastError());
  *file = reinterpret_cast<FileHandle>(handle);
  return 0;
}

}  // namespace

int open_file_at(int dir, const std::string& name, FileHandle* file) {
  const LastErrorKept kept;
  return open_at(dir, name, GENERIC_READ, OPEN_EXISTING, file);
}

int create_file_at(int dir, const std::string& name, FileHandle* file) {
  const LastErrorKept kept;
  return open_at(dir, name, GENERIC_WRITE, CREATE_NEW, file);
}

int read_file_chunk(FileHandle file, void* buffer, std::size_t size, std::uint64_t offset, std::size_t* got) {
  const LastErrorKept kept;
  *got = 0;
  OVERLAPPED at = {};
  at.Offset = static_cast<DWORD>(offset);
  at.OffsetHigh = static_cast<DWORD>(offset >> 32);
  DWORD n = 0;
  const DWORD want = static_cast<DWORD>(std::min<std::size_t>(size, 1u << 30));
  if (!ReadFile(handle_of(file), buffer, want, &n, &at)) {
    return GetLastError() == ERROR_HANDLE_EOF ? 0 : windows::errno_of_error(GetLastError());
  }
  *got = n;
  return 0;
}

int write_file_chunk(FileHandle file, const void* data, std::size_t size, std::size_t* wrote) {
  const LastErrorKept kept;
  *wrote = 0;
  DWORD n = 0;
  const DWORD want = static_cast<DWORD>(std::min<std::size_t>(size, 1u << 30));
  if (!WriteFile(handle_of(file), data, want, &n, nullptr)) return windows::errno_of_error(GetLastError());
  if (n == 0) return EIO;
  *wrote = n;
  return 0;
}

int close_file(FileHandle file) {
  const LastErrorKept kept;
  return CloseHandle(handle_of(file)) ? 0 : windows::errno_of_error(GetLastError());
}

bool random_bytes(void*, std::size_t) { return false; }

}  // namespace nvrtc_cache::platform
