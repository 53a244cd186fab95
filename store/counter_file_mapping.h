// The counters file's mapping (store/counter_file.h), the part that differs between platforms:
// counter_file_posix.cc (open without following a link, mmap MAP_SHARED) and counter_file_windows.cc
// (CreateFileW without following a reparse point, a shared file mapping).
// Contract: map_counter_file opens `path` (creating it when `create`: mode 0600, 0660 when `shared`),
// makes sure it is a regular file of the user's (or, `shared`, of its group) whose size is
// CounterFile::kFileSize (sizing a new, empty one), and maps it shared and writable (read-only, with
// *reserved false, when the file cannot be opened for writing: a read-only mount); nullptr with
// *problem set when it cannot. *reserved says whether the filesystem holds real space for every
// page (POSIX: fallocate; a filesystem without it answers true, its faults are left to the guard):
// a file without is read, never counted into (a write to a hole of a full filesystem faults).
// Nothing else is touched; errno and the thread's last-error value are kept; never throws except
// std::bad_alloc. unmap_counter_file undoes one mapping.
#pragma once

#include <string>

namespace nvrtc_cache::store {

void* map_counter_file(const std::string& path, bool create, bool shared, bool* reserved, std::string* problem);
void unmap_counter_file(void* mapping);

}  // namespace nvrtc_cache::store
