#include "platform/error_state.h"

#include <windows.h>

namespace nvrtc_cache::platform {

int error_state() { return static_cast<int>(GetLastError()); }
void set_error_state(int value) { SetLastError(static_cast<DWORD>(value)); }

}  // namespace nvrtc_cache::platform
