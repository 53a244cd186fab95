// The libNVVM options the cache knows (nvvm.h 13.0's list for nvvmCompileProgram) and which keep a
// compile from being cached: an option nvvm.h does not document (it could add an output or a side
// effect the shim does not capture). Every documented one only changes the result: keyed as given.
// Contract: pure; no I/O; thread-safe; never throws except std::bad_alloc.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "keying/option_refusal.h"

namespace nvrtc_cache::keying {

// Why an NVVM compile with these options (nvvmCompileProgram's, in order) must not be cached, or nullopt.
std::optional<OptionRefusal> nvvm_options_not_cacheable(std::span<const std::string> options);

}  // namespace nvrtc_cache::keying
