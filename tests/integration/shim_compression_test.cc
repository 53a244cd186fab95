// Compressed entries through real processes and the real NVRTC (core/entry_compression.h): the shim
// stores the CUB kernel's entry compressed by default and serves it byte-identical to NVRTC; entries
// stored uncompressed (`compression = 0`, as older versions wrote them) are still served once
// compression is on, and the other way round.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/entry_compression.h"
#include "store/lmdb/lmdb_store.h"
#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using testing::EnvVars;
using testing::probe;
using testing::shim_env;
using testing::TempDir;

// The payloads of the result entries (keys starting with 'R') in `cache_dir`'s store.
std::vector<std::string> result_payloads(const std::string& cache_dir) {
  store::Status status;
  auto cache = store::LmdbStore::open({cache_dir + "/store", 64ull << 20}, &status);
  std::vector<std::string> out;
  if (!cache) return out;
  (void)cache->for_each([&](std::string_view key, std::optional<std::string_view> payload) {
    if (key.starts_with("R") && payload) out.emplace_back(*payload);
  });
  return out;
}

EnvVars with_compression(const std::string& cache_dir, const char* level) {
  EnvVars env = shim_env(cache_dir);
  if (level != nullptr) env["NVRTC_CACHE_COMPRESSION"] = level;
  return env;
}

TEST(ShimCompression, TheCubKernelIsStoredCompressedAndServedExactly) {
  const auto direct = probe({"cub"}, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  TempDir dir;
  const EnvVars env = with_compression(dir.path(), nullptr);  // the default
  const auto cold = probe({"cub"}, env);
  const auto warm = probe({"cub"}, env);
  EXPECT_EQ(cold.out, direct.out);
  EXPECT_EQ(warm.out, direct.out);
  EXPECT_EQ(testing::get(testing::counters_of(dir.path()), "hits"), 1);
  const std::vector<std::string> results = result_payloads(dir.path());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(core::is_compressed_entry(results[0]));
}

TEST(ShimCompression, EntriesOfEitherKindAreServedWhateverTheSetting) {
  const auto direct = probe({"trivial", "cubin"}, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  for (const auto& [writer, reader] : {std::pair{"0", "1"}, std::pair{"1", "0"}}) {
    TempDir dir;
    const auto cold = probe({"trivial", "cubin"}, with_compression(dir.path(), writer));
    EXPECT_EQ(cold.out, direct.out) << writer;
    const std::vector<std::string> results = result_payloads(dir.path());
    ASSERT_EQ(results.size(), 2u) << writer;
    for (const std::string& r : results) EXPECT_EQ(core::is_compressed_entry(r), std::string(writer) != "0") << writer;
    const auto warm = probe({"trivial", "cubin"}, with_compression(dir.path(), reader));
    EXPECT_EQ(warm.out, direct.out) << writer;
    EXPECT_EQ(testing::get(testing::counters_of(dir.path()), "hits"), 2) << writer;
  }
}

}  // namespace
}  // namespace nvrtc_cache
