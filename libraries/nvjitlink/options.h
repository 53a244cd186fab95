// The nvJitLink options the cache knows (nvJitLink.h's list, per release: 12.0 to 12.9 and 13.0, whose
// list 13.1 to 13.5 keep) and which of them keep a link from being cached: an option the nvJitLink.h of
// the linking library's release does not document (it could add an output or a side effect the shim
// does not capture), and -time, which asks for this link's timings (its info log is nothing
// else). -verbose and -Xptxas=-v are cached: their info log holds ptxas's "Compile time = ... ms" line,
// served as the stored link measured it (one of nvJitLink's own answers, as for NVRTC's -Xptxas -v).
// Contract: pure; no I/O; thread-safe; never throws except std::bad_alloc.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "keying/option_refusal.h"

namespace nvrtc_cache::keying {

// Why a link with these options (nvJitLinkCreate's, in order) by nvJitLink `major`.`minor` must not be
// cached, or nullopt. A major this build does not know (not 12 or 13) caches no option at all.
std::optional<OptionRefusal> link_options_not_cacheable(std::span<const std::string> options, int major, int minor);

}  // namespace nvrtc_cache::keying
