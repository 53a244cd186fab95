#include "shim/file_watch.h"

#include "shim/real_nvrtc.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#define NVRTC_CACHE_EXPORT extern "C" __attribute__((visibility("default")))

extern char** environ;

namespace nvrtc_cache::shim {

struct CompileWatch::Buffer {
  static constexpr std::size_t kTextBytes = 256 * 1024;
  static constexpr std::size_t kMaxEvents = 8192;
  struct Stored {
    WatchEventKind kind;
    bool succeeded;
    bool for_writing;
    std::uint32_t subject_offset, subject_size, value_offset, value_size;
    const void* caller;
  };
  std::array<char, kTextBytes> text;
  std::array<Stored, kMaxEvents> events;
  std::size_t text_used = 0;
  std::size_t event_count = 0;
  bool tainted = false;
  bool busy = false;  // reentrancy guard (a signal handler calling libc mid-record)

  bool append_text(std::string_view s, std::uint32_t& offset, std::uint32_t& size) {
    if (s.size() > text.size() - text_used) return false;
    std::memcpy(text.data() + text_used, s.data(), s.size());
    offset = static_cast<std::uint32_t>(text_used);
    size = static_cast<std::uint32_t>(s.size());
    text_used += s.size();
    return true;
  }

  void record(WatchEventKind kind, bool succeeded, bool for_writing, const char* subject, std::string_view value,
              const void* caller) {
    if (busy) {
      tainted = true;
      return;
    }
    busy = true;
    Stored e{kind, succeeded, for_writing, 0, 0, 0, 0, caller};
    if (event_count == kMaxEvents || subject == nullptr ||
        !append_text(subject, e.subject_offset, e.subject_size) ||
        !append_text(value, e.value_offset, e.value_size)) {
      tainted = true;
    } else {
      events[event_count++] = e;
    }
    busy = false;
  }
};

namespace {

thread_local CompileWatch::Buffer* t_active = nullptr;

void note(WatchEventKind kind, bool succeeded, const char* subject, const void* caller,
          std::string_view value = {}, bool for_writing = false) {
  if (CompileWatch::Buffer* b = t_active) b->record(kind, succeeded, for_writing, subject, value, caller);
}

// Real libc functions, resolved once at load (single-threaded) and lazily if called earlier.
template <typename Fn>
Fn real(std::atomic<Fn>& slot, const char* name) {
  Fn fn = slot.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn>(real_dlsym(RTLD_NEXT, name));
    slot.store(fn, std::memory_order_release);
  }
  return fn;
}

using OpenFn = int (*)(const char*, int, ...);
using FopenFn = FILE* (*)(const char*, const char*);
using XstatFn = int (*)(int, const char*, struct stat*);
using StatFn = int (*)(const char*, struct stat*);
using Stat64Fn = int (*)(const char*, struct stat64*);
using Xstat64Fn = int (*)(int, const char*, struct stat64*);
using AccessFn = int (*)(const char*, int);
using RealpathFn = char* (*)(const char*, char*);
using OpendirFn = DIR* (*)(const char*);
using ReadlinkFn = ssize_t (*)(const char*, char*, size_t);
using GetenvFn = char* (*)(const char*);

#define NVRTC_CACHE_LIBC(X) \
  X(OpenFn, open) X(OpenFn, open64) X(FopenFn, fopen) X(FopenFn, fopen64) X(XstatFn, __xstat) \
  X(Xstat64Fn, __xstat64) X(XstatFn, __lxstat) X(Xstat64Fn, __lxstat64) X(StatFn, stat) X(Stat64Fn, stat64) \
  X(StatFn, lstat) X(Stat64Fn, lstat64) X(AccessFn, access) X(RealpathFn, realpath) X(OpendirFn, opendir) \
  X(ReadlinkFn, readlink) X(GetenvFn, getenv)

#define X(type, name) std::atomic<type> real_##name{nullptr};
NVRTC_CACHE_LIBC(X)
#undef X

__attribute__((constructor(101))) void resolve_libc() {
#define X(type, name) real(real_##name, #name);
  NVRTC_CACHE_LIBC(X)
#undef X
}

// getenv may be called before resolve_libc (other libraries' constructors) and from inside dlsym;
// until the real one is known, read environ exactly as glibc does.
char* scan_environment(const char* name) {
  if (name == nullptr || name[0] == '\0' || environ == nullptr) return nullptr;
  const std::size_t n = std::strlen(name);
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  }
  return nullptr;
}

bool opens_for_writing(int flags) { return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0; }
bool opens_for_writing(const char* mode) { return mode == nullptr || std::strpbrk(mode, "wa+") != nullptr; }

// The value a realpath/readlink call produced, for the dependency record.
std::string_view resolved(const char* result) { return result ? std::string_view(result) : std::string_view(); }
std::string_view resolved(const char* buffer, ssize_t n) {
  return n > 0 ? std::string_view(buffer, static_cast<std::size_t>(n)) : std::string_view();
}

bool mode_argument_present(int flags) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

}  // namespace

CompileWatch::CompileWatch() : buffer_(std::make_unique<Buffer>()) {
  if (t_active == nullptr) {
    t_active = buffer_.get();
    active_ = true;
  } else {
    buffer_->tainted = true;
  }
}

CompileWatch::~CompileWatch() { stop(); }

void CompileWatch::stop() {
  if (active_) {
    t_active = nullptr;
    active_ = false;
  }
}

