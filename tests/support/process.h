// Test helpers: running a program in a child process with a controlled environment, and temporary
// directories. Contract: test-only; blocking; not thread-safe. A child (and its process group) still
// running at its deadline is killed and the current test fails: a hang costs one test, not the run.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nvrtc_cache::testing {

struct ProcessResult {
  int exit_code = -1;      // -signal if killed by a signal
  bool timed_out = false;  // killed at the deadline (the test has already been failed)
  std::string out;
  std::string err;
};

// Runs argv with this process's environment minus LD_PRELOAD and NVRTC_CACHE_*, plus `env`
// (a nullopt value removes the variable), in `cwd` if given, for at most `timeout_seconds`. A program
// built for the test's own machine runs behind $NVRTC_CACHE_TEST_RUNNER when that is set (an emulator).
inline constexpr int kDefaultProcessTimeoutSeconds = 300;
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::optional<std::string>>& env = {},
                          const std::string& cwd = "", int timeout_seconds = kDefaultProcessTimeoutSeconds);

// The path of this test executable (what /proc/self/exe links to). Re-run the test binary through
// this, never through "/proc/self/exe" itself: behind an emulator the child's /proc/self/exe is the
// emulator, not the test.
std::string this_executable();

// The whole contents of the file at `path` ("" if it cannot be read).
std::string read_file(const std::string& path);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace nvrtc_cache::testing
