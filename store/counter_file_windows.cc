// The counters file's mapping on Windows (store/counter_file_mapping.h): opened without following a
// reparse point (a link is refused), shared with every other process for reading, writing and
// deletion (a store moved aside keeps its counters), and mapped with a shared section, so a count is
// in the file the moment it is made, as on POSIX. The cache directory was checked as the user's
// (store/cache_directory.h: on Windows its ACL says whose it is), so the file's owner is not
// checked.
#include <windows.h>

#include "platform/windows/last_error.h"
#include "platform/windows/wide.h"
#include "store/counter_file.h"
#include "store/counter_file_mapping.h"

namespace nvrtc_cache::store {

void* map_counter_file(const std::string& path, bool create, bool shared, bool* reserved, std::string* problem) {
  (void)shared;  // no mode bits: the directory's ACL is inherited
  // A file extended by a section is allocated (not sparse); a mapped file cannot be truncated.
  *reserved = true;
  const platform::windows::LastErrorKept last_error;
  constexpr std::size_t kFileSize = CounterFile::kFileSize;
  const HANDLE file =
      CreateFileW(platform::windows::to_wide(path).c_str(), GENERIC_READ | GENERIC_WRITE,
                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, create ? OPEN_ALWAYS : OPEN_EXISTING,
                  FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (file == INVALID_HANDLE_VALUE) {
    *problem = path + ": cannot open it (error " + std::to_string(GetLastError()) + ")";
    return nullptr;
  }
  // (Not GetFileInformationByHandle: the volume's serial number it asks for is a round trip to the
  // mount manager under Wine, a millisecond of every first hit.)
  FILE_ATTRIBUTE_TAG_INFO tag{};
  FILE_STANDARD_INFO standard{};
  bool usable = GetFileInformationByHandleEx(file, FileAttributeTagInfo, &tag, sizeof tag) &&
                GetFileInformationByHandleEx(file, FileStandardInfo, &standard, sizeof standard) &&
                !(tag.FileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT));
  const std::uint64_t size = static_cast<std::uint64_t>(standard.EndOfFile.QuadPart);
  if (!usable) {
    *problem = path + " is not a regular file";
  } else if (size != 0 && size != kFileSize) {
    usable = false;
    *problem = path + " has a size no counters file has";
  }
  void* view = nullptr;
  if (usable) {
    // A section larger than an empty file extends it to the section's size (zeros), as ftruncate
    // does; two processes doing so at once agree.
    const HANDLE section = CreateFileMappingW(file, nullptr, PAGE_READWRITE, 0, static_cast<DWORD>(kFileSize), nullptr);
    if (section != nullptr) {
      view = MapViewOfFile(section, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, kFileSize);
      CloseHandle(section);  // the view keeps it
    }
    if (view == nullptr) *problem = path + ": cannot map it (error " + std::to_string(GetLastError()) + ")";
  }
  CloseHandle(file);
  return view;
}

void unmap_counter_file(void* mapping) {
  const platform::windows::LastErrorKept last_error;
  UnmapViewOfFile(mapping);
}

}  // namespace nvrtc_cache::store
