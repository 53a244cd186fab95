#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "direct/dependencies.h"
#include "direct/manifest.h"
#include "tests/support/allocation_tracking.h"

namespace nvrtc_cache::direct {
namespace {

namespace fs = std::filesystem;
using keying::CacheKey;
using keying::WorkingDirectoryUse;
using util::ByteReader;
using util::ByteWriter;

class TempTree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "nvrtc-cache-keying-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string write(const std::string& name, const std::string& content) {
    const std::string path = root_ + "/" + name;
    std::ofstream(path, std::ios::trunc) << content;
    return path;
  }
  // Records a compile that read `read` and probed `missing`, as NVRTC would be observed.
  RecordedDependencies record(const std::string& read, const std::string& missing,
                              std::vector<Observation> extra = {}) {
    std::vector<Observation> obs = {{ObservationKind::kStat, false, false, missing, {}},
                                    {ObservationKind::kOpen, true, false, read, {}}};
    obs.insert(obs.end(), extra.begin(), extra.end());
    return record_dependencies(obs, root_, std::numeric_limits<std::int64_t>::max(), {});
  }
  std::string root_;
};

TEST_F(TempTree, RecordsReadsProbesAndVariables) {
  const std::string header = write("a.h", "#define A 1\n");
  setenv("NVRTC_CACHE_TEST_VAR", "one", 1);
  auto r = record(header, root_ + "/missing.h",
                  {{ObservationKind::kGetenv, true, false, "NVRTC_CACHE_TEST_VAR", "one"},
                   {ObservationKind::kGetenv, true, false, "PWD", "/x"}});
  ASSERT_TRUE(r.set) << r.why_not;
  ASSERT_EQ(r.set->paths.size(), 2u);
  EXPECT_TRUE(r.set->paths[0].content);
  EXPECT_TRUE(r.set->paths[1].must_be_absent);
  ASSERT_EQ(r.set->env.size(), 1u);  // PWD is neutral
  EXPECT_TRUE(validate_dependencies(*r.set).matches);

  setenv("NVRTC_CACHE_TEST_VAR", "two", 1);
  EXPECT_EQ(validate_dependencies(*r.set).mismatch, "environment variable NVRTC_CACHE_TEST_VAR changed");
  unsetenv("NVRTC_CACHE_TEST_VAR");
}

// Changes the working directory for its lifetime (the tests in this binary run one at a time).
class InDirectory {
 public:
  explicit InDirectory(const std::string& dir) : saved_(fs::current_path()) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(saved_); }

 private:
  fs::path saved_;
};

TEST_F(TempTree, RelativePathsStayRelativeAndHoldWhereTheyNameTheSameThing) {
  fs::create_directories(root_ + "/a");
  fs::create_directories(root_ + "/b");
  write("a/rel.h", "x");
  auto r = record_dependencies(std::vector<Observation>{{ObservationKind::kStat, false, false, "gone.h", {}},
                                                        {ObservationKind::kOpen, true, false, "rel.h", {}}},
                               root_ + "/a", std::numeric_limits<std::int64_t>::max(), {});
  ASSERT_TRUE(r.set) << r.why_not;
  ASSERT_EQ(r.set->paths.size(), 2u);
  EXPECT_EQ(r.set->paths[0].path, "gone.h");
  EXPECT_EQ(r.set->paths[1].path, "rel.h");  // fingerprinted as <root>/a/rel.h
  EXPECT_TRUE(r.set->paths[1].content);
  {
    InDirectory in(root_ + "/a");
    DependencySet set = *r.set;
    EXPECT_TRUE(validate_dependencies(set).matches);
  }
  {
    InDirectory in(root_ + "/b");
    DependencySet set = *r.set;
    EXPECT_EQ(validate_dependencies(set).mismatch, "rel.h vanished");
    write("b/rel.h", "y");
    EXPECT_EQ(validate_dependencies(set).mismatch, "rel.h changed");
    write("b/rel.h", "x");
    const Validation same = validate_dependencies(set);  // the same bytes: holds, with b's stamp
    EXPECT_TRUE(same.matches) << same.mismatch;
    EXPECT_TRUE(same.refreshed);
    write("b/gone.h", "");
    EXPECT_EQ(validate_dependencies(set).mismatch, "gone.h appeared");
  }
}

