// ConnectionPool: a few idle connections to one server, kept for reuse between operations.
// Contract (threads): lock-free — take() and give_back() exchange pointers in a small array of
// atomic slots, so a connection is used by one thread at a time and no lock exists that a fork
// could inherit held. Contract (fork): a connection records the pid that opened it; take() in a
// child finds the parent's idle connections and closes the child's copies of their descriptors
// (which leaves the parent's connections untouched), so a child always connects anew. Connections
// that other threads had taken out at the moment of the fork stay with those threads' (absent)
// stacks in the child: never used, their descriptors are reclaimed when the child exits or execs
// (they are close-on-exec).
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include "store/remote/redis/resp_connection.h"

namespace nvrtc_cache::store::remote::redis {

class ConnectionPool {
 public:
  ConnectionPool() = default;
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // An idle connection this process opened, or nullptr.
  std::unique_ptr<RespConnection> take();
  // Keeps `connection` for the next take() if a slot is free (else closes it).
  void give_back(std::unique_ptr<RespConnection> connection);

 private:
  static constexpr std::size_t kSlots = 8;
  std::array<std::atomic<RespConnection*>, kSlots> slots_{};
};

}  // namespace nvrtc_cache::store::remote::redis
