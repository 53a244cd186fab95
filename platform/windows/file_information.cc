// The Windows Env's struct stat and errno values (platform/windows/file_information.h).
#include "platform/windows/file_information.h"

#include <cerrno>
#include <cstdint>

#include "platform/env.h"  // S_IFLNK on Windows
#include "platform/windows/directory_paths.h"

namespace nvrtc_cache::platform::windows {
namespace {

// What struct stat is made of, from either GetFileInformationByHandle or the cheaper per-file
// queries (file_information_on_volume).
struct FileInformation {
  DWORD volume = 0;
  std::uint64_t index = 0;
  DWORD attributes = 0;
  DWORD links = 0;
  std::uint64_t size = 0;
  std::int64_t access_ticks = 0;  // since 1601, in 100 ns
  std::int64_t write_ticks = 0;
};

std::int64_t ticks_of(const FILETIME& t) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(t.dwHighDateTime) << 32 | t.dwLowDateTime);
}

void fill_stat(const FileInformation& info, struct stat* out) {
  *out = {};
  const std::uint64_t index = info.index;
  out->st_dev = static_cast<decltype(out->st_dev)>(info.volume);
  out->st_ino = static_cast<decltype(out->st_ino)>(index & 0xFFFF);
  out->st_uid = static_cast<decltype(out->st_uid)>(static_cast<std::uint16_t>(index >> 16));
  out->st_gid = static_cast<decltype(out->st_gid)>(static_cast<std::uint16_t>(index >> 32));
  out->st_rdev = static_cast<decltype(out->st_rdev)>(index >> 48);
  const bool directory = (info.attributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
  const bool read_only = (info.attributes & FILE_ATTRIBUTE_READONLY) != 0;
  out->st_mode = static_cast<decltype(out->st_mode)>((info.attributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0 ? S_IFLNK
                                                     : directory ? S_IFDIR | 0700
                                                                 : S_IFREG | (read_only ? 0400 : 0600));
  out->st_nlink = static_cast<decltype(out->st_nlink)>(info.links);
  out->st_size = static_cast<decltype(out->st_size)>(info.size);
  const auto seconds = [](std::int64_t ticks) { return (ticks - 116444736000000000) / 10000000; };
  out->st_atime = static_cast<decltype(out->st_atime)>(seconds(info.access_ticks));
  out->st_mtime = static_cast<decltype(out->st_mtime)>(seconds(info.write_ticks));
  out->st_ctime = static_cast<decltype(out->st_ctime)>(seconds(info.write_ticks));
}

// NtQueryInformationFile(FileInternalInformation): the file index alone (no volume query).
using QueryInformationFile = LONG(WINAPI*)(HANDLE, void* io_status, void* information, ULONG length, int kind);
QueryInformationFile query_information_file() {
  static const auto function = reinterpret_cast<QueryInformationFile>(
      reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "NtQueryInformationFile")));
  return function;
}

// The file's information where its volume is known (`volume`): its attributes, size, links, times
// and index, without GetFileInformationByHandle's volume query (a round trip to the mount manager
// under Wine, about a millisecond). False if a query failed (the caller then asks the full way).
bool file_information_on_volume(HANDLE handle, DWORD volume, FileInformation* out) {
  const QueryInformationFile query = query_information_file();
  FILE_BASIC_INFO basic{};
  FILE_STANDARD_INFO standard{};
  struct {
    void* status_or_pointer;
    ULONG_PTR information;
  } io_status{};
  LARGE_INTEGER index{};
  constexpr int kFileInternalInformation = 6;
  if (query == nullptr || !GetFileInformationByHandleEx(handle, FileBasicInfo, &basic, sizeof basic) ||
      !GetFileInformationByHandleEx(handle, FileStandardInfo, &standard, sizeof standard) ||
      query(handle, &io_status, &index, sizeof index, kFileInternalInformation) < 0) {
    return false;
  }
  out->volume = volume;
  out->index = static_cast<std::uint64_t>(index.QuadPart);
  out->attributes = basic.FileAttributes;
  out->links = standard.NumberOfLinks;
  out->size = static_cast<std::uint64_t>(standard.EndOfFile.QuadPart);
  out->access_ticks = basic.LastAccessTime.QuadPart;
  out->write_ticks = basic.LastWriteTime.QuadPart;
  return true;
}

}  // namespace

int errno_of_error(DWORD error) {
  switch (error) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_NAME:
    case ERROR_BAD_NETPATH:
      return ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case ERROR_WRITE_PROTECT:
      return EACCES;
    case ERROR_ALREADY_EXISTS:
    case ERROR_FILE_EXISTS:
      return EEXIST;
    case ERROR_DIR_NOT_EMPTY:
      return ENOTEMPTY;
    case ERROR_DIRECTORY:
      return ENOTDIR;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
      return ENOSPC;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
      return ENOMEM;
    default:
      return EIO;
  }
}

// Opens `path` for attributes only; `follow`: through a reparse point to its target.
HANDLE open_for_attributes(const std::wstring& path, bool follow, DWORD access) {
  const DWORD flags = FILE_FLAG_BACKUP_SEMANTICS | (follow ? 0 : FILE_FLAG_OPEN_REPARSE_POINT);
  return CreateFileW(path.c_str(), access, kShareAll, nullptr, OPEN_EXISTING, flags, nullptr);
}

// `volume`: the serial number of the volume `handle` is known to be on (0: not known, asked).
int stat_of(HANDLE handle, struct stat* out, DWORD volume) {
  FileInformation info;
  if (volume == 0 || !file_information_on_volume(handle, volume, &info)) {
    BY_HANDLE_FILE_INFORMATION full;
    if (!GetFileInformationByHandle(handle, &full)) return errno_of_error(GetLastError());
    info.volume = full.dwVolumeSerialNumber;
    info.index = static_cast<std::uint64_t>(full.nFileIndexHigh) << 32 | full.nFileIndexLow;
    info.attributes = full.dwFileAttributes;
    info.links = full.nNumberOfLinks;
    info.size = static_cast<std::uint64_t>(full.nFileSizeHigh) << 32 | full.nFileSizeLow;
    info.access_ticks = ticks_of(full.ftLastAccessTime);
    info.write_ticks = ticks_of(full.ftLastWriteTime);
  }
  fill_stat(info, out);
  return 0;
}
int stat_path(const std::wstring& path, bool follow, struct stat* out, DWORD volume) {
  const HANDLE handle = open_for_attributes(path, follow);
  if (handle == INVALID_HANDLE_VALUE) return errno_of_error(GetLastError());
  const int rc = stat_of(handle, out, volume);
  CloseHandle(handle);
  return rc;
}

}  // namespace nvrtc_cache::platform::windows
