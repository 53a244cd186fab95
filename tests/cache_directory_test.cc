// Opening the cache safely: directory creation and permissions, refusals, network filesystems,
// truncated and garbage data files, and filesystem faults injected through the Env seam.
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>

#include "store/cache_directory.h"
#include "store/lmdb_records.h"

namespace nvrtc_cache::store {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "nvrtc-cache-dir-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The system Env with chosen operations failing, and statfs answering a chosen filesystem type.
class FaultyEnv final : public Env {
 public:
  std::map<std::string, int> fail;  // operation name -> errno
  std::function<bool(const std::string&)> network = [](const std::string&) { return false; };

  std::int64_t now_seconds() override { return Env::system()->now_seconds(); }
  int make_directory(const std::string& p, mode_t m) override {
    return injected("mkdir") ? injected("mkdir") : Env::system()->make_directory(p, m);
  }
  int lstat(const std::string& p, struct stat* st) override { return Env::system()->lstat(p, st); }
  int stat(const std::string& p, struct stat* st) override { return Env::system()->stat(p, st); }
  int statfs(const std::string& p, struct statfs* st) override {
    const int rc = Env::system()->statfs(p, st);
    if (rc == 0 && network(p)) st->f_type = NFS_SUPER_MAGIC;
    return rc;
  }
  int rename(const std::string& a, const std::string& b) override {
    return injected("rename") ? injected("rename") : Env::system()->rename(a, b);
  }
  int chmod(const std::string& p, mode_t m) override { return Env::system()->chmod(p, m); }
  int read_at(const std::string& p, void* b, std::size_t n, off_t o, std::size_t* r) override {
    if (injected("read")) {
      *r = 0;
      return injected("read");
    }
    return Env::system()->read_at(p, b, n, o, r);
  }

