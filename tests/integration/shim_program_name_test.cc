// The program's directory left out of the key where NVRTC's outputs cannot depend on it
// (keying/program_name_rule.h), with the real NVRTC in real processes: the same program named by a
// fresh directory in each process, as CuPy names every program. Where NVRTC's outputs are the same
// under both names (asserted first), the second is a hit; where the name reaches them (a macro, a
// diagnostic, a header beside the program, line info), each name gets its own exact result. Every
// shimmed run is compared byte for byte with NVRTC run directly under the same name.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
namespace fs = std::filesystem;

constexpr const char* kKernel =
    "extern \"C\" __global__ void axpy(float a, float* x, float* y, int n) { int i = threadIdx.x;"
    " if (i < n) y[i] = a * x[i] + y[i]; }\n";

struct Compiled {
  std::int64_t hits = 0, misses = 0;
  std::string direct, log;
};

class ProgramName : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_.path() + "/include");
    write_file(root_.path() + "/include/where.h", "#define WHERE __FILE__\n#define CHECK(x) assert(x)\n");
  }

  std::string name_in(const std::string& directory) const { return root_.path() + "/" + directory + "/kern.cu"; }

  // Compiles `source` with `options` (space-separated) named `name`, directly and through the cache.
  Compiled compile(const std::string& source, const std::string& options, const std::string& name) {
    write_file(root_.path() + "/source.cu", source);
    EnvVars env;
    env["PROBE_SOURCE_FILE"] = root_.path() + "/source.cu";
    env["PROBE_OPTIONS"] = options;
    env["PROBE_PROGRAM_NAME"] = name;
    env["PROBE_INCLUDE_DIR"] = "";
    const store::Counters before = counters_of(cache_.path());
    const ProcessResult direct = probe({"source_file"}, env, root_.path());
    for (auto& [k, v] : shim_env(cache_.path())) env[k] = v;
    env["NVRTC_CACHE_LOG"] = "debug";
    const ProcessResult shimmed = probe({"source_file"}, env, root_.path());
    EXPECT_EQ(direct.exit_code, 0) << direct.err;
    EXPECT_EQ(shimmed.exit_code, 0) << shimmed.err;
    EXPECT_TRUE(direct.out == shimmed.out) << "the shim's results differ from NVRTC's for " << name << "\n"
                                           << shimmed.err;
    const store::Counters after = counters_of(cache_.path());
    return {get(after, "hits") - get(before, "hits"), get(after, "misses") - get(before, "misses"), direct.out,
            shimmed.err};
  }

  // NVRTC's outputs the same under both names: the second name hits the first's result.
  void expect_shared(const std::string& source, const std::string& options, const std::string& a = "tmpA",
                     const std::string& b = "tmpBB") {
    SCOPED_TRACE(options + ": " + source);
    const Compiled first = compile(source, options, name_in(a));
    EXPECT_EQ(first.misses, 1) << first.log;
    const Compiled second = compile(source, options, name_in(b));
    ASSERT_EQ(first.direct, second.direct) << "precondition: NVRTC's outputs no longer the same under both names";
    EXPECT_EQ(second.hits, 1) << second.log;
    EXPECT_EQ(second.misses, 0);
  }

  // The outputs name the program: each name gets its own exact result, then hits it.
  void expect_separate(const std::string& source, const std::string& options) {
    SCOPED_TRACE(options + ": " + source);
    const Compiled first = compile(source, options, name_in("tmpA"));
    const Compiled second = compile(source, options, name_in("tmpBB"));
    ASSERT_NE(first.direct, second.direct) << "precondition: NVRTC's outputs now the same under both names";
    EXPECT_EQ(first.misses, 1) << first.log;
    EXPECT_EQ(second.hits, 0) << second.log;
    EXPECT_EQ(second.misses, 1);
    EXPECT_EQ(compile(source, options, name_in("tmpA")).hits, 1);
    EXPECT_EQ(compile(source, options, name_in("tmpBB")).hits, 1);
  }

  TempDir root_, cache_;
};

