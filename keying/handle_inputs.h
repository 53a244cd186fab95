// HandleInputs: everything a program gave a handle-based JIT library that can change what its
// completing call returns — for nvJitLink the options of nvJitLinkCreate and each input in the order
// added (its type, name and bytes, a file's bytes as read when it was added); for libNVVM each
// module in order (lazy or not, name, bytes) and the options of nvvmCompileProgram — plus the
// identity of the library; and the key computed from them under the library's schema.
// Contract: plain value types and a pure function (no I/O); stable across processes and hosts for a
// given schema (pinned by golden vectors in tests/unit/handle_key_test.cc); thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keying/cache_key.h"
#include "keying/program_inputs.h"

namespace nvrtc_cache::keying {

inline constexpr std::string_view kLinkKeySchema = "nvrtc-cache/link-key/1";
inline constexpr std::string_view kNvvmKeySchema = "nvrtc-cache/nvvm-key/1";

struct HandleInput {
  std::int32_t type = 0;            // nvJitLinkInputType as given; libNVVM: 1 for a lazily added module
  bool from_file = false;           // nvJitLinkAddFile (name is then the path as given)
  std::optional<std::string> name;  // nullopt: NULL
  std::string bytes;                // the data, or the file's content
};

struct HandleInputs {
  LibraryIdentity library;
  std::vector<std::string> options;
  std::vector<HandleInput> inputs;
};

// The key of `inputs` under `schema` (kLinkKeySchema, kNvvmKeySchema): keys of two libraries never meet.
CacheKey compute_handle_key(const HandleInputs& inputs, std::string_view schema);
// The same with some inputs' bytes stood in for: input i by `stand_ins[i]` where that is set (a
// directory-free name of bytes that embed the working directory); `stand_ins` has one slot per input.
// Under a schema of its own (`schema` + "/any-directory"), so never equal to a key of real inputs.
CacheKey compute_handle_key_in_any_directory(const HandleInputs& inputs, std::string_view schema,
                                             const std::vector<std::optional<CacheKey>>& stand_ins);

}  // namespace nvrtc_cache::keying
