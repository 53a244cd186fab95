// The fork order (store/fork_locks.h) on Windows, which has no fork: participants are accepted and
// never called.
#include "store/fork_locks.h"

namespace nvrtc_cache::store {

void join_fork_order(ForkRank, ForkParticipant) {}

}  // namespace nvrtc_cache::store
