#include "tests/support/process.h"

#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace nvrtc_cache::testing {
namespace {

std::vector<std::string> child_environment(const std::map<std::string, std::optional<std::string>>& env) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if (name == "LD_PRELOAD" || name.rfind("NVRTC_CACHE_", 0) == 0) continue;
    vars[name] = entry.substr(eq + 1);
  }
  for (const auto& [name, value] : env) {
    if (value)
      vars[name] = *value;
    else
      vars.erase(name);
  }
  std::vector<std::string> out;
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

using Clock = std::chrono::steady_clock;

// Reads both pipes until they close; false if the deadline passed first.
bool drain(int out_fd, int err_fd, std::string& out, std::string& err, Clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      for (pollfd& p : fds) {
        if (p.fd >= 0) close(p.fd);
      }
      return false;
    }
    const int ready = poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? out : err).append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  return true;
}

// Waits for the child until the deadline; false if it was still running then.
bool wait_until(pid_t pid, int& status, Clock::time_point deadline) {
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) return true;
    if (Clock::now() >= deadline) return false;
    usleep(2000);
  }
}

#if defined(__x86_64__)
constexpr std::uint16_t kOwnMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr std::uint16_t kOwnMachine = EM_AARCH64;
#endif

// Whether `path` is an ELF file built for the machine this test was built for.
bool built_for_own_machine(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  unsigned char header[EI_NIDENT + 4] = {};
  if (!file.read(reinterpret_cast<char*>(header), sizeof header)) return false;
  if (std::memcmp(header, ELFMAG, SELFMAG) != 0) return false;
  std::uint16_t machine = 0;
  std::memcpy(&machine, header + EI_NIDENT + 2, sizeof machine);  // e_machine, after e_type
  return machine == kOwnMachine;
}

// NVRTC_CACHE_TEST_RUNNER (e.g. "qemu-aarch64-static -L /usr/aarch64-linux-gnu"): words run in front of
// a program built for this test's own machine, so a cross-built suite runs its children under an
// emulator where the kernel has no binfmt_misc entry for them. Host programs (/bin/sh) run as they are.
std::vector<std::string> with_runner(const std::vector<std::string>& argv) {
  const char* runner = std::getenv("NVRTC_CACHE_TEST_RUNNER");
  if (runner == nullptr || runner[0] == '\0' || argv.empty() || !built_for_own_machine(argv[0])) return argv;
  std::vector<std::string> out;
  std::istringstream words(runner);
  for (std::string word; words >> word;) out.push_back(word);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::string this_executable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string("/proc/self/exe");
}

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::optional<std::string>>& env, const std::string& cwd,
                          int timeout_seconds) {
  const std::vector<std::string> envs = child_environment(env);
  const std::vector<std::string> command = with_runner(argv);
  std::vector<char*> c_argv, c_env;
  for (const auto& a : command) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  for (const auto& e : envs) c_env.push_back(const_cast<char*>(e.c_str()));
  c_env.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so a timeout kills its descendants too
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    execve(c_argv[0], c_argv.data(), c_env.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also here: whichever runs first
  close(out_pipe[1]);
  close(err_pipe[1]);
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_seconds);
  ProcessResult result;
  const bool drained = drain(out_pipe[0], err_pipe[0], result.out, result.err, deadline);
  int status = 0;
  if (!drained || !wait_until(pid, status, deadline)) {
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
    result.timed_out = true;
    ADD_FAILURE() << argv[0] << " still running after " << timeout_seconds << " s; killed";
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return result;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "nvrtc-cache-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

}  // namespace nvrtc_cache::testing