 private:
  int injected(const std::string& op) const {
    auto it = fail.find(op);
    return it == fail.end() ? 0 : it->second;
  }
};

CachePolicy policy_for(const std::string& dir, Env* env = Env::system()) {
  CachePolicy p;
  p.directory = dir;
  p.max_bytes = 16ull << 20;
  p.env = env;
  return p;
}

void fill(const std::string& cache_dir, int entries) {
  OpenedCache opened = open_cache(policy_for(cache_dir));
  ASSERT_TRUE(opened.store) << opened.status.message();
  for (int i = 0; i < entries; ++i) {
    ASSERT_TRUE(opened.store->put("key" + std::to_string(i), std::string(20000, static_cast<char>('a' + i % 26))));
  }
}

TEST(CacheDirectory, MissingDirectoriesAreCreatedPrivate) {
  TempDir t;
  const std::string dir = t.path() + "/a/b/cache";
  OpenedCache opened = open_cache(policy_for(dir));
  ASSERT_TRUE(opened.store) << opened.status.message();
  for (const std::string& d : {t.path() + "/a", t.path() + "/a/b", dir}) {
    EXPECT_EQ(fs::status(d).permissions() & fs::perms::all, fs::perms::owner_all) << d;
  }
  EXPECT_EQ(fs::status(dir + "/store/data.mdb").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST(CacheDirectory, SymlinkedOrGroupWritableDirectoriesAreRefused) {
  TempDir t;
  fs::create_directory(t.path() + "/real");
  fs::permissions(t.path() + "/real", fs::perms::owner_all);
  fs::create_directory_symlink(t.path() + "/real", t.path() + "/link");
  OpenedCache linked = open_cache(policy_for(t.path() + "/link"));
  EXPECT_FALSE(linked.store);
  EXPECT_NE(linked.status.message().find("symbolic link"), std::string::npos) << linked.status.message();

  fs::permissions(t.path() + "/real", fs::perms::owner_all | fs::perms::group_write);
  OpenedCache writable = open_cache(policy_for(t.path() + "/real"));
  EXPECT_FALSE(writable.store);
  EXPECT_NE(writable.status.message().find("writable by group"), std::string::npos);
  EXPECT_NE(writable.status.message().find("NVRTC_CACHE_SHARED"), std::string::npos);

  CachePolicy shared = policy_for(t.path() + "/real");
  shared.allow_shared = true;
  EXPECT_TRUE(open_cache(shared).store);
}

TEST(CacheDirectory, DirectoryOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  TempDir t;
  const std::string dir = t.path() + "/theirs";
  fs::create_directory(dir);
  fs::permissions(dir, fs::perms::owner_all);
  ASSERT_EQ(chown(dir.c_str(), 12345, 12345), 0);
  OpenedCache opened = open_cache(policy_for(dir));
  EXPECT_FALSE(opened.store);
  EXPECT_NE(opened.status.message().find("owned by another user"), std::string::npos);
}

TEST(CacheDirectory, PlantedSymlinkForTheDataFileIsRefused) {
  TempDir t;
  fs::create_directories(t.path() + "/cache/store");
  fs::permissions(t.path() + "/cache", fs::perms::owner_all);
  fs::permissions(t.path() + "/cache/store", fs::perms::owner_all);
  std::ofstream(t.path() + "/elsewhere") << "";
  fs::create_symlink(t.path() + "/elsewhere", t.path() + "/cache/store/data.mdb");
  OpenedCache opened = open_cache(policy_for(t.path() + "/cache"));
  EXPECT_FALSE(opened.store);
  EXPECT_NE(opened.status.message().find("data.mdb is a symbolic link"), std::string::npos);
}

TEST(CacheDirectory, NetworkFilesystemFallsBackToANodeLocalDirectory) {
  TempDir t;
  FaultyEnv env;
  const std::string remote = t.path() + "/nfs-home/cache";
  env.network = [&](const std::string& p) { return p.rfind(t.path() + "/nfs-home", 0) == 0; };
  CachePolicy policy = policy_for(remote, &env);
  policy.fallback_directory = t.path() + "/local";
  OpenedCache opened = open_cache(policy);
  ASSERT_TRUE(opened.store) << opened.status.message();
  EXPECT_EQ(opened.directory, t.path() + "/local");
  ASSERT_EQ(opened.messages.size(), 1u);
  EXPECT_NE(opened.messages[0].find("network filesystem (NFS)"), std::string::npos) << opened.messages[0];
  EXPECT_NE(opened.messages[0].find("NVRTC_CACHE_DIR"), std::string::npos);

  env.network = [](const std::string&) { return true; };  // the fallback is remote too
  OpenedCache none = open_cache(policy);
  EXPECT_FALSE(none.store);
  EXPECT_NE(none.messages[0].find("compiling without the cache"), std::string::npos);
}

TEST(CacheDirectory, TruncatedDataFileIsCaughtBeforeMappingAndMovedAside) {
  TempDir t;
  const std::string dir = t.path() + "/cache";
  fill(dir, 40);
  const std::string data = dir + "/store/data.mdb";
  const auto full = fs::file_size(data);
  fs::resize_file(data, full / 2);
  const Status check = check_data_file(dir + "/store", *Env::system());
  EXPECT_EQ(check.code(), Status::Code::kCorruption) << check.message();

  OpenedCache reopened = open_cache(policy_for(dir));
  ASSERT_TRUE(reopened.store) << reopened.status.message();
  EXPECT_EQ(reopened.store->entry_count(), 0u);
  ASSERT_EQ(reopened.messages.size(), 1u);
  EXPECT_NE(reopened.messages[0].find("moved aside"), std::string::npos) << reopened.messages[0];
  int aside = 0;
  for (const auto& e : fs::directory_iterator(dir)) aside += e.path().filename().string().rfind("store.corrupt-", 0) == 0;
  EXPECT_EQ(aside, 1);
  EXPECT_EQ(fs::file_size(dir + "/" + [&] {
              for (const auto& e : fs::directory_iterator(dir)) {
                if (e.path().filename().string().rfind("store.corrupt-", 0) == 0) return e.path().filename().string();
              }
              return std::string();
            }() + "/data.mdb"),
            full / 2)
      << "the damaged file must be kept as it was, never truncated further";
}

TEST(CacheDirectory, MetaPageWhosePageCountWrapsIsCorruption) {
  TempDir t;
  const std::string dir = t.path() + "/cache";
  fill(dir, 3);
  const std::string data = dir + "/store/data.mdb";
  std::string bytes;
  {
    std::ifstream in(data, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto meta = parse_lmdb_meta(bytes);
  ASSERT_TRUE(meta);
  constexpr std::size_t kLastPageOffset = 16 + 24 + 2 * 48;
  // (last_page + 1) * page_size: 0 bytes needed for the first, page_size for the second, once wrapped.
  for (const std::uint64_t last_page : {~std::uint64_t{0}, (~std::uint64_t{0} / meta->page_size)}) {
    for (const std::size_t page : {std::size_t{0}, std::size_t{meta->page_size}}) {
      std::memcpy(bytes.data() + page + kLastPageOffset, &last_page, sizeof last_page);
    }
    std::ofstream(data, std::ios::binary | std::ios::trunc) << bytes;
    const Status check = check_data_file(dir + "/store", *Env::system());
    EXPECT_EQ(check.code(), Status::Code::kCorruption) << last_page << ": " << check.message();
  }
}

TEST(CacheDirectory, GarbageDataFileIsMovedAside) {
  TempDir t;
  const std::string dir = t.path() + "/cache";
  fill(dir, 3);
  {
    std::ofstream garbage(dir + "/store/data.mdb", std::ios::binary | std::ios::trunc);
    for (int i = 0; i < 100000; ++i) garbage.put(static_cast<char>(i * 7919));
  }
  OpenedCache reopened = open_cache(policy_for(dir));
  ASSERT_TRUE(reopened.store) << reopened.status.message();
  EXPECT_TRUE(reopened.store->put("k", "v"));
  EXPECT_EQ(reopened.store->get("k"), "v");
}

TEST(CacheDirectory, IntactStoreIsKept) {
  TempDir t;
  const std::string dir = t.path() + "/cache";
  fill(dir, 10);
  EXPECT_TRUE(check_data_file(dir + "/store", *Env::system()));
  OpenedCache reopened = open_cache(policy_for(dir));
  ASSERT_TRUE(reopened.store);
  EXPECT_EQ(reopened.store->entry_count(), 10u);
  EXPECT_TRUE(reopened.messages.empty());
}

TEST(CacheDirectory, ReadOnlyCacheServesHitsAndStoresNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to read the cache as another user";
  TempDir t;
  fs::permissions(t.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  const std::string dir = t.path() + "/cache";
  fill(dir, 5);
  for (const std::string& d : {dir, dir + "/store"}) fs::permissions(d, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  for (const std::string& f : {dir + "/store/data.mdb", dir + "/store/lock.mdb"}) {
    fs::permissions(f, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  }
  const pid_t child = fork();
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    CachePolicy p = policy_for(dir);
    p.allow_shared = true;  // owned by root
    OpenedCache opened = open_cache(p);
    if (!opened.store) _exit(11);
    if (!opened.store->read_only()) _exit(12);
    if (opened.messages.empty() || opened.messages[0].find("read-only") == std::string::npos) _exit(13);
    if (opened.store->get("key3") != std::string(20000, 'd')) _exit(14);
    if (opened.store->put("new", "v").code() != Status::Code::kReadOnly) _exit(15);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "exit code names the failed step (10-15)";
}

TEST(CacheDirectory, InjectedFaultsFailCleanly) {
  TempDir t;
  FaultyEnv env;
  env.fail["mkdir"] = ENOSPC;
  OpenedCache full = open_cache(policy_for(t.path() + "/new", &env));
  EXPECT_FALSE(full.store);
  EXPECT_NE(full.status.message().find("No space left"), std::string::npos) << full.status.message();

  const std::string dir = t.path() + "/cache";
  fill(dir, 5);
  fs::resize_file(dir + "/store/data.mdb", 4096 * 2 + 100);
  env.fail.clear();
  env.fail["rename"] = EACCES;
  OpenedCache stuck = open_cache(policy_for(dir, &env));
  EXPECT_FALSE(stuck.store) << "a damaged store that cannot be moved aside must not be opened";
  EXPECT_NE(stuck.messages.at(0).find("could not move it aside"), std::string::npos);

  env.fail.clear();
  env.fail["read"] = EIO;
  EXPECT_EQ(check_data_file(dir + "/store", env).code(), Status::Code::kIoError);
}

}  // namespace
}  // namespace nvrtc_cache::store
