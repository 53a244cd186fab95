#include "direct/dependencies.h"

#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <map>

#include "platform/c_runtime.h"
#include "platform/paths.h"

namespace nvrtc_cache::direct {
namespace {

constexpr std::int64_t kRacyWindowNs = 1'000'000'000;
constexpr std::uint64_t kMaxFileBytes = 256ull << 20;

FileStamp stamp_of(const struct stat& st) {
  const std::int64_t mtime_ns = platform::modified_time_ns(st), ctime_ns = platform::changed_time_ns(st);
  return {static_cast<std::uint64_t>(st.st_dev),
          static_cast<std::uint64_t>(st.st_ino),
          static_cast<std::uint64_t>(st.st_size),
          mtime_ns,
          ctime_ns,
          static_cast<std::uint32_t>(st.st_mode)};
}

bool same_type(std::uint32_t a, std::uint32_t b) { return (a & S_IFMT) == (b & S_IFMT); }

// A whole file through the Env; nullopt if it cannot be read or is implausibly large.
std::optional<std::string> read_file(platform::Env& env, const std::string& path) {
  std::string content;
  if (env.read_file(path, kMaxFileBytes, &content) != 0) return std::nullopt;
  return content;
}

std::array<std::uint8_t, 16> fingerprint(std::string_view content) {
  const XXH128_hash_t h = XXH3_128bits(content.data(), content.size());
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, h);
  std::array<std::uint8_t, 16> out;
  std::memcpy(out.data(), canonical.digest, out.size());
  return out;
}

std::optional<std::string> realpath_of(platform::Env& env, const std::string& path) {
  std::string resolved;
  if (env.real_path(path, &resolved) != 0) return std::nullopt;
  return resolved;
}

std::optional<std::string> readlink_of(platform::Env& env, const std::string& path) {
  std::string target;
  if (env.read_link(path, &target) != 0) return std::nullopt;
  return target;
}

bool is_pseudo_filesystem(std::string_view path) {
  return path.starts_with("/proc/") || path.starts_with("/sys/") || path.starts_with("/dev/");
}

bool is_relative(std::string_view path) { return !platform::is_absolute_path(path); }

std::string absolute(std::string_view path, const std::string& working_directory) {
  if (!is_relative(path)) return std::string(path);
  return working_directory + platform::path_separator() + std::string(path);
}

// Whether reading `path` (relative ones against the current working directory) would read a
// pseudo filesystem; a path that cannot be resolved counts as one.
bool resolves_into_pseudo_filesystem(platform::Env& env, const std::string& path) {
  if (is_pseudo_filesystem(path)) return true;
  if (!is_relative(path) && path.find("/..") == std::string::npos) return false;
  const std::optional<std::string> resolved = realpath_of(env, path);
  return !resolved || is_pseudo_filesystem(*resolved);
}

// The path that pins a result to the working directory it was compiled in: "." must still resolve
// to that directory.
constexpr std::string_view kWorkingDirectoryPin = ".";

void encode_path_identity(util::ByteWriter& w, const PathDependency& p) {
  w.bytes(p.path);
  w.flag(p.must_be_absent);
  w.flag(p.must_exist);
  w.flag(p.content);
  w.u32(p.stamp.mode & S_IFMT);
  w.raw({reinterpret_cast<const char*>(p.fingerprint.data()), p.fingerprint.size()});
  w.flag(p.realpath_target.has_value());
  w.bytes(p.realpath_target.value_or(""));
  w.flag(p.readlink_target.has_value());
  w.bytes(p.readlink_target.value_or(""));
}

}  // namespace

void DependencySet::encode_identity(util::ByteWriter& w) const {
  w.u64(paths.size());
  for (const auto& p : paths) encode_path_identity(w, p);
  w.u64(env.size());
  for (const auto& e : env) {
    w.bytes(e.name);
    w.flag(e.present);
    w.bytes(e.value);
  }
  w.bytes(date);
}

void DependencySet::encode(util::ByteWriter& w) const {
  encode_identity(w);
  for (const auto& p : paths) {
    w.flag(p.racy);
    w.u64(p.stamp.device);
    w.u64(p.stamp.inode);
    w.u64(p.stamp.size);
    w.i64(p.stamp.mtime_ns);
    w.i64(p.stamp.ctime_ns);
    w.u32(p.stamp.mode);
  }
}

