// Opening the user's own files (platform/own_file.h) on Windows: the log file is opened with the CRT
// (binary, not inherited by child processes; no owner to check: the cache and its files live under
// the user's profile, whose ACL gives them to that user), and a configuration file is read through
// the Env. Neither says why a file could not be used. A replaced file is written with the Windows
// API and moved over the old one (MoveFileEx).
#include "platform/own_file.h"

#include <windows.h>

#include <fcntl.h>
#include <io.h>

#include <algorithm>

#include "platform/env.h"
#include "platform/errno_guard.h"
#include "platform/paths.h"
#include "platform/windows/last_error.h"
#include "platform/windows/wide.h"

namespace nvrtc_cache::platform {

int open_own_file_for_append(const std::string& path, std::string* why) {
  const ErrnoGuard errno_guard;
  if (why) why->clear();
  return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_BINARY | O_NOINHERIT, 0600);
}

std::string append_whole_locked(const std::string& path, std::string_view bytes) {
  const ErrnoGuard errno_guard;
  const windows::LastErrorKept last_error;
  if (bytes.size() > MAXDWORD) return "too large a piece";
  const HANDLE file = CreateFileW(windows::to_wide(path).c_str(), GENERIC_READ | GENERIC_WRITE,
                                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_ALWAYS,
                                  FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (file == INVALID_HANDLE_VALUE) return "cannot open it (error " + std::to_string(GetLastError()) + ")";
  std::string why;
  FILE_ATTRIBUTE_TAG_INFO tag{};
  OVERLAPPED whole_file{};
  if (!GetFileInformationByHandleEx(file, FileAttributeTagInfo, &tag, sizeof tag) ||
      (tag.FileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT))) {
    why = "is not a regular file";
  } else if (!LockFileEx(file, LOCKFILE_EXCLUSIVE_LOCK, 0, MAXDWORD, MAXDWORD, &whole_file)) {
    why = "cannot lock it (error " + std::to_string(GetLastError()) + ")";
  } else {
    LARGE_INTEGER end{};
    DWORD written = 0;
    if (!SetFilePointerEx(file, LARGE_INTEGER{}, &end, FILE_END)) {
      why = "cannot seek to its end (error " + std::to_string(GetLastError()) + ")";
    } else if (!WriteFile(file, bytes.data(), static_cast<DWORD>(bytes.size()), &written, nullptr) ||
               written != bytes.size()) {
      why = "cannot write to it (error " + std::to_string(GetLastError()) + ")";
      if (SetFilePointerEx(file, end, nullptr, FILE_BEGIN)) (void)SetEndOfFile(file);  // cut the piece off
    }
    (void)UnlockFileEx(file, 0, MAXDWORD, MAXDWORD, &whole_file);
  }
  CloseHandle(file);
  return why;
}

std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes, std::string* why,
                                             unsigned*) {
  if (why) why->clear();
  std::string text;
  if (Env::system()->read_file(path, max_bytes, &text) != 0) return std::nullopt;
  return text;
}

bool replace_own_file(const std::string& path, const std::string& content, std::string* why) {
  const ErrnoGuard errno_guard;
  const windows::LastErrorKept last_error_kept;
  const auto failed = [why](const char* what) {
    if (why) *why = std::string(what) + " (Windows error " + std::to_string(GetLastError()) + ")";
    return false;
  };
  const std::size_t root = root_of(path).size();
  for (std::size_t i = root; i < path.size(); ++i) {
    if (is_path_separator(path[i])) (void)CreateDirectoryW(windows::to_wide(path.substr(0, i)).c_str(), nullptr);
  }
  const std::wstring target = windows::to_wide(path);
  const std::wstring temporary = target + L".tmp-" + std::to_wstring(GetCurrentProcessId()) + L"-" +
                                 std::to_wstring(GetTickCount64());
  const HANDLE file =
      CreateFileW(temporary.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE) return failed("cannot create a temporary file beside it");
  std::size_t written = 0;
  while (written < content.size()) {
    DWORD n = 0;
    const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(content.size() - written, 1u << 30));
    if (!WriteFile(file, content.data() + written, chunk, &n, nullptr) || n == 0) break;
    written += n;
  }
  const bool complete = written == content.size() && FlushFileBuffers(file);
  CloseHandle(file);
  if (!complete ||
      !MoveFileExW(temporary.c_str(), target.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
    failed(complete ? "cannot rename it into place" : "cannot write it");
    DeleteFileW(temporary.c_str());
    return false;
  }
  return true;
}

}  // namespace nvrtc_cache::platform
