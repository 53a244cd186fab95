#include "keying/framed_hasher.h"
#include "keying/handle_inputs.h"

namespace nvrtc_cache::keying {

CacheKey compute_handle_key(const HandleInputs& inputs, std::string_view schema) {
  FramedHasher h;
  h.field("schema", schema);
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
    h.field("input.bytes", input.bytes);
  }
  return h.finish();
}

}  // namespace nvrtc_cache::keying
