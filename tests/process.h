// Test helpers: running a program in a child process with a controlled environment, and temporary
// directories. Contract: test-only; blocking; not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nvrtc_cache::testing {

struct ProcessResult {
  int exit_code = -1;  // -signal if killed by a signal
  std::string out;
  std::string err;
};

// Runs argv with this process's environment minus LD_PRELOAD and NVRTC_CACHE_*, plus `env`
// (a nullopt value removes the variable), in `cwd` if given.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::optional<std::string>>& env = {},
                          const std::string& cwd = "");

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace nvrtc_cache::testing
