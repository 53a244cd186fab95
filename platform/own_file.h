// Opening files that hold the user's own data — the log file, the compile record, configuration and
// secret files — so that no path another user prepared can divert, capture or stall them: never
// through a symbolic link, never blocking on a FIFO or device (opened non-blocking, then required to
// be a regular file), and, for files written, never one another user owns.
// Contract: thread-safe; fork: none of its own (descriptors are close-on-exec); preserves errno;
// never throws except std::bad_alloc (read_regular_file).
// Implementations, chosen by the build: own_file_posix.cc as above; own_file_windows.cc opens with
// the CRT (no owner to check: the files live under the user's profile) and reads through the Env,
// saying nothing about why a file could not be used (`why` stays empty); it appends with a handle
// of its own (CreateFileW, never following a reparse point).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nvrtc_cache::platform {

// Opens `path` to append to it: created 0600 if missing, or an existing regular file owned by this
// user. Returns the descriptor (close-on-exec, blocking writes), or -1 with `why` (if given) saying
// what was wrong: "is a symbolic link", "is not a regular file", "is owned by another user (uid N)",
// or the system's error.
int open_own_file_for_append(const std::string& path, std::string* why = nullptr);

// Appends `bytes` to the file at `path` (opened as open_own_file_for_append() opens it) as one piece:
// written while holding an exclusive lock on the file (flock; LockFileEx on Windows), and cut back
// to where it began if a write fails, so pieces appended by concurrent processes never interleave
// or tear. Returns "" or why it could not. The file is closed before returning.
std::string append_whole_locked(const std::string& path, std::string_view bytes);

// The bytes of the regular file at `path` (symbolic links followed: configuration files are often
// links), at most `max_bytes`. nullopt when it cannot be used, with `why` (if given): empty when the
// file does not exist, else "is not a regular file", "is larger than N bytes", or the system's error.
// `mode` (if given) gets the mode of the file read.
std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes, std::string* why = nullptr,
                                             unsigned* mode = nullptr);

// Replaces the file at `path` with `content` as one step: the directories leading to it are created
// (0700) where missing, `content` is written to a new file of a random name beside it (created
// exclusively, never through a link someone prepared; 0600), flushed to disk, then renamed over
// `path` (Windows: MoveFileEx, replacing it). False with `why` (the system's error) when it was not
// done; `path` is then untouched and the new file removed.
bool replace_own_file(const std::string& path, const std::string& content, std::string* why = nullptr);

}  // namespace nvrtc_cache::platform
