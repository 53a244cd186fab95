// LinkInputs: everything a program gave nvJitLink that can change what a link returns (the options
// of nvJitLinkCreate, then each input in the order added: its type, its name and its bytes, a
// file's bytes as read when it was added), plus the identity of the nvJitLink library; and the key
// of a link, computed from them.
// Contract: plain value types and a pure function (no I/O); stable across processes and hosts for a
// given schema (pinned by golden vectors in tests/unit/link_key_test.cc); thread-safe.
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

struct LinkInput {
  std::int32_t type = 0;            // nvJitLinkInputType as given
  bool from_file = false;           // nvJitLinkAddFile (name is then the path as given)
  std::optional<std::string> name;  // nullopt: NULL
  std::string bytes;                // the data, or the file's content
};

struct LinkInputs {
  LibraryIdentity library;  // the nvJitLink library's
  std::vector<std::string> options;
  std::vector<LinkInput> inputs;
};

CacheKey compute_link_key(const LinkInputs& inputs);

}  // namespace nvrtc_cache::keying
