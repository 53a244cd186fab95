#include "keying/link_options.h"

#include <string_view>

namespace nvrtc_cache::keying {
namespace {

// Options that take a value after '=' (nvJitLink.h: "-arch=sm_90").
constexpr std::string_view kValued[] = {"-arch=",
                                        "-maxrregcount=",
                                        "-ftz=",
                                        "-prec-div=",
                                        "-prec-sqrt=",
                                        "-fma=",
                                        "-kernels-used=",
                                        "-variables-used=",
                                        "-Xptxas=",
                                        "-split-compile=",
                                        "-split-compile-extended=",
                                        "-jump-table-density="};
constexpr std::string_view kFlags[] = {"-verbose",  "-lto",
                                       "-ptx",      "-g",
                                       "-lineinfo", "-optimize-unused-variables",
                                       "-no-cache", "-device-stack-protector"};

bool known(std::string_view option) {
  for (std::string_view flag : kFlags) {
    if (option == flag) return true;
  }
  for (std::string_view prefix : kValued) {
    if (option.size() > prefix.size() && option.starts_with(prefix)) return true;
  }
  // -O<N>: "Only 0 and 3 are accepted" (nvJitLink rejects the others itself).
  return option.size() == 3 && option.starts_with("-O") && option[2] >= '0' && option[2] <= '9';
}

}  // namespace

std::optional<std::string> link_options_not_cacheable(std::span<const std::string> options) {
  for (const std::string& option : options) {
    if (option == "-time") return "option -time writes the link's timings into its info log";
    if (!known(option)) return "option " + option + " is not one this build knows";
  }
  return std::nullopt;
}

}  // namespace nvrtc_cache::keying
