// Retargeting a recorded link's inputs for `nvrtc-cache replay`: an input that is the output of a
// recorded compile (NVRTC's LTO-IR, PTX or CUBIN, libNVVM's result), matched by its bytes' digest,
// is replaced by that compile's output for the target architecture, so that a whole pipeline
// (NVRTC -dlto, then nvJitLink -lto) replays for another GPU. The compiles' workers leave their
// outputs in a directory (RetargetDirectory); the links' workers read them.
// An input that cannot be retargeted skips the link for that architecture, with the reason: code
// for one architecture with no recorded producer (CUBIN, PTX, LTO-IR, or ANY, whose kind nvJitLink
// guesses), a producer that has no output for that architecture, or a file added by path whose
// content would change (its path is part of the key). Containers (FATBIN, OBJECT, LIBRARY, INDEX: a
// prebuilt library) are passed as recorded.
// Contract: single-threaded per object; RetargetDirectory reads and writes files in its directory
// only (each written to a temporary name and renamed, so concurrent workers never see a partial
// file); the rest is pure; never throws except std::bad_alloc.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keying/handle_inputs.h"

namespace nvrtc_cache::tools {

// 32 hex digits: an XXH3-128 of `bytes`.
std::string output_digest(std::string_view bytes);

// Where a compile's outputs are found by digest.
struct RetargetLookup {
  // The compile that produced output `digest` as recorded ("program k.cu"), or nullopt.
  std::function<std::optional<std::string>(const std::string& digest)> producer;
  // Its output of the same kind for architecture `arch` (parse_arch_request() form), or nullopt.
  std::function<std::optional<std::string>(const std::string& digest, const std::string& arch)> retargeted;
};

class RetargetDirectory {
 public:
  explicit RetargetDirectory(std::string directory) : directory_(std::move(directory)) {}
  // Records that `producer` made `as_recorded`, and (when given) its output for `arch`.
  void add_producer(std::string_view as_recorded, const std::string& producer);
  void add_output(std::string_view as_recorded, const std::string& arch, std::string_view retargeted);
  RetargetLookup lookup() const;

 private:
  bool write(const std::string& name, std::string_view bytes) const;
  std::string directory_;
};

struct RetargetedInputs {
  std::vector<keying::HandleInput> inputs;
  std::size_t replaced = 0;  // inputs that are a recorded compile's output for `arch`
  std::string skipped;       // why the link cannot be replayed for `arch`, or ""
};
// A link's `recorded` inputs for architecture `arch` (parse_arch_request() form).
RetargetedInputs link_inputs_for_arch(const std::vector<keying::HandleInput>& recorded, const std::string& arch,
                                      const RetargetLookup& lookup);

// "LTO-IR", "CUBIN", ... for an nvJitLinkInputType.
std::string link_input_type_name(std::int32_t type);

}  // namespace nvrtc_cache::tools
