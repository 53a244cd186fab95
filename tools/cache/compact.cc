// What a compaction did, as `clear --compact` and `evict --compact` say it (tools/commands.h); the
// compaction itself is compact_posix.cc's (compact_windows.cc: none).
#include "tools/cache/compact.h"

#include <fmt/format.h>

#include "tools/commands.h"
#include "tools/cache/entries.h"

namespace nvrtc_cache::tools {

int report_compaction(const Compaction& c) {
  if (!c.problem.empty()) {
    fmt::print(stderr, "nvrtc-cache: {}\n", c.problem);
    return 1;
  }
  if (c.done)
    fmt::print("compacted the store's file from {} to {}\n", human_bytes(c.bytes_before), human_bytes(c.bytes_after));
  return 0;
}

}  // namespace nvrtc_cache::tools
