#include "store/remote/redis/connection_pool.h"

#include <unistd.h>

namespace nvrtc_cache::store::remote::redis {

ConnectionPool::~ConnectionPool() {
  for (auto& slot : slots_) delete slot.exchange(nullptr);
}

std::unique_ptr<RespConnection> ConnectionPool::take() {
  const pid_t self = getpid();
  for (auto& slot : slots_) {
    if (slot.load(std::memory_order_relaxed) == nullptr) continue;
    std::unique_ptr<RespConnection> connection(slot.exchange(nullptr, std::memory_order_acquire));
    if (connection == nullptr) continue;
    if (connection->owner_pid() != self) continue;  // a parent's: destroyed here, which closes only our copy
    return connection;
  }
  return nullptr;
}

void ConnectionPool::give_back(std::unique_ptr<RespConnection> connection) {
  if (connection == nullptr || connection->owner_pid() != getpid()) return;
  for (auto& slot : slots_) {
    RespConnection* expected = nullptr;
    if (slot.compare_exchange_strong(expected, connection.get(), std::memory_order_release,
                                     std::memory_order_relaxed)) {
      (void)connection.release();
      return;
    }
  }
}

}  // namespace nvrtc_cache::store::remote::redis
