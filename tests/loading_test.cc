// Every way real clients load NVRTC, each cold then warm under the shim, compared byte for byte with
// the same client without the shim, and the warm run served from the cache. This file backs the
// coverage table in the README.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
namespace fs = std::filesystem;

const std::vector<std::string> kScenarios = {"trivial", "template", "headers", "compile_error"};
const std::string kCudaLib = CUDA_NVRTC_LIBRARY_DIR;

struct Runs {
  ProcessResult direct, cold, warm;
  std::int64_t warm_hits = 0, warm_misses = 0;
};

Runs cold_and_warm(const std::vector<std::string>& argv, EnvVars env, const std::string& cache) {
  env.try_emplace("LD_LIBRARY_PATH", kCudaLib);
  env.try_emplace("PROBE_INCLUDE_DIR", kIncludeDir);
  Runs r;
  r.direct = run_process(argv, env);
  EnvVars shimmed = env;
  shimmed["NVRTC_CACHE_DIR"] = cache;
  if (!shimmed.count("LD_PRELOAD")) shimmed["LD_PRELOAD"] = NVRTC_CACHE_SHIM_PATH;
  r.cold = run_process(argv, shimmed);
  const auto before = counters_of(cache);
  r.warm = run_process(argv, shimmed);
  const auto after = counters_of(cache);
  r.warm_hits = get(after, "hits") - get(before, "hits");
  r.warm_misses = get(after, "misses") - get(before, "misses");
  return r;
}

void expect_served_identically(const Runs& r, std::int64_t expected_hits) {
  ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
  ASSERT_FALSE(r.direct.out.empty());
  EXPECT_EQ(r.cold.exit_code, 0) << r.cold.err;
  EXPECT_EQ(r.warm.exit_code, 0) << r.warm.err;
  EXPECT_TRUE(r.direct.out == r.cold.out) << "cold differs from NVRTC\n" << r.cold.err;
  EXPECT_TRUE(r.direct.out == r.warm.out) << "warm differs from NVRTC\n" << r.warm.err;
  EXPECT_EQ(r.warm_misses, 0);
  EXPECT_EQ(r.warm_hits, expected_hits) << "the warm run was not served from the cache";
}

std::vector<std::string> probe_argv() {
  std::vector<std::string> argv = {NVRTC_PROBE_PATH};
  argv.insert(argv.end(), kScenarios.begin(), kScenarios.end());
  return argv;
}

TEST(Loading, LinkedWithLnvrtc) {
  TempDir cache;
  expect_served_identically(cold_and_warm(probe_argv(), {}, cache.path()), 4);
}

TEST(Loading, DlopenBySonameAndDlsym) {
  TempDir cache;
  expect_served_identically(cold_and_warm(probe_argv(), {{"PROBE_LOAD", "soname"}}, cache.path()), 4);
}

TEST(Loading, DlopenByAbsolutePathAndDlsym) {
  TempDir cache;
  const EnvVars env = {{"PROBE_LOAD", "path:" + kCudaLib + "/libnvrtc.so.13"}};
  expect_served_identically(cold_and_warm(probe_argv(), env, cache.path()), 4);
}

TEST(Loading, ASecondCopyAtAnotherPath) {
  TempDir cache, copy;
  for (const auto& entry : fs::directory_iterator(kCudaLib)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("libnvrtc", 0) == 0 && name.find(".alt.") == std::string::npos && !entry.is_symlink()) {
      fs::copy_file(entry.path(), copy.path() + "/" + name);
    }
  }
  for (const auto& entry : fs::directory_iterator(kCudaLib)) {  // keep the sonames resolvable
    const std::string name = entry.path().filename().string();
    if (name.rfind("libnvrtc", 0) == 0 && entry.is_symlink() && name.find(".alt.") == std::string::npos) {
      fs::create_symlink(fs::read_symlink(entry.path()), copy.path() + "/" + name);
    }
  }
  const EnvVars env = {{"PROBE_LOAD", "path:" + copy.path() + "/libnvrtc.so.13"}};
  expect_served_identically(cold_and_warm(probe_argv(), env, cache.path()), 4);
}

TEST(Loading, ThroughAnIntermediateLibraryOpenedRtldLocal) {
  TempDir cache;
  const EnvVars env = {{"PROBE_LOAD", std::string("loader:") + PROBE_LOADER_PATH}};
  expect_served_identically(cold_and_warm(probe_argv(), env, cache.path()), 4);
}

