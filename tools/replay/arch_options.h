// Architecture rewriting for `nvrtc-cache replay`: the options a recorded program would pass on
// another GPU. The architecture option is found in each of NVRTC's spellings (`-arch=X`, `-arch X`,
// `--gpu-architecture=X`, `--gpu-architecture X`) and only its value changes, keeping the spelling,
// the option's position and the recorded kind (`sm_`, `compute_`, `lto_`), so the options are
// exactly those the app itself passes there.
// Contract: pure; no I/O; thread-safe; never throws except std::bad_alloc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvrtc_cache::tools {

// A requested architecture ("sm_90", "sm_90a", "compute_100f", "90") as its number and suffix
// ("90", "90a", "100f"), or nullopt when it is not one.
std::optional<std::string> parse_arch_request(std::string_view text);

// `options` with every architecture value rewritten to `arch` (from parse_arch_request), or
// nullopt when they name no architecture, or one that is not `<kind>_<number>[suffix]` (e.g.
// `-arch=all`, `-arch=native`): such a program is compiled only as recorded.
std::optional<std::vector<std::string>> options_for_arch(const std::vector<std::string>& options,
                                                         std::string_view arch);

}  // namespace nvrtc_cache::tools
