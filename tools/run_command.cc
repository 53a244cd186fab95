#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <string>

#include "tools/commands.h"

namespace nvrtc_cache::tools {
namespace {

// The install prefix: this executable sits in <prefix>/bin, in the install tree and in the build
// tree alike.
std::string prefix() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  std::string dir(self);
  dir.resize(dir.rfind('/'));
  dir.resize(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
  return dir;
}

// Preload mode: <prefix>/lib/libnvrtc-cache.so. Proxy mode: the directory holding the stand-in
// libnvrtc.so.13.
std::string shim_path(bool proxy) {
  if (const char* explicit_path = std::getenv("NVRTC_CACHE_SHIM"); explicit_path && *explicit_path) {
    return explicit_path;
  }
  return prefix() + (proxy ? "/lib/nvrtc-cache/proxy/libnvrtc.so.13" : "/lib/libnvrtc-cache.so");
}

void prepend_to(const char* variable, const std::string& value, char separator) {
  std::string combined = value;
  if (const char* existing = std::getenv(variable); existing && *existing) {
    combined += separator;
    combined += existing;
  }
  setenv(variable, combined.c_str(), 1);
}

// The file execvp would run for `command` (PATH search), or "" if none.
std::string resolve_command(const char* command) {
  if (std::strchr(command, '/')) return command;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    std::string candidate = dirs.substr(start, end - start);
    candidate = (candidate.empty() ? "." : candidate) + "/" + command;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

}  // namespace

int run_command(int argc, char** argv) {
  int first = 0;
  bool proxy = false;
  if (first < argc && std::strcmp(argv[first], "--proxy") == 0) {
    proxy = true;
    ++first;
  }
  if (first < argc && std::strcmp(argv[first], "--") == 0) ++first;
  if (first >= argc) {
    std::fputs("usage: nvrtc-cache run [--proxy] [--] CMD [ARGS...]\n", stderr);
    return 2;
  }
  const std::string shim = shim_path(proxy);
  struct stat st;
  if (shim.empty() || ::stat(shim.c_str(), &st) != 0) {
    std::fprintf(stderr, "nvrtc-cache: cannot find the shim library (looked for %s); set NVRTC_CACHE_SHIM\n",
                 shim.c_str());
    return 127;
  }
  if (proxy) {
    // Loads of libnvrtc.so.13 by soname (linked programs, dlopen("libnvrtc.so.13")) find the proxy.
    prepend_to("LD_LIBRARY_PATH", shim.substr(0, shim.rfind('/')), ':');
  } else {
    prepend_to("LD_PRELOAD", shim, ':');
  }
  // The dynamic loader ignores LD_PRELOAD for setuid/setgid programs (secure-execution mode).
  const std::string program = resolve_command(argv[first]);
  if (!program.empty() && ::stat(program.c_str(), &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
    std::fprintf(stderr,
                 "nvrtc-cache: %s is setuid/setgid; the loader ignores LD_PRELOAD for it, so its NVRTC calls "
                 "will not be cached (its children that are not setuid are)\n",
                 program.c_str());
  }
  execvp(argv[first], argv + first);
  std::fprintf(stderr, "nvrtc-cache: cannot run %s: %s\n", argv[first], std::strerror(errno));
  return errno == ENOENT ? 127 : 126;
}

}  // namespace nvrtc_cache::tools
