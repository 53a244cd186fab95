// Path syntax (platform/paths.h) on Windows: "\" and "/" separate; "C:\x", "C:/x" and "\\server\share"
// (or "\\?\...") are absolute.
#include "platform/paths.h"

namespace nvrtc_cache::platform {

char path_separator() { return '\\'; }
std::string_view path_separators() { return "/\\"; }
bool is_path_separator(char c) { return c == '/' || c == '\\'; }

bool is_absolute_path(std::string_view path) {
  const bool drive = path.size() >= 3 && path[1] == ':' && is_path_separator(path[2]);
  const bool unc = path.size() >= 2 && is_path_separator(path[0]) && is_path_separator(path[1]);
  return drive || unc;
}

std::string path_of_file_url(std::string_view url_path) {
  // "/C:/dir" -> "C:/dir"; anything else as it is.
  if (url_path.size() >= 3 && url_path[0] == '/' && url_path[2] == ':') url_path.remove_prefix(1);
  return std::string(url_path);
}

std::string root_of(const std::string& path) {
  if (path.size() >= 2 && path[1] == ':') return path.substr(0, 2) + "\\";
  if (path.size() >= 2 && is_path_separator(path[0]) && is_path_separator(path[1])) {
    const std::string_view separators = path_separators();
    std::size_t end = path.find_first_of(separators, 2);                          // after the server
    if (end != std::string::npos) end = path.find_first_of(separators, end + 1);  // after the share
    return (end == std::string::npos ? path : path.substr(0, end)) + "\\";
  }
  return {};
}

bool is_drive_root(std::string_view path) { return path.size() == 3 && path[1] == ':'; }
bool is_bare_drive(std::string_view path) { return path.size() == 2 && path[1] == ':'; }

const char* null_device() { return "NUL"; }

}  // namespace nvrtc_cache::platform
