// The working directory in the key only where the outputs depend on it, with the real NVRTC in real
// processes: the same program compiled from two directories. Where NVRTC's outputs are the same from
// both (asserted first), the second directory's compile is a hit; where they differ, each directory
// gets its own exact result. Every shimmed run is compared byte for byte with NVRTC run directly in
// the same directory and environment.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
namespace fs = std::filesystem;

constexpr const char* kKernels =
    "template <typename T> __global__ void k(T* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;"
    " if (i < n) x[i] = x[i] * 2 + 1; }\n"
    "template __global__ void k<float>(float*, int);\n"
    "extern \"C\" __global__ void axpy(float a, float* x, float* y, int n) { int i = threadIdx.x;"
    " if (i < n) y[i] = a * x[i] + y[i]; }\n";
constexpr const char* kIncluding =
    "#include \"wd_helper.h\"\n"
    "extern \"C\" __global__ void axpy(float a, float* x, float* y, int n) { int i = threadIdx.x;"
    " if (i < n) y[i] = twice(a) * x[i] + y[i]; }\n";
constexpr const char* kHelper = "__device__ float twice(float v) { return 2 * v; }\n";

struct Compiled {
  std::int64_t hits = 0, misses = 0, working_directory_misses = 0;
  std::string direct, shimmed, log;
};

class WorkingDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = root_.path() + "/a";
    b_ = root_.path() + "/b";
    fs::create_directories(a_);
    fs::create_directories(b_);
    write_file(root_.path() + "/kernels.cu", kKernels);
    write_file(root_.path() + "/including.cu", kIncluding);
  }

  // Compiles `source` (a file under the root) with `options` (space-separated) named `name` in
  // `dir`, directly and through the cache.
  Compiled compile(const std::string& dir, const std::string& source, const std::string& options,
                   const std::string& name = "wd.cu", EnvVars env = {}) {
    env["PROBE_SOURCE_FILE"] = root_.path() + "/" + source;
    env["PROBE_OPTIONS"] = options;
    env["PROBE_PROGRAM_NAME"] = name;
    env["PROBE_INCLUDE_DIR"] = "";
    env["PWD"] = dir;
    const store::Counters before = counters_of(cache_.path());
    Compiled run;
    const ProcessResult direct = probe({"source_file"}, env, dir);
    for (auto& [k, v] : shim_env(cache_.path())) env[k] = v;
    env["NVRTC_CACHE_LOG"] = "debug";
    const ProcessResult shimmed = probe({"source_file"}, env, dir);
    EXPECT_EQ(direct.exit_code, 0) << direct.err;
    EXPECT_EQ(shimmed.exit_code, 0) << shimmed.err;
    EXPECT_TRUE(direct.out == shimmed.out)
        << "the shim's results differ from NVRTC's in " << dir << " with " << options << "\n"
        << shimmed.err;
    const store::Counters after = counters_of(cache_.path());
    return {get(after, "hits") - get(before, "hits"),
            get(after, "misses") - get(before, "misses"),
            get(after, "miss.working_directory") - get(before, "miss.working_directory"),
            direct.out,
            shimmed.out,
            shimmed.err};
  }

  // Outputs the same from both directories: the second directory hits the first's result.
  void expect_shared(const std::string& source, const std::string& options, const std::string& name = "wd.cu",
                     const EnvVars& env = {}) {
    SCOPED_TRACE(options + " named " + name);
    const Compiled in_a = compile(a_, source, options, name, env);
    EXPECT_EQ(in_a.misses, 1) << in_a.log;
    const Compiled in_b = compile(b_, source, options, name, env);
    ASSERT_EQ(in_a.direct, in_b.direct) << "precondition: NVRTC's outputs no longer the same from both";
    EXPECT_EQ(in_b.hits, 1) << in_b.log;
    EXPECT_EQ(in_b.misses, 0);
  }

  // Outputs that differ between the directories: each gets its own exact result, then hits it.
  void expect_separate(const std::string& source, const std::string& options, const std::string& name = "wd.cu",
                       const EnvVars& env = {}) {
    SCOPED_TRACE(options + " named " + name);
    const Compiled in_a = compile(a_, source, options, name, env);
    const Compiled in_b = compile(b_, source, options, name, env);
    ASSERT_NE(in_a.direct, in_b.direct) << "precondition: NVRTC's outputs now the same from both";
    EXPECT_EQ(in_a.misses, 1) << in_a.log;
    EXPECT_EQ(in_b.hits, 0) << in_b.log;
    EXPECT_EQ(in_b.misses, 1);
    // Options that embed the directory: the second directory's miss says why.
    EXPECT_EQ(in_b.working_directory_misses, embedding_ ? 1 : 0) << in_b.log;
    EXPECT_EQ(in_a.working_directory_misses, 0) << in_a.log;
    if (embedding_) {
      EXPECT_NE(in_b.log.find("compiled before in " + a_ + ", and its options make NVRTC embed the working directory"),
                std::string::npos)
          << in_b.log;
    }
    EXPECT_EQ(compile(a_, source, options, name, env).hits, 1);
    EXPECT_EQ(compile(b_, source, options, name, env).hits, 1);
  }

  TempDir root_, cache_;
  std::string a_, b_;
  bool embedding_ = false;  // the options embed the working directory (miss.working_directory expected)
};