namespace {

// The fewest bytes one path and one variable take in encode(): a path's identity (empty strings)
// plus its stamps; a variable's name, presence and value.
constexpr std::size_t kMinPathBytes = util::kEmptyBytesField + 3 * util::kFlagBytes + util::kU32Bytes + 16 +
                                      util::kFlagBytes + util::kEmptyBytesField + util::kFlagBytes +
                                      util::kEmptyBytesField + util::kFlagBytes + 3 * util::kU64Bytes +
                                      2 * util::kU64Bytes + util::kU32Bytes;
constexpr std::size_t kMinEnvBytes = util::kEmptyBytesField + util::kFlagBytes + util::kEmptyBytesField;

// What record_dependencies() can produce for one path: a path (relative ones are relative to the
// working directory of the lookup); absent or existing, not both; content only of an existing
// regular file outside the pseudo filesystems; link targets only of an existing path.
// validate_dependencies() relies on it (it reads only such files, and resolves relative ones first).
bool path_well_formed(const PathDependency& p) {
  if (p.path.empty() || p.path.find('\0') != std::string::npos || p.must_be_absent == p.must_exist) return false;
  if (p.content && (!S_ISREG(p.stamp.mode) || is_pseudo_filesystem(p.path))) return false;
  return p.must_exist || (!p.content && !p.realpath_target && !p.readlink_target);
}

}  // namespace

bool DependencySet::decode(util::ByteReader& r) {
  std::uint64_t n = 0;
  if (!r.count(n, kMinPathBytes)) return false;
  paths.assign(n, {});
  std::vector<std::uint32_t> types(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    PathDependency& p = paths[i];
    std::string fp;
    bool has_realpath = false, has_readlink = false;
    std::string realpath_target, readlink_target;
    if (!r.bytes(p.path) || !r.flag(p.must_be_absent) || !r.flag(p.must_exist) || !r.flag(p.content) ||
        !r.u32(types[i]) || !r.raw(p.fingerprint.size(), fp) || !r.flag(has_realpath) || !r.bytes(realpath_target) ||
        !r.flag(has_readlink) || !r.bytes(readlink_target)) {
      return false;
    }
    if ((!has_realpath && !realpath_target.empty()) || (!has_readlink && !readlink_target.empty())) return false;
    if (i > 0 && !(paths[i - 1].path < p.path)) return false;  // sorted, each path once
    std::memcpy(p.fingerprint.data(), fp.data(), p.fingerprint.size());
    if (has_realpath) p.realpath_target = std::move(realpath_target);
    if (has_readlink) p.readlink_target = std::move(readlink_target);
  }
  if (!r.count(n, kMinEnvBytes)) return false;
  env.assign(n, {});
  for (std::size_t i = 0; i < env.size(); ++i) {
    EnvDependency& e = env[i];
    if (!r.bytes(e.name) || !r.flag(e.present) || !r.bytes(e.value)) return false;
    if (i > 0 && !(env[i - 1].name < e.name)) return false;  // sorted, each name once
  }
  if (!r.bytes(date)) return false;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    PathDependency& p = paths[i];
    if (!r.flag(p.racy) || !r.u64(p.stamp.device) || !r.u64(p.stamp.inode) || !r.u64(p.stamp.size) ||
        !r.i64(p.stamp.mtime_ns) || !r.i64(p.stamp.ctime_ns) || !r.u32(p.stamp.mode)) {
      return false;
    }
    if (types[i] != (p.stamp.mode & S_IFMT) || !path_well_formed(p)) return false;
  }
  return true;
}

TimeMacros scan_time_macros(std::string_view text) {
  TimeMacros found;
  if (text.find("__TIME") != std::string_view::npos) {  // __TIME__ and __TIMESTAMP__
    found.time =
        text.find("__TIME__") != std::string_view::npos || text.find("__TIMESTAMP__") != std::string_view::npos;
  }
  found.date = text.find("__DATE__") != std::string_view::npos;
  return found;
}

std::string date_macro_today() {
  const std::time_t now = std::time(nullptr);
  const std::tm local = platform::local_time(now);
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s %2d %d", kMonths[local.tm_mon % 12], local.tm_mday, local.tm_year + 1900);
  return buf;
}

bool environment_variable_affects_output(std::string_view name) {
  static constexpr std::string_view kNeutral[] = {"PWD", "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE"};
  return std::find(std::begin(kNeutral), std::end(kNeutral), name) == std::end(kNeutral);
}

