#include "store/cache_directory.h"

#include <linux/magic.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "store/lmdb_records.h"

namespace nvrtc_cache::store {
namespace {

// statfs f_type values of filesystems LMDB cannot safely share a lock file or mmap on.
struct NetworkFilesystem {
  std::int64_t magic;
  const char* name;
};
constexpr NetworkFilesystem kNetworkFilesystems[] = {
    {NFS_SUPER_MAGIC, "NFS"},      {SMB_SUPER_MAGIC, "SMB"},        {static_cast<std::int64_t>(0xFF534D42), "CIFS"},
    {static_cast<std::int64_t>(0xFE534D42), "SMB2"}, {FUSE_SUPER_MAGIC, "FUSE"}, {V9FS_MAGIC, "9p"},
    {0x0BD00BD0, "Lustre"},        {0x47504653, "GPFS"},            {CEPH_SUPER_MAGIC, "Ceph"},
    {AFS_SUPER_MAGIC, "AFS"},      {CODA_SUPER_MAGIC, "Coda"},
};

const char* network_filesystem_name(std::int64_t f_type) {
  for (const auto& fs : kNetworkFilesystems) {
    if (fs.magic == f_type) return fs.name;
  }
  return nullptr;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

// mkdir -p with mode 0700 for every directory created.
int make_directories(const std::string& path, Env& env) {
  struct stat st;
  if (env.lstat(path, &st) == 0) return 0;
  if (path != "/" && !path.empty()) {
    if (const int rc = make_directories(parent_of(path), env); rc != 0) return rc;
  }
  const int rc = env.make_directory(path, 0700);
  return rc == EEXIST ? 0 : rc;
}

std::string unsafe_reason(const std::string& path, const struct stat& st, bool allow_shared) {
  if (S_ISLNK(st.st_mode)) return path + " is a symbolic link";
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) return path + " is not a regular file or directory";
  if (allow_shared) return {};
  if (st.st_uid != geteuid()) return path + " is owned by another user";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return path + " is writable by group or others";
  return {};
}

}  // namespace

DirectoryCheck prepare_directory(const std::string& path, bool allow_shared, Env& env) {
  if (path.empty() || path[0] != '/') return {DirectoryVerdict::kCannotCreate, path + " is not an absolute path"};
  if (const int rc = make_directories(path, env); rc != 0) {
    return {DirectoryVerdict::kCannotCreate, "cannot create " + path + ": " + std::strerror(rc)};
  }
  struct stat st;
  if (const int rc = env.lstat(path, &st); rc != 0) {
    return {DirectoryVerdict::kCannotCreate, "cannot stat " + path + ": " + std::strerror(rc)};
  }
  if (!S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode)) return {DirectoryVerdict::kUnsafe, path + " is not a directory"};
  if (std::string why = unsafe_reason(path, st, allow_shared); !why.empty()) return {DirectoryVerdict::kUnsafe, why};
  // The store's own directory and files must not be links planted by someone else either.
  for (const char* name : {"/store", "/store/data.mdb", "/store/lock.mdb"}) {
    const std::string inner = path + name;
    if (env.lstat(inner, &st) == 0) {
      if (std::string why = unsafe_reason(inner, st, allow_shared); !why.empty()) {
        return {DirectoryVerdict::kUnsafe, why};
      }
    }
  }
  struct statfs fs;
  if (env.statfs(path, &fs) == 0) {
    if (const char* name = network_filesystem_name(static_cast<std::int64_t>(fs.f_type))) {
      return {DirectoryVerdict::kNetworkFilesystem, path + " is on a network filesystem (" + name + ")"};
    }
  }
  return {};
}

Status check_data_file(const std::string& store_dir, Env& env) {
  const std::string data = store_dir + "/data.mdb";
  struct stat st;
  if (env.stat(data, &st) != 0) return Status::ok();  // no store yet
  if (st.st_size == 0) return Status::ok();            // created, never written: LMDB initialises it
  char first[4096];
  std::size_t got = 0;
  if (const int rc = env.read_at(data, first, sizeof first, 0, &got); rc != 0) {
    return Status::io_error("cannot read " + data + ": " + std::strerror(rc));
  }
  std::optional<LmdbMeta> metas[2] = {parse_lmdb_meta({first, got}), std::nullopt};
  if (metas[0]) {
    std::vector<char> second(metas[0]->page_size);
    if (env.read_at(data, second.data(), second.size(), static_cast<off_t>(metas[0]->page_size), &got) == 0) {
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

std::string quarantine(const std::string& store_dir, Env& env) {
  const std::string aside =
      store_dir + ".corrupt-" + std::to_string(env.now_seconds()) + "-" + std::to_string(getpid());
  return env.rename(store_dir, aside) == 0 ? aside : std::string();
}

OpenedCache open_cache(const CachePolicy& policy) {
  OpenedCache out;
  Env& env = *policy.env;
  out.directory = policy.directory;
  DirectoryCheck check = prepare_directory(out.directory, policy.allow_shared, env);
  if (check.verdict == DirectoryVerdict::kNetworkFilesystem && !policy.fallback_directory.empty()) {
    const DirectoryCheck fallback = prepare_directory(policy.fallback_directory, false, env);
    out.messages.push_back("NVRTC_CACHE_DIR: " + check.detail + ", where LMDB is unsafe; " +
                           (fallback.verdict == DirectoryVerdict::kUsable
                                ? "using the node-local " + policy.fallback_directory + " instead"
                                : "and the node-local fallback is unusable (" + fallback.detail +
                                      "); compiling without the cache") +
                           " (set NVRTC_CACHE_DIR to a local directory)");
    check = fallback;
    out.directory = policy.fallback_directory;
  }
  if (check.verdict != DirectoryVerdict::kUsable) {
    const std::string hint = check.verdict == DirectoryVerdict::kUnsafe
                                 ? " (refused; NVRTC_CACHE_SHARED=1 allows a cache shared between users)"
                                 : "";
    out.status = Status::invalid_argument(check.detail + hint);
    return out;
  }
  const std::string store_dir = out.directory + "/store";
  // Moves a damaged store aside (saying why); false if it could not be moved.
  auto move_aside = [&](const Status& damage) {
    const std::string aside = quarantine(store_dir, env);
    out.messages.push_back(damage.message() + (aside.empty() ? "; could not move it aside"
                                                             : "; moved aside to " + aside + " and starting afresh"));
    return !aside.empty();
  };
  if (Status data = check_data_file(store_dir, env); data.code() == Status::Code::kCorruption && !move_aside(data)) {
    out.status = data;
    return out;
  }
  LmdbOptions options;
  options.directory = store_dir;
  options.map_size_bytes = policy.max_bytes;
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
