// GET and SET round trips against a running redis-server, through the Redis tier's own RESP client
// and, for comparison, through hiredis 0.14 (blocking redisCommand with %b arguments), over TCP and
// a unix socket, for 1 KiB and 1 MiB values. scripts/bench_suite.py (its redis section) starts a server and
// runs it.
// Usage: redis_round_trip PORT SOCKET_PATH PASSWORD [ITERATIONS]
#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "store/remote/tier.h"

namespace {

using nvrtc_cache::store::remote::Clock;
using nvrtc_cache::store::remote::TierCode;

struct Stats {
  double min_us;
  double median_us;
  double p90_us;
};

Stats measure(int iterations, const std::function<bool()>& once) {
  std::vector<double> samples;
  for (int i = 0; i < iterations + 5; ++i) {
    const auto start = Clock::now();
    if (!once()) {
      std::fprintf(stderr, "operation failed\n");
      std::exit(1);
    }
    if (i >= 5) samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(samples.begin(), samples.end());
  return {samples.front(), samples[samples.size() / 2], samples[samples.size() * 9 / 10]};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s PORT SOCKET_PATH PASSWORD [ITERATIONS]\n", argv[0]);
    return 2;
  }
  const auto port = static_cast<std::uint16_t>(std::atoi(argv[1]));
  const std::string socket_path = argv[2];
  const std::string password = argv[3];
  const int iterations = argc > 4 ? std::atoi(argv[4]) : 200;

  std::printf("%-10s %-8s %-8s %-4s %10s %10s %10s\n", "client", "socket", "value", "op", "min_us", "median_us",
              "p90_us");
  for (const bool over_unix : {false, true}) {
    nvrtc_cache::store::remote::TierUrl url;
    url.password = password;
    if (over_unix) {
      url.scheme = "redis+unix";
      url.path = socket_path;
    } else {
      url.scheme = "redis";
      url.host = "127.0.0.1";
      url.port = port;
    }
    std::string problem;
    auto tier = nvrtc_cache::store::remote::make_redis_tier(url, {}, &problem);
    if (!tier) {
      std::fprintf(stderr, "%s\n", problem.c_str());
      return 1;
    }
    redisContext* context = over_unix ? redisConnectUnix(socket_path.c_str()) : redisConnect("127.0.0.1", port);
    if (context == nullptr || context->err) {
      std::fprintf(stderr, "hiredis cannot connect\n");
      return 1;
    }
    redisReply* auth = static_cast<redisReply*>(redisCommand(context, "AUTH %s", password.c_str()));
    if (auth == nullptr || auth->type != REDIS_REPLY_STATUS) return 1;
    freeReplyObject(auth);

    for (const std::size_t size : {std::size_t{1024}, std::size_t{1} << 20}) {
      const std::string value(size, 'v');
      const std::string key = "bench-" + std::to_string(size);
      const std::string hiredis_key = "nvrtc-cache:v1:hiredis-" + std::to_string(size);
      const char* socket_name = over_unix ? "unix" : "tcp";
      const char* size_name = size == 1024 ? "1KiB" : "1MiB";
      auto report = [&](const char* client, const char* op, Stats stats) {
        std::printf("%-10s %-8s %-8s %-4s %10.1f %10.1f %10.1f\n", client, socket_name, size_name, op, stats.min_us,
                    stats.median_us, stats.p90_us);
      };
      report("tier", "SET", measure(iterations, [&] {
               return tier->put(key, value, Clock::now() + std::chrono::seconds(5)).code == TierCode::kOk;
             }));
      report("tier", "GET", measure(iterations, [&] {
               const auto got = tier->get(key, Clock::now() + std::chrono::seconds(5));
               return got.code == TierCode::kOk && got.value.size() == size;
             }));
      report("hiredis", "SET", measure(iterations, [&] {
               auto* reply = static_cast<redisReply*>(redisCommand(context, "SET %b %b", hiredis_key.data(),
                                                                   hiredis_key.size(), value.data(), value.size()));
               const bool ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
               if (reply) freeReplyObject(reply);
               return ok;
             }));
      report("hiredis", "GET", measure(iterations, [&] {
               auto* reply =
                   static_cast<redisReply*>(redisCommand(context, "GET %b", hiredis_key.data(), hiredis_key.size()));
               bool ok = reply != nullptr && reply->type == REDIS_REPLY_STRING && reply->len == size;
               if (ok) {  // what a caller does with the bytes: keep them in its own string
                 std::string copy(reply->str, reply->len);
                 ok = copy.size() == size;
               }
               if (reply) freeReplyObject(reply);
               return ok;
             }));
    }
    redisFree(context);
  }
  return 0;
}
