#include "store/remote/redis/redis_connector.h"

#include <array>
#include <vector>

#include "platform/fork_locks.h"

namespace nvrtc_cache::store::remote::redis {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

}  // namespace

RedisConnector::RedisConnector(const RedisConfig& config, const TierOptions& options)
    : user_(config.user),
      password_(config.password),
      db_(config.db),
      tls_(config.tls),
      tls_settings_(config.tls_settings),
      connect_timeout_(options.connect_timeout) {}

RedisConnector::~RedisConnector() { delete tls_setup_.load(); }

const RedisConnector::TlsSetup& RedisConnector::tls_setup() {
  return *platform::publish_once(tls_setup_, [this] {
    auto* setup = new TlsSetup;
    setup->context = net::make_tls_context(tls_settings_, &setup->problem);
    return setup;
  });
}

TierResult RedisConnector::io_failure(const ServerNode& server, const IoResult& io) {
  return result(io.code == IoCode::kTimeout ? TierCode::kTimeout : TierCode::kError,
                server.spec.display + ": " + io.detail);
}

TierResult RedisConnector::unexpected(const ServerNode& server, const Reply& reply) {
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
    return result(TierCode::kRefused, name + ": not permitted for this user (" + printable(text) + ")");
  }
  if (starts_with(text, "MOVED") || starts_with(text, "ASK")) {
    return result(TierCode::kError, name + ": a Redis Cluster node: use redis+cluster://");
  }
  return result(TierCode::kError, name + ": " + printable(text));
}

TierResult RedisConnector::open(ServerNode& server, Deadline deadline, std::unique_ptr<RespConnection>* out) {
  const Deadline connect_deadline = std::min(deadline, Clock::now() + connect_timeout_);
  std::vector<SocketAddress> addresses;
  if (IoResult found = server.resolver.addresses(connect_deadline, &addresses); !found.ok()) {
    return io_failure(server, found);
  }
  IoResult why;
  auto connection = RespConnection::connect(addresses, connect_deadline, &why);
  if (connection == nullptr) return io_failure(server, why);
  if (tls_) {
    const TlsSetup& tls = tls_setup();
    if (tls.context == nullptr) return result(TierCode::kError, server.spec.display + ": " + tls.problem);
    // The handshake shares the operation's deadline with the commands: it costs CPU on both ends (a
    // busy node's handshake can take longer than a TCP connect's connect-timeout), and a frozen
    // server costs one `timeout` either way.
    if (IoResult secured = connection->start_tls(tls.context, server.spec.host, deadline); !secured.ok())
      return io_failure(server, secured);
  }
  const std::string db = std::to_string(db_);
  std::vector<std::string_view> auth{"AUTH"};
  if (!user_.empty()) auth.push_back(user_);
  auth.push_back(password_);
  const std::array<std::string_view, 2> select{"SELECT", db};
  const bool send_auth = !password_.empty();
  const bool send_select = db_ != 0;
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

}  // namespace nvrtc_cache::store::remote::redis
