// Compaction (tools/cache/compact.h) on Windows: not done. LMDB on Windows holds lock.mdb with LockFileEx
// (per handle, so this process could not take it exclusively and then open the environment) and a
// mapped data.mdb cannot be renamed over; the file's free pages are still reused by later entries.
#include "tools/cache/compact.h"

#include <algorithm>

namespace nvrtc_cache::tools {

Compaction compact_store(const std::string& directory) {
  std::string shown = directory + "\\data.mdb";
  std::replace(shown.begin(), shown.end(), '/', '\\');
  Compaction result;
  result.problem = "compaction is not available on Windows (" + shown +
                   " was not rewritten; its free pages are still reused by later entries)";
  return result;
}

}  // namespace nvrtc_cache::tools