TEST(Loading, BesideAnotherPreloadedLibraryCallingDlsymRtldNext) {
  for (const std::string& order : {std::string(NVRTC_CACHE_SHIM_PATH) + ":" + PROBE_PRELOAD_PATH,
                                   std::string(PROBE_PRELOAD_PATH) + ":" + NVRTC_CACHE_SHIM_PATH}) {
    TempDir cache;
    EnvVars env = {{"LD_PRELOAD", order}};
    Runs r = cold_and_warm(probe_argv(), env, cache.path());
    r.direct = run_process(probe_argv(), {{"LD_LIBRARY_PATH", kCudaLib}, {"LD_PRELOAD", PROBE_PRELOAD_PATH},
                                          {"PROBE_INCLUDE_DIR", kIncludeDir}});
    SCOPED_TRACE(order);
    expect_served_identically(r, 4);
  }
}

// Proxy mode: no preload; `nvrtc-cache run --proxy` puts a stand-in libnvrtc.so.13 first on the
// library path. Reaches linked programs and dlopen by soname.
TEST(Loading, ProxyModeForLinkedAndSonameClients) {
  for (const std::string load : {"linked", "soname"}) {
    TempDir cache;
    std::vector<std::string> argv = {NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--"};
    const auto probe = probe_argv();
    argv.insert(argv.end(), probe.begin(), probe.end());
    EnvVars env = {{"PROBE_LOAD", load}, {"LD_LIBRARY_PATH", kCudaLib}, {"PROBE_INCLUDE_DIR", kIncludeDir}};
    Runs r;
    r.direct = run_process(probe, env);
    env["NVRTC_CACHE_DIR"] = cache.path();
    r.cold = run_process(argv, env);
    const auto before = counters_of(cache.path());
    r.warm = run_process(argv, env);
    const auto after = counters_of(cache.path());
    r.warm_hits = get(after, "hits") - get(before, "hits");
    r.warm_misses = get(after, "misses") - get(before, "misses");
    SCOPED_TRACE(load);
    expect_served_identically(r, 4);
  }
}

TEST(Loading, PythonCtypesBySoname) {
  TempDir cache;
  const std::vector<std::string> argv = {"/usr/bin/env", "python3",
                                         std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/python/ctypes_client.py"};
  expect_served_identically(cold_and_warm(argv, {}, cache.path()), 1);
}

TEST(Loading, TwoNvrtcMajorsInOneProcess) {
  const char* nvrtc12 = std::getenv("NVRTC_CACHE_TEST_NVRTC12");
  if (nvrtc12 == nullptr || access(nvrtc12, R_OK) != 0) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI("set NVRTC_CACHE_TEST_NVRTC12 to an NVRTC 12 library (the nvidia-cuda-nvrtc-cu12 "
                                  "wheel's nvidia/cuda_nvrtc/lib/libnvrtc.so.12; scripts/python_env.sh does)");
  }
  TempDir cache;
  const Runs r = cold_and_warm({NVRTC_PROBE_PATH, "two_majors"}, {{"PROBE_NVRTC12", nvrtc12}}, cache.path());
  expect_served_identically(r, 3);
  EXPECT_NE(r.direct.out.find("== NVRTC 12."), std::string::npos) << r.direct.out.substr(0, 200);
  EXPECT_NE(r.direct.out.find("== NVRTC 13."), std::string::npos);
  EXPECT_EQ(get(counters_of(cache.path()), "stores"), 2) << "the two majors must not share an entry";
}

}  // namespace
}  // namespace nvrtc_cache

namespace nvrtc_cache {
namespace {

using namespace testing;

// Real Python JIT stacks from PyPI, in the virtual environment scripts/python_env.sh makes.
class PythonJitStack : public ::testing::TestWithParam<std::string> {};

TEST_P(PythonJitStack, ColdThenWarmIsByteIdenticalAndServed) {
  const char* python = std::getenv("NVRTC_CACHE_TEST_PYTHON");
  if (python == nullptr || access(python, X_OK) != 0) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI("set NVRTC_CACHE_TEST_PYTHON to a Python with cuda-core, cuda-bindings, "
                                  "cupy-cuda13x and numba-cuda (scripts/python_env.sh makes one when PyPI is reachable)");
  }
  TempDir cache;
  const std::vector<std::string> argv = {python, std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/python/jit_stacks.py",
                                         GetParam()};
  const EnvVars env = {{"PYTHONDONTWRITEBYTECODE", "1"}};
  const ProcessResult direct = run_process(argv, env);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EnvVars shimmed = env;
  shimmed["LD_PRELOAD"] = NVRTC_CACHE_SHIM_PATH;
  shimmed["NVRTC_CACHE_DIR"] = cache.path();
  const ProcessResult cold = run_process(argv, shimmed);
  const auto after_cold = counters_of(cache.path());
  const ProcessResult warm = run_process(argv, shimmed);
  const auto after_warm = counters_of(cache.path());
  EXPECT_TRUE(direct.out == cold.out) << cold.err;
  EXPECT_TRUE(direct.out == warm.out) << warm.err;
  EXPECT_GT(get(after_cold, "stores"), 0) << cold.err;
  EXPECT_EQ(get(after_warm, "misses") - get(after_cold, "misses"), 0);
  EXPECT_EQ(get(after_warm, "hits") - get(after_cold, "hits"), get(after_cold, "stores"));
}

INSTANTIATE_TEST_SUITE_P(PyPI, PythonJitStack, ::testing::Values("bindings", "core", "cupy", "numba"));

}  // namespace
}  // namespace nvrtc_cache

