// Tier: one shared tier under the node-local store (a Redis server or shard set, a shared
// directory). The local LMDB store stays the first tier; store/remote/tiered_store.h puts the shared
// tiers behind it (read-through, write-behind).
// Contract:
//  - Keys are the local store's keys (opaque bytes, at most 256); values are opaque bytes that the
//    tiered store has already sealed (magic, format version, sizes, checksum, MAC; see
//    store/remote/sealed_value.h). A tier stores and returns bytes; it never interprets them.
//  - Threads: every method is thread-safe (a tier serialises or pools its own connections).
//  - Deadlines: every call returns by `deadline` (monotonic clock); one that cannot finish in time
//    reports kTimeout. Nothing blocks past it: no connect, send, recv or filesystem wait.
//  - Never throws, never lets a signal reach the host (sockets are written with MSG_NOSIGNAL), and
//    restores errno before returning.
//  - fork: a child never uses a connection or descriptor opened by its parent; after fork the
//    child's first call reconnects (the tier notices the pid change, or after_fork_in_child() is
//    called from the atfork child handler and must not allocate or lock).
//  - Secrets: display_name() and every message a tier produces are safe to log (no password).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace nvrtc_cache::store::remote {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// What one tier operation came to. Only kOk (and kMiss for reads) are successes; everything else
// is counted by the tiered store. Timeouts and errors feed the tier's circuit breaker; a refusal is
// an answer from a tier that is up, and does not.
enum class TierCode {
  kOk,       // done (get: value found)
  kMiss,     // get: no such key (also ENOENT/ESTALE/EBUSY on a shared directory)
  kTimeout,  // the deadline passed
  kRefused,  // the tier answered no: read-only, wrong password, OOM/noeviction, value too large
  kError,    // connection refused or reset, protocol garbage, I/O error
};

struct TierResult {
  TierCode code = TierCode::kError;
  std::string value;   // get(): the bytes read when code == kOk
  std::string detail;  // one line for the log when code is a failure; never holds a secret

  bool ok() const { return code == TierCode::kOk; }
};

// A parsed tier URL, e.g. "redis://:pw@host:6379/2?timeout=50&prefix=team",
// "redis+unix:///run/redis.sock?db=1", "file:///mnt/cache?read-only",
// "https://user:pw@cache.example:8443/nvrtc?layout=flat".
struct TierUrl {
  std::string scheme;      // "redis", "redis+unix", "file", "http", ...
  std::string user;        // redis ACL user, HTTP basic auth user (may be empty)
  std::string password;    // secret: never shown (display() masks it)
  std::string host;        // redis, http
  std::uint16_t port = 0;  // 0: the scheme's default
  std::string path;        // file: the directory; redis+unix: the socket; http: base path
  std::map<std::string, std::string, std::less<>> query;  // attributes; a flag has an empty value

  // The URL for people: its parts as parse_tier_url reads them back, through shown_url
  // (store/remote/shown_url.h): the password (if any) and a bearer-token attribute are "***".
  std::string display() const;
};

// Attributes common to every tier (query-string keys in parentheses), with their defaults.
struct TierOptions {
  bool read_only = false;                          // (read-only)
  std::chrono::milliseconds connect_timeout{100};  // (connect-timeout, ms)
  std::chrono::milliseconds timeout{1000};         // (timeout, ms): a whole operation
  std::string prefix = "nvrtc-cache";              // (prefix): namespace for keys
  std::chrono::seconds ttl{0};                     // (ttl, s): 0 = no expiry
  std::uint64_t max_entry_size = 64ull << 20;      // (max-entry-size, bytes)
};

// The outcome of a cross-node claim (shim/flight/single_flight.h extends its node-local claim with it).
enum class ClaimCode { kClaimed, kHeldByOther, kUnsupported, kFailed };

// Who holds a claim: the token it carries and how long its lease still runs (a negative
// `remaining`: the claim never expires).
struct ClaimHolder {
  std::string token;
  std::chrono::milliseconds remaining{0};
};

class Tier {
 public:
  virtual ~Tier() = default;

