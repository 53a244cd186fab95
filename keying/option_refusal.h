// Why the options of a link or an NVVM compile keep it from being cached (libraries/nvjitlink/options.h,
// libraries/nvvm/options.h): the reason for the log, and whether it is a side effect (a known option
// whose effect is not captured, nvJitLink's -time) rather than an option the build does not know.
// Contract: a plain value type.
#pragma once

#include <string>

namespace nvrtc_cache::keying {

struct OptionRefusal {
  std::string why;
  bool side_effect = false;
};

}  // namespace nvrtc_cache::keying
