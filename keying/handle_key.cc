#include "keying/framed_hasher.h"
#include "keying/handle_inputs.h"

namespace nvrtc_cache::keying {

namespace {

CacheKey handle_key_of(const HandleInputs& inputs, std::string_view schema,
                       const std::vector<std::optional<CacheKey>>* stand_ins) {
  FramedHasher h;
  if (stand_ins) {
    h.field("schema", std::string(schema) + "/any-directory");
  } else {
    h.field("schema", schema);
  }
  h.count_field("library.major", static_cast<std::uint64_t>(inputs.library.major));
  h.count_field("library.minor", static_cast<std::uint64_t>(inputs.library.minor));
  h.field("library.build_id", inputs.library.build_id);
  h.count_field("options", inputs.options.size());
  for (const auto& option : inputs.options) h.field("option", option);
  h.count_field("inputs", inputs.inputs.size());
  for (const auto& input : inputs.inputs) {
    h.count_field("input.type", static_cast<std::uint32_t>(input.type));
    h.count_field("input.from_file", input.from_file ? 1 : 0);
    h.count_field("input.name.present", input.name.has_value() ? 1 : 0);
    h.field("input.name", input.name.value_or(""));
    const std::size_t i = static_cast<std::size_t>(&input - inputs.inputs.data());
    if (stand_ins && i < stand_ins->size() && (*stand_ins)[i]) {
      h.field("input.stand_in", as_bytes(*(*stand_ins)[i]));
    } else {
      h.field("input.bytes", input.bytes);
    }
  }
  return h.finish();
}

}  // namespace

CacheKey compute_handle_key(const HandleInputs& inputs, std::string_view schema) {
  return handle_key_of(inputs, schema, nullptr);
}

CacheKey compute_handle_key_in_any_directory(const HandleInputs& inputs, std::string_view schema,
                                             const std::vector<std::optional<CacheKey>>& stand_ins) {
  return handle_key_of(inputs, schema, &stand_ins);
}

}  // namespace nvrtc_cache::keying
