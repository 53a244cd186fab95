// LMDB's mappings watched (store/lmdb/watched_mappings.h) on Windows: nothing to watch (a mapped file
// cannot be truncated there), so none is ever lost.
#include "store/lmdb/watched_mappings.h"

namespace nvrtc_cache::store::lmdb {

std::uint64_t lmdb_mappings_lost() { return 0; }

}  // namespace nvrtc_cache::store::lmdb