namespace nvrtc_cache {
namespace {

using namespace testing;

// Two majors *linked* into one process: the program links NVRTC 13, a library it uses links NVRTC
// 12 (its references are nvrtcX@libnvrtc.so.12). Built here with the system compiler against the
// NVRTC 12 wheel, then run directly, cold and warm.
TEST(Loading, TwoNvrtcMajorsLinkedIntoOneProcess) {
  const char* nvrtc12 = std::getenv("NVRTC_CACHE_TEST_NVRTC12");
  if (nvrtc12 == nullptr || access(nvrtc12, R_OK) != 0) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI("set NVRTC_CACHE_TEST_NVRTC12 (scripts/python_env.sh does)");
  }
  TempDir work, cache;
  const std::string dir12 = std::filesystem::path(nvrtc12).parent_path().string();
  const std::string client =
      "#include <nvrtc.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
      "#define NAME(x) x\n"
      "static const char* src = \"extern \\\"C\\\" __global__ void k(int* x) { x[0] = 7; }\\n\";\n"
      "void FN(const char* label) {\n"
      "  int major = 0, minor = 0; nvrtcVersion(&major, &minor);\n"
      "  nvrtcProgram p; nvrtcCreateProgram(&p, src, \"k.cu\", 0, 0, 0);\n"
      "  const char* opts[] = {\"-arch=compute_80\"};\n"
      "  int rc = nvrtcCompileProgram(p, 1, opts);\n"
      "  size_t n = 0; nvrtcGetPTXSize(p, &n); char* ptx = malloc(n); nvrtcGetPTX(p, ptx);\n"
      "  printf(\"%s: NVRTC %d.%d rc=%d ptx=%zu\\n%s\\n\", label, major, minor, rc, n, ptx);\n"
      "  free(ptx); nvrtcDestroyProgram(&p);\n"
      "}\n";
  std::ofstream(work.path() + "/lib12.c") << "#define FN compile_with_12\n" << client;
  std::ofstream(work.path() + "/main.c") << "#define FN compile_with_13\n" << client
                                          << "void compile_with_12(const char*);\n"
                                             "int main(void) { compile_with_12(\"lib12\"); compile_with_13(\"main\");"
                                             " compile_with_12(\"lib12 again\"); return 0; }\n";
  const std::string inc = "-I" + std::string(CUDA_NVRTC_LIBRARY_DIR) + "/../include";
  const auto lib = run_process({"/usr/bin/cc", "-shared", "-fPIC", inc, "-o", work.path() + "/lib12.so",
                                work.path() + "/lib12.c", "-L" + dir12, "-l:libnvrtc.so.12"});
  ASSERT_EQ(lib.exit_code, 0) << lib.err;
  const auto exe = run_process({"/usr/bin/cc", inc, "-o", work.path() + "/main", work.path() + "/main.c",
                                work.path() + "/lib12.so", "-Wl,-rpath-link," + dir12,
                                "-L" + std::string(CUDA_NVRTC_LIBRARY_DIR), "-lnvrtc"});
  ASSERT_EQ(exe.exit_code, 0) << exe.err;
  const EnvVars env = {{"LD_LIBRARY_PATH", dir12 + ":" + CUDA_NVRTC_LIBRARY_DIR}};
  const Runs r = cold_and_warm({work.path() + "/main"}, env, cache.path());
  expect_served_identically(r, 3);
  EXPECT_NE(r.direct.out.find("lib12: NVRTC 12."), std::string::npos) << r.direct.out.substr(0, 300);
  EXPECT_NE(r.direct.out.find("main: NVRTC 13."), std::string::npos);
  EXPECT_EQ(get(counters_of(cache.path()), "stores"), 2) << "each major keeps its own entry";
}

}  // namespace
}  // namespace nvrtc_cache