TEST_F(TempTree, LineInfoPinsAResultThatFoundARelativePathToItsDirectory) {
  fs::create_directories(root_ + "/a");
  fs::create_directories(root_ + "/b");
  write("a/rel.h", "x");
  write("b/rel.h", "x");
  const std::vector<Observation> found = {{ObservationKind::kOpen, true, false, "rel.h", {}}};
  // What NVRTC does in every compile with line info: probes two names, stats ".".
  const std::vector<Observation> probed = {{ObservationKind::kStat, false, false, "__nv_name_map", {}},
                                           {ObservationKind::kStat, true, false, ".", {}}};
  const auto record_in_a = [&](const std::vector<Observation>& obs, WorkingDirectoryUse use) {
    return record_dependencies(obs, root_ + "/a", std::numeric_limits<std::int64_t>::max(), {}, {}, use);
  };
  // Without line info (or with the directory in the key) nothing is pinned.
  for (WorkingDirectoryUse use : {WorkingDirectoryUse::kNone, WorkingDirectoryUse::kAlways}) {
    auto r = record_in_a(found, use);
    ASSERT_TRUE(r.set) << r.why_not;
    EXPECT_EQ(r.set->paths.size(), 1u);
  }
  // Relative probes and stats, no file read: not pinned either.
  auto probes_only = record_in_a(probed, WorkingDirectoryUse::kThroughFoundRelativePaths);
  ASSERT_TRUE(probes_only.set) << probes_only.why_not;
  ASSERT_EQ(probes_only.set->paths.size(), 2u);
  EXPECT_FALSE(probes_only.set->paths[0].realpath_target);  // "."
  EXPECT_EQ(probes_only.set->paths[1].path, "__nv_name_map");

  auto pinned = record_in_a(found, WorkingDirectoryUse::kThroughFoundRelativePaths);
  ASSERT_TRUE(pinned.set) << pinned.why_not;
  ASSERT_EQ(pinned.set->paths.size(), 2u);
  EXPECT_EQ(pinned.set->paths[0].path, ".");
  EXPECT_EQ(pinned.set->paths[0].realpath_target, fs::canonical(root_ + "/a").string());
  {
    InDirectory in(root_ + "/a");
    DependencySet set = *pinned.set;
    EXPECT_TRUE(validate_dependencies(set).matches);
  }
  {
    InDirectory in(root_ + "/b");  // the same header, but line info would name a's path
    DependencySet set = *pinned.set;
    EXPECT_EQ(validate_dependencies(set).mismatch, ". now resolves elsewhere");
  }
  ByteWriter w;
  pinned.set->encode(w);
  ByteReader reader(w.str());
  DependencySet decoded;
  ASSERT_TRUE(decoded.decode(reader));
  EXPECT_TRUE(reader.at_end());
  ASSERT_EQ(decoded.paths.size(), 2u);
  EXPECT_EQ(decoded.paths[0].realpath_target, pinned.set->paths[0].realpath_target);
  EXPECT_EQ(result_key(CacheKey{}, decoded), result_key(CacheKey{}, *pinned.set));
}

TEST(DependencySetDecoding, RejectsAPathWithANulByte) {
  DependencySet set;
  set.paths.push_back({});
  set.paths[0].path = std::string("a\0b", 3);
  set.paths[0].must_be_absent = true;
  ByteWriter w;
  set.encode(w);
  ByteReader reader(w.str());
  DependencySet decoded;
  EXPECT_FALSE(decoded.decode(reader));
  set.paths[0].path = "a";
  ByteWriter ok;
  set.encode(ok);
  ByteReader ok_reader(ok.str());
  EXPECT_TRUE(decoded.decode(ok_reader));
}

