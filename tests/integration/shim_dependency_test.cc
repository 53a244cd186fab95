// Dependency tracking (direct-mode manifests), with real files and real NVRTC in separate
// processes: every scenario compares the shim's every getter byte for byte with a fresh NVRTC run
// in the same directory and environment, and checks hit or miss in the shared statistics.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
namespace fs = std::filesystem;

std::string header_defining(int value) { return "#pragma once\n#define PROBE_VALUE " + std::to_string(value) + "\n"; }

struct Outcome {
  std::int64_t hits = 0, misses = 0, uncacheable = 0;
  std::string output;
  std::string log;
};

class Dependencies : public ::testing::Test {
 protected:
  // Runs `scenario` directly and under the shim with the same environment and working directory;
  // the outputs must be identical. Returns what the shim's run did.
  Outcome compile(const std::string& scenario, EnvVars env = {}, const std::string& cwd = "",
                  bool compare_with_nvrtc = true) {
    if (!cwd.empty()) env["PWD"] = cwd;
    const store::Counters before = counters_of(cache_.path());
    const ProcessResult direct = probe({scenario}, env, cwd);
    EnvVars shimmed_env = env;
    for (auto& [k, v] : shim_env(cache_.path())) shimmed_env[k] = v;
    shimmed_env["NVRTC_CACHE_LOG"] = "debug";
    const ProcessResult shimmed = probe({scenario}, shimmed_env, cwd);
    EXPECT_EQ(direct.exit_code, 0) << direct.err;
    EXPECT_EQ(shimmed.exit_code, 0) << shimmed.err;
    if (compare_with_nvrtc) {
      EXPECT_TRUE(direct.out == shimmed.out) << "the shim's results differ from NVRTC's";
    }
    const store::Counters after = counters_of(cache_.path());
    return {get(after, "hits") - get(before, "hits"), get(after, "misses") - get(before, "misses"),
            get(after, "uncacheable") - get(before, "uncacheable"), shimmed.out, shimmed.err};
  }

  std::string path(const std::string& relative) const { return work_.path() + "/" + relative; }

  TempDir cache_, work_;
};

TEST_F(Dependencies, EditedHeaderIsAMissAndMatchesAFreshCompile) {
  write_file(path("inc/probe_dep.h"), header_defining(1));
  const EnvVars env = {{"PROBE_INCLUDE_DIR", path("inc")}};
  EXPECT_EQ(compile("include_dir", env).misses, 1);
  EXPECT_EQ(compile("include_dir", env).hits, 1);
  write_file(path("inc/probe_dep.h"), header_defining(2));
  const Outcome edited = compile("include_dir", env);
  EXPECT_EQ(edited.hits, 0);
  EXPECT_EQ(edited.misses, 1);
  EXPECT_NE(edited.log.find("probe_dep.h changed"), std::string::npos) << edited.log;
  EXPECT_EQ(compile("include_dir", env).hits, 1);
}

TEST_F(Dependencies, TouchWithoutAChangeIsAHit) {
  write_file(path("inc/probe_dep.h"), header_defining(1));
  const EnvVars env = {{"PROBE_INCLUDE_DIR", path("inc")}};
  EXPECT_EQ(compile("include_dir", env).misses, 1);
  const auto later = fs::last_write_time(path("inc/probe_dep.h")) + std::chrono::seconds(30);
  fs::last_write_time(path("inc/probe_dep.h"), later);
  const Outcome touched = compile("include_dir", env);
  EXPECT_EQ(touched.hits, 1);
  EXPECT_EQ(touched.misses, 0);
}

TEST_F(Dependencies, ShadowingHeaderInAnEarlierIncludeDirectoryIsAMiss) {
  fs::create_directories(path("first"));
  write_file(path("second/probe_dep.h"), header_defining(2));
  const EnvVars env = {{"PROBE_INCLUDE_DIR", path("first") + ":" + path("second")}};
  EXPECT_EQ(compile("include_dir", env).misses, 1);
  EXPECT_EQ(compile("include_dir", env).hits, 1);
  write_file(path("first/probe_dep.h"), header_defining(1));
  const Outcome shadowed = compile("include_dir", env);
  EXPECT_EQ(shadowed.hits, 0);
  EXPECT_NE(shadowed.log.find("first/probe_dep.h appeared"), std::string::npos) << shadowed.log;
  EXPECT_EQ(compile("include_dir", env).hits, 1);
}

TEST_F(Dependencies, RelativeIncludeFromAnotherWorkingDirectoryGetsItsOwnResult) {
  write_file(path("a/local.h"), "#define LOCAL_VALUE 10\n");
  write_file(path("b/local.h"), "#define LOCAL_VALUE 20\n");
  EXPECT_EQ(compile("relative_include", {}, path("a")).misses, 1);
  const Outcome b = compile("relative_include", {}, path("b"));
  EXPECT_EQ(b.hits, 0);
  EXPECT_EQ(b.misses, 1);
  EXPECT_EQ(compile("relative_include", {}, path("a")).hits, 1);
  EXPECT_EQ(compile("relative_include", {}, path("b")).hits, 1);
}

