#include "libraries/nvjitlink/options.h"

#include <string_view>

namespace nvrtc_cache::keying {
namespace {

// A release of nvJitLink as major * 100 + minor (12.5: 1205).
constexpr int link_release(int major, int minor) { return major * 100 + minor; }

// One option of nvJitLink.h's list: a flag, or a prefix taking a value after '=' ("-arch=sm_90"),
// documented from release `since` to release `until` (inclusive).
struct KnownLinkOption {
  std::string_view spelling;
  bool valued;
  int since = link_release(12, 0);
  int until = link_release(13, 99);
};

// Every nvJitLink.h from 12.0 to 13.0 (13.1 to 13.5 keep 13.0's list): 12.3 adds the split-compile
// options and -jump-table-density and no longer documents -Xnvvm, 12.5 adds -no-cache, 12.6
// -device-stack-protector.
constexpr KnownLinkOption kKnownLinkOptions[] = {
    {"-arch=", true},
    {"-maxrregcount=", true},
    {"-ftz=", true},
    {"-prec-div=", true},
    {"-prec-sqrt=", true},
    {"-fma=", true},
    {"-kernels-used=", true},
    {"-variables-used=", true},
    {"-Xptxas=", true},
    {"-Xnvvm=", true, link_release(12, 0), link_release(12, 2)},
    {"-split-compile=", true, link_release(12, 3)},
    {"-split-compile-extended=", true, link_release(12, 3)},
    {"-jump-table-density=", true, link_release(12, 3)},
    {"-verbose", false},
    {"-lto", false},
    {"-ptx", false},
    {"-g", false},
    {"-lineinfo", false},
    {"-optimize-unused-variables", false},
    {"-no-cache", false, link_release(12, 5)},
    {"-device-stack-protector", false, link_release(12, 6)},
};

bool known_link_option(std::string_view option, int at) {
  for (const KnownLinkOption& known : kKnownLinkOptions) {
    if (at < known.since || at > known.until) continue;
    if (known.valued ? option.size() > known.spelling.size() && option.starts_with(known.spelling)
                     : option == known.spelling) {
      return true;
    }
  }
  // -O<N>: "Only 0 and 3 are accepted" (nvJitLink rejects the others itself).
  return option.size() == 3 && option.starts_with("-O") && option[2] >= '0' && option[2] <= '9';
}

}  // namespace

std::optional<OptionRefusal> link_options_not_cacheable(std::span<const std::string> options, int major, int minor) {
  const bool known_major = major == 12 || major == 13;
  for (const std::string& option : options) {
    if (option == "-time") return OptionRefusal{"option -time writes the link's timings into its info log", true};
    if (!known_major || !known_link_option(option, link_release(major, minor))) {
      return OptionRefusal{"option " + option + " is not one this build knows for nvJitLink " + std::to_string(major) +
                               "." + std::to_string(minor),
                           false};
    }
  }
  return std::nullopt;
}

}  // namespace nvrtc_cache::keying
