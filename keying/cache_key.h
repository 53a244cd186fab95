// CacheKey: the 32-byte BLAKE2b digest of a program's inputs over labelled, length-framed fields.
// Contract: pure function of ProgramInputs; stable across processes and hosts for a given schema
// version (pinned by golden vectors in tests/unit/keying_test.cc); thread-safe; no I/O.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "keying/program_inputs.h"

namespace nvrtc_cache::keying {

inline constexpr std::string_view kKeySchema = "nvrtc-cache/key/1";

using CacheKey = std::array<std::uint8_t, 32>;

CacheKey compute_key(const ProgramInputs& inputs);
// The key as if inputs.program_directory_in_key were true (keying/program_name_rule.h).
CacheKey compute_key_with_program_directory(const ProgramInputs& inputs);
// The key of the same inputs in any working directory (what a working-directory marker is stored
// under: direct/manifest.h); never a compile's key (its label differs from every compile's).
CacheKey compute_key_without_working_directory(const ProgramInputs& inputs);
// The digest of one output's bytes (an LTO-IR, a cubin), under a label no key uses: what an output's
// working-directory marker is stored under (shim/lifecycle/working_directory_markers.h).
CacheKey compute_output_digest(std::string_view bytes);

std::string to_hex(const CacheKey& key);
inline std::string_view as_bytes(const CacheKey& key) {
  return {reinterpret_cast<const char*>(key.data()), key.size()};
}

}  // namespace nvrtc_cache::keying
