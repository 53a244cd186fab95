// The exactness corpus against every NVRTC a user can have: the toolkit's 13.0, the nvidia-cuda-nvrtc
// wheel (13.5, $NVRTC_CACHE_TEST_NVRTC13) and the nvidia-cuda-nvrtc-cu12 wheel (12.9,
// $NVRTC_CACHE_TEST_NVRTC12), each loaded by absolute path (dlopen + dlsym, as cuda.pathfinder does)
// by the unlinked probe: every scenario directly, under the shim cold, and warm, in separate
// processes, every return code and byte compared. Then a stand-in newer NVRTC ("13.9",
// tests/clients/future_nvrtc/) with an option and a getter the cache does not know.
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

struct Library {
  std::string version;  // what nvrtcVersion says, "13.0"
  std::string path;
};

// The NVRTC of `version`, or an empty path when this machine lacks it.
Library library(const std::string& version) {
  if (version == "13.0") return {version, std::string(CUDA_NVRTC_LIBRARY_DIR) + "/libnvrtc.so.13"};
  const char* path = std::getenv(version == "13.5" ? "NVRTC_CACHE_TEST_NVRTC13" : "NVRTC_CACHE_TEST_NVRTC12");
  return {version, path ? path : ""};
}

// The scenarios of the corpus (tests/clients/nvrtc_probe.cc, tests/support/probe_corpus.cc).
const std::vector<std::string> kCorpus = {
    "trivial",       "ptx",           "cubin",          "lto",         "optix",        "template",        "headers",
    "compile_error", "warnings",      "invalid_option", "include_dir", "null_name",    "recompile",       "bad_inputs",
    "threads",       "fork",          "tile",           "tile_only",   "default_tile", "bundled_headers", "cancelled",
    "no_cache",      "bundled_option"};

enum class Expect {
  kCached,        // the warm run compiles nothing: hits, no misses
  kPartlyCached,  // some compiles are served, others go to NVRTC uncached
  kUncached,      // an option that NVRTC does not know (or that this build does not know for it)
  kNoCompile,     // the scenario compiles nothing with this NVRTC
};

Expect expectation(const std::string& scenario, const std::string& version) {
  const bool tile = version == "13.5";
  if (scenario == "invalid_option") return Expect::kUncached;
  if (scenario == "tile" || scenario == "tile_only" || scenario == "default_tile") {
    return tile ? Expect::kCached : Expect::kUncached;
  }
  if (scenario == "bundled_headers" || scenario == "bundled_option") return tile ? Expect::kCached : Expect::kNoCompile;
  if (scenario == "cancelled") return Expect::kPartlyCached;
  return Expect::kCached;
}

EnvVars with_library(EnvVars env, const Library& lib, const std::string& scratch) {
  env["PROBE_LOAD"] = "path:" + lib.path;
  env["PROBE_INCLUDE_DIR"] = kIncludeDir;
  env["PROBE_BUNDLED_DIR"] = scratch + "/bundled";
  env["PROBE_FUTURE_FILE"] = scratch + "/future.txt";
  return env;
}

ProcessResult run_probe(const std::vector<std::string>& scenarios, const EnvVars& env) {
  std::vector<std::string> argv = {NVRTC_PROBE_UNLINKED_PATH};
  argv.insert(argv.end(), scenarios.begin(), scenarios.end());
  return run_process(argv, env);
}

