// The cache's mapped files under hostile conditions: the counters file truncated, shrunk, replaced by
// a link or a FIFO while a host compiles in a loop (hits and misses), and the cache directory on a
// full filesystem (a small tmpfs) under a hit, a miss, a fresh cache and `nvrtc-cache stats`. Each
// time the host must exit normally with every result byte-identical to NVRTC's: a mapped page that
// vanished or cannot be backed is counts lost, never a signal. The full-filesystem cases need root
// to mount a tmpfs (CI runs as root; they fail there when they cannot).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

constexpr const char* kCountersFault = "the counters file could not be written";

std::vector<int> rounds(int count) {
  std::vector<int> out;
  for (int n = 1; n <= count; ++n) out.push_back(n);
  return out;
}

// What is done to the counters file between two compiles of one host.
enum class Damage { kTruncated, kShrunk, kLink, kFifo };

void damage(const std::string& counters, Damage how) {
  const std::string aside = counters + ".aside";
  switch (how) {
    case Damage::kTruncated:
      ASSERT_EQ(::truncate(counters.c_str(), 0), 0);
      break;
    case Damage::kShrunk:
      ASSERT_EQ(::truncate(counters.c_str(), 4096), 0);
      break;
    case Damage::kLink:
      ASSERT_EQ(::symlink("/dev/zero", aside.c_str()), 0);
      ASSERT_EQ(::rename(aside.c_str(), counters.c_str()), 0);
      break;
    case Damage::kFifo:
      ASSERT_EQ(::mkfifo(aside.c_str(), 0600), 0);
      ASSERT_EQ(::rename(aside.c_str(), counters.c_str()), 0);
      break;
  }
}

class CountersFileDamaged : public ::testing::TestWithParam<Damage> {};

// A host compiling 24 programs, the counters file damaged after its third: the cold host (misses and
// stores), then a warm one (hits), each exact and alive; a truncated file is said once in the log and
// the hits made after it are still counted (in the store's own counters).
TEST_P(CountersFileDamaged, UnderALoopingHostThatMissesAndThenHits) {
  constexpr int kRounds = 24, kBefore = 3;
  const ProcessResult reference = PacedProbe::reference(rounds(kRounds));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  TempDir cache;
  const std::string counters = cache.path() + "/store/counters";
  // Truncated to nothing, every page of the mapping is gone: the next count faults. (Shrunk to one
  // page, the counters in use, all in its first page, stay; the next process refuses the size.)
  const bool faults = GetParam() == Damage::kTruncated;
  for (const bool warm : {false, true}) {
    SCOPED_TRACE(warm ? "warm (hits)" : "cold (misses)");
    if (warm) {
      std::filesystem::remove(counters);  // a fresh counters file for the warm host
      const ProcessResult sized = probe({"trivial"}, shim_env(cache.path()));
      ASSERT_EQ(sized.exit_code, 0) << sized.err;
    }
    PacedProbe host(rounds(kRounds), shim_env(cache.path()));
    for (int n = 1; n <= kBefore; ++n) host.round(n);
    struct stat st {};
    ASSERT_EQ(::lstat(counters.c_str(), &st), 0) << "the host counts in no counters file";
    ASSERT_EQ(st.st_size, 65536);
    damage(counters, GetParam());
    const ProcessResult run = host.finish();
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_TRUE(run.out == reference.out) << "differs from NVRTC\n" << run.err;
    if (faults) {
      EXPECT_NE(run.err.find(kCountersFault), std::string::npos) << "no fault was provoked\n" << run.err;
      if (warm) {
        const store::Counters after = counters_of(cache.path());
        EXPECT_EQ(get(after, "hits"), kRounds - kBefore) << "hits made after the fault were lost";
      }
    }
    std::filesystem::remove(counters);
  }
  // The next process finds a usable file again (a new one where the damaged one was removed).
  const ProcessResult next = probe({"trivial"}, shim_env(cache.path()));
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(next.err.find(kCountersFault), std::string::npos) << next.err;
}

std::string damage_name(const ::testing::TestParamInfo<Damage>& damaged) {
  switch (damaged.param) {
    case Damage::kTruncated:
      return "Truncated";
    case Damage::kShrunk:
      return "Shrunk";
    case Damage::kLink:
      return "ReplacedByALink";
    case Damage::kFifo:
      return "ReplacedByAFifo";
  }
  return "Unknown";
}

INSTANTIATE_TEST_SUITE_P(Hostile, CountersFileDamaged,
                         ::testing::Values(Damage::kTruncated, Damage::kShrunk, Damage::kLink, Damage::kFifo),
                         damage_name);

