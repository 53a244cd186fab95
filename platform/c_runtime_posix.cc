// The C runtime's reentrant calls (platform/c_runtime.h) on glibc.
#include "platform/c_runtime.h"

#include <string.h>

namespace nvrtc_cache::platform {

std::string error_message(int errno_value) {
  char buffer[128];
  return strerror_r(errno_value, buffer, sizeof buffer);  // GNU variant: returns the message
}

std::tm local_time(std::time_t time) {
  std::tm local{};
  localtime_r(&time, &local);
  return local;
}

}  // namespace nvrtc_cache::platform
