// A shared object posing as an NVRTC 13.0 (SONAME libnvrtc.so.13, exports nvrtcVersion) whose
// constructor creates the file NVRTC_CACHE_TEST_MARKER names: the replay tests' evidence of whether a
// library was loaded (tests/integration/record_replay_test.cc). It stands for a library planted by another user.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace {

__attribute__((constructor)) void leave_marker() {
  const char* path = std::getenv("NVRTC_CACHE_TEST_MARKER");
  if (path == nullptr) return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  (void)!::write(fd, "loaded\n", 7);
  ::close(fd);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int nvrtcVersion(int* major, int* minor) {
  *major = 13;
  *minor = 0;
  return 0;
}