// LMDB's own files truncated by another process (a member of a shared cache, a damaged disk) while a
// host compiles in a loop: lock.mdb (the reader table and the writer's mutex, written through a
// shared mapping) and data.mdb (mapped for reads). Each is truncated to nothing after the 3rd of 24
// compiles, once while the host misses and stores, once while it hits: the host's next transaction
// touches the vanished pages. It must exit normally with NVRTC's bytes, the log saying the store's
// files were truncated under it (the fault happened), and the store usable by the next process.
class LmdbFileTruncated : public ::testing::TestWithParam<const char*> {};

TEST_P(LmdbFileTruncated, UnderALoopingHostThatMissesAndThenHits) {
  constexpr int kRounds = 24, kBefore = 3;
  const ProcessResult reference = PacedProbe::reference(rounds(kRounds));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  TempDir cache;
  const std::string file = cache.path() + "/store/" + GetParam();
  for (const bool warm : {false, true}) {
    SCOPED_TRACE(warm ? "warm (hits)" : "cold (misses)");
    if (warm) {  // the store filled again, by a host of its own
      PacedProbe filler(rounds(kRounds), shim_env(cache.path()));
      for (int n = 1; n <= kRounds; ++n) filler.round(n);
      const ProcessResult filled = filler.finish();
      ASSERT_EQ(filled.exit_code, 0) << filled.err;
      ASSERT_TRUE(filled.out == reference.out);
    }
    const std::int64_t hits_before = get(counters_of(cache.path()), "hits");
    PacedProbe host(rounds(kRounds), shim_env(cache.path()));
    for (int n = 1; n <= kBefore; ++n) host.round(n);
    if (warm) {
      ASSERT_EQ(get(counters_of(cache.path()), "hits") - hits_before, kBefore) << "the host did not hit";
    }
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    ASSERT_GT(st.st_size, 0);
    ASSERT_EQ(::truncate(file.c_str(), 0), 0);
    const ProcessResult run = host.finish();
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_TRUE(run.out == reference.out) << "differs from NVRTC\n" << run.err;
    EXPECT_NE(run.err.find("were truncated under this process"), std::string::npos) << "no fault was provoked\n"
                                                                                    << run.err;
  }
  // The next process uses the store again: it stores, and a later one hits.
  for (const char* round : {"stores", "hits"}) {
    SCOPED_TRACE(round);
    const ProcessResult next = probe({"trivial"}, shim_env(cache.path()));
    EXPECT_EQ(next.exit_code, 0) << next.err;
    EXPECT_EQ(next.err.find("were truncated"), std::string::npos) << next.err;
  }
  EXPECT_GE(get(counters_of(cache.path()), "hits"), 1);
}

INSTANTIATE_TEST_SUITE_P(Hostile, LmdbFileTruncated, ::testing::Values("lock.mdb", "data.mdb"),
                         [](const ::testing::TestParamInfo<const char*>& file) {
                           return std::string(file.param) == "lock.mdb" ? "LockFile" : "DataFile";
                         });

// A small tmpfs, mounted for one test and filled to the last page on request.
class SmallFilesystem {
 public:
  SmallFilesystem() : path_(root_.path() + "/fs") {
    std::filesystem::create_directories(path_);
    mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, "size=48m,mode=0700") == 0;
  }
  ~SmallFilesystem() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& path() const { return path_; }
  // Writes a filler file until the filesystem has no page left; true once it is full.
  bool fill() {
    const std::string filler = path_ + "/filler." + std::to_string(fillers_++);
    const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return errno == ENOSPC;
    static const std::string kChunk(1 << 16, 'f');
    for (std::size_t size : {kChunk.size(), std::size_t{4096}, std::size_t{1}}) {
      while (::write(fd, kChunk.data(), size) == static_cast<ssize_t>(size)) {
      }
    }
    const bool full = errno == ENOSPC;
    ::close(fd);
    return full;
  }

 private:
  TempDir root_;
  std::string path_;
  bool mounted_ = false;
  int fillers_ = 0;
};

