// nvrtc-cache doctor: checks, in plain words, everything caching needs — the configuration, the
// shim and the proxy, the NVRTC libraries this machine shows, the cache directory (owner,
// permissions, filesystem, free space), the store's health, shared tiers, and a sample compile run
// twice through the shim in a scratch cache (intercepted? served? byte-identical?). Exit status 1
// when something blocks caching.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <nvrtc.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/config.h"
#include "core/settings.h"
#include "shim/interpose/library_identity.h"
#include "store/cache_directory.h"
#include "tools/commands.h"
#include "tools/doctor/doctor.h"
#include "tools/install_paths.h"
#include "tools/doctor/run.h"
#include "tools/doctor/real_libraries.h"
#include "tools/cache/open_cache.h"

extern char** environ;

namespace nvrtc_cache::tools {

namespace {

// Runs argv with this environment minus LD_PRELOAD and NVRTC_CACHE_*, plus `env`; captures stdout,
// and stderr into `stderr_path` ("": discarded).
SampleRun run_capturing(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                        const std::string& stderr_path = "") {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry = *e;
    if (entry.starts_with("LD_PRELOAD=") || entry.starts_with("NVRTC_CACHE_")) continue;
    environment.emplace_back(entry);
  }
  for (const auto& [name, value] : env) environment.push_back(name + "=" + value);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  int pipe_fds[2];
  SampleRun result;
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return result;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    const int err = stderr_path.empty() ? open("/dev/null", O_WRONLY)
                                        : open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (err >= 0) dup2(err, STDERR_FILENO);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  char buffer[4096];
  for (ssize_t n; pid > 0 && (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) {
    result.out.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

std::string filesystem_name(long type) {
  static const std::map<unsigned long, const char*> kNames = {
      {0xEF53, "ext2/3/4"},    {0x58465342, "xfs"},  {0x9123683E, "btrfs"},  {0x01021994, "tmpfs"},
      {0x794c7630, "overlay"}, {0x2fc12fc1, "zfs"},  {0x6969, "nfs"},        {0xFE534D42, "smb2"},
      {0xFF534D42, "cifs"},    {0x65735546, "fuse"}, {0x0BD00BD0, "lustre"}, {0x47504653, "gpfs"},
      {0x00c36400, "ceph"},    {0x01021997, "9p"},   {0x5346414F, "afs"}};
  const auto it = kNames.find(static_cast<unsigned long>(type));
  return it != kNames.end() ? it->second : fmt::format("type {:#x}", static_cast<unsigned long>(type));
}

// The file named `soname` in the first directory of LD_LIBRARY_PATH that has one ("" if none): what
// the loader tried first.
std::string first_on_library_path(const char* soname) {
  const char* path = std::getenv("LD_LIBRARY_PATH");
  if (path == nullptr) return "";
  std::string_view rest = path;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + soname;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0) return candidate;
  }
  return "";
}

struct NvrtcFound {
  std::optional<std::string> path;  // the library loaded
  bool broken = false;              // a library of that name exists but cannot be loaded
};

// The NVRTC at `soname` (a path the search found, or a soname the dynamic loader finds): path,
// version, build-id, where it was found; one line, the check's verdict. `required`: a library that
// cannot be loaded fails (else warns).
NvrtcFound check_nvrtc(DoctorReport& report, const char* soname, bool required, const std::string& found_via) {
  NvrtcFound found;
  void* handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    const std::string why = error ? error : "unknown error";
    const bool by_path = std::string_view(soname).find('/') != std::string_view::npos;
    const std::string first = by_path ? "" : first_on_library_path(soname);
    if (!by_path && first.empty() && why.starts_with(std::string(soname) + ": cannot open shared object file")) {
      return found;
    }
    found.broken = true;
    const std::string name = std::filesystem::path(soname).filename().string();
    report.add(
        required ? Severity::kFail : Severity::kWarn, "NVRTC",
        fmt::format("{} (found in {}) cannot be loaded: {}{}. Replace or remove it, or put the directory of "
                    "a working {} first on LD_LIBRARY_PATH; NVRTC_CACHE_REAL_NVRTC names the library for run "
                    "--proxy and doctor",
                    soname, found_via, why, first.empty() ? "" : " (the loader found " + first + " first)", name));
    return found;
  }
  std::string path = soname;
  if (link_map* map = nullptr; dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) path = map->l_name;
  auto version = reinterpret_cast<decltype(&nvrtcVersion)>(dlsym(handle, "nvrtcVersion"));
  int major = 0, minor = 0;
  if (version == nullptr || version(&major, &minor) != NVRTC_SUCCESS) {
    found.broken = true;
    report.add(required ? Severity::kFail : Severity::kWarn, "NVRTC",
               fmt::format("{} -> {} is not a working NVRTC (nvrtcVersion {}). Put the directory of a working {} "
                           "first on LD_LIBRARY_PATH, or remove this one",
                           soname, path, version ? "fails" : "is missing", soname));
    return found;
  }
  found.path = path;
  std::string build_id;
  for (const unsigned char c : shim::interpose::build_id_of_object_containing(reinterpret_cast<void*>(version))) {
    build_id += fmt::format("{:02x}", c);
  }
  // A newer NVRTC than this build knows: its compiles pass through uncached (libraries/nvrtc/real_nvrtc.h).
  std::vector<std::string> unknown;
  if (link_map* map = nullptr; dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr) {
    unknown = shim::interpose::unknown_nvrtc_functions(map);
  }
  if (!unknown.empty()) {
    report.add(Severity::kWarn, "NVRTC",
               fmt::format("NVRTC {}.{} ({}) exports functions this nvrtc-cache does not know ({}): its compiles "
                           "pass through uncached. A newer nvrtc-cache knows them",
                           major, minor, path, fmt::join(unknown, ", ")));
  } else {
    report.add(Severity::kOk, "NVRTC",
               fmt::format("{} (NVRTC {}.{}, build-id {}, found in {})", path, major, minor,
                           build_id.empty() ? "unknown" : build_id.substr(0, 16), found_via));
  }
  return found;
}

void check_cache_directory(DoctorReport& report, const core::Config& config) {
  const store::OpenedCache opened = store::open_cache(core::cache_policy(config));
  struct stat st;
  struct statfs fs;
  std::string described = opened.directory;
  if (::stat(opened.directory.c_str(), &st) == 0 && ::statfs(opened.directory.c_str(), &fs) == 0) {
    described = fmt::format("{} (owner uid {}{}, mode {:04o}, {})", opened.directory, st.st_uid,
                            st.st_uid == getuid() ? " = you" : "", st.st_mode & 07777, filesystem_name(fs.f_type));
  }
  std::optional<SpaceOnDisk> space;
  if (struct statvfs vfs; ::statvfs(opened.directory.c_str(), &vfs) == 0) {
    space = SpaceOnDisk{static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize,
                        static_cast<std::uint64_t>(vfs.f_blocks) * vfs.f_frsize};
  }
  struct stat data;
  const std::uint64_t data_bytes =
      ::stat((opened.directory + "/store/data.mdb").c_str(), &data) == 0 ? static_cast<std::uint64_t>(data.st_size) : 0;
  check_opened_cache(report, config, opened, described, space, data_bytes);
}

// The first line of a file (a child's stderr), at most 200 characters; "" if none.
std::string first_line_of(const std::string& path) {
  std::string text;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    char buffer[256];
    if (std::fgets(buffer, sizeof buffer, f)) text = buffer;
    std::fclose(f);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text.substr(0, 200);
}

// The sample compile: directly, then twice through the shim in a scratch cache.
void check_sample_compile(DoctorReport& report, const std::string& shim, const std::string& nvrtc) {
  const std::string self = self_path();
  char pattern[] = "/tmp/nvrtc-cache-doctor-XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    report.add(Severity::kWarn, "sample compile", "cannot make a scratch directory in /tmp; not run");
    return;
  }
  const std::string scratch = pattern;
  SampleCompileRuns runs;
  runs.library = nvrtc;
  runs.direct = run_capturing({self, "__sample-compile", nvrtc}, {}, scratch + "/direct.err");
  runs.direct.first_error_line = first_line_of(scratch + "/direct.err");
  const std::map<std::string, std::string> env = {{"LD_PRELOAD", shim}, {"NVRTC_CACHE_DIR", scratch + "/cache"}};
  runs.cold = run_capturing({self, "__sample-compile", nvrtc}, env);
  runs.warm = run_capturing({self, "__sample-compile", nvrtc}, env);
  report_sample_compile(report, runs, scratch + "/cache",
                        {"the shim", "nvrtc-cache run",
                         "Put the directory of a working libnvrtc.so.13 first on LD_LIBRARY_PATH, or set "
                         "NVRTC_CACHE_REAL_NVRTC"});
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
}

