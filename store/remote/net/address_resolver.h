// AddressResolver: a shared tier server's socket addresses, found within the deadline of the operation
// that needs them. A unix socket path or a numeric address is converted at once (no lookup); a host
// name is looked up by getaddrinfo on a helper thread, and the operation waits for the answer at
// most until its own deadline (connect-timeout), so a slow or dead DNS costs a compile no more than
// an unreachable server does. A lookup that outlives its caller keeps going and the next operation
// finds its answer; a failed one is started again by the next operation that asks (the tier's
// breaker spaces those out). A found address list is kept for the life of the process.
// Contract (threads): thread-safe; every resolver of the process shares one lock, rank
// platform::ForkRank::kResolvers (held only to read or publish a lookup's state, never during one).
// Contract (fork): a child whose parent had a lookup in flight starts its own when asked (the
// helper thread exists only in the parent). Never throws (allocation failure aside); errno is not
// preserved here (the tier restores it).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "store/remote/net/stream.h"

namespace nvrtc_cache::store::remote::net {

class AddressResolver {
 public:
  // host:port over TCP, or a unix socket path (then host is ignored).
  AddressResolver(std::string host, std::uint16_t port, std::string socket_path);
  ~AddressResolver();
  AddressResolver(const AddressResolver&) = delete;
  AddressResolver& operator=(const AddressResolver&) = delete;

  // The server's addresses in *out; kTimeout when the lookup has not answered by `deadline`, kError
  // when it failed (the detail says why, e.g. "cannot resolve cache.lan: Name or service not known").
  IoResult addresses(Deadline deadline, std::vector<SocketAddress>* out);

  struct Lookup;  // one getaddrinfo, shared with its helper thread

 private:
  std::string host_;
  std::uint16_t port_;
  std::vector<SocketAddress> fixed_;  // a socket path or numeric address: known without a lookup
  std::shared_ptr<Lookup> lookup_;    // guarded by the process-wide resolver lock
};

}  // namespace nvrtc_cache::store::remote::net
