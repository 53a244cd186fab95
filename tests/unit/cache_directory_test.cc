// Opening the cache safely: directory creation and permissions, refusals, symbolic links on the way,
// a directory swapped between the check and LMDB's open, network filesystems, truncated and garbage
// data files, pruning of moved-aside stores, and filesystem faults injected through the platform::Env seam.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <set>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <atomic>
#include <utility>
#include <vector>

#include "store/cache_directory.h"
#include "store/lmdb/page_layout.h"

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

// The path a descriptor refers to (tests only: production code never resolves a handle back to a path).
std::string path_of(int fd) { return fs::read_symlink("/proc/self/fd/" + std::to_string(fd)).string(); }

// The system platform::Env with chosen operations failing, statfs answering a chosen filesystem type, links of
// chosen names appearing owned by another user, /proc/self/fd hidden, and a hook run where
// LmdbStore::open starts (after the directory checks, before LMDB opens anything).
class FaultyEnv final : public platform::Env {
 public:
  std::map<std::string, int> fail;  // operation name -> errno
  std::function<bool(const std::string&)> network = [](const std::string&) { return false; };
  std::set<std::string> foreign_links;  // names of links that appear owned by another user
  bool hide_proc = false;               // as if /proc were not mounted
  std::function<void()> before_store_open = [] {};
  std::atomic<std::int64_t> clock_skew{0};  // seconds added to the clock

  std::int64_t now_seconds() override { return platform::Env::system()->now_seconds() + clock_skew.load(); }
  int stat(const std::string& p, struct stat* st) override {
    if (hide_proc && p.rfind("/proc/", 0) == 0) return ENOENT;
    return platform::Env::stat(p, st);
  }
  int make_directory_at(int dir, const std::string& name, mode_t mode) override {
    return injected("mkdir") ? injected("mkdir") : platform::Env::make_directory_at(dir, name, mode);
  }
  int stat_at(int dir, const std::string& name, struct stat* st) override {
    const int rc = platform::Env::stat_at(dir, name, st);
    if (rc == 0 && S_ISLNK(st->st_mode) && foreign_links.count(name)) st->st_uid = geteuid() == 12345 ? 12346 : 12345;
    return rc;
  }
  int statfs_at(int dir, struct statfs* st) override {
    const int rc = platform::Env::statfs_at(dir, st);
    if (rc == 0 && network(path_of(dir))) st->f_type = NFS_SUPER_MAGIC;
    return rc;
  }
  int rename_at(int dir, const std::string& a, const std::string& b) override {
    return injected("rename") ? injected("rename") : platform::Env::rename_at(dir, a, b);
  }
  int read_file_at(int dir, const std::string& name, void* b, std::size_t n, off_t o, std::size_t* r) override {
    if (injected("read")) {
      *r = 0;
      return injected("read");
    }
    return platform::Env::read_file_at(dir, name, b, n, o, r);
  }
  int fault_for(platform::StoreOperation operation) override {
    if (operation == platform::StoreOperation::kOpen) before_store_open();
    return 0;
  }

 private:
  int injected(const std::string& op) const {
    auto it = fail.find(op);
    return it == fail.end() ? 0 : it->second;
  }
};

