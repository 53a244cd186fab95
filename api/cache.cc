#include "api/cache.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include "api/api_entry.h"
#include "api/shim_presence.h"
#include "core/config.h"
#include "core/settings.h"
#include "include/nvrtc_cache.h"
#include "store/cache_directory.h"
#include "store/remote/tier_set.h"

namespace nvrtc_cache::api {
namespace {

// How many of this handle's reads and writes it remembers for the cap's recency order.
constexpr std::size_t kTouchesKept = 1 << 16;

int code_of(const store::Status& status) {
  switch (status.code()) {
    case store::Status::Code::kOk:
      return NVRTC_CACHE_OK;
    case store::Status::Code::kNotFound:
      return NVRTC_CACHE_NOT_FOUND;
    case store::Status::Code::kCorruption:
      return NVRTC_CACHE_CORRUPTION;
    case store::Status::Code::kFull:
      return NVRTC_CACHE_FULL;
    case store::Status::Code::kReadOnly:
      return NVRTC_CACHE_READ_ONLY;
    case store::Status::Code::kInvalidArgument:
      return NVRTC_CACHE_INVALID_ARGUMENT;
    case store::Status::Code::kIoError:
      break;
  }
  return NVRTC_CACHE_IO_ERROR;
}

std::optional<Failure> failure_of(const store::Status& status) {
  if (status.is_ok()) return std::nullopt;
  return Failure{code_of(status), status.message()};
}

std::string normalized(const std::string& path) {
  std::error_code ignored;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ignored);
  return p.empty() ? path : p.lexically_normal().string();
}

// The settings the C API reads: where the store is, how large, who may share it, its shared tiers.
constexpr std::array<std::string_view, 5> kApiSettings = {"cache_dir", "max_size", "shared", "remote",
                                                          "remote_secret_file"};

// What the configuration's reader does not refuse but the C API must: a line of `settings` naming
// one of the shim's own settings (the C API would silently not use it), or a key without a value
// (a configuration file's way of keeping the value before it). "" when every line is fine.
std::string settings_refused(std::string_view text) {
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    const std::optional<core::ConfigLine> parsed = core::parse_config_line(line);
    if (!parsed) continue;  // a comment, a blank line, or not `key = value` (the reader refuses it)
    const core::SettingSpec* spec = core::find_setting(parsed->key);
    if (spec == nullptr || spec->key != parsed->key) continue;  // unknown (the reader refuses it)
    const std::string where = "settings:" + std::to_string(line_number) + ": ";
    if (std::find(kApiSettings.begin(), kApiSettings.end(), spec->key) == kApiSettings.end()) {
      return where + "'" + parsed->key +
             "' is a setting of the shim, which the C API does not use (it reads cache_dir, max_size, shared, "
             "remote and remote_secret_file)";
    }
    if (parsed->value.empty()) return where + "'" + parsed->key + "' has no value";
  }
  return "";
}

// A message of the configuration or of the shared tiers as the C API gives it: the open failed, so
// the note on what the shim would do instead ("; ignored", "; using 5G (default)") is dropped.
std::string as_refusal(std::string message) {
  for (const std::string_view tail : {"; ignored", "; skipped", "; shared tiers are not used"}) {
    if (message.ends_with(tail)) message.resize(message.size() - tail.size());
  }
  if (const std::size_t using_at = message.rfind("; using "); using_at != std::string::npos) message.resize(using_at);
  return message;
}

