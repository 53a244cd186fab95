// Every way real clients load NVRTC, each cold then warm under the shim, compared byte for byte with
// the same client without the shim, and the warm run served from the cache. This file backs the
// coverage table in docs/coverage.md. Each test first checks its client's dynamic section: a client that
// dlopens NVRTC has no DT_NEEDED on it (nvrtc_probe_unlinked: tests/clients/nvrtc_probe.cc built
// unlinked), so no startup dependency can put NVRTC, or the proxy standing in for it, in the global
// scope behind the test's back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/support/dynamic_section.h"
#include "tests/support/harness.h"

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

// The probe linked with -lnvrtc, and the same probe with no reference to NVRTC (it can only dlopen it).
const std::string kLinkedProbe = NVRTC_PROBE_PATH;
const std::string kUnlinkedProbe = NVRTC_PROBE_UNLINKED_PATH;

std::vector<std::string> probe_argv(const std::string& probe = kLinkedProbe,
                                    const std::vector<std::string>& scenarios = kScenarios) {
  std::vector<std::string> argv = {probe};
  argv.insert(argv.end(), scenarios.begin(), scenarios.end());
  return argv;
}

// The client loads NVRTC the way the test says: linked (DT_NEEDED) or only through dlopen.
void expect_startup_dependency_on_nvrtc(const std::string& client, bool linked) {
  ASSERT_EQ(needs_nvrtc(client), linked) << client << (linked ? " must" : " must not") << " have NVRTC in DT_NEEDED";
}

TEST(Loading, LinkedWithLnvrtc) {
  expect_startup_dependency_on_nvrtc(kLinkedProbe, true);
  TempDir cache;
  expect_served_identically(cold_and_warm(probe_argv(), {}, cache.path()), 4);
}

TEST(Loading, DlopenBySonameAndDlsym) {
  expect_startup_dependency_on_nvrtc(kUnlinkedProbe, false);
  TempDir cache;
  expect_served_identically(cold_and_warm(probe_argv(kUnlinkedProbe), {{"PROBE_LOAD", "soname"}}, cache.path()), 4);
}

TEST(Loading, DlopenByAbsolutePathAndDlsym) {
  expect_startup_dependency_on_nvrtc(kUnlinkedProbe, false);
  TempDir cache;
  const EnvVars env = {{"PROBE_LOAD", "path:" + kCudaLib + "/libnvrtc.so.13"}};
  expect_served_identically(cold_and_warm(probe_argv(kUnlinkedProbe), env, cache.path()), 4);
}

// RTLD_DEEPBIND: NVRTC's own libc references bind to libc ahead of the preloaded shim; its imports
// are redirected to the hooks (shim/watch/import_patch.h), so its header reads are still seen.
TEST(Loading, DlopenWithRtldDeepbindAndDlsym) {
  expect_startup_dependency_on_nvrtc(kUnlinkedProbe, false);
  TempDir cache;
  const auto argv = probe_argv(kUnlinkedProbe, {"trivial", "template", "headers", "compile_error", "include_dir"});
  expect_served_identically(cold_and_warm(argv, {{"PROBE_LOAD", "deepbind"}}, cache.path()), 5);
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
  expect_startup_dependency_on_nvrtc(kUnlinkedProbe, false);
  expect_served_identically(cold_and_warm(probe_argv(kUnlinkedProbe), env, cache.path()), 4);
}

TEST(Loading, ThroughAnIntermediateLibraryOpenedRtldLocal) {
  expect_startup_dependency_on_nvrtc(kUnlinkedProbe, false);
  expect_startup_dependency_on_nvrtc(PROBE_LOADER_PATH, false);
  TempDir cache;
  const EnvVars env = {{"PROBE_LOAD", std::string("loader:") + PROBE_LOADER_PATH}};
  expect_served_identically(cold_and_warm(probe_argv(kUnlinkedProbe), env, cache.path()), 4);
}