// The counters file as releases before space was reserved left it: 65,536 bytes long, only the
// first page written (the rest holes).
void make_sparse(const std::string& counters) {
  char first_page[4096];
  const int in = ::open(counters.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(in, 0);
  ASSERT_EQ(::read(in, first_page, sizeof first_page), static_cast<ssize_t>(sizeof first_page));
  ::close(in);
  ASSERT_EQ(::unlink(counters.c_str()), 0);
  const int out = ::open(counters.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(out, 0);
  ASSERT_EQ(::ftruncate(out, 65536), 0);
  ASSERT_EQ(::pwrite(out, first_page, sizeof first_page, 0), static_cast<ssize_t>(sizeof first_page));
  ::close(out);
  struct stat st {};
  ASSERT_EQ(::stat(counters.c_str(), &st), 0);
  ASSERT_LT(st.st_blocks * 512, 65536) << "the file is not sparse";
}

TEST(FullFilesystem, HitsMissesAFreshCacheAndStatsStayExactAndAlive) {
  SmallFilesystem fs;
  if (!fs.mounted()) {
    if (pypi_required()) FAIL() << "needs root to mount a tmpfs";
    GTEST_SKIP() << "needs root to mount a tmpfs";
  }
  const std::vector<std::string> stored = {"trivial", "template"}, unseen = {"cubin"};
  const ProcessResult direct_stored = probe(stored, {}), direct_unseen = probe(unseen, {});
  ASSERT_EQ(direct_stored.exit_code, 0) << direct_stored.err;
  ASSERT_EQ(direct_unseen.exit_code, 0) << direct_unseen.err;
  const std::string cache = fs.path() + "/cache", counters = cache + "/store/counters";
  const ProcessResult cold = probe(stored, shim_env(cache));
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  ASSERT_EQ(get(counters_of(cache), "stores"), 2) << cold.err;

  // A hit on the full filesystem, the counters file reserved (as this release makes it): served and
  // counted.
  ASSERT_TRUE(fs.fill());
  const ProcessResult hit = probe(stored, shim_env(cache));
  EXPECT_EQ(hit.exit_code, 0) << hit.err;
  EXPECT_TRUE(hit.out == direct_stored.out) << hit.err;
  EXPECT_EQ(get(counters_of(cache), "hits"), 2) << "the reserved counters file did not count\n" << hit.err;

  // A miss there: compiled by NVRTC, exact (nothing can be stored).
  const ProcessResult miss = probe(unseen, shim_env(cache));
  EXPECT_EQ(miss.exit_code, 0) << miss.err;
  EXPECT_TRUE(miss.out == direct_unseen.out) << miss.err;
  // Its warning names the full disk, not an I/O error.
  EXPECT_NE(miss.err.find("no space left on the filesystem holding " + cache + "/store ("), std::string::npos)
      << miss.err;

  // `stats` on that filesystem.
  const ProcessResult stats = cli({"stats"}, {{"NVRTC_CACHE_DIR", cache}});
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("hits"), std::string::npos) << stats.out;
  // `doctor` calls it a full disk, not a cache that works.
  const ProcessResult doctor = cli({"doctor", "--no-compile"}, {{"NVRTC_CACHE_DIR", cache}});
  EXPECT_EQ(doctor.exit_code, 1) << doctor.out << doctor.err;
  EXPECT_NE(doctor.out.find("FAIL  free space       no space left on the filesystem holding " + cache),
            std::string::npos)
      << doctor.out;
  EXPECT_EQ(doctor.out.find("caching works"), std::string::npos) << doctor.out;

  // The counters file of an older release (sparse) on the full filesystem: it is read, never
  // written (a write to one of its holes would fault); the hit is served.
  std::filesystem::remove(fs.path() + "/filler.0");
  make_sparse(counters);
  ASSERT_TRUE(fs.fill());
  const ProcessResult sparse_hit = probe(stored, shim_env(cache));
  EXPECT_EQ(sparse_hit.exit_code, 0) << sparse_hit.err;
  EXPECT_TRUE(sparse_hit.out == direct_stored.out) << sparse_hit.err;
  const ProcessResult sparse_stats = cli({"stats"}, {{"NVRTC_CACHE_DIR", cache}});
  EXPECT_EQ(sparse_stats.exit_code, 0) << sparse_stats.err;

  // The counters file absent: the host would create it on a filesystem with no page left.
  std::filesystem::remove(counters);
  ASSERT_TRUE(fs.fill());
  const ProcessResult absent_hit = probe(stored, shim_env(cache));
  EXPECT_EQ(absent_hit.exit_code, 0) << absent_hit.err;
  EXPECT_TRUE(absent_hit.out == direct_stored.out) << absent_hit.err;
  EXPECT_EQ(cli({"stats"}, {{"NVRTC_CACHE_DIR", cache}}).exit_code, 0);

  // A fresh cache on the full filesystem: no lock file can be backed, so no store; NVRTC serves.
  const std::string fresh = fs.path() + "/fresh";
  const ProcessResult fresh_run = probe(stored, shim_env(fresh));
  EXPECT_EQ(fresh_run.exit_code, 0) << fresh_run.err;
  EXPECT_TRUE(fresh_run.out == direct_stored.out) << fresh_run.err;
  EXPECT_GE(cli({"stats"}, {{"NVRTC_CACHE_DIR", fresh}}).exit_code, 0) << "stats was killed";
}

}  // namespace
}  // namespace nvrtc_cache