int doctor(bool skip_sample) {
  DoctorReport report;
  const core::Config config = core::config_from_process_environment();
  check_configuration(report, config);
  const std::string shim = shim_path(false);
  struct stat st;
  const bool shim_found = ::stat(shim.c_str(), &st) == 0;
  report.add(shim_found ? Severity::kOk : Severity::kFail, "shim",
             shim_found ? shim : shim + " is missing: `nvrtc-cache run` cannot preload it (set NVRTC_CACHE_SHIM)");
  const std::string proxy = shim_path(true);
  const bool proxy_found = ::stat(proxy.c_str(), &st) == 0;
  report.add(proxy_found ? Severity::kOk : Severity::kWarn, "proxy",
             proxy_found ? proxy : proxy + " is missing: `nvrtc-cache run --proxy` will not work");
  if (proxy_found) {  // its stand-ins for nvJitLink and libNVVM, beside it
    std::string missing;
    for (const char* standin : {"libnvJitLink.so.13", "libnvvm.so.4"}) {
      const std::string path = proxy.substr(0, proxy.rfind('/') + 1) + standin;
      if (::stat(path.c_str(), &st) != 0) missing += (missing.empty() ? "" : ", ") + path;
    }
    if (!missing.empty()) {
      report.add(Severity::kWarn, "proxy",
                 missing + " missing: `nvrtc-cache run --proxy` will not cache nvJitLink links or NVVM compiles");
    }
  }
  // The NVRTC a program's stack would load (tools/doctor/real_libraries.h: cuda.pathfinder's order).
  std::string sample_library;
  if (const auto found = real_library(shim::interpose::RealLibrary::kNvrtc)) {
    const NvrtcFound nvrtc = check_nvrtc(report, found->path.c_str(), true, found->found_via);
    sample_library = nvrtc.path.value_or("");
  } else {
    report.add(Severity::kFail, "NVRTC",
               "no libnvrtc.so.13 or .12 found (the interpreter's nvidia-cuda-nvrtc wheel, CONDA_PREFIX, the "
               "loader's directories, CUDA_PATH/CUDA_HOME, /usr/local/cuda): nothing can compile. Install "
               "nvidia-cuda-nvrtc, or set NVRTC_CACHE_REAL_NVRTC");
  }
  for (const auto library : {shim::interpose::RealLibrary::kNvJitLink, shim::interpose::RealLibrary::kNvvm}) {
    const auto found = real_library(library);
    report.add(found ? Severity::kOk : Severity::kNote, shim::interpose::library_name(library),
               found ? fmt::format("{} (found in {})", found->path, found->found_via)
                     : std::string("none found: links and NVVM compiles of programs that bring their own are "
                                   "still served"));
  }
  check_nvrtc(report, "libnvrtc.so.12", false, "the loader's search");
  check_cache_directory(report, config);
  check_tiers(config, report);
  if (skip_sample) {
    report.add(Severity::kNote, "sample compile", "skipped (--no-compile)");
  } else if (!shim_found) {
    report.add(Severity::kNote, "sample compile", "not run: no shim");
  } else if (sample_library.empty()) {
    report.add(Severity::kNote, "sample compile", "not run: no NVRTC that loads");
  } else {
    check_sample_compile(report, shim, sample_library);
  }
  return doctor_verdict(report);
}

}  // namespace

void add_doctor_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand(
      "doctor",
      "Check everything caching needs and explain what is wrong: configuration, shim and proxy, NVRTC "
      "libraries, the cache directory (owner, permissions, filesystem, free space), the store, shared tiers, and "
      "a sample compile run twice through the shim. Exit status 1 when something blocks caching.");
  auto skip_sample = std::make_shared<bool>(false);
  auto proxy = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto run = std::make_shared<std::vector<std::string>>();
  command->add_flag("--no-compile", *skip_sample, "skip the sample compile");
  command->add_flag("--proxy", *proxy, "with -- CMD: run it as `nvrtc-cache run --proxy` does");
  command->add_flag("--json", *json, "with -- CMD: machine-readable output (schema_version 1)");
  command->add_option("command", *run,
                      "-- CMD [ARGS...]: run CMD under the cache (as `nvrtc-cache run`) and report the NVRTC, "
                      "nvJitLink and libNVVM its compiles reached the cache through (path, version, build-id); "
                      "exit status 1 when none was reached");
  command->callback([&outcome, skip_sample, proxy, json, run] {
    outcome.exit_code = run->empty() ? doctor(*skip_sample) : doctor_run(*run, *proxy, *json);
  });
}

}  // namespace nvrtc_cache::tools
