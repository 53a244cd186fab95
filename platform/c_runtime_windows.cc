// The C runtime's reentrant calls (platform/c_runtime.h) on the Windows CRT.
#include "platform/c_runtime.h"

#include <string.h>

namespace nvrtc_cache::platform {

std::string error_message(int errno_value) {
  char buffer[128];
  return strerror_s(buffer, sizeof buffer, errno_value) == 0 ? buffer : "error " + std::to_string(errno_value);
}

std::tm local_time(std::time_t time) {
  std::tm local{};
  localtime_s(&local, &time);
  return local;
}

}  // namespace nvrtc_cache::platform
