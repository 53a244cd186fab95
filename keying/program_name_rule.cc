#include "keying/program_name_rule.h"

namespace nvrtc_cache::keying {

bool program_directory_can_be_left_out(const std::optional<std::string>& program_name, WorkingDirectoryUse use) {
  return use == WorkingDirectoryUse::kNone && program_name && program_name->starts_with('/') &&
         !program_file_name(*program_name).empty();
}

std::string_view program_directory(std::string_view program_name) {
  const std::size_t slash = program_name.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : program_name.substr(0, slash + 1);
}

std::string_view program_file_name(std::string_view program_name) {
  return program_name.substr(program_directory(program_name).size());
}

}  // namespace nvrtc_cache::keying
