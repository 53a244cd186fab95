// The Wine tests' fixture (wine_test.cc, wine_store_test.cc, wine_launcher_test.cc,
// wine_tier_test.cc): Windows programs run under Wine with the Windows NVRTC prepared by
// scripts/windows-nvrtc.sh DIR, a cache directory, an include directory and a directory beside the
// .exe per test, the proxy's counters read with its CLI. See wine_test.cc for what the tests cover.
// Contract: one fixture per test (temporary directories removed with it); single-threaded.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/compile_record.h"
#include "tests/support/harness.h"
#include "tests/support/redis_server.h"
#include "tests/support/wine_paths.h"

namespace nvrtc_cache::testing {

namespace fs = std::filesystem;

// The functions the import watch patches (shim/windows/watched_kernel32.def).
constexpr int kWatchedKernel32Count = 0
#define NVRTC_CACHE_KERNEL32(name, kind) +1
#include "shim/windows/watched_kernel32.def"
#undef NVRTC_CACHE_KERNEL32
    ;

// The scenarios every run compiles.
inline const std::vector<std::string> kCorpus = {
    "trivial",        "ptx",         "cubin",     "lto",       "template",  "headers", "compile_error", "warnings",
    "invalid_option", "include_dir", "null_name", "recompile", "bad_inputs"};

inline std::string hex_of(const std::string& text) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

class Wine : public ::testing::Test {
 protected:
  void SetUp() override {
    nvrtc_dir_ = env_or_empty("NVRTC_CACHE_WINE_NVRTC_DIR");
    loader_ = env_or_empty("NVRTC_CACHE_WINE");
    bin_ = NVRTC_CACHE_WINDOWS_BIN_DIR;
    if (nvrtc_dir_.empty() || loader_.empty()) {
      NVRTC_CACHE_SKIP_WITHOUT_PYPI(
          "the Windows NVRTC and Wine are not prepared (eval \"$(scripts/windows-nvrtc.sh DIR)\")");
    }
    if (bin_.empty())
      NVRTC_CACHE_SKIP_WITHOUT_PYPI("the Windows test programs were not built (no mingw-w64 at configure)");
    ASSERT_TRUE(fs::exists(nvrtc_dir_ + "/nvrtc64_130_0.dll"));
    ASSERT_TRUE(fs::exists(loader_));
    prefix_ = env_or_empty("NVRTC_CACHE_WINDOWS_PREFIX");
    write_header(42);
  }

  void write_header(int value) {
    std::ofstream(include_.path() + "/probe_dep.h") << "#pragma once\n#define PROBE_VALUE " << value << "\n";
  }

  // Runs a Windows program under Wine; `extra` adds to the environment.
  ProcessResult run(const std::vector<std::string>& argv, EnvVars extra = {}) {
    EnvVars env = {{"WINEPREFIX", nvrtc_dir_ + "/wineprefix"},
                   {"WINEDEBUG", "-all"},
                   {"WINEDLLOVERRIDES", "mscoree,mshtml="},
                   {"WINEPATH", windows_path(nvrtc_dir_)},
                   {"PROBE_INCLUDE_DIR", windows_path(include_.path())}};
    for (auto& [name, value] : extra) env[name] = value;
    std::vector<std::string> command = {loader_};
    command.insert(command.end(), argv.begin(), argv.end());
    const bool uncached = extra.empty();
    ProcessResult r = run_process(command, env);
    for (int retry = 0; retry < 2 && wine_failed_around_the_program(r, uncached); ++retry) {
      std::fprintf(stderr, "wine failed around the program (%s); running it again\n", r.err.c_str());
      r = run_process(command, env);
    }
    return r;
  }

  // Wine itself, not the program, failed, and running again cannot change what the test sees: the
  // launcher's CreateProcess failed inside Wine (ERROR_INTERNAL_ERROR: the child never started), or
  // Wine's own ld.so asserted at exit after a run that touched no cache.
  static bool wine_failed_around_the_program(const ProcessResult& r, bool uncached) {
    if (r.exit_code == 0) return false;
    if (r.err.find("nvrtc-cache: cannot run ") != std::string::npos && r.err.find("(error 1359)") != std::string::npos)
      return true;
    return uncached && r.err.find("Inconsistency detected by ld.so: dl-fini.c") != std::string::npos;
  }

  ProcessResult client(const std::string& exe, const std::vector<std::string>& scenarios, EnvVars extra = {}) {
    std::vector<std::string> argv = {exe};
    argv.insert(argv.end(), scenarios.begin(), scenarios.end());
    ProcessResult r = run(argv, std::move(extra));
    EXPECT_EQ(r.exit_code, 0) << exe << ": " << r.err;
    return r;
  }

  std::string direct_client(const std::string& name) { return bin_ + "/" + name + ".exe"; }

  // `name`.exe copied into its own directory, with the DLL under test beside it.
  std::string client_beside_dll(const std::string& name) {
    const std::string exe = beside_.path() + "/" + name + ".exe";
    fs::copy_file(direct_client(name), exe, fs::copy_options::overwrite_existing);
    const std::string dll = beside_.path() + "/nvrtc64_130_0.dll";
    if (!fs::exists(dll)) {
      if (prefix_.empty()) {
        fs::create_symlink(nvrtc_dir_ + "/nvrtc64_130_0.dll", dll);
      } else {
        fs::copy_file(prefix_ + "/bin/nvrtc64_130_0.dll", dll);
      }
    }
    return exe;
  }

  // What the DLL beside the .exe needs: the real DLL, its cache.
  EnvVars cache_env() {
    return {{"NVRTC_CACHE_REAL_NVRTC", windows_path(nvrtc_dir_ + "/nvrtc64_130_0.dll")},
            {"NVRTC_CACHE_DIR", windows_path(cache_.path())}};
  }

  // The proxy's counters (hits, misses), from its CLI.
  nlohmann::json stats() {
    ProcessResult r = run({prefix_ + "/bin/nvrtc-cache.exe", "stats", "--json"}, cache_env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  bool with_proxy() const { return !prefix_.empty(); }

  std::string nvrtc_dir_, loader_, bin_, prefix_;
  TempDir include_, beside_, cache_;
};

// What every dump must show for the corpus to have run for real.
inline void expect_corpus_ran(const std::string& out) {
  for (const std::string& scenario : kCorpus)
    EXPECT_NE(out.find("### " + scenario + "\n"), std::string::npos) << scenario;
  EXPECT_NE(out.find("compile rc=0"), std::string::npos);
  EXPECT_NE(out.find("compile rc=6"), std::string::npos) << "the compile error (NVRTC_ERROR_COMPILATION)";
  EXPECT_NE(out.find(hex_of("undefined_function")), std::string::npos) << "the error's log";
  EXPECT_NE(out.find("lowered[scale<float, 2>] rc=0 name=_Z5scaleIfLi2EEvPT_"), std::string::npos);
  EXPECT_NE(out.find(hex_of("42;")), std::string::npos) << "the -I header's value in the PTX";
}

// first_hit_client's lines (tests/clients/windows/first_hit_client.cc) by program, without their
// timing: what each compile returned.
inline std::map<std::string, std::string> results_of(const std::string& out) {
  std::map<std::string, std::string> results;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t timing = line.find(" compile_ns ");
    const std::size_t after = timing == std::string::npos ? timing : line.find(' ', timing + 12);
    if (after == std::string::npos) continue;
    results[line.substr(0, timing)] = line.substr(after + 1);
  }
  return results;
}

}  // namespace nvrtc_cache::testing
