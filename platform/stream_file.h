// Whole files by path, streamed: the archives of `nvrtc-cache export` and `import` (tools/commands/archive_command.cc),
// which may be larger than memory. A file is created new (never over an existing one, so a partial
// archive is written beside its final name) and made durable before it replaces that name; or opened
// for reading, following links as the shell does; stdin and stdout as binary streams. And the glob
// `export --match` selects program names with, and the directories of a file:// destination made
// with exact modes.
// Implementations: stream_file_posix.cc (open O_CLOEXEC, read, write, fsync, rename(2), fnmatch(3),
// mkdir + chmod) and stream_file_windows.cc (CreateFileW on the UTF-8 path made UTF-16, ReadFile,
// WriteFile, FlushFileBuffers, MoveFileExW with MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH,
// PathMatchSpecExW: `*` and `?`, case-insensitive as Windows names are; CreateDirectoryW, no modes).
// Contract: single-threaded use per file; never throws except std::bad_alloc; every call answers 0 or
// an errno value; the CLI's only (the shim and the proxy never stream files).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace nvrtc_cache::platform {

using StreamFile = std::intptr_t;
inline constexpr StreamFile kNoStream = -1;

// Opens `path` for reading.
int open_stream_for_reading(const std::string& path, StreamFile* file);
// Creates `path` for writing: EEXIST when anything is there already.
int create_stream_file(const std::string& path, StreamFile* file);
// stdin and stdout, binary; closing them is a no-op.
StreamFile standard_input_stream();
StreamFile standard_output_stream();
// Reads up to `size` bytes: *got 0 at the end.
int read_stream(StreamFile file, void* buffer, std::size_t size, std::size_t* got);
// Writes all `size` bytes.
int write_stream(StreamFile file, const void* data, std::size_t size);
// The file's size (0 for a pipe or where unknown).
std::uint64_t stream_size(StreamFile file);
// Makes what was written durable (fsync; FlushFileBuffers).
int sync_stream(StreamFile file);
// Closes it: 0, or the error the system reports for the writes.
int close_stream(StreamFile file);
// Renames `from` over `to` (replacing it), durably where the system can say so.
int replace_file(const std::string& from, const std::string& to);
int remove_file(const std::string& path);
// Whether `name` matches the glob `pattern` (POSIX: fnmatch(3) without flags; Windows: see above).
bool glob_matches(const std::string& pattern, const std::string& name);
// Creates `path` and the directories above it that are missing, each with `mode` exactly (not
// narrowed by the umask; Windows: no modes). 0 when it exists already; else the errno of the first
// directory that could not be made, and *failed names it.
int make_directories(const std::string& path, mode_t mode, std::string* failed);

}  // namespace nvrtc_cache::platform