// A shared tier's message names the environment variable; when `remote` and `remote_secret_file`
// came from elsewhere (the settings, a file), it names the setting and where it came from.
std::string named_by_origin(std::string message, const core::Config& config) {
  for (const auto& [variable, key] :
       {std::pair<std::string_view, std::string_view>{"NVRTC_CACHE_REMOTE_SECRET_FILE", "remote_secret_file"},
        {"NVRTC_CACHE_REMOTE", "remote"}}) {
    if (!message.starts_with(variable) || message.size() == variable.size() ||
        (message[variable.size()] != ':' && message[variable.size()] != ' '))
      continue;
    const core::SettingSpec* spec = core::find_setting(key);
    const std::string& origin = config.origins[core::setting_index(*spec)];
    if (!origin.starts_with("environment "))
      message = std::string(key) + " (" + origin + ")" + message.substr(variable.size());
    break;
  }
  return message;
}

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::unique_ptr<Cache> Cache::open(const OpenRequest& request, Failure* failure) {
  core::Config config = request.from_defaults
                            ? core::config_from_environment([](const char*) { return std::optional<std::string>(); })
                            : core::config_from_process_environment();
  // The configuration's own problems are the shim's to report; those of `settings` are the caller's.
  const std::size_t known_problems = config.problems.size();
  if (!request.settings.empty()) {
    core::apply_settings_text(config, request.settings, "settings",
                              [](const char* name) { return platform::Env::system()->environment_variable(name); });
  }
  if (config.problems.size() > known_problems) {
    *failure = {NVRTC_CACHE_INVALID_ARGUMENT, as_refusal(config.problems[known_problems])};
    return nullptr;
  }
  if (std::string refused = settings_refused(request.settings); !refused.empty()) {
    *failure = {NVRTC_CACHE_INVALID_ARGUMENT, std::move(refused)};
    return nullptr;
  }
  if (request.directory) config.cache_dir = *request.directory;
  if (config.cache_dir.empty()) {
    *failure = {NVRTC_CACHE_INVALID_ARGUMENT, "no cache directory: give one, or set NVRTC_CACHE_DIR or HOME"};
    return nullptr;
  }
  if (shim_loaded_in_process() &&
      normalized(core::config_from_process_environment().cache_dir) == normalized(config.cache_dir)) {
    *failure = {NVRTC_CACHE_IN_USE, "the nvrtc-cache shim in this process uses the cache at " + config.cache_dir +
                                        " (one LMDB environment per store and process); open another directory"};
    return nullptr;
  }
  store::CachePolicy policy = core::cache_policy(config);
  store::OpenedCache opened = store::open_cache(policy);
  if (!opened.store) {
    *failure = {NVRTC_CACHE_IO_ERROR, "cannot open the cache at " + opened.directory + ": " + opened.status.message()};
    return nullptr;
  }
  std::unique_ptr<Cache> cache(new Cache());
  cache->directory_ = opened.directory;
  cache->local_ = opened.store.get();
  cache->max_size_bytes_ = request.max_size_bytes;
  std::unique_ptr<store::Store> local = std::move(opened.store);
  if (!config.remote.empty()) {
    store::remote::TierSet set = store::remote::open_tiers(config.remote, config.remote_secret_file);
    if (!set.problems.empty()) {  // warnings (a secret file others may read) do not refuse: the shim uses it too
      *failure = {NVRTC_CACHE_INVALID_ARGUMENT, named_by_origin(as_refusal(set.problems.front()), config)};
      return nullptr;
    }
    if (!set.tiers.empty()) {
      auto tiered = std::make_unique<store::remote::TieredStore>(
          std::move(local), std::move(set.tiers), std::move(set.secret),
          [](std::string_view, std::string_view) {});  // failures are counted misses and skipped writes
      cache->tiered_ = tiered.get();
      local = std::move(tiered);
    }
  }
  cache->store_ = std::move(local);
  if (store::CounterFile* counters = cache->local_->counter_file(); counters != nullptr && !opened.read_only) {
    cache->counts_.attach(
        [](void* context) -> store::CounterFile* {
          store::LmdbStore* own = static_cast<Cache*>(context)->local_;
          return own != nullptr ? own->counter_file() : nullptr;
        },
        cache.get());
    if (cache->tiered_ != nullptr) cache->tiered_->count_in(*counters);
  }
  return cache;
}

Cache::~Cache() { close(); }

void Cache::close() {
  if (!store_) return;
  if (tiered_ != nullptr) (void)tiered_->flush(std::chrono::milliseconds(1000));
  // What could not be counted in the counters file (none attached, or it faulted) goes to the store.
  if (const store::Counters left = counts_.take(); !left.empty()) (void)store_->add_counters(left);
  store_->close();
  store_.reset();
  local_ = nullptr;
  tiered_ = nullptr;
}

void Cache::touch(const std::string& store_key) {
  if (max_size_bytes_ == 0) return;  // recency matters to the cap only
  std::lock_guard lock(mu_);
  if (touched_.size() >= kTouchesKept && touched_.find(store_key) == touched_.end()) touched_.clear();
  touched_[store_key] = {now_seconds(), ++touch_order_};
}

std::optional<std::string> Cache::get(std::string_view key) {
  const std::string store_key = api_store_key(key);
  std::optional<std::string> bytes = store_->get(store_key);
  if (!bytes) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    counts_.add(core::Counter::api_misses);
    return std::nullopt;
  }
  const std::optional<std::string_view> value = value_for_key(*bytes, key);
  if (!value) {
    // Another key's entry (a digest collision) or malformed bytes: a miss either way.
    rejected_.fetch_add(1, std::memory_order_relaxed);
    misses_.fetch_add(1, std::memory_order_relaxed);
    counts_.add(core::Counter::api_misses);
    return std::nullopt;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  counts_.add(core::Counter::api_hits);
  touch(store_key);
  return std::string(*value);
}