TEST(Loading, BesideAnotherPreloadedLibraryCallingDlsymRtldNext) {
  expect_startup_dependency_on_nvrtc(kLinkedProbe, true);
  for (const std::string& order : {std::string(NVRTC_CACHE_SHIM_PATH) + ":" + PROBE_PRELOAD_PATH,
                                   std::string(PROBE_PRELOAD_PATH) + ":" + NVRTC_CACHE_SHIM_PATH}) {
    TempDir cache;
    EnvVars env = {{"LD_PRELOAD", order}};
    Runs r = cold_and_warm(probe_argv(), env, cache.path());
    r.direct = run_process(
        probe_argv(),
        {{"LD_LIBRARY_PATH", kCudaLib}, {"LD_PRELOAD", PROBE_PRELOAD_PATH}, {"PROBE_INCLUDE_DIR", kIncludeDir}});
    SCOPED_TRACE(order);
    expect_served_identically(r, 4);
  }
}

// Proxy mode: no preload; `nvrtc-cache run --proxy` puts a stand-in libnvrtc.so.13 first on the
// library path. The client runs directly (real NVRTC), then cold and warm through the CLI.
Runs proxy_cold_and_warm(const std::vector<std::string>& client, EnvVars env, const std::string& cache) {
  std::vector<std::string> argv = {NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--"};
  argv.insert(argv.end(), client.begin(), client.end());
  env.try_emplace("LD_LIBRARY_PATH", kCudaLib);
  env.try_emplace("PROBE_INCLUDE_DIR", kIncludeDir);
  Runs r;
  r.direct = run_process(client, env);
  env["NVRTC_CACHE_DIR"] = cache;
  r.cold = run_process(argv, env);
  const auto before = counters_of(cache);
  r.warm = run_process(argv, env);
  const auto after = counters_of(cache);
  r.warm_hits = get(after, "hits") - get(before, "hits");
  r.warm_misses = get(after, "misses") - get(before, "misses");
  return r;
}

const std::vector<std::string> kProxyScenarios = {"trivial", "template", "headers", "compile_error", "include_dir"};

// A linked client finds the stand-in as its startup dependency; a client with no DT_NEEDED on NVRTC
// dlopens it by soname RTLD_LOCAL (as jitify2, CuPy and Python stacks do), so the stand-in and the
// real NVRTC it loads are both outside the global scope: NVRTC's header reads are seen only through
// its redirected imports. PROBE_LAZY=1: the same with RTLD_LAZY (NVRTC's slots not yet bound).
TEST(Loading, ProxyModeForLinkedAndSonameClients) {
  struct Client {
    std::string binary, load, lazy;
    bool linked;
  };
  for (const Client& c : {Client{kLinkedProbe, "linked", "0", true}, Client{kUnlinkedProbe, "soname", "0", false},
                          Client{kUnlinkedProbe, "soname", "1", false}}) {
    SCOPED_TRACE(c.load + (c.lazy == "1" ? " (lazy)" : ""));
    expect_startup_dependency_on_nvrtc(c.binary, c.linked);
    TempDir cache;
    const Runs r = proxy_cold_and_warm(probe_argv(c.binary, kProxyScenarios),
                                       {{"PROBE_LOAD", c.load}, {"PROBE_LAZY", c.lazy}}, cache.path());
    EXPECT_EQ(r.cold.err.find("not observable"), std::string::npos) << r.cold.err;
    EXPECT_EQ(r.warm.err.find("reached the cache"), std::string::npos) << r.warm.err;
    expect_served_identically(r, 5);
  }
}

// The proxy exports every function of every 12.x/13.x NVRTC, yet a dlsym client finds exactly the
// functions the real NVRTC behind it has (indirect functions resolved against it): with 13.0, no
// nvrtcGetTileIR, as without the proxy; with the 13.5 wheel, all of 13.5's.
TEST(Loading, ProxyModeDlsymFindsWhatTheRealNvrtcHas) {
  expect_startup_dependency_on_nvrtc(kUnlinkedProbe, false);
  const char* wheel = std::getenv("NVRTC_CACHE_TEST_NVRTC13");
  std::vector<std::string> libraries = {kCudaLib};
  if (wheel) {
    libraries.push_back(fs::path(wheel).parent_path().string());
  } else if (pypi_required()) {
    FAIL() << "NVRTC_CACHE_TEST_NVRTC13 (the nvidia-cuda-nvrtc wheel) is required";
  }
  for (const std::string& dir : libraries) {
    SCOPED_TRACE(dir);
    TempDir cache;
    const Runs r = proxy_cold_and_warm(
        probe_argv(kUnlinkedProbe, {"symbols", "version"}),
        {{"PROBE_LOAD", "soname"}, {"LD_LIBRARY_PATH", dir}, {"NVRTC_CACHE_REAL_NVRTC", dir + "/libnvrtc.so.13"}},
        cache.path());
    ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
    EXPECT_NE(r.direct.out.find(dir == kCudaLib ? "nvrtc 13.0" : "nvrtc 13.5"), std::string::npos) << r.direct.out;
    EXPECT_NE(r.direct.out.find(dir == kCudaLib ? "nvrtcGetTileIR: absent" : "nvrtcGetTileIR: found"),
              std::string::npos)
        << r.direct.out;
    EXPECT_EQ(r.cold.out, r.direct.out) << r.cold.err;
    EXPECT_EQ(r.warm.out, r.direct.out) << r.warm.err;
  }
}

// A program linked against NVRTC 13.5 that calls nvrtcGetTileIR (tests/clients/tile_client.cc), through the
// proxy: with the 13.5 wheel behind it, cold and warm give the real NVRTC's Tile IR byte for byte (the
// warm run served); with 13.0 behind it, the call ends the program exactly as the dynamic loader ends
// it without the proxy (same message, exit status 127).
TEST(Loading, ProxyModeAnswersTileIRAndAFunctionTheRealNvrtcLacks) {
  expect_startup_dependency_on_nvrtc(TILE_CLIENT_PATH, true);
  const char* wheel = std::getenv("NVRTC_CACHE_TEST_NVRTC13");
  if (wheel == nullptr) NVRTC_CACHE_SKIP_WITHOUT_PYPI("NVRTC_CACHE_TEST_NVRTC13 (the nvidia-cuda-nvrtc wheel)");
  const std::string wheel_dir = fs::path(wheel).parent_path().string();
  {
    TempDir cache;
    const Runs r = proxy_cold_and_warm(
        {TILE_CLIENT_PATH}, {{"LD_LIBRARY_PATH", wheel_dir}, {"NVRTC_CACHE_REAL_NVRTC", wheel}}, cache.path());
    ASSERT_NE(r.direct.out.find("tileir size_rc=0 size="), std::string::npos) << r.direct.out << r.direct.err;
    ASSERT_EQ(r.direct.out.find("tileir size_rc=0 size=0 "), std::string::npos) << "no Tile IR";
    expect_served_identically(r, 1);
  }
  {
    TempDir cache;
    const Runs r = proxy_cold_and_warm({TILE_CLIENT_PATH}, {{"LD_LIBRARY_PATH", kCudaLib}}, cache.path());
    ASSERT_EQ(r.direct.exit_code, 127) << r.direct.out << r.direct.err;
    ASSERT_NE(r.direct.err.find("undefined symbol: nvrtcGetTileIRSize"), std::string::npos) << r.direct.err;
    for (const ProcessResult* run : {&r.cold, &r.warm}) {
      EXPECT_EQ(run->exit_code, 127);
      EXPECT_EQ(run->out, r.direct.out);
      EXPECT_EQ(run->err, r.direct.err);
    }
  }
}

// Proxy mode, a dlopen-by-soname client: a header edited between runs is noticed (a miss, and the
// new result byte for byte), and the new result is then served.
TEST(Loading, ProxyModeNoticesAHeaderEditForASonameClient) {
  expect_startup_dependency_on_nvrtc(kUnlinkedProbe, false);
  TempDir cache, include;
  const std::string header = include.path() + "/probe_dep.h";
  std::ofstream(header) << "#pragma once\n#define PROBE_VALUE 42\n";
  const EnvVars env = {{"PROBE_LOAD", "soname"}, {"PROBE_INCLUDE_DIR", include.path()}};
  const auto client = probe_argv(kUnlinkedProbe, {"include_dir"});
  Runs first = proxy_cold_and_warm(client, env, cache.path());
  expect_served_identically(first, 1);
  sleep(1);  // a different modification time, whatever the file system's granularity
  std::ofstream(header) << "#pragma once\n#define PROBE_VALUE 43\n";
  const Runs edited = proxy_cold_and_warm(client, env, cache.path());
  ASSERT_EQ(edited.direct.exit_code, 0) << edited.direct.err;
  EXPECT_NE(edited.direct.out, first.direct.out) << "the edit must change NVRTC's output";
  EXPECT_TRUE(edited.cold.out == edited.direct.out) << "after the edit, the cold run differs from NVRTC\n"
                                                    << edited.cold.err;
  EXPECT_TRUE(edited.warm.out == edited.direct.out) << edited.warm.err;
  EXPECT_EQ(edited.warm_hits, 1);
  EXPECT_EQ(get(counters_of(cache.path()), "stores"), 2) << "the edit must have been a miss, stored beside the first";
}

// Proxy mode, dlopen by absolute path: the real NVRTC is opened directly, the stand-in is never
// loaded; results are NVRTC's own and nothing is cached (use preload mode).
TEST(Loading, ProxyModeDoesNotReachDlopenByAbsolutePath) {
  expect_startup_dependency_on_nvrtc(kUnlinkedProbe, false);
  TempDir cache;
  const Runs r = proxy_cold_and_warm(probe_argv(kUnlinkedProbe),
                                     {{"PROBE_LOAD", "path:" + kCudaLib + "/libnvrtc.so.13"}}, cache.path());
  ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
  EXPECT_TRUE(r.direct.out == r.cold.out) << r.cold.err;
  EXPECT_TRUE(r.direct.out == r.warm.out) << r.warm.err;
  const auto counters = counters_of(cache.path());
  EXPECT_EQ(get(counters, "hits") + get(counters, "misses") + get(counters, "stores"), 0);
  // ...and says so at the end of each run, naming preload mode as the fix.
  for (const ProcessResult* run : {&r.cold, &r.warm}) {
    EXPECT_NE(run->err.find("no NVRTC compile, nvJitLink link or NVVM compile reached the cache"), std::string::npos)
        << run->err;
    EXPECT_NE(run->err.find("nvrtc-cache run -- CMD"), std::string::npos) << run->err;
  }
}

TEST(Loading, PythonCtypesBySoname) {
  const std::string python = python_binary("python3");
  ASSERT_FALSE(python.empty());
  expect_startup_dependency_on_nvrtc(python, false);
  TempDir cache;
  const std::vector<std::string> argv = {"/usr/bin/env", "python3",
                                         std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/ctypes_client.py"};
  expect_served_identically(cold_and_warm(argv, {}, cache.path()), 1);
}

TEST(Loading, TwoNvrtcMajorsInOneProcess) {
  const char* nvrtc12 = std::getenv("NVRTC_CACHE_TEST_NVRTC12");
  if (nvrtc12 == nullptr || access(nvrtc12, R_OK) != 0) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI(
        "set NVRTC_CACHE_TEST_NVRTC12 to an NVRTC 12 library (the nvidia-cuda-nvrtc-cu12 "
        "wheel's nvidia/cuda_nvrtc/lib/libnvrtc.so.12; scripts/python_env.sh does)");
  }
  expect_startup_dependency_on_nvrtc(kUnlinkedProbe, false);
  TempDir cache;
  const Runs r = cold_and_warm({kUnlinkedProbe, "two_majors"}, {{"PROBE_NVRTC12", nvrtc12}}, cache.path());
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
    NVRTC_CACHE_SKIP_WITHOUT_PYPI(
        "set NVRTC_CACHE_TEST_PYTHON to a Python with cuda-core, cuda-bindings, "
        "cupy-cuda13x and numba-cuda (scripts/python_env.sh makes one when PyPI is reachable)");
  }
  ASSERT_FALSE(python_binary(python).empty());
  expect_startup_dependency_on_nvrtc(python_binary(python), false);
  TempDir cache;
  const std::vector<std::string> argv = {
      python, std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/jit_stacks.py", GetParam()};
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

INSTANTIATE_TEST_SUITE_P(PyPI, PythonJitStack, ::testing::Values("bindings", "core", "cupy", "cupy_kernels", "numba"));

}  // namespace
}  // namespace nvrtc_cache