TEST_F(ProgramName, AFreshDirectoryPerProcessIsAHit) {
  expect_shared(kKernel, "-arch=sm_80");
  expect_shared(kKernel, "-arch=sm_90 --device-as-default-execution-space -std=c++17", "tmpC", "tmpDDD");
  expect_shared(kKernel, "-arch=compute_80 -rdc=true", "tmpE", "tmpF");
  // Headers of its own that use assert and __FILE__ in their code name themselves, not the program.
  write_file(root_.path() + "/include/own.h",
             "#include \"where.h\"\n__device__ int own(int* x) { assert(*x > 0); return sizeof(__FILE__); }\n");
  expect_shared("#include <own.h>\n" + std::string(kKernel), "-arch=sm_80 -I" + root_.path() + "/include", "tmpG",
                "tmpH");
  // The macros of a header that reach __FILE__, defined but not used.
  expect_shared("#include <where.h>\n" + std::string(kKernel), "-arch=sm_80 -I" + root_.path() + "/include", "tmpI",
                "tmpJ");
}

TEST_F(ProgramName, FileMacrosInTheSourceKeepTheNameInTheKey) {
  expect_separate("extern \"C\" __global__ void f(const char** s) { *s = __FILE__; }\n", "-arch=sm_80");
  expect_separate("__global__ void f(int* x) { assert(*x > 0); }\n", "-arch=sm_80");
  expect_separate("extern \"C\" __global__ void f(int* n) { *n = sizeof(__BASE_FILE__); }\n", "-arch=compute_80");
  // Through a header's macro, and through a macro defined on the command line.
  const std::string include = "-arch=sm_80 -I" + root_.path() + "/include";
  expect_separate("#include <where.h>\n__global__ void f(const char** s) { *s = WHERE; }\n", include);
  expect_separate("#include <where.h>\n__global__ void f(int* x) { CHECK(*x > 0); }\n", include);
  expect_separate("__global__ void f(const char** s) { *s = HERE; }\n", "-arch=sm_80 -DHERE=__FILE__");
}

TEST_F(ProgramName, ADiagnosticThatNamesTheProgramKeepsItsName) {
  expect_separate("extern \"C\" __global__ void f(float* a) { int unused; *a = 1; }\n", "-arch=sm_80");
  expect_separate("extern \"C\" __global__ void f(float* a) { *a = undefined_thing; }\n", "-arch=sm_80");
}

TEST_F(ProgramName, LineInfoAndDebugInfoKeepTheNameInTheKey) {
  expect_separate(kKernel, "-arch=sm_80 -lineinfo");
  expect_separate(kKernel, "-arch=sm_80 -G");
  expect_separate(kKernel, "-arch=sm_80 -dlto");
}

TEST_F(ProgramName, AQuotedIncludeBesideTheProgramIsNotServedUnderAnotherName) {
  const std::string source = "#include \"beside.h\"\n" + std::string(kKernel);
  write_file(root_.path() + "/tmpA/beside.h", "#define SCALE 2\n");
  write_file(root_.path() + "/tmpBB/beside.h", "#define SCALE 3\n");
  const Compiled first = compile(source, "-arch=sm_80", name_in("tmpA"));
  const Compiled second = compile(source, "-arch=sm_80", name_in("tmpBB"));
  EXPECT_EQ(first.misses, 1) << first.log;
  EXPECT_EQ(second.hits, 0) << second.log;
  EXPECT_EQ(compile(source, "-arch=sm_80", name_in("tmpA")).hits, 1);
  // Beside neither, found through -I: NVRTC looked for it beside the program first, so each name
  // still gets its own result (what another directory holds there is not known).
  write_file(root_.path() + "/include/beside.h", "#define SCALE 4\n");
  const std::string include = "-arch=sm_80 -I" + root_.path() + "/include";
  const Compiled in_k = compile(source, include, name_in("tmpK"));
  const Compiled in_l = compile(source, include, name_in("tmpL"));
  EXPECT_EQ(in_k.direct, in_l.direct);
  EXPECT_EQ(in_l.misses, 1) << in_l.log;
  EXPECT_EQ(in_l.hits, 0);
}

}  // namespace
}  // namespace nvrtc_cache
