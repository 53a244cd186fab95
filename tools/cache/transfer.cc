#include "tools/cache/transfer.h"

#include <algorithm>
#include <cstring>

#include "api/api_entry.h"
#include "core/compile_entry.h"
#include "core/handle_entry.h"
#include "core/config.h"
#include "direct/manifest.h"
#include "store/remote/sealed_value.h"
#include "tools/cache/entries.h"
#include "tools/cache/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

constexpr auto kOperationTime = std::chrono::seconds(30);
constexpr auto kWalkTime = std::chrono::hours(24);

bool is_entry_key(std::string_view key) {
  return key.size() == kStoreKeySize && (key[0] == direct::kManifestPrefix || key[0] == direct::kResultPrefix ||
                                         key[0] == direct::kHandleResultPrefix || key[0] == direct::kApiEntryPrefix);
}

}  // namespace

std::vector<std::string> program_names_of(std::string_view result_payload) {
  EntryInfo e;
  e.entry = core::decode_entry(result_payload);
  if (!e.entry || !e.entry->description) return {""};
  return {e.entry->description->program_name, program_label(e)};
}

std::unique_ptr<Endpoint> Endpoint::open(const std::string& url, const store::remote::Secret* secret,
                                         std::string* problem) {
  auto endpoint = std::unique_ptr<Endpoint>(new Endpoint());
  endpoint->secret_ = secret;
  if (url.empty()) {
    const core::Config config = load_settings();
    store::OpenedCache opened = open_cache_reporting(config);
    if (!opened.store) {
      *problem = "cannot open the local cache";
      return nullptr;
    }
    endpoint->name_ = opened.directory;
    endpoint->local_ = std::move(opened.store);
    return endpoint;
  }
  const auto parsed = store::remote::parse_tier_url(url, problem);
  if (!parsed) return nullptr;
  std::string option_problem;
  store::remote::TierOptions options = store::remote::tier_options(*parsed, &option_problem);
  if (!option_problem.empty()) {
    *problem = option_problem;
    return nullptr;
  }
  options.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(kOperationTime);
  endpoint->tier_ = store::remote::make_tier(*parsed, options, problem);
  if (!endpoint->tier_) return nullptr;
  endpoint->name_ = endpoint->tier_->display_name();
  return endpoint;
}

std::uint64_t Endpoint::expected_entries() { return local_ ? local_->entry_count() : 0; }

bool Endpoint::walk(const std::function<void(const WalkedEntry&)>& visit, WalkCounts* counts, std::string* problem) {
  if (local_) {
    const store::Status status = local_->for_each_with_access(
        [&](std::string_view key, std::optional<std::string_view> payload, std::optional<store::AccessRecord> access) {
          if (!is_entry_key(key)) return;
          ++counts->visited;
          if (!payload) {
            ++counts->damaged;
            return;
          }
          WalkedEntry e{key, *payload, access ? access->created : 0, access ? access->last_access : 0};
          visit(e);
        });
    if (!status.is_ok()) *problem = "the local store cannot be read to the end: " + status.message();
    return status.is_ok();
  }
  const store::remote::TierResult walked = tier_->for_each_value(
      [&](std::string_view stored, std::int64_t written) {
        const std::string_view key = store::remote::sealed_key(stored);
        if (!is_entry_key(key)) {
          if (key.empty()) ++counts->damaged;
          return true;
        }
        ++counts->visited;
        const store::remote::Unsealed unsealed = store::remote::unseal_value(key, stored, secret_);
        if (unsealed.code == store::remote::UnsealCode::kMacRejected) {
          ++counts->mac_rejected;
        } else if (unsealed.code != store::remote::UnsealCode::kOk) {
          ++counts->damaged;
        } else {
          visit(WalkedEntry{key, unsealed.payload, written, written});
        }
        return true;
      },
      store::remote::Clock::now() + kWalkTime);
  if (!walked.ok()) *problem = tier_->display_name() + ": " + walked.detail;
  return walked.ok();
}

