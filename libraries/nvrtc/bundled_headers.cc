#include "libraries/nvrtc/bundled_headers.h"

#include <charconv>

#include "libraries/nvrtc/options.h"

namespace nvrtc_cache::shim {
namespace {

// The integer value of `key=` on a line of the marker, or nullopt.
std::optional<int> marker_field(std::string_view marker, std::string_view key) {
  for (std::size_t at = 0; at < marker.size();) {
    const std::size_t end = std::min(marker.find('\n', at), marker.size());
    std::string_view line = marker.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != '=') continue;
    line.remove_prefix(key.size() + 1);
    int value = 0;
    const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (ec != std::errc() || ptr != line.data() + line.size()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> bundled_header_directories(int num_options, const char* const* options,
                                                    const std::optional<std::string>& append_flags,
                                                    const keying::LibraryIdentity& library) {
  constexpr std::string_view kOption = "use-bundled-headers";
  bool named = append_flags && append_flags->find(kOption) != std::string::npos;
  for (int i = 0; i < num_options && !named; ++i) {
    named = std::string_view(options[i]).find(kOption) != std::string_view::npos;
  }
  if (!named) return {};
  const std::vector<std::string_view> given(options, options + num_options);
  return keying::scan_compile_options(given,
                                      append_flags ? std::optional<std::string_view>(*append_flags) : std::nullopt,
                                      keying::NvrtcVersion{library.major, library.minor})
      .bundled_headers;
}

bool bundled_headers_marked(const std::string& dir, int major, int minor, platform::Env& env) {
  std::string marker;
  if (env.read_file(dir + "/" + std::string(kBundledHeadersMarker), 64 * 1024, &marker) != 0) return false;
  return marker_field(marker, "format_version") == 1 && marker_field(marker, "cuda_major") == major &&
         marker_field(marker, "cuda_minor") == minor;
}

std::optional<std::string> ensure_bundled_headers(const interpose::RealNvrtc& real,
                                                  std::span<const std::string> directories) {
  for (const std::string& dir : directories) {
    if (bundled_headers_marked(dir, real.identity.major, real.identity.minor)) continue;
    if (real.nvrtcInstallBundledHeaders == nullptr) return "this NVRTC cannot install its bundled headers";
    const char* error_log = nullptr;
    const nvrtcResult rc = real.nvrtcInstallBundledHeaders(dir.c_str(), 0, &error_log);
    if (rc != NVRTC_SUCCESS) {
      return "its bundled headers could not be installed into " + dir + " (NVRTC returned " + std::to_string(rc) +
             (error_log ? std::string(": ") + error_log : std::string()) + ")";
    }
  }
  return std::nullopt;
}

bool is_bundled_headers_bookkeeping(std::string_view path, std::span<const std::string> directories) {
  for (const std::string& dir : directories) {
    if (path.size() <= dir.size() + 1 || !path.starts_with(dir) || path[dir.size()] != '/') continue;
    const std::string_view name = path.substr(dir.size() + 1);
    if (name == kBundledHeadersMarker || name == kBundledHeadersLock) return true;
  }
  return false;
}

}  // namespace nvrtc_cache::shim
