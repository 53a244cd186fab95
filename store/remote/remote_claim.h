// RemoteClaim: a cross-node single-flight claim on a shared tier (TieredStore::try_claim), held
// while this node compiles a program. A held claim is released on destruction through the writer
// queue, after the shared writes queued before it, so that a waiter on another node that sees the
// claim gone finds the result. Until then the claim is renewed (claim_renewer.h); if the holder
// dies or stops, the claim expires with its short lease.
// Contract: a movable value; thread-compatible; release() never throws and never blocks on a tier.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote {

struct TierSlot;  // one tier with its options, breaker and counters (tiered_store.cc)
class WriteBehind;

// A cross-node claim; a held one is released (through the writer queue, after the writes queued
// before it) on destruction.
class RemoteClaim {
 public:
  RemoteClaim() = default;
  explicit RemoteClaim(ClaimCode code) : code_(code) {}
  RemoteClaim(std::shared_ptr<TierSlot> slot, std::string key, std::string token, std::chrono::milliseconds lease,
              WriteBehind* writer);
  RemoteClaim(RemoteClaim&& other) noexcept { *this = std::move(other); }
  RemoteClaim& operator=(RemoteClaim&& other) noexcept;
  RemoteClaim(const RemoteClaim&) = delete;
  RemoteClaim& operator=(const RemoteClaim&) = delete;
  ~RemoteClaim() { release(); }

  ClaimCode code() const { return code_; }
  bool held() const { return code_ == ClaimCode::kClaimed && slot_ != nullptr; }
  void release();

 private:
  ClaimCode code_ = ClaimCode::kUnsupported;
  std::shared_ptr<TierSlot> slot_;
  std::string key_;
  std::string token_;
  WriteBehind* writer_ = nullptr;
  std::uint64_t renewal_ = 0;  // its entry in the process's ClaimRenewer (0: none)
};

}  // namespace nvrtc_cache::store::remote