TEST_F(Dependencies, DeletedHeaderGivesNvrtcsErrorAndLog) {
  write_file(path("inc/probe_dep.h"), header_defining(1));
  const EnvVars env = {{"PROBE_INCLUDE_DIR", path("inc")}};
  EXPECT_EQ(compile("include_dir", env).misses, 1);
  fs::remove(path("inc/probe_dep.h"));
  const Outcome deleted = compile("include_dir", env);  // compared with NVRTC: same error, same log
  EXPECT_EQ(deleted.hits, 0);
  EXPECT_NE(deleted.output.find("compile rc=6"), std::string::npos) << deleted.output;
  EXPECT_NE(deleted.log.find("probe_dep.h vanished"), std::string::npos) << deleted.log;
  EXPECT_EQ(compile("include_dir", env).hits, 1);  // the failed compile is cached with its probes
  write_file(path("inc/probe_dep.h"), header_defining(3));
  const Outcome restored = compile("include_dir", env);
  EXPECT_EQ(restored.hits, 0);
  EXPECT_NE(restored.output.find("compile rc=0"), std::string::npos);
}

TEST_F(Dependencies, ChangingNvrtcAppendFlagsIsAMiss) {
  EXPECT_EQ(compile("cubin").misses, 1);
  EXPECT_EQ(compile("cubin").hits, 1);
  const Outcome appended = compile("cubin", {{"NVRTC_APPEND_FLAGS", "-G"}});
  EXPECT_EQ(appended.hits, 0);
  EXPECT_NE(appended.log.find("NVRTC_APPEND_FLAGS changed"), std::string::npos) << appended.log;
  EXPECT_EQ(compile("cubin", {{"NVRTC_APPEND_FLAGS", "-G"}}).hits, 1);
  EXPECT_EQ(compile("cubin", {{"NVRTC_APPEND_FLAGS", "-DUNUSED=1"}}).hits, 0);
  EXPECT_EQ(compile("cubin").hits, 1);
}

TEST_F(Dependencies, RetargetedSymlinkedIncludeDirectoryIsAMiss) {
  write_file(path("v1/probe_dep.h"), header_defining(1));
  write_file(path("v2/probe_dep.h"), header_defining(2));
  fs::create_directory_symlink(path("v1"), path("current"));
  const EnvVars env = {{"PROBE_INCLUDE_DIR", path("current")}};
  EXPECT_EQ(compile("include_dir", env).misses, 1);
  EXPECT_EQ(compile("include_dir", env).hits, 1);
  fs::remove(path("current"));
  fs::create_directory_symlink(path("v2"), path("current"));
  const Outcome retargeted = compile("include_dir", env);
  EXPECT_EQ(retargeted.hits, 0);
  EXPECT_EQ(retargeted.misses, 1);
}

TEST_F(Dependencies, TimeMacroInAHeaderIsNeverServedFromCache) {
  write_file(path("inc/probe_dep.h"), "#define PROBE_VALUE (__TIME__[7] - '0')\n");
  const EnvVars env = {{"PROBE_INCLUDE_DIR", path("inc")}};
  for (int i = 0; i < 2; ++i) {
    // Not compared byte for byte with a separate NVRTC run: __TIME__ differs between the two runs.
    const Outcome o = compile("include_dir", env, "", false);
    EXPECT_EQ(o.hits, 0);
    EXPECT_EQ(o.uncacheable, 1);
    EXPECT_NE(o.log.find("__TIME__"), std::string::npos) << o.log;
  }
  EXPECT_EQ(get(counters_of(cache_.path()), "stores"), 0);
}

TEST_F(Dependencies, DateMacroIsCachedForTheDay) {
  write_file(path("inc/probe_dep.h"), "#define PROBE_VALUE (__DATE__[5] - '0')\n");
  const EnvVars env = {{"PROBE_INCLUDE_DIR", path("inc")}};
  EXPECT_EQ(compile("include_dir", env).misses, 1);
  EXPECT_EQ(compile("include_dir", env).hits, 1);
}

TEST_F(Dependencies, OtherThreadsFileAndEnvironmentAccessesAreNotRecorded) {
  const Outcome alone = compile("trivial");
  const Outcome busy = compile("busy_neighbour");
  auto files_and_probes = [](const std::string& log) {
    const auto at = log.find(": ", log.find("stored "));
    return at == std::string::npos ? std::string("?") : log.substr(at, log.find(" paths probed", at) - at);
  };
  EXPECT_EQ(files_and_probes(alone.log), files_and_probes(busy.log)) << alone.log << busy.log;
  EXPECT_EQ(busy.log.find("hostname"), std::string::npos);
  EXPECT_EQ(compile("busy_neighbour").hits, 1);
}

