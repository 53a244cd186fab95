// `nvrtc-cache export | import | copy` through real processes: a cache filled by the real NVRTC
// through the shim is exported, imported elsewhere (a fresh cache directory, a file:// tier, a real
// redis-server) and a later client run there gets only hits with NVRTC's exact bytes. Damaged
// archives and secrets are refused or skipped with a report, never a crash or a wrong entry.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <zstd.h>

#include "direct/manifest.h"
#include "store/lmdb/lmdb_store.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"

namespace nvrtc_cache {
namespace {

// The archive's zstd frame decompressed (empty when it does not decompress).
std::string decompressed(const std::string& archive) {
  const unsigned long long size = ZSTD_getFrameContentSize(archive.data(), archive.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > (1u << 30)) return {};
  std::string out(static_cast<std::size_t>(size), '\0');
  const std::size_t n = ZSTD_decompress(out.data(), out.size(), archive.data(), archive.size());
  return ZSTD_isError(n) || n != out.size() ? std::string() : out;
}

using namespace testing;
namespace fs = std::filesystem;

class CliArchive : public DirectRunSuite {
 protected:
  std::string dir(const std::string& name) const { return root_.path() + "/" + name; }

  // The CLI with its cache in `cache` and no configuration files (no remote, no secret).
  ProcessResult cli(std::vector<std::string> args, const std::string& cache, const std::string& secret_file = "") {
    args.insert(args.begin(), NVRTC_CACHE_CLI_PATH);
    EnvVars env{{"HOME", root_.path()},
                {"XDG_CONFIG_HOME", std::nullopt},
                {"XDG_CACHE_HOME", std::nullopt},
                {"NVRTC_CACHE_SYSTEM_CONFIG", root_.path() + "/system.conf"},
                {"NVRTC_CACHE_DIR", cache},
                {"NVRTC_CACHE_REMOTE", std::nullopt},
                {"NVRTC_CACHE_REMOTE_SECRET_FILE", secret_file.empty() ? std::nullopt : std::optional(secret_file)}};
    return run_process(args, env);
  }
  nlohmann::json cli_json(std::vector<std::string> args, const std::string& cache, int expected_exit = 0,
                          const std::string& secret_file = "") {
    args.push_back("--json");
    const ProcessResult r = cli(args, cache, secret_file);
    EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
    try {
      return nlohmann::json::parse(r.out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not JSON: " << r.out << r.err;
      return {};
    }
  }

  // Fills a cache with the scenarios through the shim; returns how many compiles it stored.
  std::int64_t fill(const std::string& cache) {
    const ProcessResult r = probe(kTierScenarios, shim_env(cache));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct_->out);
    const std::int64_t stores = get(counters_of(cache), "stores");
    EXPECT_GT(stores, 0);
    return stores;
  }
  // A client run on `cache` is served entirely from it, with NVRTC's exact results.
  void expect_all_hits(const std::string& cache, std::int64_t expected_hits) {
    const ProcessResult r = probe(kTierScenarios, shim_env(cache));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct_->out) << "a result differs from NVRTC's";
    const auto c = counters_of(cache);
    EXPECT_EQ(get(c, "misses"), 0) << "the client compiled in " << cache;
    EXPECT_EQ(get(c, "stores"), 0);
    EXPECT_EQ(get(c, "hits"), expected_hits);
  }
};

TEST_F(CliArchive, ExportThenImportIntoAFreshCacheServesOnlyHits) {
  const std::int64_t stores = fill(dir("a"));
  const std::string archive = dir("cache.nvrc");
  const nlohmann::json exported = cli_json({"export", archive}, dir("a"));
  EXPECT_EQ(exported["records"], 2 * stores) << "a result and a manifest per compile";
  EXPECT_EQ(exported["results"], stores);
  EXPECT_EQ(exported["complete"], true);
  EXPECT_GT(exported["ratio"].get<double>(), 1.0);
  EXPECT_EQ(exported["archive_bytes"].get<std::uint64_t>(), fs::file_size(archive));
  EXPECT_FALSE(fs::exists(archive + ".partial-0"));

  const nlohmann::json imported = cli_json({"import", archive}, dir("b"));
  EXPECT_EQ(imported["records"], 2 * stores);
  EXPECT_EQ(imported["added"], 2 * stores);
  EXPECT_EQ(imported["complete"], true);
  expect_all_hits(dir("b"), stores);

  // Importing again changes nothing: every entry is already present.
  const nlohmann::json again = cli_json({"import", archive}, dir("b"));
  EXPECT_EQ(again["added"], 0);
  EXPECT_EQ(again["present"], 2 * stores);

  // The text report, and stdin/stdout.
  const ProcessResult text = cli({"import", archive}, dir("c"));
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("import: " + std::to_string(2 * stores) + " records"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("added " + std::to_string(2 * stores)), std::string::npos) << text.out;
  fs::create_directories(dir("piped"));
  const std::string cli_path = NVRTC_CACHE_CLI_PATH;
  const ProcessResult piped = run_process(
      {"/bin/sh", "-c", cli_path + " export - | " + cli_path + " import - --json --to file://" + dir("piped")},
      {{"NVRTC_CACHE_DIR", dir("a")},
       {"HOME", root_.path()},
       {"NVRTC_CACHE_SYSTEM_CONFIG", root_.path() + "/system.conf"}});
  EXPECT_EQ(piped.exit_code, 0) << piped.out << piped.err;
  EXPECT_EQ(nlohmann::json::parse(piped.out)["added"], 2 * stores);
}

// import --to file://DIR makes DIR (mode 0700) when it is missing, parents included; a file that is
// not an archive is named as such, not reported as damaged compressed data.
TEST_F(CliArchive, ImportMakesAMissingTierDirectoryAndNamesAFileThatIsNoArchive) {
  const std::int64_t stores = fill(dir("a"));
  cli_json({"export", dir("1.nvrc")}, dir("a"));
  const std::string tier = dir("new/deeper/tier");
  ASSERT_FALSE(fs::exists(dir("new")));
  const nlohmann::json imported = cli_json({"import", dir("1.nvrc"), "--to", "file://" + tier}, dir("unused"));
  EXPECT_EQ(imported["added"], 2 * stores);
  ASSERT_TRUE(fs::is_directory(tier));
  EXPECT_EQ(fs::status(tier).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(dir("new")).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(cli_json({"copy", "file://" + tier, "file://" + dir("copied")}, dir("unused"))["added"], 2 * stores);
  EXPECT_EQ(cli_json({"import", dir("1.nvrc")}, dir("b"))["added"], 2 * stores);

  for (const std::string& text : {std::string("just some text\n"), std::string(), std::string("PK\x03\x04zipped")}) {
    std::ofstream(dir("notes.txt"), std::ios::binary | std::ios::trunc) << text;
    const ProcessResult refused = cli({"import", dir("notes.txt")}, dir("c"));
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("nvrtc-cache import: " + dir("notes.txt") + " is not an nvrtc-cache archive"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(refused.err.find("damaged"), std::string::npos) << refused.err;
  }
}

TEST_F(CliArchive, AcrossTiersLocalFileRedisAndBack) {
  const std::int64_t stores = fill(dir("a"));
  const std::string tier = dir("tier");
  fs::create_directories(tier);
  const std::string file_url = "file://" + tier;
  // local -> archive -> file:// tier -> archive -> a fresh local cache.
  cli_json({"export", dir("1.nvrc")}, dir("a"));
  EXPECT_EQ(cli_json({"import", dir("1.nvrc"), "--to", file_url}, dir("unused"))["added"], 2 * stores);
  const nlohmann::json from_tier = cli_json({"export", dir("2.nvrc"), "--from", file_url}, dir("unused"));
  EXPECT_EQ(from_tier["records"], 2 * stores);
  EXPECT_EQ(cli_json({"import", dir("2.nvrc")}, dir("b"))["added"], 2 * stores);
  expect_all_hits(dir("b"), stores);

  // local -> redis (copy) -> a fresh local cache (copy).
  RedisServer server;
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(cli_json({"copy", "local", server.url()}, dir("a"))["added"], 2 * stores);
  const nlohmann::json via_archive = cli_json({"export", dir("3.nvrc"), "--from", server.url()}, dir("unused"));
  EXPECT_EQ(via_archive["records"], 2 * stores);
  EXPECT_EQ(cli_json({"copy", server.url(), "local"}, dir("c"))["added"], 2 * stores);
  expect_all_hits(dir("c"), stores);
  EXPECT_EQ(cli_json({"import", dir("3.nvrc")}, dir("d"))["added"], 2 * stores);
  expect_all_hits(dir("d"), stores);
}

TEST_F(CliArchive, SelectionByProgramNameAndAge) {
  const std::int64_t stores = fill(dir("a"));
  EXPECT_EQ(cli_json({"export", dir("none.nvrc"), "--match", "no_such_*"}, dir("a"))["records"], 0);
  const nlohmann::json cubin = cli_json({"export", dir("cubin.nvrc"), "--match", "cubin*"}, dir("a"));
  EXPECT_EQ(cubin["results"], 1);
  EXPECT_EQ(cubin["manifests"], 1) << "the manifest naming it goes along";
  EXPECT_EQ(cli_json({"export", dir("new.nvrc"), "--newer-than", "1h"}, dir("a"))["results"], stores);
  EXPECT_EQ(cli_json({"export", dir("old.nvrc"), "--older-than", "1h"}, dir("a"))["results"], 0);
  EXPECT_EQ(cli({"export", dir("x.nvrc"), "--older-than", "soon"}, dir("a")).exit_code, 2);

  // Only the selected program is a hit in the imported cache; the others compile, exactly.
  cli_json({"import", dir("cubin.nvrc")}, dir("b"));
  const ProcessResult r = probe(kTierScenarios, shim_env(dir("b")));
  EXPECT_TRUE(r.out == direct_->out);
  EXPECT_EQ(get(counters_of(dir("b")), "hits"), 1);
}

TEST_F(CliArchive, DamagedArchivesAreReportedAndNeverServeAWrongEntry) {
  const std::int64_t stores = fill(dir("a"));
  cli_json({"export", dir("good.nvrc")}, dir("a"));
  const std::string good = read_file(dir("good.nvrc"));
  int n = 0;
  for (std::size_t cut : {std::size_t{0}, std::size_t{5}, good.size() / 3, good.size() / 2, good.size() - 1}) {
    const std::string path = dir("cut" + std::to_string(n) + ".nvrc"), cache = dir("cut" + std::to_string(n++));
    std::ofstream(path, std::ios::binary) << good.substr(0, cut);
    const nlohmann::json r = cli_json({"import", path}, cache, 1);
    EXPECT_EQ(r["complete"], false) << cut;
    EXPECT_EQ(r["ok"], false);
    ASSERT_TRUE(r.contains("problem"));
    const ProcessResult client = probe(kTierScenarios, shim_env(cache));
    EXPECT_TRUE(client.out == direct_->out) << "cut at " << cut;
  }
  for (std::size_t at : {good.size() / 4, good.size() / 2, good.size() - 10}) {
    std::string damaged = good;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x40);
    const std::string path = dir("flip.nvrc"), cache = dir("flip" + std::to_string(at));
    std::ofstream(path, std::ios::binary | std::ios::trunc) << damaged;
    const ProcessResult r = cli({"import", path}, cache);
    // A flip the compressed stream absorbs (a match offset to identical bytes, an unused bit) leaves
    // every decompressed byte as exported, which the reader checks: that archive is intact.
    const bool same_content = decompressed(damaged) == decompressed(good);
    EXPECT_EQ(r.exit_code, same_content ? 0 : 1) << "flip at " << at << ": " << r.out << r.err;
    const ProcessResult client = probe(kTierScenarios, shim_env(cache));
    EXPECT_TRUE(client.out == direct_->out) << "flip at " << at;
  }
  const ProcessResult missing = cli({"import", dir("absent.nvrc")}, dir("z"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos) << missing.err;
  (void)stores;
}

// A manifest whose result key is not the one its own key and dependencies make (crafted to send one
// program to another program's result) is refused on import as malformed; its program is then a
// miss there, compiled exactly, never served the other result.
TEST_F(CliArchive, AManifestPointingAtAnotherProgramsResultIsRefused) {
  fill(dir("a"));
  {
    store::LmdbOptions options;
    options.directory = dir("a") + "/store";
    store::Status status;
    std::unique_ptr<store::LmdbStore> a = store::LmdbStore::open(options, &status);
    ASSERT_TRUE(a) << status.message();
    std::vector<std::string> manifests;
    ASSERT_TRUE(a->for_each([&](std::string_view key, std::optional<std::string_view>) {
                   if (!key.empty() && key[0] == 'M') manifests.emplace_back(key);
                 }).is_ok());
    ASSERT_GE(manifests.size(), 2u);
    std::optional<direct::Manifest> first = direct::decode_manifest(*a->get(manifests[0]));
    const std::optional<direct::Manifest> second = direct::decode_manifest(*a->get(manifests[1]));
    ASSERT_TRUE(first && second);
    first->results[0].result_key = second->results[0].result_key;  // the first program, sent to the second's result
    ASSERT_TRUE(a->put(manifests[0], direct::encode_manifest(*first)).is_ok());
  }
  cli_json({"export", dir("crafted.nvrc")}, dir("a"));
  const nlohmann::json imported = cli_json({"import", dir("crafted.nvrc")}, dir("b"), 1);
  EXPECT_EQ(imported["skipped"]["malformed"], 1) << imported.dump();
  const ProcessResult r = probe(kTierScenarios, shim_env(dir("b")));
  EXPECT_TRUE(r.out == direct_->out) << "a result differs from NVRTC's";
  EXPECT_EQ(get(counters_of(dir("b")), "misses"), 1) << "the refused manifest's program is compiled";
}

TEST_F(CliArchive, ASecretSignsExportsAndRefusesUnsignedImports) {
  const std::int64_t stores = fill(dir("a"));
  const std::string secret = dir("secret"), other = dir("other");
  std::ofstream(secret) << "the fleet's secret\n";
  std::ofstream(other) << "someone else's secret\n";
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(other, fs::perms::owner_read | fs::perms::owner_write);
  cli_json({"export", dir("unsigned.nvrc")}, dir("a"));
  const ProcessResult refused = cli({"import", dir("unsigned.nvrc")}, dir("b"), secret);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("not signed"), std::string::npos) << refused.err;
  EXPECT_EQ(get(counters_of(dir("b")), "stores"), 0);

  cli_json({"export", dir("signed.nvrc")}, dir("a"), 0, secret);
  const nlohmann::json foreign = cli_json({"import", dir("signed.nvrc")}, dir("c"), 1, other);
  EXPECT_EQ(foreign["skipped"]["mac"], 2 * stores);
  EXPECT_EQ(foreign["added"], 0);
  EXPECT_EQ(cli_json({"import", dir("signed.nvrc")}, dir("d"), 0, secret)["added"], 2 * stores);
  expect_all_hits(dir("d"), stores);
}

}  // namespace
}  // namespace nvrtc_cache