namespace nvrtc_cache {
namespace {

using namespace testing;

// Two majors *linked* into one process: the program links NVRTC 13, a library it uses links NVRTC
// 12 (its references are nvrtcX@libnvrtc.so.12). Built in `work` with the system compiler against the
// NVRTC 12 wheel's directory `dir12`; returns the program.
std::string build_two_majors_program(const std::string& work, const std::string& dir12) {
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
  std::ofstream(work + "/lib12.c") << "#define FN compile_with_12\n" << client;
  std::ofstream(work + "/main.c") << "#define FN compile_with_13\n"
                                  << client
                                  << "void compile_with_12(const char*);\n"
                                     "int main(void) { compile_with_12(\"lib12\"); compile_with_13(\"main\");"
                                     " compile_with_12(\"lib12 again\"); return 0; }\n";
  const std::string inc = "-I" + std::string(CUDA_NVRTC_LIBRARY_DIR) + "/../include";
  const auto lib = run_process({"/usr/bin/cc", "-shared", "-fPIC", inc, "-o", work + "/lib12.so", work + "/lib12.c",
                                "-L" + dir12, "-l:libnvrtc.so.12"});
  EXPECT_EQ(lib.exit_code, 0) << lib.err;
  const auto exe = run_process({"/usr/bin/cc", inc, "-o", work + "/main", work + "/main.c", work + "/lib12.so",
                                "-Wl,-rpath-link," + dir12, "-L" + std::string(CUDA_NVRTC_LIBRARY_DIR), "-lnvrtc"});
  EXPECT_EQ(exe.exit_code, 0) << exe.err;
  const auto lib12_needs = needed_libraries(work + "/lib12.so");
  EXPECT_NE(std::find(lib12_needs.begin(), lib12_needs.end(), "libnvrtc.so.12"), lib12_needs.end());
  EXPECT_TRUE(needs_nvrtc(work + "/main"));
  return work + "/main";
}

void expect_each_major_served(const Runs& r, const std::string& cache) {
  expect_served_identically(r, 3);
  EXPECT_NE(r.direct.out.find("lib12: NVRTC 12."), std::string::npos) << r.direct.out.substr(0, 300);
  EXPECT_NE(r.direct.out.find("main: NVRTC 13."), std::string::npos);
  EXPECT_EQ(get(counters_of(cache), "stores"), 2) << "each major keeps its own entry";
}

// The program built against the NVRTC 12 wheel ($NVRTC_CACHE_TEST_NVRTC12), and its library path.
class LoadingTwoMajors : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* nvrtc12 = std::getenv("NVRTC_CACHE_TEST_NVRTC12");
    if (nvrtc12 == nullptr || access(nvrtc12, R_OK) != 0) {
      NVRTC_CACHE_SKIP_WITHOUT_PYPI("set NVRTC_CACHE_TEST_NVRTC12 (scripts/python_env.sh does)");
    }
    dir12_ = std::filesystem::path(nvrtc12).parent_path().string();
    program_ = build_two_majors_program(work_.path(), dir12_);
    ASSERT_FALSE(HasFailure());
  }
  TempDir work_, cache_;
  std::string dir12_, program_;
};

