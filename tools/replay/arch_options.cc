#include "tools/replay/arch_options.h"

#include <cctype>

namespace nvrtc_cache::tools {
namespace {

constexpr std::string_view kSpellings[] = {"-arch", "--gpu-architecture"};

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// "90", "90a", "100f": digits, then at most one letter suffix (a or f).
bool is_number_and_suffix(std::string_view s) {
  std::size_t digits = 0;
  while (digits < s.size() && is_digit(s[digits])) ++digits;
  if (digits == 0 || digits > 4) return false;
  const std::string_view suffix = s.substr(digits);
  return suffix.empty() || suffix == "a" || suffix == "f";
}

// `value` ("sm_80", "compute_90a") with its number and suffix replaced, or nullopt.
std::optional<std::string> rewrite_value(std::string_view value, std::string_view arch) {
  const std::size_t underscore = value.find('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  const std::string_view kind = value.substr(0, underscore);
  if (kind != "sm" && kind != "compute" && kind != "lto") return std::nullopt;
  if (!is_number_and_suffix(value.substr(underscore + 1))) return std::nullopt;
  return std::string(kind) + "_" + std::string(arch);
}

}  // namespace

std::optional<std::string> parse_arch_request(std::string_view text) {
  for (std::string_view kind : {"sm_", "compute_", "lto_"}) {
    if (text.starts_with(kind)) {
      text.remove_prefix(kind.size());
      break;
    }
  }
  if (!is_number_and_suffix(text)) return std::nullopt;
  return std::string(text);
}

std::optional<std::vector<std::string>> options_for_arch(const std::vector<std::string>& options,
                                                         std::string_view arch) {
  std::vector<std::string> out = options;
  bool found = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::string_view spelling : kSpellings) {
      const std::string_view option = out[i];
      std::string* value = nullptr;
      std::string joined_prefix;
      if (option == spelling && i + 1 < out.size()) {
        value = &out[i + 1];
      } else if (option.starts_with(spelling) && option.size() > spelling.size() && option[spelling.size()] == '=') {
        joined_prefix = std::string(spelling) + "=";
      } else {
        continue;
      }
      const std::string_view current = value ? std::string_view(*value) : option.substr(joined_prefix.size());
      std::optional<std::string> rewritten = rewrite_value(current, arch);
      if (!rewritten) return std::nullopt;
      if (value) {
        *value = std::move(*rewritten);
        ++i;  // the value is not an option
      } else {
        out[i] = joined_prefix + *rewritten;
      }
      found = true;
      break;
    }
  }
  if (!found) return std::nullopt;
  return out;
}

}  // namespace nvrtc_cache::tools
