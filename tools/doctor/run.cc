#include "tools/doctor/run.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/commands.h"
#include "tools/doctor/real_libraries.h"

namespace nvrtc_cache::tools {
namespace {

constexpr int kDoctorRunSchemaVersion = 1;
constexpr const char* kReportHeader = "nvrtc-cache-report 1";

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    fields.push_back(line.substr(start, tab - start));
  fields.push_back(line.substr(start));
  return fields;
}

struct Child {
  int status = 0;
  bool started = false;
};

// CMD under `nvrtc-cache run`; with `quiet_stdout` its standard output goes to standard error (--json's
// output is the report alone).
Child run_under_cache(const std::vector<std::string>& command, bool proxy, const std::string& report_dir,
                      bool quiet_stdout) {
  std::vector<std::string> arguments;
  if (proxy) arguments.push_back("--proxy");
  arguments.push_back("--");
  arguments.insert(arguments.end(), command.begin(), command.end());
  std::vector<char*> argv;
  for (std::string& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return {};
  if (pid == 0) {
    ::setenv("NVRTC_CACHE_REPORT_DIR", report_dir.c_str(), 1);
    if (quiet_stdout) (void)::dup2(STDERR_FILENO, STDOUT_FILENO);
    std::fflush(nullptr);
    _exit(run_command(static_cast<int>(argv.size() - 1), argv.data()));
  }
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  Child child{0, true};
  while (::waitpid(pid, &child.status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  return child;
}

std::string how_it_ended(const Child& child) {
  if (!child.started) return "could not be started";
  if (WIFEXITED(child.status)) return fmt::format("exited {}", WEXITSTATUS(child.status));
  if (WIFSIGNALED(child.status)) return fmt::format("killed by signal {}", WTERMSIG(child.status));
  return "ended";
}

}  // namespace

std::vector<ReportedLibrary> read_call_reports(const std::string& directory) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, ReportedLibrary> merged;
  std::error_code error;
  for (const auto& file : std::filesystem::directory_iterator(directory, error)) {
    if (file.path().extension() != ".report") continue;
    std::ifstream in(file.path());
    std::string line;
    if (!std::getline(in, line) || line != kReportHeader) continue;
    while (std::getline(in, line)) {
      const std::vector<std::string> f = split_tabs(line);
      std::uint64_t calls = 0;
      if (f.size() != 5 || std::from_chars(f[4].data(), f[4].data() + f[4].size(), calls).ec != std::errc{}) continue;
      ReportedLibrary& r = merged[{f[0], f[1], f[2], f[3]}];
      r.library = f[0];
      r.path = f[1];
      r.version = f[2];
      r.build_id = f[3];
      r.calls += calls;
      if (calls > 0) ++r.processes;
    }
  }
  std::vector<ReportedLibrary> out;
  for (auto& [key, r] : merged) out.push_back(std::move(r));
  return out;
}

int doctor_run(const std::vector<std::string>& command, bool proxy, bool json) {
  if (command.empty()) {
    std::fputs("usage: nvrtc-cache doctor [--proxy] [--json] -- CMD [ARGS...]\n", stderr);
    return 2;
  }
  std::error_code error;
  std::string base = std::filesystem::temp_directory_path(error).string();
  if (error || base.empty()) base = "/tmp";
  std::string pattern = base + "/nvrtc-cache-doctor-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "nvrtc-cache: cannot create a report directory in %s: %s\n", base.c_str(),
                 std::strerror(errno));
    return 1;
  }
  const std::string report_dir = pattern;
  const Child child = run_under_cache(command, proxy, report_dir, json);
  const std::vector<ReportedLibrary> libraries = read_call_reports(report_dir);
  std::filesystem::remove_all(report_dir, error);
  std::uint64_t reached = 0;
  for (const ReportedLibrary& r : libraries) reached += r.calls;
  // The NVRTC `nvrtc-cache doctor` itself finds, to say when the command's differs.
  const auto found = real_library(shim::interpose::RealLibrary::kNvrtc);
  const std::string doctor_nvrtc = found ? found->path : "";
  std::string joined;
  for (const std::string& a : command) joined += (joined.empty() ? "" : " ") + a;
  if (json) {
    nlohmann::ordered_json j;
    j["schema_version"] = kDoctorRunSchemaVersion;
    j["command"] = command;
    j["mode"] = proxy ? "proxy" : "preload";
    j["exit_code"] = child.started && WIFEXITED(child.status) ? nlohmann::ordered_json(WEXITSTATUS(child.status))
                                                              : nlohmann::ordered_json();
    j["signal"] = child.started && WIFSIGNALED(child.status) ? nlohmann::ordered_json(WTERMSIG(child.status))
                                                             : nlohmann::ordered_json();
    j["reached"] = reached > 0;
    j["compiles_reached"] = reached;
    j["libraries"] = nlohmann::ordered_json::array();
    for (const ReportedLibrary& r : libraries) {
      j["libraries"].push_back({{"library", r.library},
                                {"path", r.path},
                                {"version", r.version},
                                {"build_id", r.build_id},
                                {"compiles", r.calls},
                                {"processes", r.processes}});
    }
    j["doctor_nvrtc"] = doctor_nvrtc;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("command        {} ({}, {})\n", joined, proxy ? "run --proxy" : "run", how_it_ended(child));
    for (const ReportedLibrary& r : libraries) {
      fmt::print("{:<14} {} ({}{}): {} compile{} reached the cache in {} process{}\n", r.library, r.path, r.version,
                 r.build_id.empty() ? std::string(", no build-id") : ", build-id " + r.build_id, r.calls,
                 r.calls == 1 ? "" : "s", r.processes, r.processes == 1 ? "" : "es");
      std::error_code same_error;
      if (r.library == "NVRTC" && !doctor_nvrtc.empty() &&
          !std::filesystem::equivalent(r.path, doctor_nvrtc, same_error)) {
        fmt::print("{:<14} note: `nvrtc-cache doctor` alone checks {}, not this one\n", "", doctor_nvrtc);
      }
    }
    if (reached > 0) {
      fmt::print("verdict        ok: {} compile{} reached the cache\n", reached, reached == 1 ? "" : "s");
    } else {
      fmt::print(
          "verdict        FAIL: no NVRTC compile, nvJitLink link or NVVM compile of the command reached the "
          "cache{}\n",
          proxy ? " (the proxy is reached only by loads by name: try without --proxy)"
                : " (a program that compiles nothing, a static NVRTC, a setuid program, or LD_PRELOAD "
                  "cleared on the way: try `nvrtc-cache run --proxy`)");
    }
  }
  return reached > 0 ? 0 : 1;
}

}  // namespace nvrtc_cache::tools
