#include "libraries/nvjitlink/function_names.h"

#include <string_view>

#include "libraries/nvjitlink/real_nvjitlink.h"

namespace nvrtc_cache::shim::interpose {
namespace {

constexpr std::string_view kPrivate = "__nvJitLinkAPI";
constexpr std::string_view kVersionFunction = "nvJitLinkVersion";

// The table's functions nvJitLink 12.x does not have.
constexpr std::string_view kSince13_1[] = {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args)
#define NVJITLINK_API_SINCE_13_1(kind, ret, name, params, args) #name,
#include "libraries/nvjitlink/api.def"
#undef NVJITLINK_API_SINCE_13_1
#undef HANDLE_LIBRARY_API
};

const NvJitLinkMajor* major_of(int major) {
  for (const NvJitLinkMajor& known : kNvJitLinkMajors) {
    if (known.major == major) return &known;
  }
  return nullptr;
}

// The release suffix `name` ends with ("_12_9"), or "" when it has none a known major has.
std::string_view release_suffix_of(std::string_view name) {
  if (!name.starts_with("__")) return {};
  for (const NvJitLinkMajor& known : kNvJitLinkMajors) {
    for (std::string_view suffix : known.suffixes) {
      if (name.size() > 2 + suffix.size() && name.ends_with(suffix)) return suffix;
    }
  }
  return {};
}

}  // namespace

bool is_known_nvjitlink_function(const std::string& name, int major) {
  if (name == kVersionFunction || name == kPrivate) return true;
  const std::string plain = plain_nvjitlink_name(name.c_str());
  const NvJitLinkMajor* known = major_of(major);
  if (plain.empty() || known == nullptr) return false;
  if (major < 13) {
    for (std::string_view newer : kSince13_1) {
      if (plain == newer) return false;
    }
  }
  const std::string_view suffix = release_suffix_of(name);
  if (suffix.empty()) return true;
  for (std::string_view own : known->suffixes) {
    if (suffix == own) return true;
  }
  return false;
}

std::string plain_nvjitlink_name(const char* name) {
  if (name == nullptr) return {};
  std::string_view n = name;
  if (n.starts_with("__")) {
    const std::string_view suffix = release_suffix_of(n);
    if (suffix.empty()) return {};
    n = n.substr(2, n.size() - 2 - suffix.size());
  }
#define HANDLE_LIBRARY_API(kind, ret, fn, params, args) \
  if (n == #fn) return #fn;
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
  return {};
}

}  // namespace nvrtc_cache::shim::interpose
