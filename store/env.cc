#include "store/env.h"

#include <atomic>

#include "platform/fork_locks.h"

namespace nvrtc_cache::store {
namespace {

class SystemEnv final : public Env {
 public:
  std::int64_t now_seconds() override { return platform::Env::system()->now_seconds(); }
};

}  // namespace

Env* Env::system() {
  // Published lock-free (no static guard a forked child could inherit in progress); leaked.
  static constinit std::atomic<SystemEnv*> env{nullptr};
  return platform::publish_once(env, [] { return new SystemEnv(); });
}

}  // namespace nvrtc_cache::store
