#include "platform/process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

extern char** environ;

namespace nvrtc_cache::platform {
namespace {

class PosixChild final : public ChildProcess {
 public:
  PosixChild(pid_t pid, int out) : pid_(pid), out_(out) {}
  ~PosixChild() override {
    if (out_ >= 0) close(out_);
    if (pid_ > 0) (void)wait();
  }
  std::size_t read(char* buffer, std::size_t size) override {
    for (;;) {
      const ssize_t n = ::read(out_, buffer, size);
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno != EINTR) return 0;
    }
  }
  int wait() override {
    if (pid_ <= 0) return exit_code_;
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0) {
      if (errno != EINTR) {
        status = -1;
        break;
      }
    }
    pid_ = -1;
    exit_code_ = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }

 private:
  pid_t pid_;
  int out_;
  int exit_code_ = -1;
};

}  // namespace

std::unique_ptr<ChildProcess> ChildProcess::start(const std::vector<std::string>& argv,
                                                  const std::vector<EnvironmentChange>& environment,
                                                  std::string* error) {
  if (argv.empty()) {
    *error = "no program to start";
    return nullptr;
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The child's environment, made here: between fork and exec only async-signal-safe calls.
  std::vector<std::string> variables;
  for (char** v = environ; *v != nullptr; ++v) {
    const std::string_view entry(*v);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool changed = false;
    for (const auto& change : environment) changed = changed || change.first == name;
    if (!changed) variables.emplace_back(entry);
  }
  for (const auto& [name, value] : environment) {
    if (value) variables.push_back(name + "=" + *value);
  }
  std::vector<char*> envp;
  for (std::string& v : variables) envp.push_back(v.data());
  envp.push_back(nullptr);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    *error = std::string("cannot make a pipe: ") + std::strerror(errno);
    return nullptr;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  const int fork_errno = errno;
  close(pipe_fds[1]);
  if (pid < 0) {
    close(pipe_fds[0]);
    *error = std::string("cannot start a process: ") + std::strerror(fork_errno);
    return nullptr;
  }
  return std::make_unique<PosixChild>(pid, pipe_fds[0]);
}

std::string make_temporary_directory(const std::string& prefix, std::string* error) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/" + prefix + "XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    *error = "cannot create a directory like " + pattern + ": " + std::strerror(errno);
    return {};
  }
  return pattern;
}

std::string change_directory(const std::string& path) {
  if (chdir(path.c_str()) == 0) return {};
  return "cannot enter " + path + ": " + std::strerror(errno);
}

}  // namespace nvrtc_cache::platform