// The size a getter's size call reported in a dump ("tileir size_rc=0 size=367 ..."), or -1.
long long reported_size(const std::string& dump, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(dump, m, std::regex(label + " size_rc=0 size=([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

using Case = std::tuple<std::string, std::string>;  // NVRTC version, scenario
class NvrtcCorpus : public ::testing::TestWithParam<Case> {};

TEST_P(NvrtcCorpus, ColdAndWarmAreByteIdenticalToThatNvrtc) {
  const auto& [version, scenario] = GetParam();
  const Library lib = library(version);
  if (lib.path.empty()) NVRTC_CACHE_SKIP_WITHOUT_PYPI("NVRTC " << version << " (scripts/python_env.sh finds it)");
  TempDir cache, scratch;
  // Precondition: the probe reaches the NVRTC of that version.
  const ProcessResult which = run_probe({"version"}, with_library({}, lib, scratch.path()));
  ASSERT_EQ(which.exit_code, 0) << which.err;
  ASSERT_NE(which.out.find("nvrtc " + version + "\n"), std::string::npos) << which.out;

  const ProcessResult direct = run_probe({scenario}, with_library({}, lib, scratch.path()));
  const ProcessResult cold = run_probe({scenario}, with_library(shim_env(cache.path()), lib, scratch.path()));
  const store::Counters after_cold = counters_of(cache.path());
  const ProcessResult warm = run_probe({scenario}, with_library(shim_env(cache.path()), lib, scratch.path()));
  const store::Counters after_warm = counters_of(cache.path());
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_FALSE(direct.out.empty());
  EXPECT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_TRUE(direct.out == cold.out) << "cold run differs from NVRTC " << version;
  EXPECT_TRUE(direct.out == warm.out) << "warm run differs from NVRTC " << version;
  EXPECT_EQ(cold.err, "") << "the shim printed something at the default log level";
  EXPECT_EQ(warm.err, "");

  auto warm_delta = [&](const std::string& name) { return get(after_warm, name) - get(after_cold, name); };
  switch (expectation(scenario, version)) {
    case Expect::kCached:
      EXPECT_GT(get(after_cold, "stores"), 0);
      EXPECT_EQ(warm_delta("misses"), 0) << "the warm run called the real compile";
      EXPECT_GT(warm_delta("hits"), 0);
      break;
    case Expect::kPartlyCached:
      EXPECT_GT(warm_delta("hits"), 0);
      EXPECT_EQ(warm_delta("misses"), 0);
      EXPECT_GT(warm_delta("uncacheable"), 0);
      break;
    case Expect::kUncached:
      EXPECT_EQ(get(after_warm, "hits") + get(after_warm, "misses"), 0);
      EXPECT_GT(get(after_warm, "uncacheable.unknown_option"), 0);
      break;
    case Expect::kNoCompile:
      EXPECT_EQ(get(after_warm, "hits") + get(after_warm, "misses") + get(after_warm, "uncacheable"), 0);
      break;
  }
  EXPECT_EQ(get(after_warm, "errors"), 0);

  // Preconditions of the outputs newer or older than 13.0: they are there, and not empty.
  if (version == "13.5" && (scenario == "tile" || scenario == "tile_only")) {
    EXPECT_GT(reported_size(direct.out, "tileir"), 1) << "no Tile IR: the scenario tests nothing";
  }
  if (version == "12.9" && scenario == "lto") {
    EXPECT_GT(reported_size(direct.out, "nvvm"), 1) << "no NVVM from 12.9's deprecated getter";
  }
  if (version == "13.5" && scenario == "bundled_headers") {
    EXPECT_NE(direct.out.find("install rc=0"), std::string::npos) << direct.out.substr(0, 400);
    EXPECT_NE(direct.out.find("compile rc=0"), std::string::npos);
  }
  if (version == "13.5" && scenario == "bundled_option") {
    // The directory removed before each run: the warm run's hits installed the headers, as NVRTC would
    // have (the tree compared above, byte for byte); its second compile found them there.
    EXPECT_NE(direct.out.find("file cuda_fp16.h "), std::string::npos) << direct.out.substr(0, 400);
    EXPECT_NE(direct.out.find("marker cuda_minor=5"), std::string::npos);
    EXPECT_EQ(warm_delta("hits"), 2);
    EXPECT_EQ(get(after_cold, "misses"), 1);
    EXPECT_EQ(get(after_warm, "uncacheable"), 0);
  }
  if (scenario == "cancelled") {
    EXPECT_NE(direct.out.find("compile rc=" + std::to_string(NVRTC_ERROR_CANCELLED)), std::string::npos)
        << "the flow callback did not cancel the compile";
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string version = std::get<0>(info.param);
  for (char& c : version) {
    if (c == '.') c = '_';
  }
  return "nvrtc" + version + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Versions, NvrtcCorpus,
                         ::testing::Combine(::testing::Values("13.0", "13.5", "12.9"), ::testing::ValuesIn(kCorpus)),
                         case_name);

// NVRTC 11.x (the nvidia-cuda-nvrtc-cu11 wheel, 11.8, $NVRTC_CACHE_TEST_NVRTC11) is not cached: every
// compile passes through untouched, counted under a reason of its own and said once.
TEST(Nvrtc11, EveryCompilePassesThroughUnderItsOwnReason) {
  const char* path = std::getenv("NVRTC_CACHE_TEST_NVRTC11");
  if (path == nullptr) NVRTC_CACHE_SKIP_WITHOUT_PYPI("NVRTC 11.8 (scripts/python_env.sh installs it)");
  const Library lib{"11.8", path};
  TempDir cache, scratch;
  const ProcessResult which = run_probe({"version"}, with_library({}, lib, scratch.path()));
  ASSERT_EQ(which.exit_code, 0) << which.err;
  ASSERT_NE(which.out.find("nvrtc 11.8\n"), std::string::npos) << which.out;

  const std::vector<std::string> scenarios = {"trivial", "template", "compile_error", "recompile"};
  const ProcessResult direct = run_probe(scenarios, with_library({}, lib, scratch.path()));
  const ProcessResult cold = run_probe(scenarios, with_library(shim_env(cache.path()), lib, scratch.path()));
  const store::Counters after_cold = counters_of(cache.path());
  const ProcessResult warm = run_probe(scenarios, with_library(shim_env(cache.path()), lib, scratch.path()));
  const store::Counters after_warm = counters_of(cache.path());
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_NE(direct.out.find("compile rc=0"), std::string::npos) << direct.out.substr(0, 400);
  EXPECT_TRUE(direct.out == cold.out) << "cold run differs from NVRTC 11.8";
  EXPECT_TRUE(direct.out == warm.out) << "warm run differs from NVRTC 11.8";
  for (const ProcessResult* run : {&cold, &warm}) {
    EXPECT_EQ(std::count(run->err.begin(), run->err.end(), '\n'), 1) << run->err;
    EXPECT_NE(run->err.find("NVRTC 11.8 is not cached"), std::string::npos) << run->err;
  }
  EXPECT_GT(get(after_cold, "uncacheable.unsupported_version"), 0);
  EXPECT_EQ(get(after_warm, "uncacheable.unsupported_version"), 2 * get(after_cold, "uncacheable.unsupported_version"));
  EXPECT_EQ(get(after_warm, "uncacheable"), get(after_warm, "uncacheable.unsupported_version"));
  EXPECT_EQ(get(after_warm, "hits") + get(after_warm, "misses") + get(after_warm, "errors"), 0);
}

// The Tile IR of a 13.5 compile is stored and extracted byte for byte (`nvrtc-cache extract --tileir`),
// and `ls` and `inspect` show it.
TEST(NvrtcCorpusCli, ExtractWritesTheTileIrNvrtc13_5Returned) {
  const Library lib = library("13.5");
  if (lib.path.empty()) NVRTC_CACHE_SKIP_WITHOUT_PYPI("NVRTC 13.5 (scripts/python_env.sh finds it)");
  TempDir cache, scratch;
  const ProcessResult run = run_probe({"tile"}, with_library(shim_env(cache.path()), lib, scratch.path()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, std::regex("tileir data_rc=0 bytes=([0-9a-f]+)"))) << run.out;
  const std::string dumped = m[1];
  const EnvVars cli_env = {{"NVRTC_CACHE_DIR", cache.path()}};
  const ProcessResult ls = run_process({NVRTC_CACHE_CLI_PATH, "ls", "--json"}, cli_env);
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  ASSERT_TRUE(std::regex_search(ls.out, m, std::regex("\"key\": \"([0-9a-f]+)\""))) << ls.out;
  const std::string key = m[1];
  EXPECT_TRUE(std::regex_search(ls.out, std::regex("\"tileir\": [1-9][0-9]+,"))) << ls.out;
  const std::string file = scratch.path() + "/tile.ir";
  const ProcessResult extracted =
      run_process({NVRTC_CACHE_CLI_PATH, "extract", key.substr(0, 12), "--tileir", "-o", file}, cli_env);
  ASSERT_EQ(extracted.exit_code, 0) << extracted.err;
  const std::string bytes = read_file(file);
  std::string hex;
  for (unsigned char c : bytes) {
    static const char* digits = "0123456789abcdef";
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  EXPECT_EQ(hex + "abababababababababababababababab", dumped);  // the dump's 16 canary bytes follow
  const ProcessResult inspect = run_process({NVRTC_CACHE_CLI_PATH, "inspect", key.substr(0, 12)}, cli_env);
  EXPECT_NE(inspect.out.find("tileir"), std::string::npos) << inspect.out;
}

// NVRTC's own cache (12.9 on) can leave ptxas's lines out of a log when it hits; CUDA_CACHE_DISABLE
// turns it off. The variable is a dependency of every result, set or not: a result stored with it
// unset is not served to a process that set it (a miss, stored beside), and each is then served.
TEST(NvrtcOwnCache, CudaCacheDisableIsADependencyOfEveryResult) {
  for (const std::string version : {"13.0", "13.5"}) {
    SCOPED_TRACE(version);
    const Library lib = library(version);
    if (lib.path.empty()) NVRTC_CACHE_SKIP_WITHOUT_PYPI("NVRTC " << version);
    TempDir cache, scratch;
    for (const char* disable : {"", "", "1", "1", "0"}) {
      EnvVars env = with_library(shim_env(cache.path()), lib, scratch.path());
      EnvVars plain = with_library({}, lib, scratch.path());
      if (*disable) env["CUDA_CACHE_DISABLE"] = plain["CUDA_CACHE_DISABLE"] = disable;
      const ProcessResult direct = run_probe({"trivial", "no_cache"}, plain);
      const ProcessResult shimmed = run_probe({"trivial", "no_cache"}, env);
      ASSERT_EQ(direct.exit_code, 0) << direct.err;
      EXPECT_TRUE(direct.out == shimmed.out) << shimmed.err;
    }
    const store::Counters c = counters_of(cache.path());
    EXPECT_EQ(get(c, "misses"), 6) << "unset, 1 and 0: each a result of its own, for each of 2 programs";
    EXPECT_EQ(get(c, "hits"), 4);
    EXPECT_EQ(get(c, "miss.environment_changed"), 4);
  }
}

// ---- A stand-in NVRTC newer than this build (tests/clients/future_nvrtc/future_nvrtc.cc). ----

Library future(const std::string& variant) {
  return {"13.9", std::string(NVRTC_CACHE_FUTURE_NVRTC_DIR) + "/future-" + variant + "/libnvrtc.so.13"};
}

struct ThreeRuns {
  ProcessResult direct, cold, warm;
  store::Counters after;
};

ThreeRuns run_three(const Library& lib, const std::string& cache_dir, const std::string& scratch) {
  ThreeRuns r;
  r.direct = run_probe({"version", "future"}, with_library({}, lib, scratch));
  r.cold = run_probe({"version", "future"}, with_library(shim_env(cache_dir), lib, scratch));
  r.warm = run_probe({"version", "future"}, with_library(shim_env(cache_dir), lib, scratch));
  r.after = counters_of(cache_dir);
  return r;
}

// Rule 1: an option this build does not know for that NVRTC is passed through uncached. The stand-in's
// --future-output=FILE writes FILE during the compile: a served hit would not.
TEST(FutureNvrtc, AnUnknownOptionIsPassedThroughUncachedAndKeepsItsEffect) {
  TempDir cache, scratch;
  const ThreeRuns r = run_three(future("option"), cache.path(), scratch.path());
  ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
  ASSERT_NE(r.direct.out.find("nvrtc 13.9\n"), std::string::npos);
  ASSERT_NE(r.direct.out.find("future file written: yes"), std::string::npos) << "the option had no effect";
  ASSERT_NE(r.direct.out.find("future getter: absent"), std::string::npos);
  EXPECT_TRUE(r.direct.out == r.cold.out) << r.cold.err;
  EXPECT_TRUE(r.direct.out == r.warm.out) << r.warm.err;
  EXPECT_EQ(get(r.after, "hits"), 1) << "the plain compile of the known options is cached";
  EXPECT_EQ(get(r.after, "misses"), 1);
  EXPECT_EQ(get(r.after, "uncacheable"), 2);
  EXPECT_EQ(get(r.after, "uncacheable.unknown_option"), 2);
  EXPECT_EQ(r.warm.err, "");
}

// Rule 2: an NVRTC exporting a function this build does not know gets no compile served: here the
// unknown getter answers only for programs the library really compiled, so a served hit would be
// seen (tests/clients/future_nvrtc/future_nvrtc.cc). Said once per process at the default level.
TEST(FutureNvrtc, AnUnknownFunctionMeansNoCompileOfThatNvrtcIsServed) {
  TempDir cache, scratch;
  const ThreeRuns r = run_three(future("getter"), cache.path(), scratch.path());
  ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
  ASSERT_NE(r.direct.out.find("future getter: present"), std::string::npos);
  ASSERT_NE(r.direct.out.find("future_ir data_rc=0"), std::string::npos);
  EXPECT_TRUE(r.direct.out == r.cold.out) << r.cold.err;
  EXPECT_TRUE(r.direct.out == r.warm.out) << r.warm.err;
  EXPECT_EQ(get(r.after, "hits") + get(r.after, "misses") + get(r.after, "stores"), 0);
  EXPECT_EQ(get(r.after, "uncacheable.unknown_function"), 4);
  for (const ProcessResult* run : {&r.cold, &r.warm}) {
    const std::string said = "exports functions this build does not know (nvrtcGetFutureIR, nvrtcGetFutureIRSize)";
    EXPECT_NE(run->err.find(said), std::string::npos) << run->err;
    EXPECT_EQ(run->err.find(said), run->err.rfind(said)) << "said more than once";
  }
}

}  // namespace
}  // namespace nvrtc_cache
