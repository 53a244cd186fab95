// Dependency tracking (direct-mode manifests), with real files and real NVRTC in separate
// processes: every scenario compares the shim's every getter byte for byte with a fresh NVRTC run
// in the same directory and environment, and checks hit or miss in the shared statistics.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "tests/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
namespace fs = std::filesystem;

void write_file(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::trunc) << content;
}

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

}  // namespace
}  // namespace nvrtc_cache
