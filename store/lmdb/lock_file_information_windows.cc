// LMDB's lock-file information and its mutexes' open on Windows (store/lmdb/lock_file_information_windows.h,
// store/lmdb/lock_file_volume.h). Built into the LMDB library itself (windows/CMakeLists.txt), beside
// the mdb.c that calls them.
#define NVRTC_CACHE_LOCK_FILE_INFORMATION_DEFINITION
#include "store/lmdb/lock_file_information_windows.h"

#include <winternl.h>

#include "store/lmdb/lock_file_volume.h"

namespace nvrtc_cache::store::lmdb {
namespace {

thread_local std::uint64_t t_volume_serial = 0;  // 0: no hint

using QueryInformationFile = NTSTATUS(WINAPI*)(HANDLE, IO_STATUS_BLOCK*, void*, ULONG, int);

// The file's information without its volume: attributes and times, size and links, and its index
// (NtQueryInformationFile's FileInternalInformation, what GetFileInformationByHandle reports as
// nFileIndexHigh/Low). False if any query fails.
bool information_without_volume(HANDLE file, BY_HANDLE_FILE_INFORMATION* out) {
  static const auto query = reinterpret_cast<QueryInformationFile>(
      reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "NtQueryInformationFile")));
  FILE_BASIC_INFO basic{};
  FILE_STANDARD_INFO standard{};
  IO_STATUS_BLOCK io_status{};
  LARGE_INTEGER index{};
  constexpr int kFileInternalInformation = 6;
  if (query == nullptr || !GetFileInformationByHandleEx(file, FileBasicInfo, &basic, sizeof basic) ||
      !GetFileInformationByHandleEx(file, FileStandardInfo, &standard, sizeof standard) ||
      query(file, &io_status, &index, sizeof index, kFileInternalInformation) < 0) {
    return false;
  }
  const auto filetime = [](const LARGE_INTEGER& t) {
    return FILETIME{static_cast<DWORD>(t.QuadPart), static_cast<DWORD>(t.QuadPart >> 32)};
  };
  out->dwFileAttributes = basic.FileAttributes;
  out->ftCreationTime = filetime(basic.CreationTime);
  out->ftLastAccessTime = filetime(basic.LastAccessTime);
  out->ftLastWriteTime = filetime(basic.LastWriteTime);
  out->dwVolumeSerialNumber = static_cast<DWORD>(t_volume_serial);
  out->nFileSizeHigh = static_cast<DWORD>(standard.EndOfFile.QuadPart >> 32);
  out->nFileSizeLow = static_cast<DWORD>(standard.EndOfFile.QuadPart);
  out->nNumberOfLinks = standard.NumberOfLinks;
  out->nFileIndexHigh = static_cast<DWORD>(index.QuadPart >> 32);
  out->nFileIndexLow = static_cast<DWORD>(index.QuadPart);
  return true;
}

}  // namespace

LockFileVolumeHint::LockFileVolumeHint(std::uint64_t volume_serial) : previous_(t_volume_serial) {
  t_volume_serial = volume_serial;
}

LockFileVolumeHint::~LockFileVolumeHint() { t_volume_serial = previous_; }

}  // namespace nvrtc_cache::store::lmdb

extern "C" BOOL WINAPI nvrtc_cache_lock_file_information(HANDLE file, LPBY_HANDLE_FILE_INFORMATION out) {
  using nvrtc_cache::store::lmdb::t_volume_serial;
  if (out != nullptr && t_volume_serial != 0 && nvrtc_cache::store::lmdb::information_without_volume(file, out)) {
    return TRUE;
  }
  return GetFileInformationByHandle(file, out);
}

extern "C" HANDLE WINAPI nvrtc_cache_open_lock_mutex(DWORD access, BOOL inherit, LPCSTR name) {
  const HANDLE opened = OpenMutexA(access, inherit, name);
  if (opened != nullptr || GetLastError() != ERROR_FILE_NOT_FOUND) return opened;
  // No mutex of that name: its last holder closed it (lock_file_information_windows.h). It is made
  // again as LMDB's first process makes it: unowned, with a null DACL (every user of the lock file
  // may wait on it); CreateMutexEx opens instead the one another process may have made meanwhile.
  SECURITY_DESCRIPTOR everyone{};
  if (!InitializeSecurityDescriptor(&everyone, SECURITY_DESCRIPTOR_REVISION) ||
      !SetSecurityDescriptorDacl(&everyone, TRUE, nullptr, FALSE)) {
    return nullptr;
  }
  SECURITY_ATTRIBUTES attributes{sizeof attributes, &everyone, inherit};
  return CreateMutexExA(&attributes, name, 0, access);
}