std::optional<std::string> Endpoint::get(std::string_view key) {
  if (local_) return local_->get(key);
  store::remote::TierResult r = tier_->get(key, store::remote::Clock::now() + kOperationTime);
  if (!r.ok()) return std::nullopt;
  const store::remote::Unsealed unsealed = store::remote::unseal_value(key, r.value, secret_);
  if (unsealed.code != store::remote::UnsealCode::kOk) return std::nullopt;  // overwritten by the import
  return std::string(unsealed.payload);
}

bool Endpoint::put(std::string_view key, std::string_view payload, std::string* problem) {
  if (local_) {
    const store::Status status = local_->put(key, payload);
    if (!status.is_ok()) *problem = status.message();
    return status.is_ok();
  }
  const store::remote::TierResult r =
      tier_->put(key, store::remote::seal_value(key, payload, secret_), store::remote::Clock::now() + kOperationTime);
  if (!r.ok()) *problem = tier_->display_name() + ": " + r.detail;
  return r.ok();
}

MergeOutcome Endpoint::merge(std::string_view key, std::string_view payload, std::string* problem) {
  if (!is_entry_key(key)) return MergeOutcome::kMalformed;
  if (key[0] == direct::kApiEntryPrefix) {
    // A C API entry is taken only under the store key its own caller key makes: an entry crafted to
    // sit under another key's slot is refused.
    const auto entry = api::decode_api_entry(payload);
    if (!entry || api::api_store_key(entry->key) != key) return MergeOutcome::kMalformed;
    if (get(key)) return MergeOutcome::kPresent;
    return put(key, payload, problem) ? MergeOutcome::kAdded : MergeOutcome::kFailed;
  }
  if (key[0] == direct::kResultPrefix || key[0] == direct::kHandleResultPrefix) {
    const bool well_formed = key[0] == direct::kResultPrefix ? core::decode_entry(payload).has_value()
                                                             : core::decode_handle_entry(payload).has_value();
    if (!well_formed) return MergeOutcome::kMalformed;
    if (get(key)) return MergeOutcome::kPresent;
    return put(key, payload, problem) ? MergeOutcome::kAdded : MergeOutcome::kFailed;
  }
  const auto incoming = direct::decode_manifest(payload);
  if (!incoming) return MergeOutcome::kMalformed;
  // Each result a manifest names is the one its own key and dependencies make: a manifest whose result
  // keys are not (crafted to point a program at another program's result) is refused whole.
  keying::CacheKey direct_key{};
  std::memcpy(direct_key.data(), key.data() + 1, direct_key.size());
  for (const direct::ManifestResult& r : incoming->results) {
    if (direct::result_key(direct_key, r.dependencies) != r.result_key) return MergeOutcome::kMalformed;
  }
  const std::optional<std::string> existing_bytes = get(key);
  std::optional<direct::Manifest> existing;
  if (existing_bytes) existing = direct::decode_manifest(*existing_bytes);
  if (!existing) return put(key, payload, problem) ? MergeOutcome::kAdded : MergeOutcome::kFailed;
  // The destination's results stay first; the incoming ones it lacks go after them, in their order.
  direct::Manifest merged = *existing;
  bool added = false;
  for (const direct::ManifestResult& r : incoming->results) {
    if (merged.results.size() >= direct::kMaxResultsPerManifest) break;
    const bool known = std::any_of(merged.results.begin(), merged.results.end(),
                                   [&](const direct::ManifestResult& m) { return m.result_key == r.result_key; });
    if (known) continue;
    merged.results.push_back(r);
    added = true;
  }
  if (!added) return MergeOutcome::kPresent;
  return put(key, direct::encode_manifest(merged), problem) ? MergeOutcome::kMerged : MergeOutcome::kFailed;
}

}  // namespace nvrtc_cache::tools