TEST_F(WorkingDirectory, OptionsThatDoNotEmbedItShareOneResult) {
  const std::string options[] = {
      "-arch=sm_80",
      "-arch=compute_80",
      "--gpu-architecture sm_90 -std=c++17 -DSCALE=2 -D OTHER=1 -USCALE --use_fast_math",
      "-arch=sm_80 -rdc=true -dopt=on",
      "-arch=sm_80 --relocatable-device-code=true --extensible-whole-program",
      "-arch=sm_80 -ewp -default-device -maxrregcount=32",
      "-arch=sm_80 --fdevice-syntax-only",
      "-arch=sm_80 -Xptxas -O1 --ptxas-options=-lineinfo",
      "-arch=sm_80 -w --diag-suppress=177 -ftz=true -prec-div=false -fmad=false",
      "-arch=sm_80 -Iinc -I . --include-path=../a",  // relative directories with nothing used in them
  };
  for (const std::string& o : options) expect_shared("kernels.cu", o);
  expect_shared("kernels.cu", "-arch=sm_80 -lineinfo", "/abs/wd.cu");  // line info names /abs/wd.cu only
  expect_shared("kernels.cu", "-arch=sm_80 --generate-line-info", "/abs/wd.cu");
}

TEST_F(WorkingDirectory, ErrorsAndWarningsShareOneResult) {
  write_file(root_.path() + "/error.cu", "extern \"C\" __global__ void f(float a) { undefined_thing(a); }\n");
  write_file(root_.path() + "/warning.cu", "#warning hello\nextern \"C\" __global__ void f(float* a) { *a = 1; }\n");
  expect_shared("error.cu", "-arch=sm_80");
  expect_shared("warning.cu", "-arch=sm_80");
}

// An option NVRTC documents (libraries/nvrtc/options.h) whose effect on the directory was never measured.
TEST_F(WorkingDirectory, AnOptionTheRuleHasNotMeasuredKeepsItInTheKey) {
  const Compiled in_a = compile(a_, "kernels.cu", "-arch=sm_80 -device-float128");
  const Compiled in_b = compile(b_, "kernels.cu", "-arch=sm_80 -device-float128");
  ASSERT_EQ(in_a.direct, in_b.direct);  // the outputs do not name the directory, but the rule cannot know
  EXPECT_EQ(in_a.misses, 1);
  EXPECT_EQ(in_b.misses, 1);
  EXPECT_EQ(in_b.hits, 0);
}

// An option the option table does not know is never cached, from any directory.
TEST_F(WorkingDirectory, AnUnknownOptionIsNotCachedFromAnyDirectory) {
  const Compiled in_a = compile(a_, "kernels.cu", "-arch=sm_80 --definitely-not-an-option");
  const Compiled in_b = compile(b_, "kernels.cu", "-arch=sm_80 --definitely-not-an-option");
  EXPECT_NE(in_a.direct.find("compile rc=5"), std::string::npos) << in_a.direct;
  EXPECT_EQ(in_a.misses + in_b.misses + in_a.hits + in_b.hits, 0);
  EXPECT_NE(in_b.log.find("is unknown for NVRTC 13.0"), std::string::npos) << in_b.log;
}