TEST_F(Dependencies, InterposedLibcCallsBehaveAsLibc) {
  const Outcome o = compile("libc");  // compared byte for byte with the run without the shim
  EXPECT_NE(o.output.find("fopen missing: null errno=2"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("getenv: set errno=4242"), std::string::npos) << o.output;
}

// The "N files read, M paths probed" of the last "stored" line in a debug log.
std::string stored_summary(const std::string& log) {
  const auto stored = log.rfind("stored ");
  if (stored == std::string::npos) return "";
  const auto from = log.find(": ", stored) + 2;
  return log.substr(from, log.find(',', log.find(',', from) + 1) - from);
}

// Far more headers than any fixed-size capture would hold: 20,000 distinct headers over four -I
// directories (each found after failed probes of the directories before it).
TEST_F(Dependencies, TwentyThousandHeadersOverFourIncludeDirectoriesAreCachedAndAnEditIsNoticed) {
  constexpr int kHeaders = 20000;
  constexpr int kDeep = 17321;  // in the fourth directory, near the end of the include order
  const std::vector<std::string> dirs = {path("d0"), path("d1"), path("d2"), path("d3")};
  std::string source;
  for (int i = 0; i < kHeaders; ++i) {
    const std::string name = "h" + std::to_string(i) + ".h";
    write_file(dirs[static_cast<std::size_t>(i % 4)] + "/" + name,
               "#pragma once\n#define H" + std::to_string(i) + " " + std::to_string(i) + "\n");
    source += "#include \"" + name + "\"\n";
  }
  source += "__global__ void k(int* x) { x[0] = H" + std::to_string(kDeep) + "; x[1] = H0; }\n";
  write_file(path("many.cu"), source);
  const EnvVars env = {{"PROBE_SOURCE_FILE", path("many.cu")},
                       {"PROBE_INCLUDE_DIR", dirs[0] + ":" + dirs[1] + ":" + dirs[2] + ":" + dirs[3]}};

  const Outcome cold = compile("source_file", env);
  EXPECT_EQ(cold.uncacheable, 0) << cold.log.substr(0, 2000);
  EXPECT_EQ(cold.misses, 1);
  EXPECT_NE(cold.output.find("compile rc=0"), std::string::npos);
  const std::string summary = stored_summary(cold.log);
  EXPECT_EQ(summary.rfind(std::to_string(kHeaders) + " files read", 0), 0u) << summary;

  const store::Counters before = counters_of(cache_.path());
  const Outcome warm = compile("source_file", env);  // byte-identical to a direct NVRTC run
  EXPECT_EQ(warm.hits, 1);
  EXPECT_EQ(warm.output, cold.output);
  const std::int64_t validate_ns = get(counters_of(cache_.path()), "hit_validate_ns") - get(before, "hit_validate_ns");
  std::cout << "[ measure ] " << summary << "; hit validation " << validate_ns / 1000 << " us\n";

  write_file(dirs[kDeep % 4] + "/h" + std::to_string(kDeep) + ".h",
             "#pragma once\n#define H" + std::to_string(kDeep) + " 987654\n");
  const Outcome edited = compile("source_file", env);  // compared with a fresh NVRTC run
  EXPECT_EQ(edited.hits, 0);
  EXPECT_EQ(edited.misses, 1);
  EXPECT_NE(edited.output, warm.output);
  EXPECT_NE(edited.log.find("h" + std::to_string(kDeep) + ".h changed"), std::string::npos)
      << edited.log.substr(0, 2000);
  EXPECT_EQ(compile("source_file", env).hits, 1);
}

// CUB from the toolkit's CCCL with a relative -I before it: hundreds of headers, many probes.
TEST_F(Dependencies, TwoCubBlockHeadersWithARelativeIncludeDirectoryAreCached) {
  fs::create_directories(path("include"));
  write_file(path("cub.cu"),
             "#include <cub/block/block_reduce.cuh>\n"
             "#include <cub/block/block_radix_sort.cuh>\n"
             "__global__ void k(int* x) {\n"
             "  using Reduce = cub::BlockReduce<int, 128>;\n"
             "  using Sort = cub::BlockRadixSort<int, 128, 4>;\n"
             "  __shared__ union { typename Reduce::TempStorage reduce; typename Sort::TempStorage sort; } s;\n"
             "  int keys[4] = {x[threadIdx.x], x[threadIdx.x + 128], x[threadIdx.x + 256], x[threadIdx.x + 384]};\n"
             "  Sort(s.sort).Sort(keys);\n"
             "  __syncthreads();\n"
             "  const int sum = Reduce(s.reduce).Sum(keys[0]);\n"
             "  if (threadIdx.x == 0) x[0] = sum;\n"
             "}\n");
  const EnvVars env = {{"PROBE_SOURCE_FILE", path("cub.cu")},
                       {"PROBE_INCLUDE_DIR", "include:/usr/local/cuda/include/cccl"},
                       {"PROBE_OPTIONS", "-std=c++17"}};
  const Outcome cold = compile("source_file", env, work_.path());
  EXPECT_EQ(cold.uncacheable, 0) << cold.log;
  EXPECT_EQ(cold.misses, 1);
  EXPECT_NE(cold.output.find("compile rc=0"), std::string::npos);
  const Outcome warm = compile("source_file", env, work_.path());
  EXPECT_EQ(warm.hits, 1);
  EXPECT_EQ(warm.output, cold.output);
  std::cout << "[ measure ] CUB: " << stored_summary(cold.log) << "\n";
}

}  // namespace
}  // namespace nvrtc_cache
