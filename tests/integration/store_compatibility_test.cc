// Keys and entries stay byte-compatible across builds: a store written by an earlier build
// (tests/data/earlier-store/: the cache directory of one run of the probe's trivial, template and
// headers scenarios through the shim, with the NVRTC whose build-id is in its NVRTC_BUILD_ID file) is
// served by this build exactly. Copied into a fresh cache directory, the probe's run is a hit per
// compile, no miss, every getter byte-identical to NVRTC's own run. Regenerate the data (only when a
// format change is intended, which then needs a migration) with scripts/earlier_store.sh.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/harness.h"
#include "tests/support/process.h"
#include "util/elf_identity.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
namespace fs = std::filesystem;

const std::string kEarlierStore = std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/earlier-store";
// None whose key holds the working directory or a path of the checkout (-lineinfo, -I).
const std::vector<std::string> kScenarios = {"trivial", "template", "headers"};

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

TEST(StoreCompatibility, AStoreWrittenByAnEarlierBuildIsServedExactly) {
  ASSERT_TRUE(fs::exists(kEarlierStore + "/store/data.mdb")) << kEarlierStore;
  std::string written_with = file_bytes(kEarlierStore + "/NVRTC_BUILD_ID");
  while (!written_with.empty() && written_with.back() == '\n') written_with.pop_back();
  std::string why;
  const std::optional<util::ElfIdentity> nvrtc =
      util::read_elf_identity(file_bytes(std::string(CUDA_NVRTC_LIBRARY_DIR) + "/libnvrtc.so.13"), why);
  ASSERT_TRUE(nvrtc) << why;
  if (hex(nvrtc->build_id) != written_with) {
    GTEST_SKIP() << "the store was written with another NVRTC build (" << written_with << ", this one is "
                 << hex(nvrtc->build_id) << "): its entries are not this NVRTC's";
  }
  const ProcessResult direct = probe(kScenarios, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_NE(direct.out.find("compile rc=0"), std::string::npos) << direct.out;

  TempDir cache;
  // data.mdb alone: lock.mdb and the counters are made afresh, and the cache's own trust rules
  // (the user's, not group-writable) hold for what the checkout made.
  fs::create_directories(cache.path() + "/store");
  fs::copy_file(kEarlierStore + "/store/data.mdb", cache.path() + "/store/data.mdb");
  fs::permissions(cache.path() + "/store", fs::perms::owner_all);
  fs::permissions(cache.path() + "/store/data.mdb", fs::perms::owner_read | fs::perms::owner_write);
  const ProcessResult served = probe(kScenarios, shim_env(cache.path()));
  ASSERT_EQ(served.exit_code, 0) << served.err;
  EXPECT_TRUE(served.out == direct.out) << "a result differs from NVRTC's";
  const store::Counters counters = counters_of(cache.path());
  EXPECT_EQ(get(counters, "misses"), 0) << "an entry of the earlier store was not found by this build's key";
  EXPECT_EQ(get(counters, "hits"), static_cast<std::int64_t>(kScenarios.size()));
  EXPECT_EQ(get(counters, "corrupt"), 0);
}

}  // namespace
}  // namespace nvrtc_cache