namespace {

using PathMap = std::map<std::string, PathDependency>;
using EnvMap = std::map<std::string, EnvDependency>;

// Folds NVRTC's observations into one dependency per path and per variable; a reason (and no
// maps to use) when the compile cannot be replayed: it wrote, or listed a directory.
std::string fold_observations(std::span<const Observation> observations, PathMap& paths, EnvMap& env) {
  for (const Observation& o : observations) {
    if (o.kind == ObservationKind::kGetenv) {
      if (environment_variable_affects_output(o.subject)) {
        env.try_emplace(std::string(o.subject),
                        EnvDependency{std::string(o.subject), o.succeeded, std::string(o.value)});
      }
      continue;
    }
    if (o.subject.empty()) continue;  // fails wherever it is made
    // Relative paths stay relative: validated against the working directory of the lookup, they
    // hold wherever the key does not name the directory.
    const std::string path(o.subject);
    // A failed attempt to write is no probe of absence (the directory may be missing or read-only
    // today and not tomorrow), and a successful one is a side effect: neither can be replayed.
    if (o.kind == ObservationKind::kOpen && o.for_writing) return "NVRTC wrote or tried to write " + path;
    PathDependency& p = paths[path];
    p.path = path;
    if (!o.succeeded) {
      p.must_be_absent = true;
      continue;
    }
    p.must_exist = true;
    if (o.kind == ObservationKind::kOpendir) return "NVRTC listed the directory " + path;
    if (o.kind == ObservationKind::kOpen) p.content = true;
    if (o.kind == ObservationKind::kRealpath) p.realpath_target = std::string(o.value);
    if (o.kind == ObservationKind::kReadlink) p.readlink_target = std::string(o.value);
  }
  return {};
}

// Stamps an existing path and, for a file NVRTC read, fingerprints its content (noting the time
// macros it uses); a reason when it cannot be stored.
// (`reason` is kFileModified unless it says otherwise.)
std::string stamp_path(platform::Env& env, PathDependency& p, const std::string& working_directory,
                       std::int64_t compile_start_realtime_ns, std::int64_t now, TimeMacros& uses, NotRecorded& reason,
                       ProgramNameScan* name_scan) {
  const std::string& shown = p.path;
  const std::string path = absolute(shown, working_directory);  // as NVRTC resolved it
  struct stat st;
  if (env.stat(path, &st) != 0) return shown + " vanished after the compile";
  p.stamp = stamp_of(st);
  if (!p.content) return {};
  reason = NotRecorded::kUnwatchable;
  if (resolves_into_pseudo_filesystem(env, path)) return "NVRTC read " + shown;
  if (!S_ISREG(st.st_mode)) return "NVRTC read " + shown + ", not a regular file";
  reason = NotRecorded::kFileModified;
  if (p.stamp.mtime_ns >= compile_start_realtime_ns || p.stamp.ctime_ns >= compile_start_realtime_ns) {
    return shown + " was modified during the compile";
  }
  std::optional<std::string> content = read_file(env, path);
  if (!content) {
    reason = NotRecorded::kOther;
    return "cannot read " + shown + " to fingerprint it";
  }
  struct stat after;
  if (env.stat(path, &after) != 0 || !(stamp_of(after) == p.stamp)) return shown + " changed while being fingerprinted";
  p.fingerprint = fingerprint(*content);
  p.racy = now - std::max(p.stamp.mtime_ns, p.stamp.ctime_ns) < kRacyWindowNs;
  const TimeMacros m = scan_time_macros(*content);
  if (name_scan) name_scan->add_header(*content);
  uses.time = uses.time || m.time;
  uses.date = uses.date || m.date;
  return {};
}

// Why `p` no longer holds ("" when it does); re-fingerprints a touched file and refreshes its stamp.
std::string path_mismatch(platform::Env& env, PathDependency& p, std::int64_t now, bool& refreshed) {
  struct stat st;
  const bool exists = env.stat(p.path, &st) == 0;
  if (p.must_be_absent) return exists ? p.path + " appeared" : "";
  if (!exists) return p.path + " vanished";
  const FileStamp stamp = stamp_of(st);
  if (!same_type(stamp.mode, p.stamp.mode)) return p.path + " changed type";
  if (p.content && (p.racy || !(stamp == p.stamp))) {
    if (is_relative(p.path) && resolves_into_pseudo_filesystem(env, p.path))
      return p.path + " is not a file to read here";
    std::optional<std::string> content = read_file(env, p.path);
    if (!content || fingerprint(*content) != p.fingerprint) return p.path + " changed";
    p.stamp = stamp;  // touched, not changed: remember the new stamp
    p.racy = now - std::max(stamp.mtime_ns, stamp.ctime_ns) < kRacyWindowNs;
    refreshed = true;
  }
  if (p.realpath_target && realpath_of(env, p.path) != p.realpath_target) return p.path + " now resolves elsewhere";
  if (p.readlink_target && readlink_of(env, p.path) != p.readlink_target) return p.path + " now links elsewhere";
  return {};
}

// Line info names a file read through a relative path by its absolute path (other relative paths
// are not named: NVRTC stats "." for line info in every compile, to the same outputs): such a
// result is pinned to its directory. A reason when it cannot be.
std::string pin_working_directory(platform::Env& env, const std::string& working_directory, PathMap& paths) {
  const bool read_relative = std::any_of(
      paths.begin(), paths.end(), [](const auto& entry) { return is_relative(entry.first) && entry.second.content; });
  if (!read_relative) return {};
  std::optional<std::string> here = realpath_of(env, working_directory);
  if (!here) return "the working directory " + working_directory + " does not resolve";
  PathDependency& pin = paths[std::string(kWorkingDirectoryPin)];
  pin.path = kWorkingDirectoryPin;
  if (pin.must_be_absent) return "the working directory vanished during the compile";
  pin.must_exist = true;
  if (pin.realpath_target && pin.realpath_target != here) return "the working directory moved";
  pin.realpath_target = std::move(here);
  return {};
}

}  // namespace

