#include "store/remote/net/tls_attributes.h"
#include "store/remote/redis/redis_config.h"

#include <charconv>
#include <cstring>

#include "platform/socket.h"

namespace nvrtc_cache::store::remote::redis {
namespace {

constexpr std::uint16_t kDefaultPort = 6379;
constexpr unsigned kMaxDatabase = 1u << 20;  // Redis's `databases` is a small number; this only bounds the parse

bool parse_unsigned(std::string_view text, unsigned long long max, unsigned long long* value) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size() && *value <= max;
}

// "name" or "name(weight)".
bool parse_shard(std::string_view item, std::string* name, double* weight) {
  *weight = 1.0;
  if (const auto open = item.find('('); open != std::string_view::npos) {
    if (item.back() != ')') return false;
    const std::string_view number = item.substr(open + 1, item.size() - open - 2);
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), *weight);
    if (ec != std::errc() || end != number.data() + number.size() || !(*weight > 0) || *weight > 1e6) return false;
    item = item.substr(0, open);
  }
  if (item.empty()) return false;
  name->assign(item);
  return true;
}

// A host that may end in ":port" (or be "[v6]" / "[v6]:port") after shard substitution.
bool split_host_port(const std::string& text, std::string* host, std::uint16_t* port) {
  std::string_view rest = text;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) return false;
    host->assign(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (rest.empty()) return !host->empty();
    if (rest.front() != ':') return false;
    rest = rest.substr(1);
  } else {
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos || rest.find(':', colon + 1) != std::string_view::npos) {
      host->assign(rest);  // no port, or a bare IPv6 address
      return !host->empty();
    }
    host->assign(rest.substr(0, colon));
    rest = rest.substr(colon + 1);
  }
  unsigned long long value = 0;
  if (!parse_unsigned(rest, 65535, &value) || value == 0) return false;
  *port = static_cast<std::uint16_t>(value);
  return !host->empty();
}

std::string tcp_display(const std::string& scheme, const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// A cluster's seeds: the URL's host and seeds=HOST:PORT,... (port 6379 unless given).
template <typename Fail>
std::optional<RedisConfig> cluster_config(const TierUrl& url, RedisConfig config, Fail& fail) {
  if (config.db != 0) return fail("a Redis Cluster has only database 0");
  if (url.query.contains("shards")) return fail("a Redis Cluster shards itself (no shards=)");
  if (const auto it = url.query.find("read-from"); it != url.query.end()) {
    if (it->second != "replica" && it->second != "master")
      return fail("read-from='" + it->second + "' is not replica or master");
    config.read_from_replicas = it->second == "replica";
  }
  if (url.host.empty()) return fail("no host");
  std::vector<std::pair<std::string, std::uint16_t>> seeds{{url.host, url.port != 0 ? url.port : kDefaultPort}};
  if (const auto it = url.query.find("seeds"); it != url.query.end()) {
    std::string_view list = it->second;
    while (true) {
      const auto comma = list.find(',');
      std::string host;
      std::uint16_t port = kDefaultPort;
      if (!split_host_port(std::string(list.substr(0, comma)), &host, &port))
        return fail("malformed seeds list (HOST:PORT, comma-separated)");
      seeds.emplace_back(std::move(host), port);
      if (comma == std::string_view::npos) break;
      list = list.substr(comma + 1);
    }
  }
  const std::string scheme = config.tls ? "rediss+cluster" : "redis+cluster";
  for (auto& [host, port] : seeds) {
    ServerSpec seed;
    seed.host = std::move(host);
    seed.port = port;
    seed.display = tcp_display(scheme, seed.host, seed.port);
    config.servers.push_back(std::move(seed));
  }
  return config;
}

}  // namespace

bool is_redis_scheme(std::string_view scheme) {
  return scheme == "redis" || scheme == "rediss" || scheme == "redis+unix" || scheme == "redis+cluster" ||
         scheme == "rediss+cluster";
}

bool is_redis_attribute(std::string_view name) {
  if (name == "db" || name == "shards" || name == "seeds" || name == "read-from") return true;
  return net::is_tls_attribute(name);
}

