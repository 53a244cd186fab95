// libNVVM through the shim (libraries/nvvm/): the NVVM client (tests/clients/nvvm_client.cc) run directly,
// then under the shim cold, then warm, each in its own process with the real libNVVM; every return
// code, size, result byte and log must be identical, the warm run served (NVVM hits, no new misses),
// linked and through dlopen, under the preloaded shim and through the proxy's stand-in libnvvm.so.4
// (`nvrtc-cache run --proxy`). Then the Python stacks that compile through libNVVM (numba-cuda's
// compile_ptx, cuda.core's Program(code_type="nvvm")).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/support/dynamic_section.h"
#include "tests/support/cold_and_warm.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {
namespace {

namespace fs = std::filesystem;

using Runs = ColdAndWarm;

const std::vector<std::string> kClients = {NVVM_CLIENT_PATH, NVVM_CLIENT_UNLINKED_PATH};

TEST(Nvvm, TheClientsLoadLibNvvmAsTheirNamesSay) {
  EXPECT_TRUE(needs_library(NVVM_CLIENT_PATH, "libnvvm"));
  EXPECT_FALSE(needs_library(NVVM_CLIENT_UNLINKED_PATH, "libnvvm"));
}

// The libNVVM the clients find: the toolkit's (13.0), or CUDA 12.9's (the nvidia-cuda-nvcc-cu12 wheel's
// nvvm/lib64/libnvvm.so, soname libnvvm.so.4 as 13.x's), found first on the library path.
struct NvvmLibrary {
  std::string name;
  const char* variable;     // the library's path, or nullptr: the toolkit's
  const char* ptx_release;  // what its PTX says it is ("release 12.9"), or nullptr
};

class NvvmVersions : public ::testing::TestWithParam<NvvmLibrary> {
 protected:
  // The clients' environment, or nullopt (skipped, or failed where PyPI is required) without the wheel.
  std::optional<EnvVars> library_env() {
    if (GetParam().variable == nullptr) return EnvVars{};
    const char* library = std::getenv(GetParam().variable);
    if (library == nullptr) {
      if (pypi_required()) ADD_FAILURE() << "required: " << GetParam().variable;
      return std::nullopt;
    }
    fs::create_symlink(library, libraries_.path() + "/libnvvm.so.4");  // the wheel names it libnvvm.so
    return EnvVars{{"LD_LIBRARY_PATH", libraries_.path()}};
  }

