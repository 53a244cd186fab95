// Shared tiers through real processes and the real NVRTC: "nodes" are separate cache directories
// sharing one file:// tier (NVRTC_CACHE_REMOTE). Every result is compared byte for byte with NVRTC's.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "store/remote/sealed_value.h"
#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
namespace fs = std::filesystem;

// Every regular file under `dir` (the tier's entries), with its contents.
std::map<std::string, std::string> files_under(const std::string& dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_regular_file()) files[it->path().string()] = read_file(it->path().string());
  }
  return files;
}

class SharedTier : public DirectRunSuite {
 protected:
  void SetUp() override {
    DirectRunSuite::SetUp();
    if (HasFatalFailure()) return;
    tier_ = root_.path() + "/tier";
    ASSERT_TRUE(fs::create_directory(tier_));
  }
  std::string node(const std::string& name) const { return root_.path() + "/" + name; }
  std::string remote(const std::string& attributes = "") const { return "file://" + tier_ + attributes; }

  // Runs the scenarios on a node; expects NVRTC's exact results.
  ProcessResult run(const std::string& node_dir, const std::string& remote_setting, const std::string& secret = "") {
    ProcessResult r = probe(kTierScenarios, node_env(node_dir, remote_setting, secret));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct_->out) << "a result differs from NVRTC's";
    return r;
  }

  std::string tier_;
};

TEST_F(SharedTier, AColdNodeIsServedFromTheTierThenFromItsOwnStore) {
  const ProcessResult a = run(node("a"), remote());
  EXPECT_EQ(a.err, "");
  const auto ca = counters_of(node("a"));
  ASSERT_GT(get(ca, "stores"), 0);
  EXPECT_EQ(get(ca, "tier.0.writes"), 2 * get(ca, "stores")) << "a result and a manifest per store";
  EXPECT_EQ(get(ca, "tier.0.errors"), 0);
  EXPECT_EQ(files_under(tier_).size(), static_cast<std::size_t>(get(ca, "tier.0.writes")));

  const ProcessResult b = run(node("b"), remote());
  EXPECT_EQ(b.err, "");
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(cb, "misses"), 0) << "node b compiled";
  EXPECT_EQ(get(cb, "hits"), get(ca, "stores"));
  EXPECT_EQ(get(cb, "tier.0.hits"), get(ca, "stores")) << "one result served per compile";
  EXPECT_EQ(get(cb, "tier.0.index_hits"), get(ca, "stores")) << "and one manifest";
  EXPECT_EQ(get(cb, "tier.0.writes"), 0);
  // `stats` names each tier by the URL `remote` now gives it.
  const ProcessResult shown =
      run_process({NVRTC_CACHE_CLI_PATH, "stats"}, {{"NVRTC_CACHE_DIR", node("b")}, {"NVRTC_CACHE_REMOTE", remote()}});
  EXPECT_NE(shown.out.find("tier 0 (" + remote() + " in `remote` now)\n"), std::string::npos) << shown.out;

  run(node("b"), remote());
  const auto cb2 = counters_of(node("b"));
  EXPECT_EQ(get(cb2, "hits"), 2 * get(ca, "stores"));
  EXPECT_EQ(get(cb2, "tier.0.hits"), get(cb, "tier.0.hits")) << "the second run was not local";
  EXPECT_EQ(get(cb2, "misses"), 0);
}

TEST_F(SharedTier, GarbageAndTruncatedValuesUnderRealKeysAreMissesAndReplaced) {
  run(node("a"), remote());
  auto files = files_under(tier_);
  ASSERT_GE(files.size(), 2u);
  int i = 0;
  for (const auto& [path, bytes] : files) {
    // Half the entries garbage of the same size, half cut in the middle.
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        << (i++ % 2 == 0 ? std::string(bytes.size(), 'G') : bytes.substr(0, bytes.size() / 2));
  }
  run(node("b"), remote());
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(cb, "tier.0.hits"), 0);
  EXPECT_GT(get(cb, "tier.0.corrupt"), 0);
  EXPECT_GT(get(cb, "misses"), 0);
  EXPECT_EQ(get(cb, "errors"), 0);
  // Node b's compiles rewrote the entries: node c is served from the tier.
  run(node("c"), remote());
  const auto cc = counters_of(node("c"));
  EXPECT_EQ(get(cc, "misses"), 0);
  EXPECT_GT(get(cc, "tier.0.hits"), 0);
  EXPECT_EQ(get(cc, "tier.0.corrupt"), 0);
}

TEST_F(SharedTier, WithASecretUnsignedValuesAreRefusedAndCounted) {
  const std::string secret = root_.path() + "/secret";
  std::ofstream(secret) << "a shared secret of the fleet\n";
  ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
  run(node("unsigned"), remote());  // writes without a MAC
  ASSERT_FALSE(files_under(tier_).empty());
  const ProcessResult b = run(node("b"), remote(), secret);
  EXPECT_EQ(b.err.find("a shared secret"), std::string::npos);
  const auto cb = counters_of(node("b"));
  EXPECT_GT(get(cb, "tier.0.mac_rejected"), 0);
  EXPECT_EQ(get(cb, "tier.0.hits"), 0);
  EXPECT_GT(get(cb, "misses"), 0);
  for (const auto& [path, bytes] : files_under(tier_)) {
    EXPECT_GT(bytes.size(), store::remote::kSealedMacSize);
  }
  run(node("c"), remote(), secret);  // node b's signed values
  const auto cc = counters_of(node("c"));
  EXPECT_EQ(get(cc, "misses"), 0);
  EXPECT_GT(get(cc, "tier.0.hits"), 0);
  EXPECT_EQ(get(cc, "tier.0.mac_rejected"), 0);
}

