// libNVVM through the shim (shim/nvvm/): the NVVM client (tests/clients/nvvm_client.cc) run directly,
// then under the shim cold, then warm, each in its own process with the real libNVVM; every return
// code, size, result byte and log must be identical, the warm run served (NVVM hits, no new misses),
// linked and through dlopen. Then the Python stacks that compile through libNVVM (numba-cuda's
// compile_ptx, cuda.core's Program(code_type="nvvm")).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/support/dynamic_section.h"
#include "tests/support/cold_and_warm.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {
namespace {

using Runs = ColdAndWarm;

const std::vector<std::string> kClients = {NVVM_CLIENT_PATH, NVVM_CLIENT_UNLINKED_PATH};

TEST(Nvvm, TheClientsLoadLibNvvmAsTheirNamesSay) {
  EXPECT_TRUE(needs_library(NVVM_CLIENT_PATH, "libnvvm"));
  EXPECT_FALSE(needs_library(NVVM_CLIENT_UNLINKED_PATH, "libnvvm"));
}

// PTX and LTO-IR (-gen-lto), lazily added modules, a verification before the compile (as cuda.core
// does), and compiles libNVVM refuses (broken IR, an unknown option, no module): all served.
TEST(Nvvm, CompilesAreServedByteForByteColdAndWarm) {
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const Runs r = cold_and_warm({client, "ptx", "gen_lto", "lazy", "verified", "broken", "bad_option", "no_module"},
                                 cache.path());
    ASSERT_NE(r.direct.out.find("ptx\n  create=0\n  add=0\n  add=0\n  compile=0\n  result size_rc=0"),
              std::string::npos)
        << r.direct.out;
    ASSERT_NE(r.direct.out.find("broken\n  create=0\n  add=0\n  add=0\n  compile=9"), std::string::npos);
    expect_identical(r);
    EXPECT_EQ(get(r.after_cold, "nvvm_hits"), 0);
    EXPECT_EQ(get(r.after_cold, "nvvm_misses"), 6);  // the unknown option is not cached
    EXPECT_EQ(get(r.after_cold, "nvvm_uncacheable"), 1);
    EXPECT_EQ(get(r.after_warm, "nvvm_hits"), 6);
    EXPECT_EQ(get(r.after_warm, "nvvm_misses"), 6);
  }
}

// A verification after a served compile and a second compile reach libNVVM (the served compile is
// first run for real).
TEST(Nvvm, CallsTheEntryCannotAnswerReachLibNvvm) {
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const Runs r = cold_and_warm({client, "after_compile"}, cache.path());
    expect_identical(r);
    EXPECT_EQ(get(r.after_warm, "nvvm_hits"), 1);
  }
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
