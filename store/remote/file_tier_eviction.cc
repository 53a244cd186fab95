// evict_file_tier (store/remote/file_tier.h): the tier's buckets are walked by handle
// (store/remote/tier_directory.h), each kept open from the listing to the removals, so what is
// removed is always a regular file of the tier's own name in a directory verified as the tier's own.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "platform/errno_guard.h"
#include "platform/paths.h"
#include "platform/env.h"
#include "store/remote/file_tier.h"
#include "store/remote/tier_directory.h"
#include "util/clock.h"

namespace nvrtc_cache::store::remote {
namespace {

constexpr std::int64_t kAbandonedAfterNs = 3600ll * 1'000'000'000;

struct Entry {
  std::int64_t mtime_ns;
  std::uint64_t size;
  std::size_t bucket;  // index into the open buckets
  std::string name;
};

}  // namespace

FileTierEviction evict_file_tier(std::string_view url_text, std::uint64_t max_bytes) {
  const platform::ErrnoGuard errno_guard;
  platform::Env& env = *platform::Env::system();
  FileTierEviction out;
  std::string problem;
  const std::optional<TierUrl> url = parse_tier_url(url_text, &problem);
  if (!url || url->scheme != "file") {
    out.problem = url ? "not a file:// tier: " + url->display() : problem;
    return out;
  }
  const TierOptions options = tier_options(*url, &problem);
  if (!problem.empty()) {
    out.problem = problem;
    return out;
  }
  const TierDirectoryOpen base = open_tier_path(platform::path_of_file_url(url->path), env);
  if (!base.ok()) {
    out.problem = base.detail;
    return out;
  }
  const TierDirectoryOpen root = open_tier_subdirectory(base.directory, options.prefix, false, env);
  if (!root.ok()) {
    if (root.refused || root.error != ENOENT) out.problem = root.detail;
    return out;  // missing: an empty tier
  }
  std::vector<std::string> names;
  if (const int rc = env.list_directory(root.directory.handle.fd(), &names); rc != 0) {
    out.problem = "cannot list " + root.directory.shown + ": " + std::strerror(rc);
    return out;
  }
  std::sort(names.begin(), names.end());
  std::vector<TierDirectory> buckets;
  std::vector<Entry> entries;
  const std::int64_t abandoned = util::realtime_ns() - kAbandonedAfterNs;
  for (const std::string& b : names) {
    if (!is_bucket_name(b)) continue;
    TierDirectoryOpen bucket = open_tier_subdirectory(root.directory, b, false, env);
    if (!bucket.ok()) {
      if (!bucket.refused && bucket.error == ENOENT) continue;  // removed meanwhile
      if (out.buckets_skipped++ == 0) out.first_skipped = bucket.detail;
      continue;
    }
    const int dir = bucket.directory.handle.fd();
    std::vector<std::string> files;
    if (const int rc = env.list_directory(dir, &files); rc != 0) {
      if (out.buckets_skipped++ == 0)
        out.first_skipped = "cannot list " + bucket.directory.shown + ": " + std::strerror(rc);
      continue;
    }
    for (std::string& f : files) {
      const bool entry = is_entry_name(f, b);
      if (!entry && !is_temporary_name(f, b)) continue;  // not the tier's: never touched
      struct stat st {};
      if (env.stat_at(dir, f, &st) != 0 || !S_ISREG(st.st_mode)) continue;
      const std::int64_t mtime = platform::modified_time_ns(st);
      if (!entry) {
        if (mtime < abandoned && env.remove_at(dir, f, false) == 0) ++out.temporaries_removed;
        continue;
      }
      entries.push_back({mtime, static_cast<std::uint64_t>(st.st_size), buckets.size(), std::move(f)});
    }
    buckets.push_back(std::move(bucket.directory));
  }
  out.files_before = entries.size();
  for (const Entry& e : entries) out.bytes_before += e.size;
  out.bytes_after = out.bytes_before;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.mtime_ns < b.mtime_ns; });
  for (const Entry& e : entries) {
    if (out.bytes_after <= max_bytes) break;
    const int rc = env.remove_at(buckets[e.bucket].handle.fd(), e.name, false);
    if (rc == 0 || rc == ENOENT) {
      ++out.files_removed;
      out.bytes_after -= e.size;
    }
  }
  return out;
}

}  // namespace nvrtc_cache::store::remote
