// The Redis tier (make_redis_tier in store/remote/tier.h): keys `<prefix>:v1:<hex key>`, values
// stored as given, GET / SET [PX ttl]; claims with SET NX PX and a compare-and-delete script.
// Connections: store/remote/redis/redis_connector.h (a lock-free pool per server, new ones within
// connect-timeout, TLS, AUTH and SELECT). An idle pooled connection the server closed is noticed
// before use (stale()), and an idempotent command that fails on a pooled connection is tried once
// more on a fresh one.
// redis+cluster://: keys are `<prefix>:v1:{<hex key>}` and claims `<prefix>:v1:claim:{<hex key>}`, so
// a value and its claim share a hash slot. Each command goes to the node the slot map names
// (store/remote/redis/cluster_router.h; filled from CLUSTER NODES at the first command and after
// changes); -MOVED moves the slot and is followed, -ASK is followed once with ASKING. A node whose
// connection fails or times out is skipped for 1 s (its commands fail at once) and the map is
// refreshed, so a failed master costs at most one timeout until a replica takes over its slots.
// read-from=replica sends GETs to a replica of the slot's master first (READONLY, pipelined), the
// master answering what the replica cannot.
#include <unistd.h>

#include <array>
#include <charconv>
#include <optional>
#include <random>
#include <thread>

