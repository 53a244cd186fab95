// The CLI's worker processes and their surroundings (`nvrtc-cache replay`, tools/replay/replay.h): a child
// started with changes to this process's environment whose standard output this process reads, a
// private temporary directory, and the working directory. POSIX: fork/exec, a pipe, mkdtemp, chdir.
// Windows: CreateProcessW with an environment block and an anonymous pipe (the only handles it
// inherits: the pipe's end, and this process's standard input and error), a directory created with a
// random name under GetTempPathW, SetCurrentDirectoryW. Paths and arguments are UTF-8.
// Contract: a ChildProcess is used by one thread at a time (distinct children by distinct threads);
// start() leaves this process's own environment unchanged; nothing here throws except std::bad_alloc;
// failures are returned with a sentence saying why.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nvrtc_cache::platform {

// A variable the child gets (a value) or does not get (nullopt), on top of this process's environment.
using EnvironmentChange = std::pair<std::string, std::optional<std::string>>;

class ChildProcess {
 public:
  // `argv[0]` is the program's path. Null (with *error set) when it could not be started.
  static std::unique_ptr<ChildProcess> start(const std::vector<std::string>& argv,
                                             const std::vector<EnvironmentChange>& environment, std::string* error);
  virtual ~ChildProcess() = default;
  // Blocks until some of the child's standard output arrives: how many bytes, 0 at its end (or on an
  // error reading it).
  virtual std::size_t read(char* buffer, std::size_t size) = 0;
  // Waits for the child to end: its exit code, or -1 when it was killed (by a signal).
  virtual int wait() = 0;
};

// A new directory only this user can use, named `prefix` and a random suffix, under the temporary
// directory ($TMPDIR or /tmp; Windows: GetTempPathW); "" (with *error set) when none could be made.
std::string make_temporary_directory(const std::string& prefix, std::string* error);

// Makes `path` the working directory; "" or why it could not.
std::string change_directory(const std::string& path);

}  // namespace nvrtc_cache::platform
