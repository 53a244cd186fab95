// ConnectionPool: a few idle connections to one server, kept for reuse between operations (the
// Redis tier's RespConnection, the HTTP tier's HttpConnection: any type with owner_pid()).
// Contract (threads): lock-free — take() and give_back() exchange pointers in a small array of
// atomic slots, so a connection is used by one thread at a time and no lock exists that a fork
// could inherit held. Contract (fork): a connection records the pid that opened it; take() in a
// child finds the parent's idle connections and closes the child's copies of their descriptors
// (which leaves the parent's connections untouched), so a child always connects anew. Connections
// that other threads had taken out at the moment of the fork stay with those threads' (absent)
// stacks in the child: never used, their descriptors are reclaimed when the child exits or execs
// (they are close-on-exec).
#pragma once

#include <unistd.h>

#include <array>
#include <atomic>
#include <memory>

namespace nvrtc_cache::store::remote::net {

template <typename Connection>
class ConnectionPool {
 public:
  ConnectionPool() = default;
  ~ConnectionPool() {
    for (auto& slot : slots_) delete slot.exchange(nullptr);
  }
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // An idle connection this process opened, or nullptr.
  std::unique_ptr<Connection> take() {
    const pid_t self = getpid();
    for (auto& slot : slots_) {
      if (slot.load(std::memory_order_relaxed) == nullptr) continue;
      std::unique_ptr<Connection> connection(slot.exchange(nullptr, std::memory_order_acquire));
      if (connection == nullptr) continue;
      if (connection->owner_pid() != self) continue;  // a parent's: destroyed here, which closes only our copy
      return connection;
    }
    return nullptr;
  }

  // Keeps `connection` for the next take() if a slot is free (else closes it).
  void give_back(std::unique_ptr<Connection> connection) {
    if (connection == nullptr || connection->owner_pid() != getpid()) return;
    for (auto& slot : slots_) {
      Connection* expected = nullptr;
      if (slot.compare_exchange_strong(expected, connection.get(), std::memory_order_release,
                                       std::memory_order_relaxed)) {
        (void)connection.release();
        return;
      }
    }
  }

 private:
  static constexpr std::size_t kSlots = 8;
  std::array<std::atomic<Connection*>, kSlots> slots_{};
};

}  // namespace nvrtc_cache::store::remote::net