TEST_F(TempTree, EditsAppearancesAndTouchesAreTold) {
  const std::string header = write("a.h", "#define A 1\n");
  auto r = record(header, root_ + "/shadow.h");
  ASSERT_TRUE(r.set);
  DependencySet set = *r.set;
  EXPECT_TRUE(validate_dependencies(set).matches);

  fs::last_write_time(header, fs::last_write_time(header) + std::chrono::seconds(5));  // touch
  const Validation touched = validate_dependencies(set);
  EXPECT_TRUE(touched.matches);
  EXPECT_TRUE(touched.refreshed);

  write("a.h", "#define A 2\n");
  EXPECT_EQ(validate_dependencies(set).mismatch, header + " changed");
  write("a.h", "#define A 1\n");
  write("shadow.h", "");
  EXPECT_EQ(validate_dependencies(set).mismatch, root_ + "/shadow.h appeared");
  fs::remove(root_ + "/shadow.h");
  fs::remove(header);
  EXPECT_EQ(validate_dependencies(set).mismatch, header + " vanished");
}

TEST_F(TempTree, FilesModifiedDuringTheCompileOrWrittenAreNotStorable) {
  const std::string header = write("a.h", "x");
  EXPECT_FALSE(
      record_dependencies(std::vector<Observation>{{ObservationKind::kOpen, true, false, header, {}}}, root_, 0, {})
          .set);
  EXPECT_FALSE(record_dependencies(std::vector<Observation>{{ObservationKind::kOpen, true, true, header, {}}}, root_,
                                   std::numeric_limits<std::int64_t>::max(), {})
                   .set);
  const std::string unwritable = root_ + "/no/out.txt";
  EXPECT_FALSE(record_dependencies(std::vector<Observation>{{ObservationKind::kOpen, false, true, unwritable, {}}},
                                   root_, std::numeric_limits<std::int64_t>::max(), {})
                   .set);  // a failed write is not a probe of absence
  EXPECT_FALSE(record_dependencies(std::vector<Observation>{{ObservationKind::kStat, false, false, header, {}},
                                                            {ObservationKind::kOpen, true, false, header, {}}},
                                   root_, std::numeric_limits<std::int64_t>::max(), {})
                   .set);
}

TEST_F(TempTree, TimeMacrosInReadFilesForbidOrDateTheResult) {
  const std::string timed = write("t.h", "const char* t = __TIME__;");
  EXPECT_FALSE(record(timed, root_ + "/m").set);
  const std::string dated = write("d.h", "const char* d = __DATE__;");
  auto r = record(dated, root_ + "/m");
  ASSERT_TRUE(r.set);
  EXPECT_EQ(r.set->date, date_macro_today());
  EXPECT_TRUE(scan_time_macros("__TIMESTAMP__").time);
  EXPECT_FALSE(scan_time_macros("__TIME_X").time);
}

TEST_F(TempTree, ManifestRoundTripsBoundsAndRejectsDamage) {
  const std::string header = write("a.h", "#define A 1\n");
  auto r = record(header, root_ + "/missing.h");
  ASSERT_TRUE(r.set);
  Manifest m;
  std::vector<keying::CacheKey> dropped;
  for (std::uint8_t i = 0; i < kMaxResultsPerManifest + 2; ++i) {
    keying::CacheKey k{};
    k[0] = i;
    auto out = m.add({k, *r.set});
    dropped.insert(dropped.end(), out.begin(), out.end());
  }
  EXPECT_EQ(m.results.size(), kMaxResultsPerManifest);
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_EQ(dropped[0][0], 0);
  EXPECT_EQ(m.results.front().result_key[0], kMaxResultsPerManifest + 1);

  const std::string bytes = encode_manifest(m);
  auto decoded = decode_manifest(bytes);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(encode_manifest(*decoded), bytes);
  for (std::size_t i = 0; i < bytes.size(); i += 7) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 1);
    EXPECT_FALSE(decode_manifest(damaged)) << i;
  }
  EXPECT_FALSE(decode_manifest(bytes.substr(0, bytes.size() - 1)));
}

