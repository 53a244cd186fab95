#include "keying/cache_key.h"

#include <blake2.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "keying/framed_hasher.h"
#include "keying/program_name_rule.h"

namespace nvrtc_cache::keying {

namespace {

CacheKey key_of(const ProgramInputs& inputs, bool program_directory_in_key, bool any_directory = false) {
  FramedHasher h;
  h.field("schema", kKeySchema);
  if (any_directory) h.field("marker", "working directory");
  h.count_field("nvrtc.major", static_cast<std::uint64_t>(inputs.library.major));
  h.count_field("nvrtc.minor", static_cast<std::uint64_t>(inputs.library.minor));
  h.field("nvrtc.build_id", inputs.library.build_id);
  if (program_directory_in_key || !inputs.name) {
    h.count_field("name.present", inputs.name.has_value() ? 1 : 0);
    h.field("name", inputs.name.value_or(""));
  } else {  // a different label: no key without the directory equals one with it
    h.field("name.file", program_file_name(*inputs.name));
  }
  h.field("source", inputs.source);
  h.count_field("headers", inputs.headers.size());
  for (const auto& header : inputs.headers) {
    h.field("header.name", header.include_name);
    h.field("header.content", header.content);
  }
  h.count_field("options", inputs.options.size());
  for (const auto& option : inputs.options) h.field("option", option);
  h.count_field("name_expressions", inputs.name_expressions.size());
  for (const auto& expression : inputs.name_expressions) h.field("name_expression", expression);
  if (any_directory) {
    h.count_field("cwd.any", 1);
  } else if (inputs.working_directory_use == WorkingDirectoryUse::kAlways) {
    h.field("cwd", inputs.working_directory);
    h.count_field("pwd.present", inputs.pwd_variable.has_value() ? 1 : 0);
    h.field("pwd", inputs.pwd_variable.value_or(""));
  } else {  // a different label: no key without the directory equals one with it
    h.count_field("cwd.unused", static_cast<std::uint64_t>(inputs.working_directory_use));
  }
  return h.finish();
}

}  // namespace

CacheKey compute_key(const ProgramInputs& inputs) { return key_of(inputs, inputs.program_directory_in_key); }

CacheKey compute_key_with_program_directory(const ProgramInputs& inputs) { return key_of(inputs, true); }

CacheKey compute_key_without_working_directory(const ProgramInputs& inputs) { return key_of(inputs, true, true); }

CacheKey compute_output_digest(std::string_view bytes) {
  FramedHasher h;
  h.field("schema", kKeySchema);
  h.field("marker", "output");
  h.field("output", bytes);
  return h.finish();
}

std::string to_hex(const CacheKey& key) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(key.size() * 2);
  for (std::uint8_t byte : key) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xf]);
  }
  return hex;
}

}  // namespace nvrtc_cache::keying
