#include "keying/nvvm_options.h"

#include <string_view>

namespace nvrtc_cache::keying {
namespace {

constexpr std::string_view kValued[] = {
    "-opt=", "-arch=", "-ftz=", "-prec-sqrt=", "-prec-div=", "-fma=", "-jump-table-density="};
constexpr std::string_view kFlags[] = {"-g", "-gen-lto"};

bool known(std::string_view option) {
  for (std::string_view flag : kFlags) {
    if (option == flag) return true;
  }
  for (std::string_view prefix : kValued) {
    if (option.size() > prefix.size() && option.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> nvvm_options_not_cacheable(std::span<const std::string> options) {
  for (const std::string& option : options) {
    if (!known(option)) return "option " + option + " is not one this build knows";
  }
  return std::nullopt;
}

}  // namespace nvrtc_cache::keying
