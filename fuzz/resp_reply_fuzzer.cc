// The Redis tier's RESP2 reply reader (RespConnection::read_reply) on hostile bytes, as a broken or
// malicious server would send them: the first input byte picks the bulk cap (2^(b % 24) bytes), the
// rest is what the "server" wrote before closing the connection (a socketpair; inputs are capped at
// the socket's buffer so one write delivers them whole). Replies are read until one fails: each must
// respect the cap, and there can never be more replies than the input has lines.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "fuzz/fuzz_support.h"
#include "store/remote/redis/resp_connection.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache::store::remote::redis;
  if (size == 0) return 0;
  const std::uint64_t cap = std::uint64_t{1} << (data[0] % 24);
  const std::string_view sent = nvrtc_cache::fuzz::as_view(data + 1, std::min<std::size_t>(size - 1, 64 * 1024));
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends) != 0) return 0;
  int buffer = 256 * 1024;
  (void)setsockopt(ends[0], SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
  const ssize_t written = sent.empty() ? 0 : write(ends[0], sent.data(), sent.size());
  close(ends[0]);
  if (written != static_cast<ssize_t>(sent.size())) {
    close(ends[1]);
    return 0;  // the buffer took less than the input: nothing to learn from a partial delivery
  }
  auto connection = RespConnection::adopt(ends[1]);
  const std::size_t lines = static_cast<std::size_t>(std::count(sent.begin(), sent.end(), '\n'));
  std::size_t replies = 0;
  for (;;) {
    Reply reply;
    const IoResult got = connection->read_reply(&reply, cap, Clock::now() + std::chrono::seconds(5));
    // The peer is closed: running out of bytes is an error, never a wait until the deadline.
    NVRTC_CACHE_FUZZ_CHECK(got.code != IoCode::kTimeout);
    if (!got.ok()) break;
    ++replies;
    NVRTC_CACHE_FUZZ_CHECK(replies <= lines);
    if (reply.kind == Reply::Kind::kBulk) NVRTC_CACHE_FUZZ_CHECK(reply.text.size() <= cap);
    if (reply.kind == Reply::Kind::kStatus || reply.kind == Reply::Kind::kError) {
      NVRTC_CACHE_FUZZ_CHECK(reply.text.find("\r\n") == std::string::npos);  // one line, framing intact
    }
  }
  return 0;
}
