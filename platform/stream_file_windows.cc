#include "platform/stream_file.h"

#include <windows.h>
#include <shlwapi.h>

#include <cerrno>
#include <cstdio>

#include "platform/paths.h"
#include "platform/windows/directory_paths.h"
#include "platform/windows/wide.h"

namespace nvrtc_cache::platform {
namespace {

HANDLE handle_of(StreamFile file) { return reinterpret_cast<HANDLE>(file); }
StreamFile stream_of(HANDLE handle) { return reinterpret_cast<StreamFile>(handle); }
int last_errno() { return windows::errno_of_error(GetLastError()); }

int open_with(const std::string& path, DWORD access, DWORD disposition, StreamFile* file) {
  const HANDLE handle = CreateFileW(windows::to_wide(path).c_str(), access, FILE_SHARE_READ | FILE_SHARE_DELETE,
                                    nullptr, disposition, FILE_ATTRIBUTE_NORMAL, nullptr);
  *file = handle == INVALID_HANDLE_VALUE ? kNoStream : stream_of(handle);
  return handle == INVALID_HANDLE_VALUE ? last_errno() : 0;
}

bool is_standard(StreamFile file) {
  return handle_of(file) == GetStdHandle(STD_INPUT_HANDLE) || handle_of(file) == GetStdHandle(STD_OUTPUT_HANDLE);
}

}  // namespace

int open_stream_for_reading(const std::string& path, StreamFile* file) {
  return open_with(path, GENERIC_READ, OPEN_EXISTING, file);
}

int create_stream_file(const std::string& path, StreamFile* file) {
  return open_with(path, GENERIC_WRITE, CREATE_NEW, file);
}

// The standard handles are byte streams already: ReadFile and WriteFile never translate line ends.
StreamFile standard_input_stream() { return stream_of(GetStdHandle(STD_INPUT_HANDLE)); }
StreamFile standard_output_stream() {
  std::fflush(stdout);  // what the C library buffered goes first
  return stream_of(GetStdHandle(STD_OUTPUT_HANDLE));
}

int read_stream(StreamFile file, void* buffer, std::size_t size, std::size_t* got) {
  DWORD n = 0;
  const DWORD chunk = size > (1u << 30) ? (1u << 30) : static_cast<DWORD>(size);
  if (!ReadFile(handle_of(file), buffer, chunk, &n, nullptr)) {
    if (GetLastError() == ERROR_BROKEN_PIPE) {  // the writer of a pipe closed it: the end
      *got = 0;
      return 0;
    }
    return last_errno();
  }
  *got = n;
  return 0;
}

int write_stream(StreamFile file, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    DWORD n = 0;
    const DWORD chunk = size > (1u << 30) ? (1u << 30) : static_cast<DWORD>(size);
    if (!WriteFile(handle_of(file), bytes, chunk, &n, nullptr)) return last_errno();
    if (n == 0) return EIO;
    bytes += n;
    size -= n;
  }
  return 0;
}

std::uint64_t stream_size(StreamFile file) {
  LARGE_INTEGER size{};
  if (GetFileType(handle_of(file)) != FILE_TYPE_DISK || !GetFileSizeEx(handle_of(file), &size)) return 0;
  return static_cast<std::uint64_t>(size.QuadPart);
}

int sync_stream(StreamFile file) { return FlushFileBuffers(handle_of(file)) ? 0 : last_errno(); }

int close_stream(StreamFile file) {
  if (is_standard(file)) return 0;
  return CloseHandle(handle_of(file)) ? 0 : last_errno();
}

int replace_file(const std::string& from, const std::string& to) {
  return MoveFileExW(windows::to_wide(from).c_str(), windows::to_wide(to).c_str(),
                     MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)
             ? 0
             : last_errno();
}

int remove_file(const std::string& path) { return DeleteFileW(windows::to_wide(path).c_str()) ? 0 : last_errno(); }

bool glob_matches(const std::string& pattern, const std::string& name) {
  return PathMatchSpecExW(windows::to_wide(name).c_str(), windows::to_wide(pattern).c_str(), PMSF_NORMAL) == S_OK;
}

int make_directories(const std::string& path, mode_t, std::string* failed) {
  const DWORD attributes = GetFileAttributesW(windows::to_wide(path).c_str());
  if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) return 0;
  const std::size_t root = root_of(path).size();
  for (std::size_t at = root; at <= path.size(); ++at) {
    if (at < path.size() && !is_path_separator(path[at])) continue;
    const std::string prefix = path.substr(0, at);
    if (prefix.size() > root && !CreateDirectoryW(windows::to_wide(prefix).c_str(), nullptr) &&
        GetLastError() != ERROR_ALREADY_EXISTS) {
      *failed = prefix;
      return last_errno();
    }
  }
  return 0;
}

}  // namespace nvrtc_cache::platform