TEST_F(LoadingTwoMajors, LinkedIntoOneProcess) {
  const EnvVars env = {{"LD_LIBRARY_PATH", dir12_ + ":" + CUDA_NVRTC_LIBRARY_DIR}};
  expect_each_major_served(cold_and_warm({program_}, env, cache_.path()), cache_.path());
}

// The same program through `run --proxy`: its libnvrtc.so.13 is the proxy core, its library's
// libnvrtc.so.12 the stand-in beside it, which reaches the 12.x NVRTC only.
TEST_F(LoadingTwoMajors, LinkedIntoOneProcessThroughTheProxy) {
  const EnvVars env = {{"LD_LIBRARY_PATH", dir12_ + ":" + CUDA_NVRTC_LIBRARY_DIR}, {"NVRTC_CACHE_LOG", "info"}};
  const Runs r = proxy_cold_and_warm({program_}, env, cache_.path());
  expect_each_major_served(r, cache_.path());
  EXPECT_NE(r.cold.err.find("the real NVRTC is " + dir12_ + "/libnvrtc.so.12"), std::string::npos) << r.cold.err;
  EXPECT_NE(r.cold.err.find("the real NVRTC is " + std::string(CUDA_NVRTC_LIBRARY_DIR) + "/libnvrtc.so.13"),
            std::string::npos)
      << r.cold.err;
}

}  // namespace
}  // namespace nvrtc_cache