CachePolicy policy_for(const std::string& dir, platform::Env* env = platform::Env::system()) {
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
  const Status check = check_data_file(dir + "/store", *platform::Env::system());
  EXPECT_EQ(check.code(), Status::Code::kCorruption) << check.message();

  OpenedCache reopened = open_cache(policy_for(dir));
  ASSERT_TRUE(reopened.store) << reopened.status.message();
  EXPECT_EQ(reopened.store->entry_count(), 0u);
  ASSERT_EQ(reopened.messages.size(), 1u);
  EXPECT_NE(reopened.messages[0].find("moved aside"), std::string::npos) << reopened.messages[0];
  int aside = 0;
  for (const auto& e : fs::directory_iterator(dir))
    aside += e.path().filename().string().rfind("store.corrupt-", 0) == 0;
  EXPECT_EQ(aside, 1);
  EXPECT_EQ(fs::file_size(dir + "/" +
                          [&] {
                            for (const auto& e : fs::directory_iterator(dir)) {
                              if (e.path().filename().string().rfind("store.corrupt-", 0) == 0)
                                return e.path().filename().string();
                            }
                            return std::string();
                          }() +
                          "/data.mdb"),
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
    const Status check = check_data_file(dir + "/store", *platform::Env::system());
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
  EXPECT_TRUE(check_data_file(dir + "/store", *platform::Env::system()));
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
  for (const std::string& d : {dir, dir + "/store"})
    fs::permissions(d, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
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

// ---- symbolic links on the way, and swaps between the check and LMDB's open ----

void make_private_directories(const std::string& path) {
  fs::create_directories(path);
  for (fs::path p = path; p.string().size() > 1 && fs::exists(p); p = p.parent_path()) {
    if (p.filename().string().rfind("nvrtc-cache-dir-", 0) == 0) break;  // the TempDir itself
    fs::permissions(p, fs::perms::owner_all);
  }
}

std::vector<std::string> moved_aside_names(const std::string& cache_dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(cache_dir)) {
    if (e.path().filename().string().rfind("store.corrupt-", 0) == 0) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CacheDirectory, LinkAboveTheCacheDirectoryOwnedByTheUserIsFollowed) {
  TempDir t;
  make_private_directories(t.path() + "/real");
  fs::create_directory_symlink(t.path() + "/real", t.path() + "/link");
  OpenedCache opened = open_cache(policy_for(t.path() + "/link/a/cache"));
  ASSERT_TRUE(opened.store) << opened.status.message();
  ASSERT_TRUE(opened.store->put("k", "v"));
  EXPECT_TRUE(fs::is_regular_file(t.path() + "/real/a/cache/store/data.mdb"));
  EXPECT_EQ(fs::status(t.path() + "/real/a").permissions() & fs::perms::all, fs::perms::owner_all);
}

TEST(CacheDirectory, LinkAboveTheCacheDirectoryOwnedByAnotherUserIsRefused) {
  TempDir t;
  make_private_directories(t.path() + "/real/cache");
  fs::create_directory_symlink(t.path() + "/real", t.path() + "/theirs");
  FaultyEnv env;
  env.foreign_links = {"theirs"};
  OpenedCache opened = open_cache(policy_for(t.path() + "/theirs/cache", &env));
  EXPECT_FALSE(opened.store);
  EXPECT_NE(opened.status.message().find("theirs is a symbolic link owned by another user"), std::string::npos)
      << opened.status.message();

  CachePolicy shared = policy_for(t.path() + "/theirs/cache", &env);
  shared.allow_shared = true;
  EXPECT_TRUE(open_cache(shared).store) << "a shared cache trusts the links of others";
}

TEST(CacheDirectory, ARelativeLinkIsWalkedFromItsOwnDirectory) {
  TempDir t;
  make_private_directories(t.path() + "/x/real");
  make_private_directories(t.path() + "/x/y");
  fs::create_directory_symlink("../real", t.path() + "/x/y/link");
  OpenedCache opened = open_cache(policy_for(t.path() + "/x/y/link/cache"));
  ASSERT_TRUE(opened.store) << opened.status.message();
  ASSERT_TRUE(opened.store->put("k", "v"));
  EXPECT_TRUE(fs::is_regular_file(t.path() + "/x/real/cache/store/data.mdb"));
}

// Moves `victim` away and leaves in its place a link to `attacker` (which holds a cache of its own):
// what another user who can write the directory holding `victim` could do at any moment.
void swap_for_link(const std::string& victim, const std::string& attacker) {
  make_private_directories(attacker + "/cache/store");
  fs::rename(victim, victim + ".checked");
  fs::create_directory_symlink(attacker, victim);
}

TEST(CacheDirectory, AncestorSwappedBeforeLmdbOpensCannotRedirectTheStore) {
  TempDir t;
  const std::string home = t.path() + "/home";
  make_private_directories(home + "/cache");
  FaultyEnv env;
  bool swapped = false;
  env.before_store_open = [&] {
    if (!std::exchange(swapped, true)) swap_for_link(home, t.path() + "/attacker");
  };
  OpenedCache opened = open_cache(policy_for(home + "/cache", &env));
  ASSERT_TRUE(swapped);
  ASSERT_TRUE(opened.store) << opened.status.message();
  ASSERT_TRUE(opened.store->put("k", "v"));
  EXPECT_EQ(opened.store->get("k"), "v");
  EXPECT_TRUE(fs::is_regular_file(home + ".checked/cache/store/data.mdb")) << "the store is the checked directory";
  EXPECT_FALSE(fs::exists(t.path() + "/attacker/cache/store/data.mdb")) << "nothing was opened through the link";
  EXPECT_FALSE(fs::exists(t.path() + "/attacker/cache/store/lock.mdb"));
}

TEST(CacheDirectory, AncestorSwappedBeforeLmdbOpensIsRefusedWithoutProc) {
  TempDir t;
  const std::string home = t.path() + "/home";
  make_private_directories(home + "/cache");
  FaultyEnv env;
  env.hide_proc = true;  // LMDB is then given the path, and what it opened is compared afterwards
  {
    OpenedCache unswapped = open_cache(policy_for(home + "/cache", &env));
    ASSERT_TRUE(unswapped.store) << "precondition: the path-based open works: " << unswapped.status.message();
  }
  bool swapped = false;
  env.before_store_open = [&] {
    if (!std::exchange(swapped, true)) swap_for_link(home, t.path() + "/attacker");
  };
  OpenedCache opened = open_cache(policy_for(home + "/cache", &env));
  ASSERT_TRUE(swapped);
  EXPECT_FALSE(opened.store);
  EXPECT_NE(opened.status.message().find("was replaced while it was being opened"), std::string::npos)
      << opened.status.message();
}

TEST(CacheDirectory, StoreDirectorySwappedForALinkIsRefused) {
  TempDir t;
  const std::string dir = t.path() + "/cache";
  fill(dir, 2);
  FaultyEnv env;
  env.before_store_open = [&] { swap_for_link(dir + "/store", t.path() + "/attacker"); };
  OpenedCache opened = open_cache(policy_for(dir, &env));
  EXPECT_FALSE(opened.store);
  EXPECT_NE(opened.status.message().find("store is a symbolic link"), std::string::npos) << opened.status.message();
  EXPECT_FALSE(fs::exists(t.path() + "/attacker/cache/store/data.mdb"));
}

TEST(CacheDirectory, OpenStoreNoticesItsDirectoryReplacedByALink) {
  TempDir t;
  const std::string dir = t.path() + "/cache";
  FaultyEnv env;
  OpenedCache opened = open_cache(policy_for(dir, &env));
  ASSERT_TRUE(opened.store) << opened.status.message();
  ASSERT_TRUE(opened.store->put("k", "v"));
  swap_for_link(dir + "/store", t.path() + "/attacker");
  env.clock_skew += 10;  // the identity is checked at most once a second
  EXPECT_FALSE(opened.store->put("k2", "v2")) << "the store must not reopen through the link";
  EXPECT_FALSE(fs::exists(t.path() + "/attacker/cache/store/data.mdb"));
}

TEST(CacheDirectory, HandleRenumberedByTheHostIsNeitherUsedNorClosed) {
  TempDir t;
  const std::string dir = t.path() + "/cache";
  std::unique_ptr<LmdbStore> store = open_cache(policy_for(dir)).store;
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->put("k", "v"));
  const pid_t child = fork();
  if (child == 0) {
    // A daemon-style child closes what it does not know and reuses the numbers for files of its own.
    int replaced = 0;
    for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
      std::error_code ec;
      if (fs::read_symlink(e.path(), ec).string() != dir) continue;
      const int fd = std::stoi(e.path().filename().string());
      const int own = ::open((t.path() + "/host-file").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (own < 0 || ::dup2(own, fd) != fd) _exit(10);
      ::close(own);
      ++replaced;
      (void)store->put("k2", "v2");  // the child opens its own environment: through the handle, if it trusted it
      store.reset();
      if (::fcntl(fd, F_GETFD) < 0) _exit(11);  // the host's file was closed by the store
    }
    _exit(replaced == 1 ? 0 : 12);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "exit code names the failed step (10-12)";
  EXPECT_EQ(store->get("k"), "v");
}

// ---- moved-aside stores ----

// Fills the cache, truncates its data file and reopens it: the store is moved aside.
std::string damage_and_reopen(const std::string& dir) {
  fill(dir, 3);
  const std::string data = dir + "/store/data.mdb";
  fs::resize_file(data, fs::file_size(data) / 2);
  OpenedCache reopened = open_cache(policy_for(dir));
  EXPECT_TRUE(reopened.store) << reopened.status.message();
  EXPECT_EQ(reopened.messages.size(), 1u);
  const std::string message = reopened.messages.empty() ? "" : reopened.messages[0];
  const auto at = message.find("store.corrupt-");
  EXPECT_NE(at, std::string::npos) << message;
  return at == std::string::npos ? "" : message.substr(at, message.find(' ', at) - at);
}

TEST(CacheDirectory, OnlyTheNewestTwoMovedAsideStoresAreKept) {
  TempDir t;
  const std::string dir = t.path() + "/cache";
  std::vector<std::string> moved;
  for (int i = 0; i < 3; ++i) moved.push_back(damage_and_reopen(dir));
  ASSERT_EQ(std::set<std::string>(moved.begin(), moved.end()).size(), 3u) << "three distinct stores moved aside";
  std::vector<std::string> newest = {moved[1], moved[2]};
  std::sort(newest.begin(), newest.end());
  EXPECT_EQ(moved_aside_names(dir), newest);
  EXPECT_EQ(moved_aside_stores(dir), 2u);
  EXPECT_TRUE(fs::is_regular_file(dir + "/" + moved[2] + "/data.mdb")) << "kept copies are left whole";
}

TEST(CacheDirectory, PruningNeverFollowsLinksAndKeepsTheNewest) {
  TempDir t;
  const std::string dir = t.path() + "/cache";
  make_private_directories(dir);
  make_private_directories(t.path() + "/precious");
  std::ofstream(t.path() + "/precious/data.mdb") << "keep me";
  fs::create_directory_symlink(t.path() + "/precious", dir + "/store.corrupt-1-1-1");  // oldest by name
  for (const char* old : {"store.corrupt-100-7-1", "store.corrupt-200-7-2", "store.corrupt-300-7-3"}) {
    fs::create_directory(dir + "/" + old);
    std::ofstream(dir + "/" + old + "/data.mdb") << "x";
    fs::create_symlink(t.path() + "/precious/data.mdb", dir + "/" + old + "/lock.mdb");
  }
  DirectoryWalk handle = open_directory_path(dir, false, false, *platform::Env::system());
  ASSERT_TRUE(handle.handle.valid()) << handle.detail;
  prune_moved_aside(handle.handle, "store", *platform::Env::system());
  EXPECT_EQ(moved_aside_names(dir),
            (std::vector<std::string>{"store.corrupt-1-1-1", "store.corrupt-200-7-2", "store.corrupt-300-7-3"}));
  EXPECT_TRUE(fs::is_symlink(dir + "/store.corrupt-1-1-1")) << "a link is not a moved-aside store: left alone";
  std::string contents;
  std::getline(std::ifstream(t.path() + "/precious/data.mdb"), contents);
  EXPECT_EQ(contents, "keep me");
  EXPECT_EQ(count_moved_aside(handle.handle, "store", *platform::Env::system()), 2u);
}

TEST(CacheDirectory, ConcurrentPrunersLeaveTheNewestTwo) {
  TempDir t;
  const std::string dir = t.path() + "/cache";
  make_private_directories(dir);
  for (int i = 0; i < 40; ++i) {
    const std::string copy = dir + "/store.corrupt-" + std::to_string(1000 + i) + "-9-" + std::to_string(i);
    fs::create_directory(copy);
    std::ofstream(copy + "/data.mdb") << i;
    std::ofstream(copy + "/lock.mdb") << i;
  }
  std::vector<pid_t> children;
  for (int c = 0; c < 4; ++c) {
    const pid_t child = fork();
    if (child == 0) {
      DirectoryWalk handle = open_directory_path(dir, false, false, *platform::Env::system());
      if (!handle.handle.valid()) _exit(1);
      prune_moved_aside(handle.handle, "store", *platform::Env::system());
      _exit(0);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(moved_aside_names(dir), (std::vector<std::string>{"store.corrupt-1038-9-38", "store.corrupt-1039-9-39"}));
}

// A dependency swapped for a FIFO (or a device) is never waited on: platform::Env reads only regular files,
// opened non-blocking, so a hit's validation or a replay sees "cannot read" and moves on.
TEST(EnvReads, AFifoIsRefusedAtOnceNeverWaitedOn) {
  TempDir t;
  const std::string fifo = t.path() + "/header.h";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string content;
  EXPECT_EQ(platform::Env::system()->read_file(fifo, 1 << 20, &content),
            EINVAL);  // returns: a blocking open would hang
  char buffer[16];
  std::size_t got = 0;
  const int dir = ::open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  EXPECT_NE(platform::Env::system()->read_file_at(dir, "header.h", buffer, sizeof buffer, 0, &got), 0);
  ::close(dir);
  std::ofstream(t.path() + "/regular.h") << "#pragma once\n";
  EXPECT_EQ(platform::Env::system()->read_file(t.path() + "/regular.h", 1 << 20, &content), 0);
  EXPECT_EQ(content, "#pragma once\n");
}

}  // namespace
}  // namespace nvrtc_cache::store
