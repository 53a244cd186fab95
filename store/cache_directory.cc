#include "store/cache_directory.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <tuple>

#include "platform/file_mapping.h"
#include "platform/paths.h"
#include "store/lmdb/map_growth.h"
#include "store/lmdb/page_layout.h"

namespace nvrtc_cache::store {
namespace {

// A file or directory of the cache another user could have planted or could change. Unless the cache
// is shared, it must be this user's and writable by no one else; where the system reports no owner
// (platform::Owner::kUnknown: Windows, where the cache directory defaults to one under the user's
// profile, whose ACL gives it to that user) only a link is refused.
std::string unsafe_reason(const std::string& path, const struct stat& st, bool allow_shared) {
  if (S_ISLNK(st.st_mode)) return path + " is a symbolic link";
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) return path + " is not a regular file or directory";
  if (allow_shared) return {};
  const platform::Owner owner = platform::owner_of(st);
  if (owner == platform::Owner::kUnknown) return {};
  if (owner != platform::Owner::kThisUser) return path + " is owned by another user";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return path + " is writable by group or others";
  return {};
}

constexpr const char* kStoreName = "store";
constexpr const char* kMovedAsideInfix = ".corrupt-";

// Distinguishes the stores one process moves aside within a second.
std::atomic<std::uint64_t> g_moved_aside_count{0};

struct MovedAside {
  std::string name;
  std::int64_t seconds = 0;     // as its name says (the Env's clock when it was moved)
  std::int64_t changed_ns = 0;  // its ctime: a rename sets it
};

// The moved-aside copies of `name` in `parent` (directories only), newest first.
std::vector<MovedAside> moved_aside_copies(const DirectoryHandle& parent, const std::string& name, platform::Env& env) {
  std::vector<MovedAside> out;
  std::vector<std::string> names;
  if (env.list_directory(parent.fd(), &names) != 0) return out;
  const std::string prefix = name + kMovedAsideInfix;
  for (std::string& entry : names) {
    struct stat st {};
    if (entry.rfind(prefix, 0) != 0 || env.stat_at(parent.fd(), entry, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    MovedAside copy;
    copy.seconds = std::strtoll(entry.c_str() + prefix.size(), nullptr, 10);
    copy.changed_ns = platform::changed_time_ns(st);
    copy.name = std::move(entry);
    out.push_back(std::move(copy));
  }
  std::sort(out.begin(), out.end(), [](const MovedAside& a, const MovedAside& b) {
    return std::tie(a.seconds, a.changed_ns, a.name) > std::tie(b.seconds, b.changed_ns, b.name);
  });
  return out;
}

// Removes the moved-aside store `name` in `parent` by handle: its files (never following a link),
// then the directory. Anything unexpected inside (a subdirectory) leaves it in place. Every failure
// is tolerated: another process may be removing it too.
void remove_moved_aside(const DirectoryHandle& parent, const std::string& name, platform::Env& env) {
  const DirectoryWalk copy = open_subdirectory(parent, name, name, /*create=*/false, env);
  if (!copy.handle.valid()) return;
  std::vector<std::string> names;
  env.list_directory(copy.handle.fd(), &names);
  for (const std::string& entry : names) {
    struct stat st {};
    if (env.stat_at(copy.handle.fd(), entry, &st) == 0 && !S_ISDIR(st.st_mode)) {
      env.remove_at(copy.handle.fd(), entry, /*directory=*/false);
    }
  }
  env.remove_at(parent.fd(), name, /*directory=*/true);
}

}  // namespace

DirectoryCheck prepare_directory(const std::string& path, bool allow_shared, platform::Env& env) {
  if (!platform::is_absolute_path(path))
    return {DirectoryVerdict::kCannotCreate, path + " is not an absolute path", {}, {}};
  DirectoryWalk walk = open_directory_path(path, /*create=*/true, allow_shared, env,
                                           allow_shared ? kGroupSharedDirectoryMode : mode_t{0700});
  if (!walk.handle.valid()) {
    return {walk.unsafe ? DirectoryVerdict::kUnsafe : DirectoryVerdict::kCannotCreate, std::move(walk.detail), {}, {}};
  }
  const int dir = walk.handle.fd();
  struct stat st;
  if (const int rc = env.stat_at(dir, "", &st); rc != 0) {
    return {DirectoryVerdict::kCannotCreate, "cannot stat " + path + ": " + std::strerror(rc), {}, {}};
  }
  if (std::string why = unsafe_reason(path, st, allow_shared); !why.empty())
    return {DirectoryVerdict::kUnsafe, why, {}, {}};
  // The store's own directory and files must not be links planted by someone else either.
  const std::string store_path = platform::joined_path(path, kStoreName);
  DirectoryWalk store;
  if (env.stat_at(dir, kStoreName, &st) == 0) {
    if (std::string why = unsafe_reason(store_path, st, allow_shared); !why.empty()) {
      return {DirectoryVerdict::kUnsafe, why, {}, {}};
    }
    store = open_subdirectory(walk.handle, kStoreName, store_path, false, env);
    if (store.handle.valid()) {
      for (const char* name : {"data.mdb", "lock.mdb"}) {
        if (env.stat_at(store.handle.fd(), name, &st) != 0) continue;
        if (std::string why = unsafe_reason(platform::joined_path(store_path, name), st, allow_shared); !why.empty()) {
          return {DirectoryVerdict::kUnsafe, why, {}, {}};
        }
      }
    }
  }
  if (const char* name = platform::network_filesystem_at(env, dir)) {
    return {DirectoryVerdict::kNetworkFilesystem, path + " is on a network filesystem (" + name + ")", {}, {}};
  }
  return {DirectoryVerdict::kUsable, {}, std::move(walk.handle), std::move(store.handle)};
}

Status check_data_file(const DirectoryHandle& store, const std::string& shown, platform::Env& env) {
  const std::string data = platform::joined_path(shown, "data.mdb");
  struct stat st;
  if (env.stat_at(store.fd(), "data.mdb", &st) != 0) return Status::ok();  // no store yet
  if (st.st_size == 0) return Status::ok();  // created, never written: LMDB initialises it
  // Both meta pages in one read where the pages are 4 KiB (the usual size); else a second read.
  constexpr std::size_t kUsualPage = 4096;
  char first[2 * kUsualPage];
  std::size_t got = 0;
  if (const int rc = env.read_file_at(store.fd(), "data.mdb", first, sizeof first, 0, &got); rc != 0) {
    return Status::io_error("cannot read " + data + ": " + std::strerror(rc));
  }
  std::optional<LmdbMeta> metas[2] = {parse_lmdb_meta({first, std::min(got, kUsualPage)}), std::nullopt};
  if (metas[0] && metas[0]->page_size == kUsualPage) {
    if (got > kUsualPage) metas[1] = parse_lmdb_meta({first + kUsualPage, got - kUsualPage});
  } else if (metas[0]) {
    std::vector<char> second(metas[0]->page_size);
    if (env.read_file_at(store.fd(), "data.mdb", second.data(), second.size(), static_cast<off_t>(metas[0]->page_size),
                         &got) == 0) {
      metas[1] = parse_lmdb_meta({second.data(), got});
    }
  }
  const LmdbMeta* newest = nullptr;
  for (const auto& m : metas) {
    if (m && (newest == nullptr || m->txnid > newest->txnid)) newest = &*m;
  }
  if (newest == nullptr) return Status::corruption(data + " has no valid meta page");
  const std::optional<std::uint64_t> needed = data_file_bytes_needed(*newest);
  if (!needed) return Status::corruption(data + " has a meta page claiming more pages than can exist");
  if (static_cast<std::uint64_t>(st.st_size) < *needed) {
    return Status::corruption(data + " is " + std::to_string(st.st_size) + " bytes but its meta page needs " +
                              std::to_string(*needed));
  }
  return Status::ok();
}

Status check_data_file(const std::string& store_dir, platform::Env& env) {
  const DirectoryWalk store = open_directory_path(store_dir, /*create=*/false, /*allow_shared=*/false, env);
  return store.handle.valid() ? check_data_file(store.handle, store_dir, env) : Status::ok();
}

std::string quarantine(const DirectoryHandle& parent, const std::string& name, platform::Env& env) {
  const std::string aside = name + kMovedAsideInfix + std::to_string(env.now_seconds()) + "-" +
                            std::to_string(getpid()) + "-" + std::to_string(g_moved_aside_count.fetch_add(1) + 1);
  if (env.rename_at(parent.fd(), name, aside) != 0) return {};
  prune_moved_aside(parent, name, env);
  return aside;
}

void prune_moved_aside(const DirectoryHandle& parent, const std::string& name, platform::Env& env) {
  const std::vector<MovedAside> copies = moved_aside_copies(parent, name, env);
  for (std::size_t i = kMovedAsideKept; i < copies.size(); ++i) remove_moved_aside(parent, copies[i].name, env);
}

std::size_t count_moved_aside(const DirectoryHandle& parent, const std::string& name, platform::Env& env) {
  return moved_aside_copies(parent, name, env).size();
}

std::size_t moved_aside_stores(const std::string& cache_directory, platform::Env& env) {
  const DirectoryWalk dir = open_directory_path(cache_directory, /*create=*/false, /*allow_shared=*/true, env);
  return dir.handle.valid() ? count_moved_aside(dir.handle, kStoreName, env) : 0;
}

OpenedCache open_cache(const CachePolicy& policy) {
  OpenedCache out;
  platform::Env& env = *policy.env;
  out.directory = policy.directory;
  DirectoryCheck check = prepare_directory(out.directory, policy.allow_shared, env);
  if (check.verdict == DirectoryVerdict::kNetworkFilesystem && !policy.fallback_directory.empty()) {
    DirectoryCheck fallback = prepare_directory(policy.fallback_directory, false, env);
    out.messages.push_back(
        "NVRTC_CACHE_DIR: " + check.detail + ", where LMDB is unsafe; " +
        (fallback.verdict == DirectoryVerdict::kUsable
             ? "using the node-local " + policy.fallback_directory + " instead"
             : "and the node-local fallback is unusable (" + fallback.detail + "); compiling without the cache") +
        " (set NVRTC_CACHE_DIR to a local directory)");
    check = std::move(fallback);
    out.directory = policy.fallback_directory;
  }
  if (check.verdict != DirectoryVerdict::kUsable) {
    const std::string hint = check.verdict == DirectoryVerdict::kUnsafe
                                 ? " (refused; NVRTC_CACHE_SHARED=1 allows a cache shared between users)"
                                 : "";
    out.status = Status::invalid_argument(check.detail + hint);
    return out;
  }
  const std::string store_dir = platform::joined_path(out.directory, kStoreName);
  // Moves a damaged store aside (saying why); false if it could not be moved.
  auto move_aside = [&](const Status& damage) {
    const std::string aside = quarantine(check.handle, kStoreName, env);
    out.messages.push_back(
        damage.message() +
        (aside.empty() ? "; could not move it aside"
                       : "; moved aside to " + platform::joined_path(out.directory, aside) + " and starting afresh"));
    return !aside.empty();
  };
  if (check.store.valid()) {  // the store directory prepare_directory checked, not opened again
    if (Status data = check_data_file(check.store, store_dir, env);
        data.code() == Status::Code::kCorruption && !move_aside(data)) {
      out.status = data;
      return out;
    }
    check.store = DirectoryHandle();
  }
  LmdbOptions options;
  options.directory = store_dir;
  options.parent_directory_fd = check.handle.fd();
  options.map_size_bytes = policy.max_bytes;
  // Where the data file is as large as the map (Windows), the map starts small and grows.
  if (platform::mapping_sizes_the_file()) options.initial_map_bytes = lmdb::kMapGrowthStepBytes;
  options.group_shared = policy.allow_shared;
  options.reads_write_touches = policy.reads_write_touches;
  options.env = policy.env;
  out.store = LmdbStore::open(options, &out.status);
  if (!out.store && out.status.code() == Status::Code::kCorruption && move_aside(out.status)) {  // LMDB found damage
    out.store = LmdbStore::open(options, &out.status);
  }
  if (out.store && out.store->read_only()) {
    out.read_only = true;
    out.messages.push_back("the cache at " + out.directory + " is read-only: serving hits, storing nothing");
  }
  return out;
}

}  // namespace nvrtc_cache::store
