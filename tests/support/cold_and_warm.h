// Test helpers for the clients of the handle-based libraries (tests/integration/nvjitlink_test.cc,
// nvvm_test.cc): a program run directly, then under the shim (or through `nvrtc-cache run --proxy`)
// cold, then warm, each in its own process, with the cache's counters after each cached run; and the
// dynamic symbols a library defines. Contract: test-only; blocking.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {

struct ColdAndWarm {
  ProcessResult direct, cold, warm;
  store::Counters after_cold, after_warm;
};

// `argv` directly with `extra`, then under the shim (cache in `cache`) twice.
inline ColdAndWarm cold_and_warm(const std::vector<std::string>& argv, const std::string& cache, EnvVars extra = {}) {
  ColdAndWarm r;
  r.direct = run_process(argv, extra);
  EnvVars env = shim_env(cache);
  env.insert(extra.begin(), extra.end());
  r.cold = run_process(argv, env);
  r.after_cold = counters_of(cache);
  r.warm = run_process(argv, env);
  r.after_warm = counters_of(cache);
  return r;
}

// `argv` directly with `extra`, then through `cli run --proxy` (cache in `cache`) twice.
inline ColdAndWarm proxy_cold_and_warm(const std::string& cli, const std::vector<std::string>& argv,
                                       const std::string& cache, EnvVars extra = {}) {
  ColdAndWarm r;
  r.direct = run_process(argv, extra);
  std::vector<std::string> through = {cli, "run", "--proxy", "--"};
  through.insert(through.end(), argv.begin(), argv.end());
  extra["NVRTC_CACHE_DIR"] = cache;
  r.cold = run_process(through, extra);
  r.after_cold = counters_of(cache);
  r.warm = run_process(through, extra);
  r.after_warm = counters_of(cache);
  return r;
}

// The dynamic symbols `library` defines, as `nm -D --defined-only` names them ("nvJitLinkCreate@@libnvJitLink.so.13").
inline std::set<std::string> defined_dynamic_symbols(const std::string& library) {
  std::set<std::string> symbols;
  FILE* pipe = ::popen(("nm -D --defined-only '" + library + "'").c_str(), "r");
  if (pipe == nullptr) return symbols;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe)) {
    std::string text = line;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    const auto space = text.rfind(' ');
    if (space != std::string::npos) symbols.insert(text.substr(space + 1));
  }
  ::pclose(pipe);
  return symbols;
}

// The DT_SONAME of `library`, or "".
inline std::string soname_of(const std::string& library) {
  std::string soname;
  FILE* pipe = ::popen(("readelf -d '" + library + "'").c_str(), "r");
  if (pipe == nullptr) return soname;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe)) {
    const std::string text = line;
    const auto at = text.find("Library soname: [");
    if (at != std::string::npos) soname = text.substr(at + 17, text.find(']', at) - at - 17);
  }
  ::pclose(pipe);
  return soname;
}

// All three exited 0 and printed the same.
inline void expect_identical(const ColdAndWarm& r) {
  ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
  EXPECT_EQ(r.cold.exit_code, 0) << r.cold.err;
  EXPECT_EQ(r.warm.exit_code, 0) << r.warm.err;
  EXPECT_EQ(r.cold.out, r.direct.out);
  EXPECT_EQ(r.warm.out, r.direct.out);
}

// Whether the dynamic section of `path` needs a library whose name contains `name`.
inline bool needs_library(const std::string& path, const std::string& name) {
  for (const std::string& library : needed_libraries(path)) {
    if (library.find(name) != std::string::npos) return true;
  }
  return false;
}

}  // namespace nvrtc_cache::testing
