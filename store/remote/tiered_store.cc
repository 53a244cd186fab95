#include "store/remote/tiered_store.h"

#include <unistd.h>

#include <atomic>
#include <random>

#include "platform/errno_guard.h"
#include "platform/socket.h"
#include "store/counter_file.h"
#include "store/remote/claim_renewer.h"
#include "store/remote/sealed_value.h"

namespace nvrtc_cache::store::remote {

struct TierSlot {
  std::size_t index = 0;
  std::unique_ptr<Tier> tier;
  TierOptions options;
  Breaker breaker;
  std::array<std::atomic<std::int64_t>, static_cast<std::size_t>(TierCounter::kCount)> counters{};
  // Set by TieredStore::count_in(): counts go straight to the counters file.
  std::array<std::atomic<std::atomic<std::int64_t>*>, static_cast<std::size_t>(TierCounter::kCount)> cells{};
  std::atomic<std::uint64_t> opened_reported{0};
  std::atomic<bool> claims_unsupported{false};
  TieredStore::LogOnce log;

  void add(TierCounter c, std::int64_t delta = 1) {
    const auto i = static_cast<std::size_t>(c);
    std::atomic<std::int64_t>* cell = cells[i].load(std::memory_order_acquire);
    if (cell == nullptr || !CounterFile::add_to(cell, delta)) counters[i].fetch_add(delta, std::memory_order_relaxed);
  }
  Deadline deadline() const { return Clock::now() + options.timeout; }

  void log_once(std::string_view kind, const std::string& message) {
    if (log)
      log("tier-" + std::to_string(index) + "-" + std::string(kind),
          "shared tier " + tier->display_name() + ": " + message);
  }

