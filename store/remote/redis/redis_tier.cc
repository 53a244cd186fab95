// The Redis tier (make_redis_tier in store/remote/tier.h): keys `<prefix>:v1:<hex key>`, values
// stored as given, GET / SET [PX ttl]; claims with SET NX PX and a compare-and-delete script.
// Connections: a lock-free pool per server (store/remote/redis/connection_pool.h); each operation
// takes one, or connects (non-blocking, within connect-timeout and the operation's deadline) and
// sends AUTH and SELECT pipelined. A connection that saw anything but a complete reply is dropped.
// An idle pooled connection the server closed is noticed before use (stale()), and an idempotent
// command that fails on a pooled connection is tried once more on a fresh one.
#include <unistd.h>

#include <array>
#include <charconv>
#include <random>

#include "platform/errno_guard.h"
#include "store/remote/redis/address_resolver.h"
#include "store/remote/redis/connection_pool.h"
#include "store/remote/redis/redis_config.h"
#include "store/remote/redis/resp_connection.h"
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
// Replies to every command other than GET are short.
constexpr std::uint64_t kSmallReply = 64 * 1024;
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
      : config_(std::move(config)), options_(options), display_name_(std::move(display_name)) {
    for (redis::ServerSpec& spec : config_.servers) servers_.push_back(std::make_unique<Server>(std::move(spec)));
    config_.servers.clear();
    for (const auto& server : servers_) weights_.push_back({server->spec.shard_name, server->spec.weight});
  }

  const std::string& display_name() const override { return display_name_; }
  bool writable() const override { return !options_.read_only; }

  TierResult get(std::string_view key, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    const std::string redis_key = data_key(key);
    Server& server = server_for(key);
    TierResult outcome;
    const std::array<std::string_view, 2> args{"GET", redis_key};
    TierResult io = run(server, deadline, /*retry_on_fresh=*/true, [&](RespConnection& connection) {
      Reply reply;
      IoResult done = connection.command(args, &reply, options_.max_entry_size + kBulkSlack, deadline);
      if (!done.ok()) return done;
      if (reply.kind == Reply::Kind::kBulk) {
        outcome = TierResult{TierCode::kOk, std::move(reply.text), {}};
      } else if (reply.kind == Reply::Kind::kNil) {
        outcome = result(TierCode::kMiss);
      } else {
        outcome = unexpected(server, reply);
      }
      return done;
    });
    return io.code == TierCode::kOk ? outcome : io;
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
    return expect_ok(server_for(key), args, deadline, /*retry_on_fresh=*/true);
  }

  ClaimCode try_claim(std::string_view claim_key, std::string_view token, milliseconds lease, Deadline deadline,
                      TierResult* failure) override {
    const platform::ErrnoGuard errno_guard;
    // A read-only tier never publishes a result, so others must not wait for its compile.
    if (options_.read_only) return ClaimCode::kUnsupported;
    const std::string redis_key = claim_redis_key(claim_key);
    const std::string lease_ms = std::to_string(std::max<long long>(lease.count(), 1));
    const std::array<std::string_view, 6> args{"SET", redis_key, token, "NX", "PX", lease_ms};
    Server& server = server_for(claim_key);
    ClaimCode code = ClaimCode::kFailed;
    TierResult refusal;
    // Not retried: a SET NX that reached the server before the connection failed would make the
    // retry see our own claim as another's.
    const TierResult io = run(server, deadline, /*retry_on_fresh=*/false, [&](RespConnection& connection) {
      Reply reply;
      IoResult done = connection.command(args, &reply, kSmallReply, deadline);
      if (!done.ok()) return done;
      if (reply.kind == Reply::Kind::kStatus && reply.text == "OK")
        code = ClaimCode::kClaimed;
      else if (reply.kind == Reply::Kind::kNil)
        code = ClaimCode::kHeldByOther;
      else
        refusal = unexpected(server, reply);  // e.g. OOM (full, noeviction), NOPERM
      return done;
    });
    if (io.code != TierCode::kOk) code = ClaimCode::kFailed;
    if (code == ClaimCode::kFailed && failure != nullptr) *failure = io.code != TierCode::kOk ? io : refusal;
    return code;
  }

  std::optional<ClaimHolder> claim_holder(std::string_view claim_key, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    const std::string redis_key = claim_redis_key(claim_key);
    const std::array<std::string_view, 4> args{"EVAL", kHolderScript, "1", redis_key};
    std::optional<ClaimHolder> holder;
    (void)run(server_for(claim_key), deadline, /*retry_on_fresh=*/true, [&](RespConnection& connection) {
      Reply reply;
      IoResult done = connection.command(args, &reply, kSmallReply, deadline);
      if (!done.ok() || reply.kind != Reply::Kind::kBulk) return done;
      const std::size_t colon = reply.text.find(':');
      if (colon == std::string::npos || colon == 0 || colon > 20) return done;
      long long remaining = 0;
      const auto [end, ec] = std::from_chars(reply.text.data(), reply.text.data() + colon, remaining);
      if (ec != std::errc() || end != reply.text.data() + colon) return done;
      holder = ClaimHolder{reply.text.substr(colon + 1), milliseconds(remaining)};
      return done;
    });
    return holder;
  }

  bool renew_claim(std::string_view claim_key, std::string_view token, milliseconds lease, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    if (options_.read_only) return false;
    const std::string redis_key = claim_redis_key(claim_key);
    const std::string lease_ms = std::to_string(std::max<long long>(lease.count(), 1));
    const std::array<std::string_view, 6> args{"EVAL", kRenewScript, "1", redis_key, token, lease_ms};
    bool renewed = false;
    (void)run(server_for(claim_key), deadline, /*retry_on_fresh=*/true, [&](RespConnection& connection) {
      Reply reply;
      IoResult done = connection.command(args, &reply, kSmallReply, deadline);
      if (done.ok() && reply.kind == Reply::Kind::kInteger && reply.integer == 1) renewed = true;
      return done;
    });
    return renewed;
  }

  void release_claim(std::string_view claim_key, std::string_view token, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    if (options_.read_only) return;
    const std::string redis_key = claim_redis_key(claim_key);
    const std::array<std::string_view, 5> args{"EVAL", kReleaseScript, "1", redis_key, token};
    (void)run(server_for(claim_key), deadline, /*retry_on_fresh=*/true, [&](RespConnection& connection) {
      Reply reply;
      return connection.command(args, &reply, kSmallReply, deadline);
    });
  }

  // SCAN runs inside a script that joins the cursor and the keys with newlines into one bulk
  // string (the RESP client reads no arrays); keys are `<prefix>:v1:<hex>`, which hold no newline
  // unless the prefix does (such a key is then skipped as malformed). Claims are skipped.
  TierResult for_each_value(const ValueVisitor& visit, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    const std::string pattern = options_.prefix + ":v1:*";
    const std::string claims = options_.prefix + ":v1:claim:";
    for (const auto& server : servers_) {
      std::string cursor = "0";
      do {
        std::string batch;
        const std::array<std::string_view, 5> args{"EVAL", kScanScript, "0", cursor, pattern};
        const TierResult io = run(*server, deadline, /*retry_on_fresh=*/true, [&](RespConnection& connection) {
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
          const std::string key = unhex(redis_key.substr(std::min(redis_key.size(), pattern.size() - 1)));
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
    for (const auto& server : servers_) {
      const TierResult one = check_server(*server, deadline);
      if (!detail.empty()) detail += "; ";
      detail += one.detail;
      if (worst == TierCode::kOk && one.code != TierCode::kOk) worst = one.code;
    }
    return result(worst, std::move(detail));
  }

 private:
  struct Server {
    explicit Server(redis::ServerSpec s) : spec(std::move(s)), resolver(spec.host, spec.port, spec.socket_path) {}
    redis::ServerSpec spec;
    redis::AddressResolver resolver;
    redis::ConnectionPool pool;
  };

  std::string data_key(std::string_view key) const { return options_.prefix + ":v1:" + hex(key); }
  std::string claim_redis_key(std::string_view key) const { return options_.prefix + ":v1:claim:" + hex(key); }

  Server& server_for(std::string_view key) { return *servers_[redis::choose_shard(key, weights_)]; }

  // A failed exchange as the tier reports it.
  static TierResult io_failure(const Server& server, const IoResult& io) {
    return result(io.code == IoCode::kTimeout ? TierCode::kTimeout : TierCode::kError,
                  server.spec.display + ": " + io.detail);
  }

  // What an error reply (or any reply the command does not expect) means for the caller.
  static TierResult unexpected(const Server& server, const Reply& reply) {
    const std::string& name = server.spec.display;
    if (reply.kind != Reply::Kind::kError) return result(TierCode::kError, name + ": unexpected reply");
    const std::string_view text = reply.text;
    if (starts_with(text, "NOAUTH"))
      return result(TierCode::kRefused, "wrong password for " + name + " (it requires one)");
    if (starts_with(text, "WRONGPASS") || starts_with(text, "ERR invalid password")) {
      return result(TierCode::kRefused, "wrong password for " + name);
    }
    if (starts_with(text, "OOM")) return result(TierCode::kRefused, name + ": server is full (maxmemory, noeviction)");
    if (starts_with(text, "READONLY")) return result(TierCode::kRefused, name + ": the server is a read-only replica");
    if (starts_with(text, "NOPERM")) {  // an ACL user without the right to run the command (e.g. a readers' user)
      return result(TierCode::kRefused, name + ": not permitted for this user (" + redis::printable(text) + ")");
    }
    if (starts_with(text, "MOVED") || starts_with(text, "ASK") || starts_with(text, "CLUSTERDOWN")) {
      return result(TierCode::kError,
                    name + ": a Redis Cluster node; cluster mode is not supported (list the nodes as shards)");
    }
    return result(TierCode::kError, name + ": " + redis::printable(text));
  }

  // Connects to `server` and authenticates and selects the database (one round trip).
  TierResult open(Server& server, Deadline deadline, std::unique_ptr<RespConnection>* out) {
    const Deadline connect_deadline = std::min(deadline, Clock::now() + options_.connect_timeout);
    std::vector<redis::SocketAddress> addresses;
    if (IoResult found = server.resolver.addresses(connect_deadline, &addresses); !found.ok()) {
      return io_failure(server, found);
    }
    IoResult why;
    auto connection = RespConnection::connect(addresses, connect_deadline, &why);
    if (connection == nullptr) return io_failure(server, why);
    const std::string db = std::to_string(config_.db);
    std::vector<std::string_view> auth{"AUTH"};
    if (!config_.user.empty()) auth.push_back(config_.user);
    auth.push_back(config_.password);
    const std::array<std::string_view, 2> select{"SELECT", db};
    const bool send_auth = !config_.password.empty();
    const bool send_select = config_.db != 0;
    if (send_auth) {
      if (IoResult sent = connection->send(auth, deadline); !sent.ok()) return io_failure(server, sent);
    }
    if (send_select) {
      if (IoResult sent = connection->send(select, deadline); !sent.ok()) return io_failure(server, sent);
    }
    Reply reply;
    if (send_auth) {
      if (IoResult read = connection->read_reply(&reply, kSmallReply, deadline); !read.ok())
        return io_failure(server, read);
      if (reply.kind != Reply::Kind::kStatus) {
        // The server's words are not repeated: an old server's "unknown command" would echo the password.
        if (reply.kind == Reply::Kind::kError &&
            reply.text.find("without any password configured") != std::string::npos) {
          return result(TierCode::kRefused, "wrong password for " + server.spec.display + " (it has none)");
        }
        return result(TierCode::kRefused, "wrong password for " + server.spec.display);
      }
    }
    if (send_select) {
      if (IoResult read = connection->read_reply(&reply, kSmallReply, deadline); !read.ok())
        return io_failure(server, read);
      if (reply.kind == Reply::Kind::kError && starts_with(reply.text, "ERR DB index")) {
        return result(TierCode::kRefused, server.spec.display + ": database " + db + " does not exist");
      }
      if (reply.kind != Reply::Kind::kStatus) return unexpected(server, reply);
    }
    *out = std::move(connection);
    return result(TierCode::kOk);
  }

  // Runs `exchange` on a connection to `server`: a pooled one, else a new one. The connection goes
  // back to the pool only when the exchange read complete replies. With `retry_on_fresh`, an
  // exchange that failed on a pooled connection (closed by the server while idle) runs once more
  // on a new connection. Returns kOk, or the failure of connecting or of the exchange.
  template <typename Exchange>
  TierResult run(Server& server, Deadline deadline, bool retry_on_fresh, Exchange&& exchange) {
    if (Clock::now() >= deadline) return result(TierCode::kTimeout, server.spec.display + ": no time left");
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<RespConnection> connection = server.pool.take();
      while (connection != nullptr && connection->stale()) connection = server.pool.take();
      const bool pooled = connection != nullptr;
      if (!pooled) {
        if (TierResult opened = open(server, deadline, &connection); !opened.ok()) return opened;
      }
      const IoResult io = exchange(*connection);
      if (io.ok()) {
        server.pool.give_back(std::move(connection));
        return result(TierCode::kOk);
      }
      connection.reset();
      if (pooled && retry_on_fresh && attempt == 0 && io.code == IoCode::kError && Clock::now() < deadline) continue;
      return io_failure(server, io);
    }
  }

  // Sends `args` and expects +OK.
  TierResult expect_ok(Server& server, std::span<const std::string_view> args, Deadline deadline, bool retry_on_fresh) {
    TierResult outcome;
    const TierResult io = run(server, deadline, retry_on_fresh, [&](RespConnection& connection) {
      Reply reply;
      IoResult done = connection.command(args, &reply, kSmallReply, deadline);
      if (done.ok()) {
        outcome = reply.kind == Reply::Kind::kStatus && reply.text == "OK" ? result(TierCode::kOk)
                                                                           : unexpected(server, reply);
      }
      return done;
    });
    return io.ok() ? outcome : io;
  }

  // PING, and when writable a SET / GET / DEL of a probe key, with round-trip times.
  TierResult check_server(Server& server, Deadline deadline) {
    const std::string& name = server.spec.display;
    const auto start = Clock::now();
    TierResult pinged;
    const std::array<std::string_view, 1> ping{"PING"};
    const TierResult io = run(server, deadline, true, [&](RespConnection& connection) {
      Reply reply;
      IoResult done = connection.command(ping, &reply, kSmallReply, deadline);
      if (done.ok()) {
        pinged = reply.kind == Reply::Kind::kStatus && reply.text == "PONG" ? result(TierCode::kOk)
                                                                            : unexpected(server, reply);
      }
      return done;
    });
    if (!io.ok()) return io;
    if (!pinged.ok()) return pinged;
    const auto ping_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    std::string detail = name + ": PONG in " + std::to_string(ping_us) + " us";
    if (!writable()) return result(TierCode::kOk, detail + ", read-only");

    std::random_device random;
    const std::string probe_key =
        options_.prefix + ":v1:probe:" + std::to_string(getpid()) + "-" + std::to_string(random());
    const std::string probe_value = "nvrtc-cache probe " + std::to_string(random());
    const std::string ttl = std::to_string(kProbeTtl.count());
    const auto write_start = Clock::now();
    const std::array<std::string_view, 5> set_probe{"SET", probe_key, probe_value, "PX", ttl};
    if (TierResult stored = expect_ok(server, set_probe, deadline, true); !stored.ok()) return stored;
    TierResult read_back;
    const std::array<std::string_view, 2> get_probe{"GET", probe_key};
    const std::array<std::string_view, 2> delete_probe{"DEL", probe_key};
    const TierResult exchanged = run(server, deadline, true, [&](RespConnection& connection) {
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
  std::vector<redis::ShardWeight> weights_;  // names point into servers_' specs
};

}  // namespace

std::unique_ptr<Tier> make_redis_tier(const TierUrl& url, const TierOptions& options, std::string* problem) {
  const platform::ErrnoGuard errno_guard;
  std::optional<redis::RedisConfig> config = redis::redis_config(url, problem);
  if (!config) return nullptr;
  return std::make_unique<RedisTier>(std::move(*config), options, redis::redis_display_name(url));
}

}  // namespace nvrtc_cache::store::remote
