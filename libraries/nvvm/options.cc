#include "libraries/nvvm/options.h"

#include <string_view>

namespace nvrtc_cache::keying {
namespace {

constexpr std::string_view kNvvmValued[] = {
    "-opt=", "-arch=", "-ftz=", "-prec-sqrt=", "-prec-div=", "-fma=", "-jump-table-density="};
constexpr std::string_view kNvvmFlags[] = {"-g", "-gen-lto"};

bool known_nvvm_option(std::string_view option) {
  for (std::string_view flag : kNvvmFlags) {
    if (option == flag) return true;
  }
  for (std::string_view prefix : kNvvmValued) {
    if (option.size() > prefix.size() && option.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace

std::optional<OptionRefusal> nvvm_options_not_cacheable(std::span<const std::string> options) {
  for (const std::string& option : options) {
    if (!known_nvvm_option(option)) return OptionRefusal{"option " + option + " is not one this build knows", false};
  }
  return std::nullopt;
}

}  // namespace nvrtc_cache::keying