RecordedDependencies record_dependencies(std::span<const Observation> observations,
                                         const std::string& working_directory, std::int64_t compile_start_realtime_ns,
                                         TimeMacros texts_use, std::span<const std::string> variables_read_before,
                                         keying::WorkingDirectoryUse working_directory_use, platform::Env& env,
                                         ProgramNameScan* name_scan) {
  const std::string date_at_start = date_macro_today();
  PathMap paths;
  EnvMap variables;
  if (std::string why_not = fold_observations(observations, paths, variables); !why_not.empty()) {
    return {std::nullopt, std::move(why_not), NotRecorded::kWroteOrListed};
  }
  if (working_directory_use == keying::WorkingDirectoryUse::kThroughFoundRelativePaths) {
    if (std::string why_not = pin_working_directory(env, working_directory, paths); !why_not.empty()) {
      return {std::nullopt, std::move(why_not), NotRecorded::kFileModified};
    }
  }
  for (const std::string& name : variables_read_before) {
    if (variables.contains(name) || !environment_variable_affects_output(name)) continue;
    const std::optional<std::string> value = env.environment_variable(name);
    variables.emplace(name, EnvDependency{name, value.has_value(), value.value_or("")});
  }

  RecordedDependencies out;
  DependencySet& set = out.set.emplace();
  TimeMacros uses = texts_use;
  const std::int64_t now = env.now_realtime_ns();
  for (auto& [path, p] : paths) {
    if (p.must_be_absent && p.must_exist) return {std::nullopt, path + " appeared or vanished during the compile"};
    if (p.must_exist) {
      NotRecorded reason = NotRecorded::kFileModified;
      if (std::string why_not =
              stamp_path(env, p, working_directory, compile_start_realtime_ns, now, uses, reason, name_scan);
          !why_not.empty()) {
        return {std::nullopt, std::move(why_not), reason};
      }
    }
    set.paths.push_back(std::move(p));
  }
  for (auto& [name, e] : variables) set.env.push_back(std::move(e));
  if (uses.time) return {std::nullopt, "__TIME__ or __TIMESTAMP__ is used", NotRecorded::kTimeMacro};
  if (uses.date) {
    set.date = date_at_start;
    if (date_macro_today() != date_at_start) return {std::nullopt, "the date changed during the compile"};
  }
  return out;
}

Validation validate_dependencies(DependencySet& set, platform::Env& env) {
  Validation v;
  for (const EnvDependency& e : set.env) {
    const std::optional<std::string> value = env.environment_variable(e.name);
    if (value.has_value() != e.present || (value && e.value != *value)) {
      v.mismatch = "environment variable " + e.name + " changed";
      v.kind = Mismatch::kEnvironment;
      return v;
    }
  }
  if (!set.date.empty() && date_macro_today() != set.date) {
    v.mismatch = "the date (__DATE__) changed";
    v.kind = Mismatch::kDate;
    return v;
  }
  const std::int64_t now = env.now_realtime_ns();
  for (PathDependency& p : set.paths) {
    v.mismatch = path_mismatch(env, p, now, v.refreshed);
    if (!v.mismatch.empty()) {
      v.kind = Mismatch::kPath;
      return v;
    }
  }
  v.matches = true;
  return v;
}

}  // namespace nvrtc_cache::direct