 private:
  TempDir libraries_;
};

std::string hex_of(const std::string& text) {
  std::string hex;
  for (unsigned char c : text) hex += {"0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15]};
  return hex;
}

// PTX and LTO-IR (-gen-lto), lazily added modules, a verification before the compile (as cuda.core
// does), and compiles libNVVM refuses (broken IR, an unknown option, no module): all served.
TEST_P(NvvmVersions, CompilesAreServedByteForByteColdAndWarm) {
  const std::optional<EnvVars> env = library_env();
  if (!env) GTEST_SKIP() << GetParam().variable << " is not set";
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const Runs r = cold_and_warm({client, "ptx", "gen_lto", "lazy", "verified", "broken", "bad_option", "no_module"},
                                 cache.path(), *env);
    ASSERT_NE(r.direct.out.find("ptx\n  create=0\n  add=0\n  add=0\n  compile=0\n  result size_rc=0"),
              std::string::npos)
        << r.direct.out;
    ASSERT_NE(r.direct.out.find("broken\n  create=0\n  add=0\n  add=0\n  compile=9"), std::string::npos);
    if (GetParam().ptx_release) {
      ASSERT_NE(r.direct.out.find(hex_of(GetParam().ptx_release)), std::string::npos) << r.direct.out;
    }
    expect_identical(r);
    EXPECT_EQ(get(r.after_cold, "nvvm_hits"), 0);
    EXPECT_EQ(get(r.after_cold, "nvvm_misses"), 6);  // the unknown option is not cached
    EXPECT_EQ(get(r.after_cold, "nvvm_uncacheable"), 1);
    EXPECT_EQ(get(r.after_warm, "nvvm_hits"), 6);
    EXPECT_EQ(get(r.after_warm, "nvvm_misses"), 6);
    // Each counted under its reason, in libNVVM's own rows (NVRTC's stay empty).
    EXPECT_EQ(get(r.after_cold, "nvvm.miss.new_program"), 6);
    EXPECT_EQ(get(r.after_cold, "nvvm.uncacheable.unknown_option"), 1);
    EXPECT_EQ(get(r.after_warm, "nvvm.uncacheable.unknown_option"), 2);
    EXPECT_EQ(get(r.after_warm, "miss.new_program") + get(r.after_warm, "uncacheable.unknown_option"), 0);
  }
}

// A verification after a served compile and a second compile reach libNVVM (the served compile is
// first run for real).
TEST_P(NvvmVersions, CallsTheEntryCannotAnswerReachLibNvvm) {
  const std::optional<EnvVars> env = library_env();
  if (!env) GTEST_SKIP() << GetParam().variable << " is not set";
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const Runs r = cold_and_warm({client, "after_compile"}, cache.path(), *env);
    expect_identical(r);
    EXPECT_EQ(get(r.after_warm, "nvvm_hits"), 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Libraries, NvvmVersions,
                         ::testing::Values(NvvmLibrary{"toolkit", nullptr, nullptr},
                                           NvvmLibrary{"cuda12", "NVRTC_CACHE_TEST_NVVM12", "release 12.9"}),
                         [](const ::testing::TestParamInfo<NvvmLibrary>& param_info) { return param_info.param.name; });

// Proxy mode (`nvrtc-cache run --proxy`, no preload): the stand-in libnvvm.so.4 (linked, or dlopened
// by soname) forwards to the proxy core, which compiles with the toolkit's libNVVM by absolute path:
// every result and log byte for byte, the warm run served.
TEST(Nvvm, ProxyModeServesCompilesByteForByteColdAndWarm) {
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const Runs r = proxy_cold_and_warm(NVRTC_CACHE_CLI_PATH, {client, "ptx", "gen_lto", "lazy", "verified", "broken"},
                                       cache.path());
    expect_identical(r);
    EXPECT_EQ(r.cold.err.find("reached the cache"), std::string::npos) << r.cold.err;
    EXPECT_EQ(get(r.after_cold, "nvvm_hits"), 0);
    EXPECT_EQ(get(r.after_cold, "nvvm_misses"), 5);
    EXPECT_EQ(get(r.after_warm, "nvvm_hits"), 5);
    EXPECT_EQ(get(r.after_warm, "nvvm_misses"), 5);
  }
}

// A process that uses libNVVM only loads the proxy core (its cache runtime) but never the real NVRTC.
TEST(Nvvm, ProxyModeLoadsNoRealNvrtcForAnNvvmOnlyProcess) {
  TempDir cache;
  const ProcessResult run = run_process({NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", NVVM_CLIENT_PATH, "ptx"},
                                        {{"NVRTC_CACHE_DIR", cache.path()}, {"LD_DEBUG", "files"}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("file=" + std::string(NVRTC_CACHE_PROXY_DIR) + "/libnvrtc.so.13"), std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("file=" + std::string(NVRTC_CACHE_REAL_NVRTC_PATH)), std::string::npos) << run.err;
  EXPECT_EQ(get(counters_of(cache.path()), "nvvm_misses"), 1);
}

// Proxy mode with no real libNVVM where NVRTC_CACHE_REAL_NVVM points: the client still runs, each
// libNVVM call failing with libNVVM's NVVM_ERROR_INVALID_PROGRAM, the reason said on stderr.
TEST(Nvvm, ProxyModeWithoutTheRealLibNvvmFailsOpen) {
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const std::string missing = cache.path() + "/missing/libnvvm.so.4";
    const ProcessResult run = run_process({NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", client, "ptx"},
                                          {{"NVRTC_CACHE_DIR", cache.path()}, {"NVRTC_CACHE_REAL_NVVM", missing}});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("ptx\n  create=5\n"), std::string::npos) << run.out;
    EXPECT_NE(run.err.find("cannot load the real libNVVM (" + missing), std::string::npos) << run.err;
  }
}

// A ctypes client (dlopen by soname, dlsym) finds every libNVVM function through the stand-in, as
// without the proxy, and the functions the stand-in forwards untouched (the version getters, the
// error strings) answer as libNVVM's own.
TEST(Nvvm, ProxyModeForwardsLibNvvmsOtherFunctionsUntouched) {
  const std::string python = python_binary("python3");
  ASSERT_FALSE(python.empty());
  const std::string script =
      "import ctypes\n"
      "lib = ctypes.CDLL('libnvvm.so.4')\n"
      "for name in ['nvvmCreateProgram', 'nvvmVersion', 'nvvmIRVersion', 'nvvmGetErrorString',\n"
      "             'nvvmDisableConcurrentAPI', '__nvvmHandle', '__nvvmHandleTarget', 'nvvmFuture',\n"
      "             'nvrtcVersion', 'nvrtc_cache_proxy_entries']:\n"
      "    print(name, hasattr(lib, name))\n"
      "v = [ctypes.c_int() for _ in range(4)]\n"
      "print('version', lib.nvvmVersion(ctypes.byref(v[0]), ctypes.byref(v[1])), v[0].value, v[1].value)\n"
      "print('ir', lib.nvvmIRVersion(*[ctypes.byref(x) for x in v]), [x.value for x in v])\n"
      "lib.nvvmGetErrorString.restype = ctypes.c_char_p\n"
      "print('errors', [lib.nvvmGetErrorString(i) for i in range(12)])\n";
  const std::string dir = fs::path(NVRTC_CACHE_REAL_NVVM_PATH).parent_path().string();
  const ProcessResult direct = run_process({python, "-c", script}, {{"LD_LIBRARY_PATH", dir}});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_NE(direct.out.find("nvvmVersion True"), std::string::npos) << direct.out;
  TempDir cache;
  const ProcessResult proxied = run_process({NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", python, "-c", script},
                                            {{"LD_LIBRARY_PATH", dir}, {"NVRTC_CACHE_DIR", cache.path()}});
  EXPECT_EQ(proxied.exit_code, 0) << proxied.err;
  EXPECT_EQ(proxied.out, direct.out) << proxied.err;
}

// The proxy's own stand-in named as the real libNVVM (an override, or a search that met the proxy's
// directory first): forwarding to it would call itself forever. Its calls fail as libNVVM's fail,
// said in the log, and the process ends.
TEST(Nvvm, ProxyModeNeverForwardsToItsOwnStandIn) {
  const std::string python = python_binary("python3");
  ASSERT_FALSE(python.empty());
  const std::string script =
      "import ctypes\n"
      "lib = ctypes.CDLL('libnvvm.so.4')\n"
      "v = [ctypes.c_int() for _ in range(2)]\n"
      "print('version', lib.nvvmVersion(ctypes.byref(v[0]), ctypes.byref(v[1])))\n";
  TempDir cache;
  const ProcessResult proxied =
      run_process({"/usr/bin/timeout", "60", NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", python, "-c", script},
                  {{"NVRTC_CACHE_REAL_NVVM", std::string(NVRTC_CACHE_PROXY_DIR) + "/libnvvm.so.4"},
                   {"NVRTC_CACHE_DIR", cache.path()}});
  EXPECT_EQ(proxied.exit_code, 0) << proxied.err;
  EXPECT_EQ(proxied.out, "version 5\n") << proxied.err;
  EXPECT_NE(proxied.err.find("is this proxy's own"), std::string::npos) << proxied.err;
}

// The stand-in exports exactly libNVVM's functions, unversioned as libNVVM's, and nothing else; its
// soname is libNVVM's.
TEST(Nvvm, TheProxyStandInExportsLibNvvmsFunctionsOnly) {
  const std::string standin = std::string(NVRTC_CACHE_PROXY_DIR) + "/libnvvm.so.4";
  const std::set<std::string> exported = defined_dynamic_symbols(standin);
  EXPECT_EQ(exported.size(), 16u);
  EXPECT_EQ(exported, defined_dynamic_symbols(NVRTC_CACHE_REAL_NVVM_PATH));
  EXPECT_EQ(soname_of(standin), "libnvvm.so.4");
}

// Python's stacks that compile through libNVVM (scripts/python_env.sh): numba-cuda's
// cuda.compile_ptx (its @cuda.jit kernels' path) and cuda.core's Program(code_type="nvvm"), which load
// libNVVM by absolute path and look its functions up with dlsym.
class PythonNvvmStack : public ::testing::TestWithParam<std::string> {};

TEST_P(PythonNvvmStack, ColdThenWarmIsByteIdenticalAndServed) {
  const char* python = std::getenv("NVRTC_CACHE_TEST_PYTHON");
  if (python == nullptr || access(python, X_OK) != 0) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI("set NVRTC_CACHE_TEST_PYTHON (scripts/python_env.sh makes one)");
  }
  TempDir cache;
  const Runs r =
      cold_and_warm({python, std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/nvvm_stacks.py", GetParam()},
                    cache.path(), {{"PYTHONDONTWRITEBYTECODE", "1"}});
  expect_identical(r);
  ASSERT_NE(r.direct.out.find("ptx "), std::string::npos) << r.direct.out;
  EXPECT_EQ(get(r.after_cold, "nvvm_hits"), 0);
  EXPECT_GE(get(r.after_cold, "nvvm_misses"), 1);
  EXPECT_EQ(get(r.after_warm, "nvvm_hits"), get(r.after_cold, "nvvm_misses"));
  EXPECT_EQ(get(r.after_warm, "nvvm_misses"), get(r.after_cold, "nvvm_misses"));
}

INSTANTIATE_TEST_SUITE_P(Stacks, PythonNvvmStack, ::testing::Values("numba", "core"));

}  // namespace
}  // namespace nvrtc_cache::testing
