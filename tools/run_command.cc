#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tools/commands.h"

namespace nvrtc_cache::tools {
namespace {

// The shim sits at ../lib/libnvrtc-cache.so relative to this executable, in the install tree and
// in the build tree alike.
std::string shim_path() {
  if (const char* explicit_path = std::getenv("NVRTC_CACHE_SHIM"); explicit_path && *explicit_path) {
    return explicit_path;
  }
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  std::string dir(self);
  dir.resize(dir.rfind('/'));
  dir.resize(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
  return dir + "/lib/libnvrtc-cache.so";
}

}  // namespace

int run_command(int argc, char** argv) {
  int first = 0;
  if (first < argc && std::strcmp(argv[first], "--") == 0) ++first;
  if (first >= argc) {
    std::fputs("usage: nvrtc-cache run [--] CMD [ARGS...]\n", stderr);
    return 2;
  }
  const std::string shim = shim_path();
  struct stat st;
  if (shim.empty() || ::stat(shim.c_str(), &st) != 0) {
    std::fprintf(stderr, "nvrtc-cache: cannot find the shim library (looked for %s); set NVRTC_CACHE_SHIM\n",
                 shim.c_str());
    return 127;
  }
  std::string preload = shim;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing) {
    preload += ":";
    preload += existing;
  }
  setenv("LD_PRELOAD", preload.c_str(), 1);
  execvp(argv[first], argv + first);
  std::fprintf(stderr, "nvrtc-cache: cannot run %s: %s\n", argv[first], std::strerror(errno));
  return errno == ENOENT ? 127 : 126;
}

}  // namespace nvrtc_cache::tools