  // Counts a failed operation, feeds the breaker and logs it once per kind (timeout or error,
  // whatever the operation: a wrong password fails the read and the claim alike, said once). A
  // refusal (server full, not permitted, wrong password) is an answer from a tier that is up: it is
  // counted as an error but does not open the breaker, so a full server that refuses every write
  // keeps serving reads. An error that came back after half the operation's timeout (`deadline`
  // was its deadline) has cost its caller about a timeout, and feeds the breaker as one: a server
  // that trickles a reply until a limit refuses it must not cost a compile kFailuresToOpen timeouts.
  void failed(std::string_view operation, const TierResult& r, Breaker::Pass pass, Deadline deadline) {
    add(r.code == TierCode::kTimeout ? TierCounter::timeouts : TierCounter::errors);
    const bool slow = Clock::now() >= deadline - options.timeout / 2;
    if (r.code == TierCode::kRefused) {
      breaker.succeeded(pass);
    } else {
      breaker.failed(pass, Clock::now(),
                     r.code == TierCode::kTimeout || slow ? Breaker::Failure::kTimeout : Breaker::Failure::kError);
    }
    log_once(r.code == TierCode::kTimeout ? "timeout" : "error",
             std::string(operation) + (r.code == TierCode::kTimeout ? " timed out" : " failed") +
                 (r.detail.empty() ? "" : " (" + r.detail + ")") +
                 (r.code == TierCode::kRefused ? "; compiles go on without what it refuses"
                                               : "; compiles go on without it, and it is retried after a pause"));
  }
};

namespace {

thread_local bool t_local_only = false;

std::string random_token() {
  std::random_device device;
  const std::uint64_t r = (std::uint64_t{device()} << 32) ^ device();
  return platform::host_name() + ":" + std::to_string(::getpid()) + ":" + std::to_string(r);
}

}  // namespace

std::string tier_counter_name(std::size_t index, TierCounter counter) {
  return "tier." + std::to_string(index) + "." + std::string(kTierCounterNames[static_cast<std::size_t>(counter)]);
}

SharedLookups::SharedLookups(bool consult_shared) : previous_(t_local_only) { t_local_only = !consult_shared; }
SharedLookups::~SharedLookups() { t_local_only = previous_; }

RemoteClaim::RemoteClaim(std::shared_ptr<TierSlot> slot, std::string key, std::string token,
                         std::chrono::milliseconds lease, WriteBehind* writer)
    : code_(ClaimCode::kClaimed),
      slot_(std::move(slot)),
      key_(std::move(key)),
      token_(std::move(token)),
      writer_(writer) {
  try {
    renewal_ =
        process_claim_renewer().add([slot = slot_, key = key_, token = token_,
                                     lease] { return slot->tier->renew_claim(key, token, lease, slot->deadline()); },
                                    lease);
  } catch (...) {
    renewal_ = 0;  // not renewed: the claim lives one lease
  }
}

RemoteClaim& RemoteClaim::operator=(RemoteClaim&& other) noexcept {
  if (this != &other) {
    release();
    code_ = other.code_;
    slot_ = std::move(other.slot_);
    key_ = std::move(other.key_);
    token_ = std::move(other.token_);
    writer_ = other.writer_;
    renewal_ = std::exchange(other.renewal_, 0);
    other.slot_ = nullptr;
  }
  return *this;
}

void RemoteClaim::release() {
  if (!held()) return;
  std::shared_ptr<TierSlot> slot = std::move(slot_);
  slot_ = nullptr;
  const std::uint64_t renewal = std::exchange(renewal_, 0);
  try {
    // After the writes queued before it, so waiters on other nodes find the result when it goes;
    // renewed until then, so the claim does not lapse while those writes are still on their way.
    const std::size_t bytes = key_.size() + token_.size();
    writer_->enqueue(
        [slot, key = std::move(key_), token = std::move(token_), renewal] {
          process_claim_renewer().remove(renewal);
          slot->tier->release_claim(key, token, slot->deadline());
        },
        bytes, /*always=*/true);
  } catch (...) {
    process_claim_renewer().remove(renewal);  // the claim expires on its own (its lease)
  }
}

TieredStore::TieredStore(std::unique_ptr<Store> local, std::vector<ConfiguredTier> tiers, std::optional<Secret> secret,
                         LogOnce log, WriteBehind& writer)
    : local_(std::move(local)), writer_(writer) {
  if (secret) secret_ = std::make_shared<const Secret>(*secret);
  for (ConfiguredTier& configured : tiers) {
    auto slot = std::make_shared<TierSlot>();
    slot->index = slots_.size();
    slot->tier = std::move(configured.tier);
    slot->options = configured.options;
    slot->log = log;
    slots_.push_back(std::move(slot));
  }
}

TieredStore::~TieredStore() = default;

std::optional<std::string> TieredStore::get(std::string_view key) {
  std::optional<std::string> value = local_->get(key);
  if (value || t_local_only || slots_.empty()) return value;
  const platform::ErrnoGuard errno_guard;
  try {
    return get_shared(key);
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<std::string> TieredStore::get_shared(std::string_view key) {
  for (const std::shared_ptr<TierSlot>& slot : slots_) {
    const Breaker::Pass pass = slot->breaker.allow(Clock::now());
    if (pass == Breaker::Pass::kDenied) {
      slot->add(TierCounter::skipped);
      continue;
    }
    const Deadline deadline = slot->deadline();
    TierResult r = slot->tier->get(key, deadline);
    if (r.code == TierCode::kMiss) {
      slot->breaker.succeeded(pass);
      slot->add(TierCounter::misses);
      continue;
    }
    if (!r.ok()) {
      slot->failed("read", r, pass, deadline);
      continue;
    }
    slot->breaker.succeeded(pass);
    slot->add(TierCounter::bytes_read, static_cast<std::int64_t>(r.value.size()));
    const Unsealed unsealed = unseal_value(key, r.value, secret_.get());
    if (unsealed.code == UnsealCode::kMacRejected) {
      slot->add(TierCounter::mac_rejected);
      slot->log_once("mac", "a value without a valid MAC was refused (NVRTC_CACHE_REMOTE_SECRET_FILE)");
      continue;
    }
    if (unsealed.code != UnsealCode::kOk) {
      slot->add(TierCounter::corrupt);
      slot->log_once("corrupt", "a value failed verification and was ignored");
      continue;
    }
    slot->add(key.starts_with(kIndexKeyPrefix) ? TierCounter::index_hits : TierCounter::hits);
    std::string payload(unsealed.payload);
    (void)local_->put(key, payload);  // the next hit is local (a read-only local store keeps nothing)
    return payload;
  }
  return std::nullopt;
}

Status TieredStore::put(std::string_view key, std::string_view value) {
  Status status = local_->put(key, value);
  if (status && !slots_.empty()) {
    const platform::ErrnoGuard errno_guard;
    try {
      write_shared(key, value);
    } catch (...) {
    }
  }
  return status;
}

void TieredStore::write_shared(std::string_view key, std::string_view value) {
  std::shared_ptr<const std::string> sealed;
  for (const std::shared_ptr<TierSlot>& slot : slots_) {
    if (!slot->tier->writable()) continue;
    if (value.size() > slot->options.max_entry_size) {
      slot->add(TierCounter::write_drops);
      continue;
    }
    if (!sealed) sealed = std::make_shared<const std::string>(seal_value(key, value, secret_.get()));
    auto job = [slot, sealed, key = std::string(key)] {
      const Breaker::Pass pass = slot->breaker.allow(Clock::now());
      if (pass == Breaker::Pass::kDenied) {
        slot->add(TierCounter::skipped);
        return;
      }
      const Deadline deadline = slot->deadline();
      const TierResult r = slot->tier->put(key, *sealed, deadline);
      if (!r.ok()) {
        slot->failed("write", r, pass, deadline);
        return;
      }
      slot->breaker.succeeded(pass);
      slot->add(TierCounter::writes);
      slot->add(TierCounter::bytes_written, static_cast<std::int64_t>(sealed->size()));
    };
    if (!writer_.enqueue(std::move(job), sealed->size())) {
      slot->add(TierCounter::write_drops);
      slot->log_once("queue", "the write queue is full; some values were not written to it");
    }
  }
}

Status TieredStore::add_counters(const Counters& deltas) {
  Counters merged = deltas;
  for (const std::shared_ptr<TierSlot>& slot : slots_) {
    const std::uint64_t opened = slot->breaker.times_opened();
    const std::uint64_t reported = slot->opened_reported.exchange(opened);
    if (opened > reported) slot->add(TierCounter::breaker_opened, static_cast<std::int64_t>(opened - reported));
    for (std::size_t c = 0; c < slot->counters.size(); ++c) {
      const std::int64_t delta = slot->counters[c].exchange(0, std::memory_order_relaxed);
      if (delta != 0) merged[tier_counter_name(slot->index, static_cast<TierCounter>(c))] += delta;
    }
  }
  return local_->add_counters(merged);
}

void TieredStore::count_in(CounterFile& file) {
  for (const std::shared_ptr<TierSlot>& slot : slots_) {
    for (std::size_t c = 0; c < static_cast<std::size_t>(TierCounter::kCount); ++c) {
      std::atomic<std::int64_t>* cell = file.cell(tier_counter_name(slot->index, static_cast<TierCounter>(c)));
      if (cell == nullptr) continue;
      if (const std::int64_t v = slot->counters[c].exchange(0, std::memory_order_relaxed); v != 0) {
        if (!CounterFile::add_to(cell, v)) {
          slot->counters[c].fetch_add(v, std::memory_order_relaxed);
          return;  // counting into the file stopped (a fault)
        }
      }
      slot->cells[c].store(cell, std::memory_order_release);
    }
  }
}

bool TieredStore::flush(std::chrono::milliseconds budget) { return writer_.flush(Clock::now() + budget); }

RemoteClaim TieredStore::try_claim(std::string_view name, std::chrono::milliseconds lease) {
  const platform::ErrnoGuard errno_guard;
  for (const std::shared_ptr<TierSlot>& slot : slots_) {
    if (!slot->tier->writable() || slot->claims_unsupported.load(std::memory_order_relaxed)) continue;
    const Breaker::Pass pass = slot->breaker.allow(Clock::now());
    if (pass == Breaker::Pass::kDenied) continue;
    std::string key = slot->options.prefix + ":claim:" + std::string(name);
    // With a secret, a claim carries its holder's MAC: a claim without one (anyone who can write to
    // the server could set it, to stall every cold compile of that program) is not waited for.
    std::string token = random_token();
    if (secret_) token = seal_value(key, token, secret_.get());
    TierResult failure;
    const Deadline deadline = slot->deadline();
    const ClaimCode code = slot->tier->try_claim(key, token, lease, deadline, &failure);
    switch (code) {
      case ClaimCode::kUnsupported:
        slot->breaker.succeeded(pass);
        slot->claims_unsupported.store(true, std::memory_order_relaxed);
        continue;
      case ClaimCode::kFailed:
        slot->failed("claim", failure, pass, deadline);
        return RemoteClaim(ClaimCode::kFailed);
      case ClaimCode::kHeldByOther: {
        slot->breaker.succeeded(pass);
        // Only a claim a holder keeps alive is waited for: a holder takes kClaimLease and renews
        // it, so a longer lease (anyone who can write to the server could set one, to stall every
        // cold compile of the program), a claim gone meanwhile or one that cannot be read is not.
        const std::optional<ClaimHolder> holder = slot->tier->claim_holder(key, slot->deadline());
        if (!holder || holder->remaining < std::chrono::milliseconds(0) || holder->remaining > kLongestGenuineLease) {
          if (holder)
            slot->log_once("foreign-claim", "a claim with a longer lease than a holder takes is not waited for");
          return RemoteClaim(ClaimCode::kUnsupported);  // compile now, without a cross-node claim
        }
        if (secret_ && unseal_value(key, holder->token, secret_.get()).code != UnsealCode::kOk) {
          slot->log_once("unsigned-claim", "a claim not signed with the secret is not waited for");
          return RemoteClaim(ClaimCode::kUnsupported);
        }
        return RemoteClaim(ClaimCode::kHeldByOther);
      }
      case ClaimCode::kClaimed:
        slot->breaker.succeeded(pass);
        return RemoteClaim(slot, std::move(key), std::move(token), lease, &writer_);
    }
  }
  return RemoteClaim(ClaimCode::kUnsupported);
}

std::vector<TieredStore::TierStatus> TieredStore::tier_status() const {
  std::vector<TierStatus> out;
  for (const std::shared_ptr<TierSlot>& slot : slots_) {
    out.push_back({slot->tier->display_name(), slot->tier->writable(), slot->breaker.state(Clock::now())});
  }
  return out;
}

}  // namespace nvrtc_cache::store::remote
