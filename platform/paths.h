// Path syntax: what separates a path's components, which paths are absolute, and where a path's
// root ends. POSIX: "/" only. Windows: "\" and "/", absolute paths "C:\x", "C:/x" and "\\server\share"
// (or "\\?\..."), and a bare drive "C:" naming that drive's current directory.
// Contract: pure functions of their arguments (no filesystem access, no environment); thread-safe;
// fork-safe; never throw except std::bad_alloc (root_of). Implementations, chosen by the build:
// paths_posix.cc and paths_windows.cc.
#pragma once

#include <string>
#include <string_view>

namespace nvrtc_cache::platform {

// The separator paths are built with ('/'; Windows '\').
char path_separator();
// Every character that separates components ("/"; Windows "/\").
std::string_view path_separators();
bool is_path_separator(char c);

// Whether `path` is absolute: "/x"; on Windows "C:\x", "C:/x", or two separators ("\\server\share").
// An empty path is not.
bool is_absolute_path(std::string_view path);

// The path a file:// URL's path names: itself ("/shared/dir"); on Windows "/C:/dir" is "C:/dir" (and
// "//server/share" stays a UNC path).
std::string path_of_file_url(std::string_view url_path);

// The root of an absolute path with a separator after it ("/"; Windows "C:\" or "\\server\share\"),
// or "" for a relative one.
std::string root_of(const std::string& path);

// Windows' drive forms, which POSIX lacks (false there): a drive's root "C:\" (or "C:/"), kept whole
// when trailing separators are trimmed; and a bare "C:", which names the drive's current directory
// (a separator makes it the root).
bool is_drive_root(std::string_view path);
bool is_bare_drive(std::string_view path);

// `name` under `base`: one separator between them unless `base` ends in one; `name` alone when `base`
// is empty.
inline std::string joined_path(const std::string& base, std::string_view name) {
  if (base.empty()) return std::string(name);
  std::string out = base;
  if (!is_path_separator(base.back())) out += '/';
  out += name;
  return out;
}

// The device that reads as an empty file ("/dev/null"; Windows "NUL").
const char* null_device();

}  // namespace nvrtc_cache::platform
