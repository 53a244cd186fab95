#include "platform/error_state.h"

#include <cerrno>

namespace nvrtc_cache::platform {

int error_state() { return errno; }
void set_error_state(int value) { errno = value; }

}  // namespace nvrtc_cache::platform
