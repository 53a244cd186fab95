#include "store/remote/net/address_resolver.h"

#include <unistd.h>

#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <thread>

#include "platform/fork_locks.h"
#include "platform/socket.h"

namespace nvrtc_cache::store::remote::net {

struct AddressResolver::Lookup {
  enum class State { kRunning, kFound, kFailed };
  State state = State::kRunning;
  pid_t pid = 0;  // the process whose helper thread runs it
  std::vector<SocketAddress> addresses;
  std::string error;
};

namespace {

// The lock and wake-up every resolver of the process shares (fork rank kResolvers).
class ResolverLock {
 public:
  std::mutex mu;
  std::condition_variable answered;

  void lock_for_fork() { mu.lock(); }
  void unlock_in_parent() { mu.unlock(); }
  void renew_in_child() {
    platform::renew_in_child(mu);
    std::construct_at(&answered);
  }
};

ResolverLock& resolver_lock() {
  static ResolverLock* instance = new ResolverLock;  // leaked; created at load
  return *instance;
}
__attribute__((constructor)) void register_resolver_lock() {
  platform::join_fork_order_of<&resolver_lock>(platform::ForkRank::kResolvers);
}

// getaddrinfo's answer: the addresses, or the error (flags: AI_NUMERICHOST for a lookup-free try).
bool resolve(const std::string& host, std::uint16_t port, int flags, std::vector<SocketAddress>* out,
             std::string* error) {
  if (const int started = platform::socket_startup(); started != 0) {
    *error = "cannot resolve " + host + ": " + platform::socket_error_text(started);
    return false;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | flags;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    *error = "cannot resolve " + host + ": " + gai_strerror(rc);
    return false;
  }
  for (const addrinfo* info = found; info != nullptr; info = info->ai_next) {
    if (info->ai_addrlen > sizeof(sockaddr_storage)) continue;
    SocketAddress address;
    std::memcpy(&address.storage, info->ai_addr, info->ai_addrlen);
    address.length = static_cast<socklen_t>(info->ai_addrlen);
    out->push_back(address);
  }
  freeaddrinfo(found);
  if (out->empty()) *error = host + " has no address";
  return !out->empty();
}

}  // namespace

AddressResolver::AddressResolver(std::string host, std::uint16_t port, std::string socket_path)
    : host_(std::move(host)), port_(port) {
  if (!socket_path.empty()) {
    SocketAddress address;
    // The URL parser checked the path's length (and refused it where there are no unix sockets).
    if (platform::unix_socket_address(socket_path, &address.storage, &address.length)) fixed_.push_back(address);
    return;
  }
  std::string numeric_error;
  (void)resolve(host_, port_, AI_NUMERICHOST, &fixed_, &numeric_error);  // an IP address never waits
}

AddressResolver::~AddressResolver() = default;  // a lookup in flight keeps its own Lookup alive

IoResult AddressResolver::addresses(Deadline deadline, std::vector<SocketAddress>* out) {
  if (!fixed_.empty()) {
    *out = fixed_;
    return {};
  }
  ResolverLock& shared = resolver_lock();
  std::unique_lock lock(shared.mu);
  const pid_t pid = ::getpid();
  const bool orphaned = lookup_ && lookup_->state == Lookup::State::kRunning && lookup_->pid != pid;
  if (!lookup_ || lookup_->state == Lookup::State::kFailed || orphaned) {
    auto lookup = std::make_shared<Lookup>();
    lookup->pid = pid;
    try {
      std::thread([lookup, host = host_, port = port_] {
        std::vector<SocketAddress> found;
        std::string error;
        const bool ok = resolve(host, port, 0, &found, &error);
        ResolverLock& shared_lock = resolver_lock();
        std::lock_guard published(shared_lock.mu);
        lookup->addresses = std::move(found);
        lookup->error = std::move(error);
        lookup->state = ok ? Lookup::State::kFound : Lookup::State::kFailed;
        shared_lock.answered.notify_all();
      }).detach();
    } catch (...) {
      return {IoCode::kError, "cannot start a lookup of " + host_};
    }
    lookup_ = std::move(lookup);
  }
  const std::shared_ptr<Lookup> lookup = lookup_;
  shared.answered.wait_until(lock, deadline, [&] { return lookup->state != Lookup::State::kRunning; });
  switch (lookup->state) {
    case Lookup::State::kFound:
      *out = lookup->addresses;
      return {};
    case Lookup::State::kFailed:
      return {IoCode::kError, lookup->error};
    case Lookup::State::kRunning:
      break;
  }
  return {IoCode::kTimeout, "looking up " + host_ + " took longer than the timeout"};
}

}  // namespace nvrtc_cache::store::remote::net
