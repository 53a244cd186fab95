// Regular files by name in a directory the Env opened (platform/env.h's open_directory_at), for the
// file:// shared tier (store/remote/file_tier.cc): opened without following a symbolic link (or, on
// Windows, a reparse point), read at an offset, created new (never an existing file, nor a link's
// target) and written, then closed. A file is a descriptor (POSIX) or a HANDLE's value (Windows);
// stat_open_file (platform/env.h) stats it. And random bytes for new file names.
// Implementations: file_at_posix.cc (openat O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, pread, write) and
// file_at_windows.cc (CreateFileW with FILE_FLAG_OPEN_REPARSE_POINT on the directory handle's current
// path, shared for read, write and delete, so an entry being read can still be replaced).
// Contract: thread-safe; never throws; every call answers 0 or an errno value (ENOENT: missing;
// ELOOP: a link); errno is not kept (the tier keeps it), the thread's last-error value is (Windows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nvrtc_cache::platform {

using FileHandle = std::intptr_t;
inline constexpr FileHandle kNoFile = -1;

// Opens `name` in `dir` for reading (a link is refused; a FIFO never blocks the open).
int open_file_at(int dir, const std::string& name, FileHandle* file);
// Creates `name` in `dir` for writing: EEXIST when anything is there already.
int create_file_at(int dir, const std::string& name, FileHandle* file);
// Reads up to `size` bytes at `offset`: *got 0 at the end.
int read_file_chunk(FileHandle file, void* buffer, std::size_t size, std::uint64_t offset, std::size_t* got);
// Writes up to `size` bytes at the file's position: *wrote >= 1 on success.
int write_file_chunk(FileHandle file, const void* data, std::size_t size, std::size_t* wrote);
// Closes the file: 0, or the error a network filesystem reports for the writes.
int close_file(FileHandle file);

// Fills `out` with random bytes from the system; false where it cannot (Windows: never asked, the
// caller's fallback is used).
bool random_bytes(void* out, std::size_t size);

}  // namespace nvrtc_cache::platform