std::optional<Failure> Cache::put(std::string_view key, std::string_view value) {
  const std::string store_key = api_store_key(key);
  const std::string entry = encode_api_entry(key, value);
  if (auto failed = failure_of(store_->put(store_key, entry))) {
    put_failures_.fetch_add(1, std::memory_order_relaxed);
    return failed;
  }
  puts_.fetch_add(1, std::memory_order_relaxed);
  counts_.add(core::Counter::api_stores);
  if (max_size_bytes_ == 0) return std::nullopt;
  touch(store_key);
  // The whole store's payload bytes (kept exact across processes, read in O(1)) bound this
  // namespace's: only when they pass the cap is the namespace walked and measured.
  if (local_->size_bytes() <= max_size_bytes_) return std::nullopt;
  bool over = false;
  {
    std::lock_guard lock(mu_);
    over = !evicting_;
    if (over) evicting_ = true;
  }
  if (over) enforce_cap();
  return std::nullopt;
}

std::optional<Failure> Cache::erase(std::string_view key) {
  const std::string store_key = api_store_key(key);
  const std::optional<std::string> bytes = local_->get(store_key);
  if (!bytes || !value_for_key(*bytes, key)) return Failure{NVRTC_CACHE_NOT_FOUND, "no entry under this key"};
  if (auto failed = failure_of(store_->erase(store_key))) return failed;
  erases_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  touched_.erase(store_key);
  return std::nullopt;
}

std::optional<Failure> Cache::walk(std::vector<Member>* members, std::uint64_t* bytes) {
  std::uint64_t total = 0;
  const store::Status walked = local_->for_each_key_with_prefix(
      std::string_view(&kApiEntryPrefix, 1),
      [&](std::string_view key, std::uint64_t stored_bytes, std::optional<store::AccessRecord> access) {
        if (!is_api_store_key(key)) return;
        const std::uint64_t size = access ? access->payload_size : stored_bytes;
        total += size;
        if (members != nullptr) members->push_back({std::string(key), size, access ? access->last_access : 0});
      });
  if (auto failed = failure_of(walked)) return failed;
  if (bytes != nullptr) *bytes = total;
  return std::nullopt;
}

std::optional<Failure> Cache::clear() {
  std::vector<Member> members;
  if (auto failed = walk(&members, nullptr)) return failed;
  for (const Member& m : members) {
    if (auto failed = failure_of(store_->erase(m.store_key))) return failed;
  }
  std::lock_guard lock(mu_);
  touched_.clear();
  return std::nullopt;
}

std::optional<Failure> Cache::count(std::uint64_t* entries) {
  std::uint64_t n = 0;
  const store::Status walked = local_->for_each_key_with_prefix(
      std::string_view(&kApiEntryPrefix, 1),
      [&](std::string_view key, std::uint64_t, std::optional<store::AccessRecord>) { n += is_api_store_key(key); });
  if (auto failed = failure_of(walked)) return failed;
  *entries = n;
  return std::nullopt;
}

std::optional<Failure> Cache::size(std::uint64_t* bytes) { return walk(nullptr, bytes); }

void Cache::enforce_cap() {
  std::vector<Member> members;
  std::uint64_t total = 0;
  if (!walk(&members, &total)) {
    // Least recently used first: the store's access time, then this handle's own order.
    std::vector<std::pair<std::pair<std::int64_t, std::uint64_t>, std::size_t>> order;
    order.reserve(members.size());
    {
      std::lock_guard lock(mu_);
      for (std::size_t i = 0; i < members.size(); ++i) {
        std::pair<std::int64_t, std::uint64_t> rank{members[i].last_access, 0};
        if (const auto it = touched_.find(members[i].store_key); it != touched_.end()) {
          rank = {std::max(rank.first, it->second.first), it->second.second};
        }
        order.push_back({rank, i});
      }
    }
    std::sort(order.begin(), order.end());
    for (const auto& [rank, i] : order) {
      if (total <= max_size_bytes_) break;
      if (store_->erase(members[i].store_key).is_ok()) {
        evictions_.fetch_add(1, std::memory_order_relaxed);
        std::lock_guard lock(mu_);
        touched_.erase(members[i].store_key);
      }
      total -= members[i].bytes;  // gone (or erased by another process meanwhile)
    }
  }
  std::lock_guard lock(mu_);
  evicting_ = false;
}

Stats Cache::stats() {
  Stats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_.load(std::memory_order_relaxed);
  s.puts = puts_.load(std::memory_order_relaxed);
  s.put_failures = put_failures_.load(std::memory_order_relaxed);
  s.erases = erases_.load(std::memory_order_relaxed);
  s.evictions = evictions_.load(std::memory_order_relaxed);
  s.rejected = rejected_.load(std::memory_order_relaxed);
  s.shared_tiers = tiered_ != nullptr ? tiered_->tier_count() : 0;
  s.store_entries = local_->entry_count();
  s.store_bytes = local_->size_bytes();
  return s;
}

bool Cache::flush(std::chrono::milliseconds budget) { return tiered_ == nullptr || tiered_->flush(budget); }

}  // namespace nvrtc_cache::api