TEST_F(SharedTier, AReadOnlyTierIsNeverWritten) {
  run(node("a"), remote("?read-only"));
  EXPECT_TRUE(fs::is_empty(tier_)) << "a read-only tier was written";
  const auto ca = counters_of(node("a"));
  EXPECT_GT(get(ca, "stores"), 0);
  EXPECT_EQ(get(ca, "tier.0.writes"), 0);
  // Filled by a writer, it serves a read-only node, which still writes nothing.
  run(node("writer"), remote());
  const auto before = files_under(tier_);
  ASSERT_FALSE(before.empty());
  run(node("b"), remote("?read-only"));
  EXPECT_EQ(get(counters_of(node("b")), "misses"), 0);
  EXPECT_TRUE(files_under(tier_) == before);
}

TEST_F(SharedTier, EightNodesWritingAtOnceLeaveOnlySoundEntries) {
  std::vector<ProcessResult> results(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back(
        [&, i] { results[i] = probe(kTierScenarios, node_env(node("n" + std::to_string(i)), remote())); });
  }
  for (auto& t : threads) t.join();
  for (const ProcessResult& r : results) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct_->out);
  }
  for (const auto& [path, bytes] : files_under(tier_)) {
    EXPECT_EQ(fs::path(path).filename().string().find(".tmp-"), std::string::npos) << "a temporary file was left";
  }
  run(node("late"), remote());
  const auto c = counters_of(node("late"));
  EXPECT_EQ(get(c, "misses"), 0);
  EXPECT_GT(get(c, "tier.0.hits"), 0);
  EXPECT_EQ(get(c, "tier.0.corrupt"), 0);
}

TEST_F(SharedTier, AForkedChildWritesThroughItsOwnWriter) {
  const ProcessResult direct_child = probe({"fork_child_program"}, {});
  ASSERT_EQ(direct_child.exit_code, 0);
  const ProcessResult forked = probe({"fork_write"}, node_env(node("a"), remote()));
  ASSERT_EQ(forked.exit_code, 0) << forked.err;
  ASSERT_NE(forked.out.find("child exit 0"), std::string::npos) << forked.out;
  const ProcessResult b = probe({"fork_child_program"}, node_env(node("b"), remote()));
  EXPECT_TRUE(b.out == direct_child.out);
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(cb, "misses"), 0) << "the child's result was not in the tier";
  EXPECT_EQ(get(cb, "tier.0.hits"), 1);
  EXPECT_EQ(get(cb, "tier.0.index_hits"), 1);
}

// Every bucket of the tier is a link to a directory another user chose: the shim's write-behind
// creates nothing there (and reads nothing from it), says so once, and every compile is exact.
TEST_F(SharedTier, BucketsLinkedElsewhereAreNeverFollowed) {
  const std::string attacker = root_.path() + "/attacker";
  ASSERT_TRUE(fs::create_directory(attacker));
  std::ofstream(attacker + "/planted") << "x";
  ASSERT_TRUE(fs::create_directory(tier_ + "/nvrtc-cache"));
  for (int b = 0; b < 256; ++b) {
    char name[3];
    std::snprintf(name, sizeof name, "%02x", b);
    fs::create_directory_symlink(attacker, tier_ + "/nvrtc-cache/" + name);
  }
  const ProcessResult a = run(node("a"), remote());
  const auto ca = counters_of(node("a"));
  EXPECT_GT(get(ca, "stores"), 0);
  EXPECT_EQ(get(ca, "tier.0.writes"), 0);
  EXPECT_GT(get(ca, "tier.0.errors"), 0) << "the refusals were not counted";
  EXPECT_EQ(get(ca, "errors"), 0);
  std::vector<std::string> in_attacker;
  for (const auto& e : fs::directory_iterator(attacker)) in_attacker.push_back(e.path().filename().string());
  EXPECT_EQ(in_attacker, std::vector<std::string>{"planted"}) << "a write followed a linked bucket";
  EXPECT_EQ(files_under(tier_).size(), 0u);
  const std::string said = "is a symbolic link (not followed)";
  const std::size_t first = a.err.find(said);
  EXPECT_NE(first, std::string::npos) << a.err;
  EXPECT_EQ(a.err.find(said, first + 1), std::string::npos) << "said more than once: " << a.err;
  run(node("a"), remote());  // warm, from its own store
  EXPECT_EQ(get(counters_of(node("a")), "misses"), get(ca, "misses"));
}

TEST_F(SharedTier, AnUnreachableOrMalformedTierIsPurePassThrough) {
  const std::string not_a_directory = root_.path() + "/plain-file";
  std::ofstream(not_a_directory) << "x";
  const std::vector<std::string> settings = {"file:///nonexistent-nvrtc-cache-tier/x",
                                             "file://" + not_a_directory + "/sub",
                                             "file://relative redis://user:hunter2@[::1"};
  for (const std::string& setting : settings) {
    SCOPED_TRACE(setting);
    TempDir cache;
    const ProcessResult cold = run(cache.path(), setting);
    EXPECT_EQ(cold.err.find("hunter2"), std::string::npos) << cold.err;
    const auto c = counters_of(cache.path());
    EXPECT_GT(get(c, "stores"), 0);
    EXPECT_EQ(get(c, "errors"), 0);
    EXPECT_EQ(get(c, "tier.0.hits"), 0);
    run(cache.path(), setting);
    const auto warm = counters_of(cache.path());
    EXPECT_EQ(get(warm, "misses"), get(c, "misses")) << "the warm run compiled";
  }
  EXPECT_FALSE(fs::exists("/nonexistent-nvrtc-cache-tier"));
}

}  // namespace
}  // namespace nvrtc_cache