std::optional<RedisConfig> redis_config(const TierUrl& url, std::string* problem) {
  const std::string name = url.display();
  auto fail = [&](const std::string& why) -> std::optional<RedisConfig> {
    *problem = name + ": " + why;
    return std::nullopt;
  };
  const bool unix_socket = url.scheme == "redis+unix";
  if (!unix_socket && !is_redis_scheme(url.scheme)) return fail("not a redis://, rediss:// or redis+unix:// URL");

  RedisConfig config;
  config.tls = url.scheme == "rediss" || url.scheme == "rediss+cluster";
  config.cluster = url.scheme == "redis+cluster" || url.scheme == "rediss+cluster";
  if (std::string tls_problem = net::read_tls_attributes(
          url.query, config.tls, "a rediss:// (or rediss+cluster://) URL", &config.tls_settings);
      !tls_problem.empty())
    return fail(tls_problem);
  config.user = url.user;
  config.password = url.password;
  if (!url.user.empty() && url.password.empty()) return fail("a user needs a password (redis://USER:PASSWORD@HOST)");

  // The database: "/N" after a TCP host, or ?db=N (either scheme); both must agree.
  std::optional<unsigned long long> db;
  if (!unix_socket && !url.path.empty() && url.path != "/") {
    unsigned long long value = 0;
    const std::string_view digits = std::string_view(url.path).substr(url.path.front() == '/' ? 1 : 0);
    if (!parse_unsigned(digits, kMaxDatabase, &value)) return fail("the path must be a database number (/0, /1, ...)");
    db = value;
  }
  if (const auto it = url.query.find("db"); it != url.query.end()) {
    unsigned long long value = 0;
    if (!parse_unsigned(it->second, kMaxDatabase, &value)) return fail("db must be a database number");
    if (db && *db != value) return fail("the database is given twice, differently");
    db = value;
  }
  config.db = static_cast<unsigned>(db.value_or(0));
  if (config.cluster) return cluster_config(url, std::move(config), fail);
  if (url.query.contains("read-from")) return fail("read-from= is for redis+cluster:// URLs");
  if (url.query.contains("seeds")) return fail("seeds= is for redis+cluster:// URLs");

  const std::string& pattern = unix_socket ? url.path : url.host;
  if (pattern.empty()) return fail(unix_socket ? "no socket path" : "no host");
  const auto star = pattern.find('*');
  const auto shards = url.query.find("shards");
  if ((star != std::string::npos) != (shards != url.query.end())) {
    return fail("shards need both a `*` in the " + std::string(unix_socket ? "socket path" : "host") +
                " and shards=NAME,NAME,...");
  }
  if (star != std::string::npos && pattern.find('*', star + 1) != std::string::npos) return fail("more than one `*`");

  std::vector<std::pair<std::string, double>> names;  // shard name, weight
  if (shards != url.query.end()) {
    std::string_view list = shards->second;
    while (true) {
      const auto comma = list.find(',');
      std::string shard;
      double weight = 1.0;
      if (!parse_shard(list.substr(0, comma), &shard, &weight))
        return fail("malformed shards list (NAME or NAME(WEIGHT), comma-separated)");
      for (const auto& [seen, unused] : names) {
        if (seen == shard) return fail("shard " + shard + " is listed twice");
      }
      names.emplace_back(std::move(shard), weight);
      if (comma == std::string_view::npos) break;
      list = list.substr(comma + 1);
    }
  } else {
    names.emplace_back(std::string(), 1.0);
  }

  for (const auto& [shard, weight] : names) {
    ServerSpec server;
    server.shard_name = shard;
    server.weight = weight;
    std::string substituted = pattern;
    if (star != std::string::npos) substituted.replace(star, 1, shard);
    if (unix_socket) {
      if (platform::unix_socket_path_max() == 0) return fail("unix sockets are not available on this system");
      if (substituted.front() != '/') return fail("the socket path must be absolute");
      if (substituted.size() >= platform::unix_socket_path_max()) return fail("the socket path is too long");
      server.socket_path = substituted;
      server.display = "redis+unix://" + substituted;
    } else {
      server.port = url.port != 0 ? url.port : kDefaultPort;
      if (star != std::string::npos && pattern == "*") {
        if (!split_host_port(substituted, &server.host, &server.port)) return fail("malformed shard address " + shard);
      } else {
        server.host = substituted;
      }
      server.display = tcp_display(url.scheme, server.host, server.port);
    }
    config.servers.push_back(std::move(server));
  }
  return config;
}

}  // namespace nvrtc_cache::store::remote::redis
