// Path syntax (platform/paths.h) on POSIX: "/" separates, "/" starts an absolute path.
#include "platform/paths.h"

namespace nvrtc_cache::platform {

char path_separator() { return '/'; }
std::string_view path_separators() { return "/"; }
bool is_path_separator(char c) { return c == '/'; }

bool is_absolute_path(std::string_view path) { return !path.empty() && path.front() == '/'; }

std::string path_of_file_url(std::string_view url_path) { return std::string(url_path); }

std::string root_of(const std::string& path) { return is_absolute_path(path) ? "/" : ""; }

bool is_drive_root(std::string_view) { return false; }  // "/" is one character: nothing to keep
bool is_bare_drive(std::string_view) { return false; }

const char* null_device() { return "/dev/null"; }

}  // namespace nvrtc_cache::platform
