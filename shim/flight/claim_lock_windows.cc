// Claim files on Windows (shim/flight/claim_lock.h): LockFileEx on a claim file's handle. A lock is the
// handle's: two handles on one file conflict even in one process, and the system drops it when the
// handle closes or its process ends (TerminateProcess, a crash); a holder unlocks before closing,
// as the documentation asks. Every handle is opened with FILE_SHARE_DELETE, so that a holder can
// remove its file while waiters have it open: with POSIX semantics where the volume has them (the
// name is gone at once, as on Linux), else the classic way (the file is delete-pending until its
// last handle closes; it cannot be opened meanwhile, which open() reports as `removing`). Whether a
// handle is still the file at its name: not delete-pending, and the same file id (FileIdInfo, one
// volume) as the file the name opens now. No reparse point is followed (FILE_FLAG_OPEN_REPARSE_POINT)
// and the claims directory must be a plain directory; it lives in the cache directory, which was
// checked as the user's (store/cache_directory.h). Handles are not inherited by child processes.
// No holder mark: a stopped holder is not told apart from a busy one (its waiters time out).
#include <windows.h>

#include <cstring>

#include "platform/windows/last_error.h"
#include "platform/windows/wide.h"
#include "shim/flight/claim_lock.h"

namespace nvrtc_cache::shim::claim_lock {
namespace {

HANDLE handle_of(FileHandle file) { return reinterpret_cast<HANDLE>(file); }

// FileDispositionInfoEx (Windows 10 1607), which mingw-w64 declares only for _WIN32_WINNT 0x0A000002.
constexpr auto kFileDispositionInfoEx = static_cast<FILE_INFO_BY_HANDLE_CLASS>(21);

std::string error_text(DWORD error) { return "error " + std::to_string(error); }

// The file's id on its volume, or false.
bool file_id(HANDLE handle, FILE_ID_INFO* id) {
  return GetFileInformationByHandleEx(handle, FileIdInfo, id, sizeof *id) != 0;
}

}  // namespace

struct Folder::State {
  std::wstring prefix;  // the directory's path and a backslash
};

Folder::Folder(const std::string& path, bool shared) : state_(std::make_unique<State>()) {
  (void)shared;  // no mode bits: the cache directory's ACL is inherited
  const platform::windows::LastErrorKept last_error;
  const std::wstring wide = platform::windows::to_wide(path);
  if (!CreateDirectoryW(wide.c_str(), nullptr) && GetLastError() != ERROR_ALREADY_EXISTS) {
    problem_ = "cannot create " + path + ": " + error_text(GetLastError());
    return;
  }
  const DWORD attributes = GetFileAttributesW(wide.c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES) {
    problem_ = "cannot read the attributes of " + path + ": " + error_text(GetLastError());
  } else if (!(attributes & FILE_ATTRIBUTE_DIRECTORY) || (attributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
    problem_ = path + " is not a directory";
  } else {
    state_->prefix = wide + L"\\";
  }
}

Folder::~Folder() = default;

bool Folder::intact() const { return problem_.empty(); }  // reached by its path every time

FileHandle Folder::open(const std::string& name, std::string* problem, bool* removing) const {
  const platform::windows::LastErrorKept last_error;
  *removing = false;
  const std::wstring path = state_->prefix + platform::windows::to_wide(name);
  const HANDLE file = CreateFileW(path.c_str(), GENERIC_READ | GENERIC_WRITE | DELETE,
                                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_ALWAYS,
                                  FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (file == INVALID_HANDLE_VALUE) {
    const DWORD error = GetLastError();
    *removing = error == ERROR_ACCESS_DENIED;  // what a delete-pending file answers
    *problem = "cannot open " + name + ": " + error_text(error);
    return kNoFile;
  }
  FILE_ATTRIBUTE_TAG_INFO tag{};
  if (!GetFileInformationByHandleEx(file, FileAttributeTagInfo, &tag, sizeof tag) ||
      (tag.FileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT))) {
    CloseHandle(file);
    *problem = name + " is not a regular file";
    return kNoFile;
  }
  return reinterpret_cast<FileHandle>(file);
}

bool Folder::still_named(FileHandle file, const std::string& name) const {
  const platform::windows::LastErrorKept last_error;
  FILE_STANDARD_INFO standard{};
  if (!GetFileInformationByHandleEx(handle_of(file), FileStandardInfo, &standard, sizeof standard) ||
      standard.DeletePending) {
    return false;
  }
  const std::wstring path = state_->prefix + platform::windows::to_wide(name);
  const HANDLE named =
      CreateFileW(path.c_str(), FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                  OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (named == INVALID_HANDLE_VALUE) return false;  // gone, or being removed
  FILE_ID_INFO opened_id{}, named_id{};
  const bool same = file_id(handle_of(file), &opened_id) && file_id(named, &named_id) &&
                    opened_id.VolumeSerialNumber == named_id.VolumeSerialNumber &&
                    std::memcmp(&opened_id.FileId, &named_id.FileId, sizeof opened_id.FileId) == 0;
  CloseHandle(named);
  return same;
}

void Folder::remove(FileHandle file, const std::string& name) const {
  const platform::windows::LastErrorKept last_error;
  if (!still_named(file, name)) return;  // never a file that replaced it
  FILE_DISPOSITION_INFO_EX posix{FILE_DISPOSITION_FLAG_DELETE | FILE_DISPOSITION_FLAG_POSIX_SEMANTICS};
  if (SetFileInformationByHandle(handle_of(file), kFileDispositionInfoEx, &posix, sizeof posix)) return;
  FILE_DISPOSITION_INFO classic{TRUE};
  (void)SetFileInformationByHandle(handle_of(file), FileDispositionInfo, &classic, sizeof classic);
}

LockTry try_lock(FileHandle file, std::string* problem) {
  const platform::windows::LastErrorKept last_error;
  OVERLAPPED whole_file{};
  if (LockFileEx(handle_of(file), LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, MAXDWORD, MAXDWORD,
                 &whole_file)) {
    return LockTry::kLocked;
  }
  const DWORD error = GetLastError();
  if (error == ERROR_LOCK_VIOLATION || error == ERROR_IO_PENDING || error == ERROR_SHARING_VIOLATION) {
    return LockTry::kBusy;
  }
  *problem = "cannot lock it: " + error_text(error);
  return LockTry::kFailed;
}

void close(FileHandle file) {
  const platform::windows::LastErrorKept last_error;
  OVERLAPPED whole_file{};
  (void)UnlockFileEx(handle_of(file), 0, MAXDWORD, MAXDWORD, &whole_file);  // fails where not locked: harmless
  CloseHandle(handle_of(file));
}

void mark_holder(FileHandle file) { (void)file; }

bool holder_stopped(FileHandle file) {
  (void)file;
  return false;
}

}  // namespace nvrtc_cache::shim::claim_lock
