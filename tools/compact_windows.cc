// Compaction (tools/compact.h) on Windows: not done. LMDB on Windows holds lock.mdb with LockFileEx
// (per handle, so this process could not take it exclusively and then open the environment) and a
// mapped data.mdb cannot be renamed over; the file's free pages are still reused by later entries.
#include "tools/compact.h"

namespace nvrtc_cache::tools {

Compaction compact_store(const std::string& directory) {
  Compaction result;
  result.problem = "compaction is not available on Windows (" + directory +
                   "\\data.mdb was not rewritten; its free pages are still reused by later entries)";
  return result;
}

}  // namespace nvrtc_cache::tools
