#include "store/remote/net/tls_library.h"

#include <dlfcn.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "platform/errno_guard.h"
#include "platform/fork_locks.h"

namespace nvrtc_cache::store::remote::net {
namespace {

struct Loaded {
  TlsLibrary library;
  bool ok = false;
  std::string error;

  Loaded() = default;
  Loaded(Loaded&& other) noexcept : library(other.library), ok(other.ok), error(std::move(other.error)) {
    other.library.socket_method = nullptr;
  }
  Loaded& operator=(Loaded&&) = delete;
  // The published one lives until exit; one made by a thread that lost the race to publish it
  // (platform::publish_once deletes it) frees its BIO method.
  ~Loaded() {
    if (library.socket_method != nullptr && library.BIO_meth_free != nullptr)
      library.BIO_meth_free(library.socket_method);
  }
};

std::atomic<Loaded*> g_loaded{nullptr};
std::atomic<bool> g_requested{false};
std::atomic<bool> g_closed{false};  // OpenSSL's cleanup has begun
std::atomic<int> g_in_use{0};       // TlsUse objects alive

// Run by OPENSSL_cleanup() (a host's atexit handler, or an explicit call) before it tears down.
void on_openssl_cleanup() {
  g_closed.store(true, std::memory_order_seq_cst);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (g_in_use.load(std::memory_order_seq_cst) > 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

const TlsLibrary& loaded_library();

int bio_write(BIO* bio, const char* data, int length) {
  const TlsLibrary& ssl = loaded_library();
  auto* state = static_cast<SocketBio*>(ssl.BIO_get_data(bio));
  ssl.BIO_clear_flags(bio, BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY);
  if (std::chrono::steady_clock::now() >= state->deadline) {
    state->want = POLLOUT;
    ssl.BIO_set_flags(bio, BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY);
    return -1;
  }
  for (;;) {
    const ssize_t sent = send(state->fd, data, static_cast<std::size_t>(length), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent >= 0) return static_cast<int>(sent);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      state->want = POLLOUT;
      ssl.BIO_set_flags(bio, BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY);
    } else {
      state->error = errno;
    }
    return -1;
  }
}

int bio_read(BIO* bio, char* data, int length) {
  const TlsLibrary& ssl = loaded_library();
  auto* state = static_cast<SocketBio*>(ssl.BIO_get_data(bio));
  ssl.BIO_clear_flags(bio, BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY);
  if (std::chrono::steady_clock::now() >= state->deadline) {
    state->want = POLLIN;
    ssl.BIO_set_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY);
    return -1;
  }
  for (;;) {
    const ssize_t got = recv(state->fd, data, static_cast<std::size_t>(length), MSG_DONTWAIT);
    if (got > 0) return static_cast<int>(got);
    if (got == 0) {
      state->eof = true;
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      state->want = POLLIN;
      ssl.BIO_set_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY);
    } else {
      state->error = errno;
    }
    return -1;
  }
}

long bio_ctrl(BIO*, int command, long, void*) { return command == BIO_CTRL_FLUSH ? 1 : 0; }

Loaded load() {
  Loaded loaded;
  void* handle = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    loaded.error = std::string("cannot load libssl.so.3 (OpenSSL 3) for TLS: ") + (why ? why : "unknown error");
    return loaded;
  }
  // dlsym on the handle searches libssl and its dependencies (libcrypto) only.
#define NVRTC_CACHE_TLS_RESOLVE(name)                                              \
  loaded.library.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (loaded.library.name == nullptr) {                                            \
    loaded.error = "libssl.so.3 lacks " #name;                                     \
    return loaded;                                                                 \
  }
  NVRTC_CACHE_TLS_FUNCTIONS(NVRTC_CACHE_TLS_RESOLVE)
#undef NVRTC_CACHE_TLS_RESOLVE
  const TlsLibrary& ssl = loaded.library;
  // No atexit handler of ours (the host's, if it initialised OpenSSL itself, stays as it was).
  if (ssl.OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS, nullptr) != 1) {
    loaded.error = "OpenSSL failed to initialise";
    return loaded;
  }
  (void)ssl.OPENSSL_atexit(on_openssl_cleanup);
  const int type = ssl.BIO_get_new_index();
  loaded.library.socket_method =
      type < 0 ? nullptr : ssl.BIO_meth_new(type | BIO_TYPE_SOURCE_SINK, "nvrtc-cache socket");
  if (loaded.library.socket_method == nullptr || ssl.BIO_meth_set_write(loaded.library.socket_method, bio_write) != 1 ||
      ssl.BIO_meth_set_read(loaded.library.socket_method, bio_read) != 1 ||
      ssl.BIO_meth_set_ctrl(loaded.library.socket_method, bio_ctrl) != 1) {
    loaded.error = "OpenSSL refused a BIO method";
    return loaded;
  }
  loaded.ok = true;
  return loaded;
}

// Only the BIO callbacks call this, and only OpenSSL calls them, after a successful load.
const TlsLibrary& loaded_library() { return g_loaded.load(std::memory_order_acquire)->library; }

}  // namespace

const TlsLibrary* tls_library(std::string* error) {
  g_requested.store(true, std::memory_order_relaxed);
  const Loaded* loaded = platform::publish_once(g_loaded, [] {
    const platform::ErrnoGuard errno_guard;
    return new Loaded(load());  // leaked: used until exit
  });
  if (!loaded->ok) {
    if (error) *error = loaded->error;
    return nullptr;
  }
  return &loaded->library;
}

TlsUse::TlsUse() {
  g_in_use.fetch_add(1, std::memory_order_seq_cst);
  ok_ = !g_closed.load(std::memory_order_seq_cst);
}

TlsUse::~TlsUse() { g_in_use.fetch_sub(1, std::memory_order_seq_cst); }

bool tls_library_requested() { return g_requested.load(std::memory_order_relaxed); }

}  // namespace nvrtc_cache::store::remote::net
