#include "shim/lifecycle/working_directory_markers.h"

#include <cstring>
#include <vector>

#include "direct/manifest.h"

namespace nvrtc_cache::shim {
namespace {

constexpr std::size_t kKeyBytes = std::tuple_size_v<keying::CacheKey>;

bool markable(std::string_view directory) {
  return !directory.empty() && directory.size() <= direct::kMaxMarkedDirectory;
}

std::optional<std::string> get_marker(store::Store& store, const std::string& key) {
  try {
    return store.get(key);
  } catch (...) {
    return std::nullopt;
  }
}

void put_marker(store::Store& store, const std::string& key, std::string_view value) {
  try {
    (void)store.put_local(key, value);  // a hint: a failure changes no result
  } catch (...) {
  }
}

// An output marker's value: the compile's key in any directory, then the directory.
struct OutputMarker {
  keying::CacheKey key_in_any_directory;
  std::string directory;
};

std::optional<OutputMarker> decode_output_marker(const std::optional<std::string>& value) {
  if (!value || value->size() <= kKeyBytes || !markable(std::string_view(*value).substr(kKeyBytes))) {
    return std::nullopt;
  }
  OutputMarker m;
  std::memcpy(m.key_in_any_directory.data(), value->data(), kKeyBytes);
  m.directory = value->substr(kKeyBytes);
  return m;
}

std::string output_marker_key(std::string_view output) {
  return direct::working_directory_marker_key(keying::compute_output_digest(output));
}

}  // namespace

void mark_compile_directory(store::Store& store, const keying::ProgramInputs& inputs, std::string_view lto_ir,
                            std::string_view cubin, std::string_view ptx) {
  if (inputs.working_directory_use != keying::WorkingDirectoryUse::kAlways || !markable(inputs.working_directory)) {
    return;
  }
  const keying::CacheKey any = keying::compute_key_without_working_directory(inputs);
  put_marker(store, direct::working_directory_marker_key(any), inputs.working_directory);
  const std::string value = std::string(keying::as_bytes(any)) + inputs.working_directory;
  for (std::string_view output : {lto_ir, cubin, ptx}) {
    if (!output.empty()) put_marker(store, output_marker_key(output), value);
  }
}

std::optional<std::string> compiled_in_another_directory(store::Store& store, const keying::ProgramInputs& inputs) {
  if (inputs.working_directory_use != keying::WorkingDirectoryUse::kAlways) return std::nullopt;
  std::optional<std::string> there =
      get_marker(store, direct::working_directory_marker_key(keying::compute_key_without_working_directory(inputs)));
  if (!there || !markable(*there) || *there == inputs.working_directory) return std::nullopt;
  return there;
}

std::optional<InputsInAnyDirectory> inputs_in_any_directory(store::Store& store, const keying::HandleInputs& inputs,
                                                            std::string_view schema) {
  std::vector<std::optional<keying::CacheKey>> stand_ins(inputs.inputs.size());
  std::optional<std::string> directory;
  for (std::size_t i = 0; i < inputs.inputs.size(); ++i) {
    if (inputs.inputs[i].bytes.empty()) continue;
    std::optional<OutputMarker> marker =
        decode_output_marker(get_marker(store, output_marker_key(inputs.inputs[i].bytes)));
    if (!marker) continue;
    stand_ins[i] = marker->key_in_any_directory;
    if (!directory) directory = std::move(marker->directory);
  }
  if (!directory) return std::nullopt;
  return InputsInAnyDirectory{keying::compute_handle_key_in_any_directory(inputs, schema, stand_ins),
                              std::move(*directory)};
}

void mark_link_directory(store::Store& store, const InputsInAnyDirectory& link) {
  if (markable(link.directory)) put_marker(store, direct::working_directory_marker_key(link.key), link.directory);
}

std::optional<std::string> linked_from_another_directory(store::Store& store, const InputsInAnyDirectory& link) {
  std::optional<std::string> there = get_marker(store, direct::working_directory_marker_key(link.key));
  if (!there || !markable(*there) || *there == link.directory) return std::nullopt;
  return there;
}

}  // namespace nvrtc_cache::shim