bool CompileWatch::tainted() const { return buffer_->tainted; }
std::size_t CompileWatch::event_count() const { return buffer_->event_count; }
WatchEvent CompileWatch::event(std::size_t index) const {
  const Buffer::Stored& s = buffer_->events[index];
  const char* text = buffer_->text.data();
  return {{s.kind, s.succeeded, s.for_writing, {text + s.subject_offset, s.subject_size},
           {text + s.value_offset, s.value_size}},
          s.caller};
}

}  // namespace nvrtc_cache::shim

using namespace nvrtc_cache::shim;

// ---- interposed libc entry points: call the real one, then note the outcome, errno preserved ----

#define NVRTC_CACHE_OPEN_HOOK(name)                                                 \
  NVRTC_CACHE_EXPORT int name(const char* path, int flags, ...) {                   \
    mode_t mode = 0;                                                                \
    if (mode_argument_present(flags)) {                                             \
      va_list ap;                                                                   \
      va_start(ap, flags);                                                          \
      mode = static_cast<mode_t>(va_arg(ap, int));                                  \
      va_end(ap);                                                                   \
    }                                                                               \
    const int fd = real(real_##name, #name)(path, flags, mode);                     \
    if (t_active) {                                                                 \
      const int saved = errno;                                                      \
      note(WatchEventKind::kOpen, fd >= 0, path, __builtin_return_address(0), {},  \
           opens_for_writing(flags));                                               \
      errno = saved;                                                                \
    }                                                                               \
    return fd;                                                                      \
  }
NVRTC_CACHE_OPEN_HOOK(open)
NVRTC_CACHE_OPEN_HOOK(open64)

#define NVRTC_CACHE_PATH_HOOK_EX(ret, name, kind, ok, params, args, path, value, writing) \
  NVRTC_CACHE_EXPORT ret name params {                                                   \
    ret result = real(real_##name, #name) args;                                          \
    if (t_active) {                                                                      \
      const int saved = errno;                                                           \
      note(kind, ok, path, __builtin_return_address(0), value, writing);                 \
      errno = saved;                                                                     \
    }                                                                                    \
    return result;                                                                       \
  }
#define NVRTC_CACHE_PATH_HOOK(ret, name, kind, ok, params, args, path) \
  NVRTC_CACHE_PATH_HOOK_EX(ret, name, kind, ok, params, args, path, std::string_view(), false)
NVRTC_CACHE_PATH_HOOK_EX(FILE*, fopen, WatchEventKind::kOpen, result != nullptr, (const char* p, const char* m), (p, m),
                         p, std::string_view(), opens_for_writing(m))
NVRTC_CACHE_PATH_HOOK_EX(FILE*, fopen64, WatchEventKind::kOpen, result != nullptr, (const char* p, const char* m),
                         (p, m), p, std::string_view(), opens_for_writing(m))
NVRTC_CACHE_PATH_HOOK(int, __xstat, WatchEventKind::kStat, result == 0, (int v, const char* p, struct stat* s), (v, p, s), p)
NVRTC_CACHE_PATH_HOOK(int, __xstat64, WatchEventKind::kStat, result == 0, (int v, const char* p, struct stat64* s), (v, p, s), p)
NVRTC_CACHE_PATH_HOOK(int, __lxstat, WatchEventKind::kStat, result == 0, (int v, const char* p, struct stat* s), (v, p, s), p)
NVRTC_CACHE_PATH_HOOK(int, __lxstat64, WatchEventKind::kStat, result == 0, (int v, const char* p, struct stat64* s), (v, p, s), p)
NVRTC_CACHE_PATH_HOOK(int, stat, WatchEventKind::kStat, result == 0, (const char* p, struct stat* s), (p, s), p)
NVRTC_CACHE_PATH_HOOK(int, stat64, WatchEventKind::kStat, result == 0, (const char* p, struct stat64* s), (p, s), p)
NVRTC_CACHE_PATH_HOOK(int, lstat, WatchEventKind::kStat, result == 0, (const char* p, struct stat* s), (p, s), p)
NVRTC_CACHE_PATH_HOOK(int, lstat64, WatchEventKind::kStat, result == 0, (const char* p, struct stat64* s), (p, s), p)
NVRTC_CACHE_PATH_HOOK(int, access, WatchEventKind::kAccess, result == 0, (const char* p, int m), (p, m), p)
NVRTC_CACHE_PATH_HOOK_EX(char*, realpath, WatchEventKind::kRealpath, result != nullptr, (const char* p, char* r), (p, r),
                         p, resolved(result), false)
NVRTC_CACHE_PATH_HOOK(DIR*, opendir, WatchEventKind::kOpendir, result != nullptr, (const char* p), (p), p)
NVRTC_CACHE_PATH_HOOK_EX(ssize_t, readlink, WatchEventKind::kReadlink, result >= 0, (const char* p, char* b, size_t n),
                         (p, b, n), p, resolved(b, result), false)

NVRTC_CACHE_EXPORT char* getenv(const char* name) {
  GetenvFn fn = real_getenv.load(std::memory_order_acquire);
  char* value = fn ? fn(name) : scan_environment(name);
  if (t_active) {
    const int saved = errno;
    note(WatchEventKind::kGetenv, value != nullptr, name, __builtin_return_address(0), resolved(value));
    errno = saved;
  }
  return value;
}
