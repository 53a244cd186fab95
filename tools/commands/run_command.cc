// nvrtc-cache run [--proxy] [--record FILE] [--] CMD ARGS...: runs CMD with the shim preloaded (replaces this
// process); --record sets NVRTC_CACHE_RECORD (made absolute) for CMD and its children. With --proxy,
// CMD runs as a child (signals it gets from outside are passed on, its exit status is ours), so
// that a run in which no compile, link or NVVM compile reached the cache can be said at the end: the
// proxy stands in for loads of libnvrtc.so.13, libnvJitLink.so.13 and libnvvm.so.4 by name, and for
// Python programs' loads by path through share/nvrtc-cache/python/sitecustomize.py (put on PYTHONPATH).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <string>

#include "core/config.h"
#include "core/settings.h"
#include "store/cache_directory.h"
#include "tools/commands.h"
#include "tools/install_paths.h"

namespace nvrtc_cache::tools {
namespace {

// Compiles, links and NVVM compiles the cache has counted (hits, misses, uncacheable), or -1 when it
// cannot be read.
std::int64_t compiles_counted() {
  try {
    store::CachePolicy policy = core::cache_policy(core::config_from_process_environment());
    policy.reads_write_touches = false;
    store::OpenedCache opened = store::open_cache(policy);
    if (!opened.store) return -1;
    const store::Counters counters = opened.store->counters();
    std::int64_t total = 0;
    for (const char* kind : {"", "link_", "nvvm_"}) {
      for (const char* name : {"hits", "misses", "uncacheable"}) {
        if (auto it = counters.find(std::string(kind) + name); it != counters.end()) total += it->second;
      }
    }
    return total;
  } catch (...) {
    return -1;
  }
}

pid_t g_child = -1;
void pass_on(int signal_number) {
  if (g_child > 0) ::kill(g_child, signal_number);
}

// Runs argv as a child (in proxy mode) and says at the end if nothing reached the cache; exits as
// the child did.
int run_child_and_report(char** argv) {
  const std::int64_t before = compiles_counted();
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "nvrtc-cache: cannot run %s: %s\n", argv[0], std::strerror(errno));
    return 126;
  }
  if (pid == 0) {
    execvp(argv[0], argv);
    std::fprintf(stderr, "nvrtc-cache: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  g_child = pid;
  // Ctrl-C and Ctrl-\ reach the child through the terminal's process group; what is sent to this
  // process alone is passed on.
  struct sigaction pass {};
  pass.sa_handler = pass_on;
  ::sigemptyset(&pass.sa_mask);
  for (int sig : {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) ::sigaction(sig, &pass, nullptr);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGQUIT}) ::sigaction(sig, &ignore, nullptr);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::int64_t after = compiles_counted();
  if (before >= 0 && after == before && WIFEXITED(status) && WEXITSTATUS(status) != 127) {
    std::fprintf(stderr,
                 "nvrtc-cache: run --proxy: no NVRTC compile, nvJitLink link or NVVM compile reached the cache. "
                 "The proxy stands in for libnvrtc.so.13, libnvJitLink.so.13 and libnvvm.so.4 loaded by name, "
                 "and in Python programs (cuda.core, CuPy 14, numba-cuda) through a sitecustomize on PYTHONPATH "
                 "that loads the proxies first; a program that loads the real libraries by their full path "
                 "otherwise (or a Python started with -S or -I, or after NVRTC was loaded) is not reached: run it "
                 "with `nvrtc-cache run -- CMD` (preload) instead.\n");
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    ::signal(sig, SIG_DFL);
    ::raise(sig);  // end as the child did
    return 128 + sig;
  }
  return 1;
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
  std::string record_file;
  constexpr const char* kUsage = "usage: nvrtc-cache run [--proxy] [--record FILE] [--] CMD [ARGS...]\n";
  while (first < argc) {
    if (std::strcmp(argv[first], "--proxy") == 0) {
      proxy = true;
      ++first;
    } else if (std::strcmp(argv[first], "--record") == 0 || std::strncmp(argv[first], "--record=", 9) == 0) {
      if (argv[first][8] == '=') {
        record_file = argv[first] + 9;
        ++first;
      } else if (first + 1 < argc) {
        record_file = argv[first + 1];
        first += 2;
      } else {
        std::fputs(kUsage, stderr);
        return 2;
      }
      if (record_file.empty()) {
        std::fputs(kUsage, stderr);
        return 2;
      }
    } else {
      break;
    }
  }
  if (first < argc && std::strcmp(argv[first], "--") == 0) ++first;
  if (first >= argc) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (!record_file.empty()) {
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(record_file, error);
    if (error) {
      std::fprintf(stderr, "nvrtc-cache: cannot resolve %s: %s\n", record_file.c_str(), error.message().c_str());
      return 2;
    }
    record_file = absolute.string();
    setenv("NVRTC_CACHE_RECORD", record_file.c_str(), 1);
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
    // Python programs load them by path (cuda.pathfinder): a sitecustomize activates the cache at the
    // interpreter's start (share/nvrtc-cache/python/sitecustomize.py, chaining to any other).
    if (const std::string hook = prefix() + "/share/nvrtc-cache/python"; ::stat(hook.c_str(), &st) == 0) {
      prepend_to("PYTHONPATH", hook, ':');
    }
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
  if (proxy) return run_child_and_report(argv + first);
  execvp(argv[first], argv + first);
  std::fprintf(stderr, "nvrtc-cache: cannot run %s: %s\n", argv[first], std::strerror(errno));
  return errno == ENOENT ? 127 : 126;
}

void add_run_command(CLI::App& app, Outcome&) {
  CLI::App* run = app.add_subcommand(
      "run",
      "Run CMD with its NVRTC calls served from the cache: the shim is preloaded (an existing LD_PRELOAD is kept "
      "after it). CMD's exit code is passed through. Everything after CMD is CMD's own arguments.");
  static bool proxy_for_help = false;
  run->add_flag("--proxy", proxy_for_help,
                "Do not preload: put stand-ins for libnvrtc.so.13, libnvJitLink.so.13 and libnvvm.so.4 first on "
                "LD_LIBRARY_PATH instead, for environments where preloading is not possible");
  add_run_shared_options(*run);
  // The real parsing is run_command()'s (main() dispatches `run` before CLI11); this is for --help.
}

}  // namespace nvrtc_cache::tools