TEST_F(TempTree, ResultKeyDependsOnTheDependencies) {
  auto r1 = record(write("a.h", "1"), root_ + "/m");
  auto r2 = record(write("a.h", "2"), root_ + "/m");
  ASSERT_TRUE(r1.set && r2.set);
  const keying::CacheKey direct{};
  EXPECT_NE(result_key(direct, *r1.set), result_key(direct, *r2.set));
  DependencySet restamped = *r1.set;
  restamped.paths[0].stamp.mtime_ns += 1;  // stamps are not identity
  EXPECT_EQ(result_key(direct, *r1.set), result_key(direct, restamped));
  EXPECT_NE(manifest_store_key(direct), result_store_key(direct));
}

// A writer of the cache can recompute the checksum: encode_manifest() does, for whatever it is given.
TEST_F(TempTree, ManifestRejectsMoreResultsThanItKeepsAndRepeatedResults) {
  auto r = record(write("a.h", "1"), root_ + "/m");
  ASSERT_TRUE(r.set);
  Manifest m;
  for (std::uint8_t i = 0; i < kMaxResultsPerManifest; ++i) m.results.push_back({keying::CacheKey{i}, *r.set});
  EXPECT_TRUE(decode_manifest(encode_manifest(m)));
  Manifest too_many = m;
  too_many.results.push_back({keying::CacheKey{0xff}, *r.set});
  EXPECT_FALSE(decode_manifest(encode_manifest(too_many)));
  Manifest repeated = m;
  repeated.results.back().result_key = repeated.results.front().result_key;
  EXPECT_FALSE(decode_manifest(encode_manifest(repeated)));
}

TEST_F(TempTree, DependencySetsRecordCannotProduceAreRejected) {
  auto r = record(write("a.h", "1"), root_ + "/m");
  ASSERT_TRUE(r.set);
  ASSERT_EQ(r.set->paths.size(), 2u);
  auto decodes = [](const DependencySet& set) {
    Manifest m;
    m.results.push_back({keying::CacheKey{1}, set});
    return decode_manifest(encode_manifest(m)).has_value();
  };
  EXPECT_TRUE(decodes(*r.set));
  std::vector<DependencySet> bad(6, *r.set);
  std::swap(bad[0].paths[0], bad[0].paths[1]);  // unsorted
  bad[1].paths[1] = bad[1].paths[0];            // twice
  bad[2].paths[0].path = "a.h";                 // relative
  bad[3].paths[0].stamp.mode = S_IFIFO | 0644;  // content of a FIFO: reading it would block
  bad[4].paths[1].must_exist = true;            // absent and existing
  bad[5].env = {{"B", true, "1"}, {"A", true, "2"}};
  for (std::size_t i = 0; i < bad.size(); ++i) EXPECT_FALSE(decodes(bad[i])) << i;
}

TEST(Manifest, RejectsACountItsBytesCannotHoldWithoutAllocatingForIt) {
  const std::string tail(64 << 10, '\0');
  util::ByteWriter w;
  w.raw("NVMF");
  w.u32(kManifestFormatVersion);
  w.u64(1);
  w.raw(std::string(32, 'k'));
  w.u64(tail.size());  // paths: within the old one-byte-per-item bound, not the 94 bytes a path takes
  w.raw(tail);
  util::append_checksum(w);
  std::optional<Manifest> decoded;
  const std::size_t largest =
      nvrtc_cache::testing::largest_allocation_during([&] { decoded = decode_manifest(w.str()); });
  EXPECT_FALSE(decoded);
  EXPECT_LT(largest, w.str().size()) << "allocated for a count the input cannot hold";

  util::ByteWriter results;
  results.raw("NVMF");
  results.u32(kManifestFormatVersion);
  results.u64(~std::uint64_t{0});
  util::append_checksum(results);
  EXPECT_FALSE(decode_manifest(results.str()));
}

}  // namespace
}  // namespace nvrtc_cache::direct