#include "platform/errno_guard.h"
#include "store/remote/redis/cluster_map.h"
#include "store/remote/redis/cluster_router.h"
#include "store/remote/redis/redis_config.h"
#include "store/remote/redis/redis_connector.h"
#include "store/remote/redis/resp_connection.h"
#include "store/remote/redis/server_node.h"
#include "store/remote/redis/shard_choice.h"
#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote {
namespace {

using redis::IoCode;
using redis::IoResult;
using redis::Reply;
using redis::RespConnection;
using std::chrono::milliseconds;

// A value read back may exceed max-entry-size by this much (the server's copy is bounded by what
// put() accepted; the slack only spares a tier whose limit was lowered a refusal of old entries).
constexpr std::uint64_t kBulkSlack = 64 * 1024;
using redis::kSmallReply;
constexpr std::uint64_t kScanReply = 16 * 1024 * 1024;
constexpr char kScanScript[] =
    "local r=redis.call('scan',ARGV[1],'match',ARGV[2],'count',1000) "
    "return r[1]..'\\n'..table.concat(r[2],'\\n')";

// The bytes a lowercase hex string stands for; empty when it is not one.
std::string unhex(std::string_view digits) {
  std::string out;
  if (digits.size() % 2 != 0) return out;
  auto value = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  for (std::size_t i = 0; i < digits.size(); i += 2) {
    const int hi = value(digits[i]), lo = value(digits[i + 1]);
    if (hi < 0 || lo < 0) return {};
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}
constexpr milliseconds kProbeTtl{60'000};

// Deletes KEYS[1] only when it still holds ARGV[1]: only the claim's holder releases it.
constexpr std::string_view kReleaseScript =
    "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end";
// Extends KEYS[1] to ARGV[2] ms only when it still holds ARGV[1]: 1 renewed, 0 not ours.
constexpr std::string_view kRenewScript =
    "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('pexpire',KEYS[1],ARGV[2]) else return 0 end";
// KEYS[1]'s remaining lease in ms, a colon and its value, in one bulk string (the client reads no
// arrays); nil when there is no claim.
constexpr std::string_view kHolderScript =
    "local v=redis.call('get',KEYS[1]) if not v then return false end "
    "return tostring(redis.call('pttl',KEYS[1]))..':'..v";

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

TierResult result(TierCode code, std::string detail = {}) { return TierResult{code, {}, std::move(detail)}; }

class RedisTier final : public Tier {
 public:
  RedisTier(redis::RedisConfig config, const TierOptions& options, std::string display_name)
      : config_(std::move(config)),
        options_(options),
        display_name_(std::move(display_name)),
        connector_(config_, options_) {
    if (config_.cluster) {
      router_ = std::make_unique<redis::ClusterRouter>(std::move(config_.servers), config_.tls ? "rediss" : "redis");
    } else {
      for (redis::ServerSpec& spec : config_.servers) servers_.push_back(std::make_unique<Server>(std::move(spec)));
    }
    config_.servers.clear();
    for (const auto& server : servers_) weights_.push_back({server->spec.shard_name, server->spec.weight});
  }

  const std::string& display_name() const override { return display_name_; }
  bool writable() const override { return !options_.read_only; }

  TierResult get(std::string_view key, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    const std::string redis_key = data_key(key);
    if (config_.cluster && config_.read_from_replicas) {
      if (std::optional<TierResult> served = get_from_replica(redis_key, deadline)) return std::move(*served);
    }
    const std::array<std::string_view, 2> args{"GET", redis_key};
    Reply reply;
    Server* server = nullptr;
    const TierResult io = call(key, redis_key, args, options_.max_entry_size + kBulkSlack, deadline,
                               /*retry_on_fresh=*/true, &reply, &server);
    if (!io.ok()) return io;
    if (reply.kind == Reply::Kind::kBulk) return TierResult{TierCode::kOk, std::move(reply.text), {}};
    if (reply.kind == Reply::Kind::kNil) return result(TierCode::kMiss);
    return redis::RedisConnector::unexpected(*server, reply);
  }

  TierResult put(std::string_view key, std::string_view value, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    if (options_.read_only) return result(TierCode::kRefused, display_name_ + " is read-only");
    if (value.size() > options_.max_entry_size) {
      return result(TierCode::kRefused, "value of " + std::to_string(value.size()) +
                                            " bytes is larger than max-entry-size (" +
                                            std::to_string(options_.max_entry_size) + ")");
    }
    const std::string redis_key = data_key(key);
    const std::string ttl_ms = std::to_string(std::chrono::duration_cast<milliseconds>(options_.ttl).count());
    std::vector<std::string_view> args{"SET", redis_key, value};
    if (options_.ttl.count() > 0) args.insert(args.end(), {"PX", ttl_ms});
    return expect_ok(key, redis_key, args, deadline, /*retry_on_fresh=*/true);
  }

  ClaimCode try_claim(std::string_view claim_key, std::string_view token, milliseconds lease, Deadline deadline,
                      TierResult* failure) override {
    const platform::ErrnoGuard errno_guard;
    // A read-only tier never publishes a result, so others must not wait for its compile.
    if (options_.read_only) return ClaimCode::kUnsupported;
    const std::string redis_key = claim_redis_key(claim_key);
    const std::string lease_ms = std::to_string(std::max<long long>(lease.count(), 1));
    const std::array<std::string_view, 6> args{"SET", redis_key, token, "NX", "PX", lease_ms};
    ClaimCode code = ClaimCode::kFailed;
    TierResult refusal;
    Reply reply;
    Server* server = nullptr;
    // Not retried: a SET NX that reached the server before the connection failed would make the
    // retry see our own claim as another's.
    const TierResult io =
        call(claim_key, redis_key, args, kSmallReply, deadline, /*retry_on_fresh=*/false, &reply, &server);
    if (io.ok()) {
      if (reply.kind == Reply::Kind::kStatus && reply.text == "OK")
        code = ClaimCode::kClaimed;
      else if (reply.kind == Reply::Kind::kNil)
        code = ClaimCode::kHeldByOther;
      else
        refusal = redis::RedisConnector::unexpected(*server, reply);  // e.g. OOM (full, noeviction), NOPERM
    }
    if (code == ClaimCode::kFailed && failure != nullptr) *failure = io.code != TierCode::kOk ? io : refusal;
    return code;
  }

  std::optional<ClaimHolder> claim_holder(std::string_view claim_key, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    const std::string redis_key = claim_redis_key(claim_key);
    const std::array<std::string_view, 4> args{"EVAL", kHolderScript, "1", redis_key};
    Reply reply;
    Server* server = nullptr;
    const TierResult io = call(claim_key, redis_key, args, kSmallReply, deadline, true, &reply, &server);
    if (!io.ok() || reply.kind != Reply::Kind::kBulk) return std::nullopt;
    const std::size_t colon = reply.text.find(':');
    if (colon == std::string::npos || colon == 0 || colon > 20) return std::nullopt;
    long long remaining = 0;
    const auto [end, ec] = std::from_chars(reply.text.data(), reply.text.data() + colon, remaining);
    if (ec != std::errc() || end != reply.text.data() + colon) return std::nullopt;
    return ClaimHolder{reply.text.substr(colon + 1), milliseconds(remaining)};
  }

  bool renew_claim(std::string_view claim_key, std::string_view token, milliseconds lease, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    if (options_.read_only) return false;
    const std::string redis_key = claim_redis_key(claim_key);
    const std::string lease_ms = std::to_string(std::max<long long>(lease.count(), 1));
    const std::array<std::string_view, 6> args{"EVAL", kRenewScript, "1", redis_key, token, lease_ms};
    Reply reply;
    Server* server = nullptr;
    const TierResult io = call(claim_key, redis_key, args, kSmallReply, deadline, true, &reply, &server);
    return io.ok() && reply.kind == Reply::Kind::kInteger && reply.integer == 1;
  }

  void release_claim(std::string_view claim_key, std::string_view token, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    if (options_.read_only) return;
    const std::string redis_key = claim_redis_key(claim_key);
    const std::array<std::string_view, 5> args{"EVAL", kReleaseScript, "1", redis_key, token};
    Reply reply;
    Server* server = nullptr;
    (void)call(claim_key, redis_key, args, kSmallReply, deadline, true, &reply, &server);
  }

  // SCAN runs inside a script that joins the cursor and the keys with newlines into one bulk
  // string (the RESP client reads no arrays); keys are `<prefix>:v1:<hex>`, which hold no newline
  // unless the prefix does (such a key is then skipped as malformed). Claims are skipped.
  TierResult for_each_value(const ValueVisitor& visit, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    const std::string pattern = options_.prefix + ":v1:*";
    const std::string claims = options_.prefix + ":v1:claim:";
    const std::vector<Server*> servers = listed_servers(deadline);
    // A cluster whose map no node gave is unread, not empty: an export of it is not complete.
    if (servers.empty()) return result(TierCode::kError, display_name_ + ": " + kNoMap);
    for (Server* server : servers) {
      std::string cursor = "0";
      do {
        std::string batch;
        const std::array<std::string_view, 5> args{"EVAL", kScanScript, "0", cursor, pattern};
        const TierResult io =
            connector_.run(*server, deadline, /*retry_on_fresh=*/true, [&](RespConnection& connection) {
              Reply reply;
              IoResult done = connection.command(args, &reply, kScanReply, deadline);
              if (done.ok() && reply.kind == Reply::Kind::kBulk)
                batch = std::move(reply.text);
              else if (done.ok())
                done = IoResult{IoCode::kError, "unexpected reply to SCAN"};
              return done;
            });
        if (!io.ok()) return io;
        std::string_view rest = batch;
        const std::size_t first = rest.find('\n');
        cursor = std::string(rest.substr(0, first));
        rest = first == std::string_view::npos ? std::string_view() : rest.substr(first + 1);
        while (!rest.empty()) {
          const std::size_t end = rest.find('\n');
          const std::string_view redis_key = rest.substr(0, end);
          rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
          if (redis_key.starts_with(claims)) continue;
          std::string_view digits = redis_key.substr(std::min(redis_key.size(), pattern.size() - 1));
          if (config_.cluster && digits.size() >= 2 && digits.front() == '{' && digits.back() == '}')
            digits = digits.substr(1, digits.size() - 2);
          const std::string key = unhex(digits);
          if (key.empty()) continue;
          TierResult value = get(key, deadline);
          if (value.code == TierCode::kMiss) continue;  // expired or evicted meanwhile
          if (!value.ok()) return value;
          if (!visit(value.value, 0)) return result(TierCode::kOk);
        }
      } while (cursor != "0" && !cursor.empty());
    }
    return result(TierCode::kOk);
  }

  TierResult check(Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    std::string detail;
    TierCode worst = TierCode::kOk;
    if (config_.cluster) router_->request_refresh();
    const std::vector<Server*> servers = listed_servers(deadline);
    if (servers.empty()) return result(TierCode::kError, display_name_ + ": " + kNoMap);
    for (Server* server : servers) {
      const TierResult one = check_server(*server, deadline, /*probe_writes=*/!config_.cluster);
      if (!detail.empty()) detail += "; ";
      detail += one.detail;
      if (worst == TierCode::kOk && one.code != TierCode::kOk) worst = one.code;
    }
    if (config_.cluster && worst == TierCode::kOk) {
      detail = "a cluster of " + std::to_string(servers.size()) + " masters: " + detail;
      if (writable()) {  // the write probe through the slot map, wherever its slot lives
        const TierResult probed = probe_writes(deadline);
        if (!probed.ok()) return probed;
        detail += "; " + probed.detail;
      }
    }
    return result(worst, std::move(detail));
  }

 private:
  using Server = redis::ServerNode;
  static constexpr int kMaxRedirections = 5;
  static constexpr auto kNodeDownFor = std::chrono::seconds(1);
  static constexpr auto kMapWaitStep = std::chrono::microseconds(200);
  static constexpr const char* kNoMap =
      "no node of the cluster answered CLUSTER NODES (down, or not a Redis Cluster: use redis://)";

  // Cluster keys hold the hex key as their hash tag: a value and its claim share a slot.
  std::string tagged(std::string_view key) const { return config_.cluster ? "{" + hex(key) + "}" : hex(key); }
  std::string data_key(std::string_view key) const { return options_.prefix + ":v1:" + tagged(key); }
  std::string claim_redis_key(std::string_view key) const { return options_.prefix + ":v1:claim:" + tagged(key); }

  // The servers to list or check: every shard, or the masters of a cluster (after a map refresh).
  std::vector<Server*> listed_servers(Deadline deadline) {
    std::vector<Server*> out;
    if (!config_.cluster) {
      for (const auto& server : servers_) out.push_back(server.get());
      return out;
    }
    refresh_if_needed(deadline);
    return router_->masters();
  }

  // Sends `args`, a command about `redis_key` (for the tier's `key`), to the server that holds it
  // and reads the reply into *reply; *answered says which server answered. In a cluster, follows
  // -MOVED (moving the slot, and asking for a map refresh) and -ASK (ASKING, then the command, on
  // that node only), at most kMaxRedirections times. kOk when a whole reply was read.
  TierResult call(std::string_view key, std::string_view redis_key, std::span<const std::string_view> args,
                  std::uint64_t max_bulk, Deadline deadline, bool retry_on_fresh, Reply* reply, Server** answered) {
    if (!config_.cluster) {
      Server& server = server_for(key);
      *answered = &server;
      return connector_.run(server, deadline, retry_on_fresh, [&](RespConnection& connection) {
        return connection.command(args, reply, max_bulk, deadline);
      });
    }
    const std::uint16_t slot = redis::key_slot(redis_key);
    refresh_if_needed(deadline);
    Server* server = router_->node_for_slot(slot);
    // The first commands of a fresh tier (and those after a failover emptied a slot) arrive while
    // another thread fills the map: they wait for it, within their deadline, rather than fail.
    while (server == nullptr && router_->refreshing() && Clock::now() < deadline) {
      std::this_thread::sleep_for(kMapWaitStep);
      server = router_->node_for_slot(slot);
    }
    if (server == nullptr) {
      router_->request_refresh();
      return result(TierCode::kError, display_name_ + ": no node serves slot " + std::to_string(slot) + " (" +
                                          (router_->nodes().empty() ? std::string("no node") : kNoMap) + ")");
    }
    bool asking = false;
    for (int hop = 0; hop <= kMaxRedirections; ++hop) {
      *answered = server;
      if (server->down(Clock::now())) {
        router_->request_refresh();
        return result(TierCode::kError, server->spec.display + ": skipped (down a moment ago)");
      }
      const TierResult io =
          connector_.run(*server, deadline, retry_on_fresh && !asking, [&](RespConnection& connection) {
            if (!asking) return connection.command(args, reply, max_bulk, deadline);
            const std::array<std::string_view, 1> asking_command{"ASKING"};
            if (IoResult sent = connection.send(asking_command, deadline); !sent.ok()) return sent;
            if (IoResult sent = connection.send(args, deadline); !sent.ok()) return sent;
            Reply accepted;
            if (IoResult read = connection.read_reply(&accepted, kSmallReply, deadline); !read.ok()) return read;
            return connection.read_reply(reply, max_bulk, deadline);
          });
      if (!io.ok()) {
        if (io.code == TierCode::kTimeout || io.code == TierCode::kError) {
          server->mark_down(Clock::now() + kNodeDownFor);
          router_->request_refresh();
        }
        return io;
      }
      if (reply->kind != Reply::Kind::kError) return io;
      const std::optional<redis::Redirect> redirect = redis::parse_redirect(reply->text);
      if (!redirect) {
        if (starts_with(reply->text, "TRYAGAIN") || starts_with(reply->text, "CLUSTERDOWN")) router_->request_refresh();
        return io;
      }
      Server* target = router_->node_at(redirect->host.empty() ? server->spec.host : redirect->host, redirect->port);
      if (target == nullptr) return result(TierCode::kError, display_name_ + ": too many cluster nodes");
      if (redirect->moved) {
        router_->set_slot(redirect->slot, target);
        router_->request_refresh();
      }
      asking = !redirect->moved;
      server = target;
    }
    return result(TierCode::kError,
                  display_name_ + ": more than " + std::to_string(kMaxRedirections) + " redirections for one command");
  }

  // read-from=replica: READONLY and GET, pipelined, to a replica of the slot's master. What a replica
  // cannot answer (none known, down, timed out, a redirection or an error) is left to the master:
  // nullopt. A replica's miss is a miss (a value written a moment ago may not have reached it).
  std::optional<TierResult> get_from_replica(std::string_view redis_key, Deadline deadline) {
    refresh_if_needed(deadline);
    Server* replica = router_->replica_for_slot(redis::key_slot(redis_key));
    if (replica == nullptr || replica->down(Clock::now())) return std::nullopt;
    const std::array<std::string_view, 1> readonly{"READONLY"};
    const std::array<std::string_view, 2> args{"GET", redis_key};
    Reply reply;
    const TierResult io = connector_.run(*replica, deadline, true, [&](RespConnection& connection) {
      if (IoResult sent = connection.send(readonly, deadline); !sent.ok()) return sent;
      if (IoResult sent = connection.send(args, deadline); !sent.ok()) return sent;
      Reply accepted;
      if (IoResult read = connection.read_reply(&accepted, kSmallReply, deadline); !read.ok()) return read;
      return connection.read_reply(&reply, options_.max_entry_size + kBulkSlack, deadline);
    });
    if (!io.ok()) {
      if (io.code == TierCode::kTimeout || io.code == TierCode::kError) {
        replica->mark_down(Clock::now() + kNodeDownFor);
        router_->request_refresh();
      }
      return std::nullopt;
    }
    if (reply.kind == Reply::Kind::kBulk) return TierResult{TierCode::kOk, std::move(reply.text), {}};
    if (reply.kind == Reply::Kind::kNil) return result(TierCode::kMiss);
    return std::nullopt;
  }

  // Fills the cluster's slot map from CLUSTER NODES when it is stale and no other thread is at it:
  // the known nodes (the seeds first) are asked in turn, skipping those found down, until one answers.
  void refresh_if_needed(Deadline deadline) {
    if (!router_->needs_refresh() || !router_->begin_refresh()) return;
    bool refreshed = false;
    const std::array<std::string_view, 2> args{"CLUSTER", "NODES"};
    for (Server* node : router_->nodes()) {
      if (node->down(Clock::now()) || Clock::now() >= deadline) continue;
      Reply reply;
      const TierResult io = connector_.run(*node, deadline, true, [&](RespConnection& connection) {
        return connection.command(args, &reply, redis::kMaxClusterNodesReply, deadline);
      });
      if (!io.ok()) {
        node->mark_down(Clock::now() + kNodeDownFor);
        continue;
      }
      if (reply.kind != Reply::Kind::kBulk) continue;  // NOPERM, or cluster support disabled
      const auto nodes = redis::parse_cluster_nodes(reply.text, node->spec.host);
      if (!nodes) continue;
      router_->apply(*nodes);
      refreshed = true;
      break;
    }
    router_->end_refresh(refreshed);
  }

  // A cluster's write probe: SET / GET / DEL of a probe key through the slot map.
  TierResult probe_writes(Deadline deadline) {
    std::random_device random;
    const std::string key = "probe:" + std::to_string(getpid()) + "-" + std::to_string(random());
    const std::string value = "nvrtc-cache probe " + std::to_string(random());
    const auto start = Clock::now();
    const std::string redis_key = data_key(key);
    const std::string ttl = std::to_string(kProbeTtl.count());
    const std::array<std::string_view, 5> set_probe{"SET", redis_key, value, "PX", ttl};
    if (TierResult stored = expect_ok(key, redis_key, set_probe, deadline, true); !stored.ok()) return stored;
    const TierResult read = get(key, deadline);
    if (!read.ok() || read.value != value)
      return read.ok() ? result(TierCode::kError, display_name_ + ": the probe key read back differently") : read;
    const std::array<std::string_view, 2> delete_probe{"DEL", redis_key};
    Reply reply;
    Server* server = nullptr;
    (void)call(key, redis_key, delete_probe, kSmallReply, deadline, true, &reply, &server);
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    return result(TierCode::kOk, "SET/GET/DEL of a probe key in " + std::to_string(us) + " us");
  }

  Server& server_for(std::string_view key) { return *servers_[redis::choose_shard(key, weights_)]; }

  // Sends `args` and expects +OK.
  TierResult expect_ok(std::string_view key, std::string_view redis_key, std::span<const std::string_view> args,
                       Deadline deadline, bool retry_on_fresh) {
    Reply reply;
    Server* server = nullptr;
    const TierResult io = call(key, redis_key, args, kSmallReply, deadline, retry_on_fresh, &reply, &server);
    if (!io.ok()) return io;
    return reply.kind == Reply::Kind::kStatus && reply.text == "OK" ? result(TierCode::kOk)
                                                                    : redis::RedisConnector::unexpected(*server, reply);
  }

  // PING, and when writable (and `probe_writes`: not a cluster node, whose slots decide where a
  // key goes) a SET / GET / DEL of a probe key on this server, with round-trip times.
  TierResult check_server(Server& server, Deadline deadline, bool probe_writes) {
    const std::string& name = server.spec.display;
    const auto start = Clock::now();
    TierResult pinged;
    const std::array<std::string_view, 1> ping{"PING"};
    const TierResult io = connector_.run(server, deadline, true, [&](RespConnection& connection) {
      Reply reply;
      IoResult done = connection.command(ping, &reply, kSmallReply, deadline);
      if (done.ok()) {
        pinged = reply.kind == Reply::Kind::kStatus && reply.text == "PONG"
                     ? result(TierCode::kOk)
                     : redis::RedisConnector::unexpected(server, reply);
      }
      return done;
    });
    if (!io.ok()) return io;
    if (!pinged.ok()) return pinged;
    const auto ping_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    std::string detail = name + ": PONG in " + std::to_string(ping_us) + " us";
    if (!writable()) return result(TierCode::kOk, detail + ", read-only");
    if (!probe_writes) return result(TierCode::kOk, detail);

    std::random_device random;
    const std::string probe_key =
        options_.prefix + ":v1:probe:" + std::to_string(getpid()) + "-" + std::to_string(random());
    const std::string probe_value = "nvrtc-cache probe " + std::to_string(random());
    const std::string ttl = std::to_string(kProbeTtl.count());
    const auto write_start = Clock::now();
    const std::array<std::string_view, 5> set_probe{"SET", probe_key, probe_value, "PX", ttl};
    TierResult stored;
    const TierResult set_io = connector_.run(server, deadline, true, [&](RespConnection& connection) {
      Reply reply;
      IoResult done = connection.command(set_probe, &reply, kSmallReply, deadline);
      if (done.ok())
        stored = reply.kind == Reply::Kind::kStatus && reply.text == "OK"
                     ? result(TierCode::kOk)
                     : redis::RedisConnector::unexpected(server, reply);
      return done;
    });
    if (!set_io.ok()) return set_io;
    if (!stored.ok()) return stored;
    TierResult read_back;
    const std::array<std::string_view, 2> get_probe{"GET", probe_key};
    const std::array<std::string_view, 2> delete_probe{"DEL", probe_key};
    const TierResult exchanged = connector_.run(server, deadline, true, [&](RespConnection& connection) {
      Reply reply;
      IoResult done = connection.command(get_probe, &reply, kSmallReply, deadline);
      if (!done.ok()) return done;
      read_back = reply.kind == Reply::Kind::kBulk && reply.text == probe_value
                      ? result(TierCode::kOk)
                      : result(TierCode::kError, name + ": the probe key read back differently");
      return connection.command(delete_probe, &reply, kSmallReply, deadline);
    });
    if (!exchanged.ok()) return exchanged;
    if (!read_back.ok()) return read_back;
    const auto write_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - write_start).count();
    return result(TierCode::kOk, detail + ", SET/GET/DEL of a probe key in " + std::to_string(write_us) + " us");
  }

  redis::RedisConfig config_;  // credentials and database; the servers live in servers_
  TierOptions options_;
  std::string display_name_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::vector<redis::ShardWeight> weights_;       // names point into servers_' specs
  std::unique_ptr<redis::ClusterRouter> router_;  // redis+cluster://: the nodes and the slot map
  redis::RedisConnector connector_;               // connections to each server
};

}  // namespace

std::unique_ptr<Tier> make_redis_tier(const TierUrl& url, const TierOptions& options, std::string* problem) {
  const platform::ErrnoGuard errno_guard;
  std::optional<redis::RedisConfig> config = redis::redis_config(url, problem);
  if (!config) return nullptr;
  return std::make_unique<RedisTier>(std::move(*config), options, url.display());
}

}  // namespace nvrtc_cache::store::remote
