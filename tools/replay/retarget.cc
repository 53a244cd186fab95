#include "tools/replay/retarget.h"

#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

namespace nvrtc_cache::tools {
namespace {

// Code for one architecture: only a recorded producer can give it for another.
bool is_single_architecture_code(std::int32_t type) {
  return type == NVJITLINK_INPUT_CUBIN || type == NVJITLINK_INPUT_PTX || type == NVJITLINK_INPUT_LTOIR ||
         type == NVJITLINK_INPUT_ANY;
}

// A container nvJitLink picks the architecture's code from (a fatbin, a host object or library, an index).
bool is_container(std::int32_t type) {
  return type == NVJITLINK_INPUT_FATBIN || type == NVJITLINK_INPUT_OBJECT || type == NVJITLINK_INPUT_LIBRARY ||
         type == NVJITLINK_INPUT_INDEX;
}

std::optional<std::string> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

std::string input_label(const keying::HandleInput& input, std::size_t index) {
  return fmt::format("input {} ({} '{}')", index, link_input_type_name(input.type), input.name.value_or("(no name)"));
}

}  // namespace

std::string output_digest(std::string_view bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

std::string link_input_type_name(std::int32_t type) {
  switch (type) {
    case NVJITLINK_INPUT_CUBIN:
      return "CUBIN";
    case NVJITLINK_INPUT_PTX:
      return "PTX";
    case NVJITLINK_INPUT_LTOIR:
      return "LTO-IR";
    case NVJITLINK_INPUT_FATBIN:
      return "FATBIN";
    case NVJITLINK_INPUT_OBJECT:
      return "OBJECT";
    case NVJITLINK_INPUT_LIBRARY:
      return "LIBRARY";
    case NVJITLINK_INPUT_INDEX:
      return "INDEX";
    case NVJITLINK_INPUT_ANY:
      return "ANY";
    default:
      return fmt::format("type {}", type);
  }
}

bool RetargetDirectory::write(const std::string& name, std::string_view bytes) const {
  const std::string path = directory_ + "/" + name;
  const std::string temporary = fmt::format("{}.{}.tmp", path, static_cast<long>(::getpid()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

void RetargetDirectory::add_producer(std::string_view as_recorded, const std::string& producer) {
  (void)write(output_digest(as_recorded) + ".producer", producer);
}

void RetargetDirectory::add_output(std::string_view as_recorded, const std::string& arch, std::string_view retargeted) {
  (void)write(output_digest(as_recorded) + ".sm" + arch, retargeted);
}

RetargetLookup RetargetDirectory::lookup() const {
  const std::string dir = directory_;
  RetargetLookup lookup;
  lookup.producer = [dir](const std::string& digest) { return read_whole_file(dir + "/" + digest + ".producer"); };
  lookup.retargeted = [dir](const std::string& digest, const std::string& arch) {
    return read_whole_file(dir + "/" + digest + ".sm" + arch);
  };
  return lookup;
}

RetargetedInputs link_inputs_for_arch(const std::vector<keying::HandleInput>& recorded, const std::string& arch,
                                      const RetargetLookup& lookup) {
  RetargetedInputs out;
  out.inputs = recorded;
  for (std::size_t i = 0; i < out.inputs.size(); ++i) {
    keying::HandleInput& input = out.inputs[i];
    const std::string digest = output_digest(input.bytes);
    const std::optional<std::string> producer = lookup.producer ? lookup.producer(digest) : std::nullopt;
    if (producer) {
      std::optional<std::string> retargeted = lookup.retargeted ? lookup.retargeted(digest, arch) : std::nullopt;
      if (!retargeted) {
        out.skipped = fmt::format(
            "{} is the output of {}, which has no output for {} (it names no architecture, or "
            "its replay for it failed)",
            input_label(input, i), *producer, arch);
        return out;
      }
      if (input.from_file && *retargeted != input.bytes) {
        out.skipped = fmt::format(
            "{} is a file, the output of {}: its path is part of the link's key and replay "
            "writes no file there, so it cannot be retargeted",
            input_label(input, i), *producer);
        return out;
      }
      input.bytes = std::move(*retargeted);
      ++out.replaced;
    } else if (is_single_architecture_code(input.type) || !is_container(input.type)) {
      out.skipped = fmt::format(
          "{} is code for one architecture that no recorded compile produced, so it cannot "
          "be retargeted",
          input_label(input, i));
      return out;
    }
  }
  return out;
}

}  // namespace nvrtc_cache::tools
