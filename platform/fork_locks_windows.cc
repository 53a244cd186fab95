// The fork order (platform/fork_locks.h) on Windows, which has no fork: participants are accepted and
// never called.
#include "platform/fork_locks.h"

namespace nvrtc_cache::platform {

void join_fork_order(ForkRank, ForkParticipant) {}

}  // namespace nvrtc_cache::platform