  // The URL for logs, stats and messages (password replaced).
  virtual const std::string& display_name() const = 0;
  virtual bool writable() const = 0;

  virtual TierResult get(std::string_view key, Deadline deadline) = 0;
  // Stores `value` under `key`, replacing any previous value (and applying the ttl).
  virtual TierResult put(std::string_view key, std::string_view value, Deadline deadline) = 0;

  // Cross-node single-flight (tiers that cannot do it answer kUnsupported): take `claim_key` for
  // `lease` with a unique `token` (Redis: SET claim token NX PX lease). The claim expires on its own
  // if the holder dies; release_claim() drops it only if it still holds `token`. On kFailed,
  // `*failure` (when not null) says what failed: kTimeout, kRefused (the server answered no: full,
  // not permitted) or kError, with a detail line.
  virtual ClaimCode try_claim(std::string_view claim_key, std::string_view token, std::chrono::milliseconds lease,
                              Deadline deadline, TierResult* failure) {
    (void)claim_key, (void)token, (void)lease, (void)deadline, (void)failure;
    return ClaimCode::kUnsupported;
  }
  // The claim held now: its token and remaining lease (Redis: GET and PTTL in one script), nullopt
  // when there is none or it cannot be read; a signed claim's token is a sealed value
  // (sealed_value.h) whose MAC the readers check.
  virtual std::optional<ClaimHolder> claim_holder(std::string_view claim_key, Deadline deadline) {
    (void)claim_key, (void)deadline;
    return std::nullopt;
  }
  // Extends a claim this holder still holds (`token`) to `lease` from now; false when the claim is
  // gone or another's (or the tier did not answer).
  virtual bool renew_claim(std::string_view claim_key, std::string_view token, std::chrono::milliseconds lease,
                           Deadline deadline) {
    (void)claim_key, (void)token, (void)lease, (void)deadline;
    return false;
  }
  virtual void release_claim(std::string_view claim_key, std::string_view token, Deadline deadline) {
    (void)claim_key, (void)token, (void)deadline;
  }

  // Visits every value the tier holds (its stored, sealed bytes) with the time it was written (Unix
  // seconds, 0 unknown), for `nvrtc-cache export --from`; `visit` returns false to stop. The walk
  // is not a snapshot: entries written meanwhile may or may not be seen. A tier that cannot be
  // listed answers kRefused (the default).
  using ValueVisitor = std::function<bool(std::string_view stored, std::int64_t written)>;
  virtual TierResult for_each_value(const ValueVisitor& visit, Deadline deadline) {
    (void)visit, (void)deadline;
    TierResult r;
    r.code = TierCode::kRefused;
    r.detail = "this tier cannot be listed";
    return r;
  }

  // A round trip that proves the tier is reachable (and writable when it claims to be), for
  // `nvrtc-cache remote check`; detail says what failed in plain words (wrong password, refused, ...).
  virtual TierResult check(Deadline deadline) = 0;
};

// Parses one URL; nullopt with *problem set (naming the URL through shown_url) when malformed. The
// user information ends at the URL's last '@' (store/remote/url_user_information.h): a password may
// hold '/', '?', '#' and '@' as written; a URL where that is ambiguous is refused.
std::optional<TierUrl> parse_tier_url(std::string_view text, std::string* problem);
// The common attributes of a parsed URL; unknown or malformed attributes add to *problem and keep
// their defaults.
TierOptions tier_options(const TierUrl& url, std::string* problem);

// Backend factories, one per scheme family; nullptr with *problem set when the tier cannot be built.
std::unique_ptr<Tier> make_file_tier(const TierUrl& url, const TierOptions& options, std::string* problem);
std::unique_ptr<Tier> make_redis_tier(const TierUrl& url, const TierOptions& options, std::string* problem);
std::unique_ptr<Tier> make_http_tier(const TierUrl& url, const TierOptions& options, std::string* problem);
// Dispatches on url.scheme.
std::unique_ptr<Tier> make_tier(const TierUrl& url, const TierOptions& options, std::string* problem);

}  // namespace nvrtc_cache::store::remote