TEST_F(WorkingDirectory, OptionsThatEmbedItGetExactResultsInEachDirectory) {
  embedding_ = true;
  expect_separate("kernels.cu", "-arch=sm_80 -G");
  expect_separate("kernels.cu", "-arch=sm_80 --device-debug", "/abs/wd.cu");
  expect_separate("kernels.cu", "-arch=sm_80 -G -dopt=on");
  expect_separate("kernels.cu", "-arch=sm_80 -dlto", "/abs/wd.cu");
  expect_separate("kernels.cu", "-arch=sm_80 --dlink-time-opt");
  expect_separate("kernels.cu", "-arch=compute_80 --optix-ir -rdc=true", "/abs/wd.cu");
  expect_separate("kernels.cu", "-arch=sm_80 -lineinfo");
  expect_separate("kernels.cu", "-arch=sm_80 --generate-line-info", "./wd.cu");
  expect_separate("kernels.cu", "-arch=sm_80 -lineinfo", "");
}

TEST_F(WorkingDirectory, LineInfoWithAnAbsoluteNameIsPinnedWhenItFindsAHeaderThroughARelativePath) {
  write_file(a_ + "/inc/wd_helper.h", kHelper);
  write_file(b_ + "/inc/wd_helper.h", kHelper);  // the same bytes: only its path in line info differs
  expect_separate("including.cu", "-arch=sm_80 -lineinfo -Iinc", "/abs/wd.cu");
  // Without line info the same header is shared, validated against each directory's copy.
  expect_shared("including.cu", "-arch=sm_80 -Iinc", "/abs/wd.cu");
}

TEST_F(WorkingDirectory, ARelativeHeaderIsValidatedAgainstTheDirectoryOfTheLookup) {
  write_file(a_ + "/inc/wd_helper.h", kHelper);
  write_file(b_ + "/inc/wd_helper.h", "__device__ float twice(float v) { return v + v + 1; }\n");
  expect_separate("including.cu", "-arch=sm_80 -Iinc");  // a relative -I: b's header differs
  // A quoted include found next to a relative program name, i.e. in the working directory.
  write_file(a_ + "/wd_helper.h", kHelper);
  write_file(b_ + "/wd_helper.h", "__device__ float twice(float v) { return v * 2.5f; }\n");
  expect_separate("including.cu", "-arch=sm_80");
  // Made the same: b's copy is checked (by its bytes) and a's result served; then b's changes.
  write_file(b_ + "/wd_helper.h", kHelper);
  const Compiled same = compile(b_, "including.cu", "-arch=sm_80");
  EXPECT_EQ(same.hits, 1) << same.log;
  write_file(b_ + "/wd_helper.h", "__device__ float twice(float v) { return v * 3; }\n");
  const Compiled changed = compile(b_, "including.cu", "-arch=sm_80");
  EXPECT_EQ(changed.hits, 0) << changed.log;
  EXPECT_NE(changed.log.find("wd_helper.h changed"), std::string::npos) << changed.log;
  // Removed from b: NVRTC's error, not a's result.
  fs::remove(b_ + "/wd_helper.h");
  const Compiled removed = compile(b_, "including.cu", "-arch=sm_80");
  EXPECT_EQ(removed.hits, 0) << removed.log;
  EXPECT_NE(removed.direct.find("compile rc=6"), std::string::npos) << removed.direct;
}

TEST_F(WorkingDirectory, AppendFlagsCountLikeTheProgramsOptions) {
  // This NVRTC reads NVRTC_APPEND_FLAGS without applying it (measured), so the outputs stay the
  // same; the key still keeps the directory for -G, as the option would embed it.
  const Compiled in_a = compile(a_, "kernels.cu", "-arch=sm_80", "wd.cu", {{"NVRTC_APPEND_FLAGS", "-G"}});
  const Compiled in_b = compile(b_, "kernels.cu", "-arch=sm_80", "wd.cu", {{"NVRTC_APPEND_FLAGS", "-G"}});
  EXPECT_EQ(in_a.misses, 1) << in_a.log;
  EXPECT_EQ(in_b.hits, 0) << in_b.log;
  EXPECT_EQ(in_b.misses, 1);
  expect_shared("kernels.cu", "-arch=sm_80 -rdc=true", "wd.cu", {{"NVRTC_APPEND_FLAGS", "-DUNUSED=1 -std=c++17"}});
}

}  // namespace
}  // namespace nvrtc_cache
