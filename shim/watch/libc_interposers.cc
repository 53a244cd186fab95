// The interposed libc entry points: each calls the real function, then tells the recorder
// (shim/watch/recorder.h) what NVRTC observed, errno preserved. The real functions are resolved at
// load; a call that arrives earlier is answered through libc's own symbol table (never dlsym).

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <utility>

#include "shim/interpose/export.h"
#include "shim/watch/libc_symbols.h"
#include "shim/watch/recorder.h"
#include "shim/watch/watched_functions.h"

extern char** environ;

namespace nvrtc_cache::shim::watch {
namespace {

// ---- the real libc functions ----

enum class Libc : unsigned {
#define NVRTC_CACHE_WATCHED(name, version) name,
#include "shim/watch/watched_libc.def"
#undef NVRTC_CACHE_WATCHED
  kCount
};

constexpr const char* kLibcNames[] = {
#define NVRTC_CACHE_WATCHED(name, version) #name,
#include "shim/watch/watched_libc.def"
#undef NVRTC_CACHE_WATCHED
};
constexpr const char* kLibcVersions[] = {
#define NVRTC_CACHE_WATCHED(name, version) #version,
#include "shim/watch/watched_libc.def"
#undef NVRTC_CACHE_WATCHED
};

std::array<std::atomic<void*>, static_cast<std::size_t>(Libc::kCount)> g_real{};

// The real function: resolved at load (below); a call that arrives before that (another library's
// constructor) finds it in libc's symbol table, which neither allocates nor calls dlsym.
template <typename Fn>
Fn real(Libc function) {
  const auto i = static_cast<std::size_t>(function);
  void* fn = g_real[i].load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = libc_function(kLibcNames[i], kLibcVersions[i]);
    if (fn != nullptr) g_real[i].store(fn, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(fn);
}

using DlsymFn = void* (*)(void*, const char*);

// Through the loader, RTLD_NEXT: the next definition after the shim (another interposer or libc).
// glibc's own dlsym, called by pointer, so the shim's dlsym hook is not involved and glibc sees this
// object as the caller.
__attribute__((constructor(101))) void resolve_libc_at_load() {
  const int saved_errno = errno;
  auto glibc_dlsym = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
  if (glibc_dlsym == nullptr) glibc_dlsym = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", kGlibcBaseline));
  for (std::size_t i = 0; i < g_real.size(); ++i) {
    void* fn = glibc_dlsym ? glibc_dlsym(RTLD_NEXT, kLibcNames[i]) : nullptr;
    if (fn == nullptr) fn = dlvsym(RTLD_NEXT, kLibcNames[i], kLibcVersions[i]);  // compat-only symbols
    if (fn == nullptr) fn = libc_function(kLibcNames[i], kLibcVersions[i]);
    if (fn != nullptr) g_real[i].store(fn, std::memory_order_release);
  }
  errno = saved_errno;
}

// getenv reads environ exactly as glibc does when the real one is not known yet (it is called from
// other libraries' constructors and from inside the loader's own lookups).
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
bool mode_argument_present(int flags) { return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE; }

std::size_t length_of(const char* s) { return s ? std::strlen(s) : 0; }
std::size_t length_of(ssize_t n) { return n > 0 ? static_cast<std::size_t>(n) : 0; }

// An fd-relative stat of the descriptor itself (fstat through *at): not a path observation.
bool stats_the_descriptor(const char* path, int flags) {
  return path != nullptr && path[0] == '\0' && (flags & AT_EMPTY_PATH) != 0;
}

}  // namespace
}  // namespace nvrtc_cache::shim::watch

using namespace nvrtc_cache::shim::watch;

// ---- interposed libc entry points: call the real one, then note the outcome, errno preserved ----

extern "C" {
int __open_2(const char*, int);
int __open64_2(const char*, int);
int __openat_2(int, const char*, int);
int __openat64_2(int, const char*, int);
int __xstat(int, const char*, struct stat*);
int __xstat64(int, const char*, struct stat64*);
int __lxstat(int, const char*, struct stat*);
int __lxstat64(int, const char*, struct stat64*);
int __fxstatat(int, int, const char*, struct stat*, int);
int __fxstatat64(int, int, const char*, struct stat64*, int);
char* __realpath_chk(const char*, char*, size_t);
ssize_t __readlink_chk(const char*, char*, size_t, size_t);
ssize_t __readlinkat_chk(int, const char*, char*, size_t, size_t);
char* __secure_getenv(const char*);
}

// Calls the real function, or fails with ENOSYS where libc has none.
template <typename Fn, typename... Args>
auto call_real(Libc function, Args... args) {
  using Result = decltype(std::declval<Fn>()(args...));
  Fn fn = real<Fn>(function);
  if (fn == nullptr) {
    errno = ENOSYS;
    if constexpr (std::is_pointer_v<Result>) {
      return Result{nullptr};
    } else {
      return Result(-1);
    }
  }
  return fn(args...);
}
#define NVRTC_CACHE_REAL(name, ...) call_real<decltype(&::name)>(Libc::name __VA_OPT__(, ) __VA_ARGS__)

// Notes an outcome; `...` are observe()'s arguments after the function name.
#define NVRTC_CACHE_NOTE(name, ...)                             \
  do {                                                          \
    if (anyone_watching()) {                                    \
      const int saved_errno_ = errno;                           \
      observe(#name, __VA_ARGS__, __builtin_return_address(0)); \
      errno = saved_errno_;                                     \
    }                                                           \
  } while (0)

#define NVRTC_CACHE_NOTE_TAINT(name, why)                     \
  do {                                                        \
    if (anyone_watching()) {                                  \
      const int saved_errno_ = errno;                         \
      observe_taint(#name, why, __builtin_return_address(0)); \
      errno = saved_errno_;                                   \
    }                                                         \
  } while (0)

#define NVRTC_CACHE_MODE_ARGUMENT(flags, mode)   \
  mode_t mode = 0;                               \
  if (mode_argument_present(flags)) {            \
    va_list ap;                                  \
    va_start(ap, flags);                         \
    mode = static_cast<mode_t>(va_arg(ap, int)); \
    va_end(ap);                                  \
  }

// open, open64: (path, flags, mode...)
#define NVRTC_CACHE_OPEN_HOOK(name)                                                                               \
  NVRTC_CACHE_EXPORT int name(const char* path, int flags, ...) {                                                 \
    NVRTC_CACHE_MODE_ARGUMENT(flags, mode)                                                                        \
    const int fd = NVRTC_CACHE_REAL(name, path, flags, mode);                                                     \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, fd >= 0, opens_for_writing(flags), AT_FDCWD, path, nullptr, 0); \
    return fd;                                                                                                    \
  }
NVRTC_CACHE_OPEN_HOOK(open)
NVRTC_CACHE_OPEN_HOOK(open64)

#define NVRTC_CACHE_OPENAT_HOOK(name)                                                                          \
  NVRTC_CACHE_EXPORT int name(int dirfd, const char* path, int flags, ...) {                                   \
    NVRTC_CACHE_MODE_ARGUMENT(flags, mode)                                                                     \
    const int fd = NVRTC_CACHE_REAL(name, dirfd, path, flags, mode);                                           \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, fd >= 0, opens_for_writing(flags), dirfd, path, nullptr, 0); \
    return fd;                                                                                                 \
  }
NVRTC_CACHE_OPENAT_HOOK(openat)
NVRTC_CACHE_OPENAT_HOOK(openat64)

// The _FORTIFY_SOURCE entry points: no mode argument.
#define NVRTC_CACHE_OPEN2_HOOK(name)                                                                              \
  NVRTC_CACHE_EXPORT int name(const char* path, int flags) {                                                      \
    const int fd = NVRTC_CACHE_REAL(name, path, flags);                                                           \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, fd >= 0, opens_for_writing(flags), AT_FDCWD, path, nullptr, 0); \
    return fd;                                                                                                    \
  }
NVRTC_CACHE_OPEN2_HOOK(__open_2)
NVRTC_CACHE_OPEN2_HOOK(__open64_2)

#define NVRTC_CACHE_OPENAT2_HOOK(name)                                                                         \
  NVRTC_CACHE_EXPORT int name(int dirfd, const char* path, int flags) {                                        \
    const int fd = NVRTC_CACHE_REAL(name, dirfd, path, flags);                                                 \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, fd >= 0, opens_for_writing(flags), dirfd, path, nullptr, 0); \
    return fd;                                                                                                 \
  }
NVRTC_CACHE_OPENAT2_HOOK(__openat_2)
NVRTC_CACHE_OPENAT2_HOOK(__openat64_2)

#define NVRTC_CACHE_CREAT_HOOK(name)                                                          \
  NVRTC_CACHE_EXPORT int name(const char* path, mode_t mode) {                                \
    const int fd = NVRTC_CACHE_REAL(name, path, mode);                                        \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, fd >= 0, true, AT_FDCWD, path, nullptr, 0); \
    return fd;                                                                                \
  }
NVRTC_CACHE_CREAT_HOOK(creat)
NVRTC_CACHE_CREAT_HOOK(creat64)

#define NVRTC_CACHE_FOPEN_HOOK(name)                                                                                  \
  NVRTC_CACHE_EXPORT FILE* name(const char* path, const char* mode) {                                                 \
    FILE* f = NVRTC_CACHE_REAL(name, path, mode);                                                                     \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, f != nullptr, opens_for_writing(mode), AT_FDCWD, path, nullptr, 0); \
    return f;                                                                                                         \
  }
NVRTC_CACHE_FOPEN_HOOK(fopen)
NVRTC_CACHE_FOPEN_HOOK(fopen64)

// freopen(NULL, ...) changes the mode of the stream's own file: no new path (observe() skips it).
#define NVRTC_CACHE_FREOPEN_HOOK(name)                                                                                \
  NVRTC_CACHE_EXPORT FILE* name(const char* path, const char* mode, FILE* stream) {                                   \
    FILE* f = NVRTC_CACHE_REAL(name, path, mode, stream);                                                             \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, f != nullptr, opens_for_writing(mode), AT_FDCWD, path, nullptr, 0); \
    return f;                                                                                                         \
  }
NVRTC_CACHE_FREOPEN_HOOK(freopen)
NVRTC_CACHE_FREOPEN_HOOK(freopen64)

// Path probes: (path, buffer) with the outcome 0 / -1.
#define NVRTC_CACHE_PROBE_HOOK(name, buffer_type)                                              \
  NVRTC_CACHE_EXPORT int name(const char* path, buffer_type* buffer) {                         \
    const int rc = NVRTC_CACHE_REAL(name, path, buffer);                                       \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kStat, rc == 0, false, AT_FDCWD, path, nullptr, 0); \
    return rc;                                                                                 \
  }
NVRTC_CACHE_PROBE_HOOK(stat, struct stat)
NVRTC_CACHE_PROBE_HOOK(stat64, struct stat64)
NVRTC_CACHE_PROBE_HOOK(lstat, struct stat)
NVRTC_CACHE_PROBE_HOOK(lstat64, struct stat64)
NVRTC_CACHE_PROBE_HOOK(statfs, struct statfs)
NVRTC_CACHE_PROBE_HOOK(statfs64, struct statfs64)
NVRTC_CACHE_PROBE_HOOK(statvfs, struct statvfs)
NVRTC_CACHE_PROBE_HOOK(statvfs64, struct statvfs64)

#define NVRTC_CACHE_XSTAT_HOOK(name, buffer_type)                                              \
  NVRTC_CACHE_EXPORT int name(int version, const char* path, buffer_type* buffer) {            \
    const int rc = NVRTC_CACHE_REAL(name, version, path, buffer);                              \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kStat, rc == 0, false, AT_FDCWD, path, nullptr, 0); \
    return rc;                                                                                 \
  }
NVRTC_CACHE_XSTAT_HOOK(__xstat, struct stat)
NVRTC_CACHE_XSTAT_HOOK(__xstat64, struct stat64)
NVRTC_CACHE_XSTAT_HOOK(__lxstat, struct stat)
NVRTC_CACHE_XSTAT_HOOK(__lxstat64, struct stat64)

#define NVRTC_CACHE_FSTATAT_HOOK(name, buffer_type)                                           \
  NVRTC_CACHE_EXPORT int name(int dirfd, const char* path, buffer_type* buffer, int flags) {  \
    const int rc = NVRTC_CACHE_REAL(name, dirfd, path, buffer, flags);                        \
    if (!stats_the_descriptor(path, flags)) {                                                 \
      NVRTC_CACHE_NOTE(name, WatchEventKind::kStat, rc == 0, false, dirfd, path, nullptr, 0); \
    }                                                                                         \
    return rc;                                                                                \
  }
NVRTC_CACHE_FSTATAT_HOOK(fstatat, struct stat)
NVRTC_CACHE_FSTATAT_HOOK(fstatat64, struct stat64)

#define NVRTC_CACHE_FXSTATAT_HOOK(name, buffer_type)                                                      \
  NVRTC_CACHE_EXPORT int name(int version, int dirfd, const char* path, buffer_type* buffer, int flags) { \
    const int rc = NVRTC_CACHE_REAL(name, version, dirfd, path, buffer, flags);                           \
    if (!stats_the_descriptor(path, flags)) {                                                             \
      NVRTC_CACHE_NOTE(name, WatchEventKind::kStat, rc == 0, false, dirfd, path, nullptr, 0);             \
    }                                                                                                     \
    return rc;                                                                                            \
  }
NVRTC_CACHE_FXSTATAT_HOOK(__fxstatat, struct stat)
NVRTC_CACHE_FXSTATAT_HOOK(__fxstatat64, struct stat64)

NVRTC_CACHE_EXPORT int statx(int dirfd, const char* path, int flags, unsigned int mask, struct statx* buffer) {
  const int rc = NVRTC_CACHE_REAL(statx, dirfd, path, flags, mask, buffer);
  if (!stats_the_descriptor(path, flags)) {
    NVRTC_CACHE_NOTE(statx, WatchEventKind::kStat, rc == 0, false, dirfd, path, nullptr, 0);
  }
  return rc;
}

#define NVRTC_CACHE_ACCESS_HOOK(name)                                                            \
  NVRTC_CACHE_EXPORT int name(const char* path, int mode) {                                      \
    const int rc = NVRTC_CACHE_REAL(name, path, mode);                                           \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kAccess, rc == 0, false, AT_FDCWD, path, nullptr, 0); \
    return rc;                                                                                   \
  }
NVRTC_CACHE_ACCESS_HOOK(access)
NVRTC_CACHE_ACCESS_HOOK(euidaccess)
NVRTC_CACHE_ACCESS_HOOK(eaccess)

NVRTC_CACHE_EXPORT int faccessat(int dirfd, const char* path, int mode, int flags) {
  const int rc = NVRTC_CACHE_REAL(faccessat, dirfd, path, mode, flags);
  if (!stats_the_descriptor(path, flags)) {
    NVRTC_CACHE_NOTE(faccessat, WatchEventKind::kAccess, rc == 0, false, dirfd, path, nullptr, 0);
  }
  return rc;
}

NVRTC_CACHE_EXPORT char* realpath(const char* path, char* resolved) {
  char* r = NVRTC_CACHE_REAL(realpath, path, resolved);
  NVRTC_CACHE_NOTE(realpath, WatchEventKind::kRealpath, r != nullptr, false, AT_FDCWD, path, r, length_of(r));
  return r;
}

NVRTC_CACHE_EXPORT char* __realpath_chk(const char* path, char* resolved, size_t resolved_size) {
  char* r = NVRTC_CACHE_REAL(__realpath_chk, path, resolved, resolved_size);
  NVRTC_CACHE_NOTE(__realpath_chk, WatchEventKind::kRealpath, r != nullptr, false, AT_FDCWD, path, r, length_of(r));
  return r;
}

NVRTC_CACHE_EXPORT char* canonicalize_file_name(const char* path) {
  char* r = NVRTC_CACHE_REAL(canonicalize_file_name, path);
  NVRTC_CACHE_NOTE(canonicalize_file_name, WatchEventKind::kRealpath, r != nullptr, false, AT_FDCWD, path, r,
                   length_of(r));
  return r;
}

NVRTC_CACHE_EXPORT ssize_t readlink(const char* path, char* buffer, size_t size) {
  const ssize_t n = NVRTC_CACHE_REAL(readlink, path, buffer, size);
  NVRTC_CACHE_NOTE(readlink, WatchEventKind::kReadlink, n >= 0, false, AT_FDCWD, path, buffer, length_of(n));
  return n;
}

NVRTC_CACHE_EXPORT ssize_t __readlink_chk(const char* path, char* buffer, size_t size, size_t buffer_size) {
  const ssize_t n = NVRTC_CACHE_REAL(__readlink_chk, path, buffer, size, buffer_size);
  NVRTC_CACHE_NOTE(__readlink_chk, WatchEventKind::kReadlink, n >= 0, false, AT_FDCWD, path, buffer, length_of(n));
  return n;
}

NVRTC_CACHE_EXPORT ssize_t readlinkat(int dirfd, const char* path, char* buffer, size_t size) {
  const ssize_t n = NVRTC_CACHE_REAL(readlinkat, dirfd, path, buffer, size);
  NVRTC_CACHE_NOTE(readlinkat, WatchEventKind::kReadlink, n >= 0, false, dirfd, path, buffer, length_of(n));
  return n;
}

NVRTC_CACHE_EXPORT ssize_t __readlinkat_chk(int dirfd, const char* path, char* buffer, size_t size,
                                            size_t buffer_size) {
  const ssize_t n = NVRTC_CACHE_REAL(__readlinkat_chk, dirfd, path, buffer, size, buffer_size);
  NVRTC_CACHE_NOTE(__readlinkat_chk, WatchEventKind::kReadlink, n >= 0, false, dirfd, path, buffer, length_of(n));
  return n;
}

NVRTC_CACHE_EXPORT DIR* opendir(const char* path) {
  DIR* d = NVRTC_CACHE_REAL(opendir, path);
  NVRTC_CACHE_NOTE(opendir, WatchEventKind::kOpendir, d != nullptr, false, AT_FDCWD, path, nullptr, 0);
  return d;
}

// Listing through a descriptor names no path; a failure touched nothing.
NVRTC_CACHE_EXPORT DIR* fdopendir(int fd) {
  DIR* d = NVRTC_CACHE_REAL(fdopendir, fd);
  if (d != nullptr) NVRTC_CACHE_NOTE_TAINT(fdopendir, kListedDirectory);
  return d;
}

using DirentFilter = int (*)(const struct dirent*);
using DirentCompare = int (*)(const struct dirent**, const struct dirent**);
using Dirent64Filter = int (*)(const struct dirent64*);
using Dirent64Compare = int (*)(const struct dirent64**, const struct dirent64**);

NVRTC_CACHE_EXPORT int scandir(const char* path, struct dirent*** list, DirentFilter filter, DirentCompare compare) {
  const int n = NVRTC_CACHE_REAL(scandir, path, list, filter, compare);
  NVRTC_CACHE_NOTE(scandir, WatchEventKind::kOpendir, n >= 0, false, AT_FDCWD, path, nullptr, 0);
  return n;
}

NVRTC_CACHE_EXPORT int scandir64(const char* path, struct dirent64*** list, Dirent64Filter filter,
                                 Dirent64Compare compare) {
  const int n = NVRTC_CACHE_REAL(scandir64, path, list, filter, compare);
  NVRTC_CACHE_NOTE(scandir64, WatchEventKind::kOpendir, n >= 0, false, AT_FDCWD, path, nullptr, 0);
  return n;
}

NVRTC_CACHE_EXPORT int scandirat(int dirfd, const char* path, struct dirent*** list, DirentFilter filter,
                                 DirentCompare compare) {
  const int n = NVRTC_CACHE_REAL(scandirat, dirfd, path, list, filter, compare);
  NVRTC_CACHE_NOTE(scandirat, WatchEventKind::kOpendir, n >= 0, false, dirfd, path, nullptr, 0);
  return n;
}

NVRTC_CACHE_EXPORT int scandirat64(int dirfd, const char* path, struct dirent64*** list, Dirent64Filter filter,
                                   Dirent64Compare compare) {
  const int n = NVRTC_CACHE_REAL(scandirat64, dirfd, path, list, filter, compare);
  NVRTC_CACHE_NOTE(scandirat64, WatchEventKind::kOpendir, n >= 0, false, dirfd, path, nullptr, 0);
  return n;
}

// Relative paths are resolved against the directory the compile started in: a change taints it
// (a failed chdir is a probe of that path).
NVRTC_CACHE_EXPORT int chdir(const char* path) {
  const int rc = NVRTC_CACHE_REAL(chdir, path);
  if (rc == 0) {
    NVRTC_CACHE_NOTE_TAINT(chdir, kChangedDirectory);
  } else {
    NVRTC_CACHE_NOTE(chdir, WatchEventKind::kStat, false, false, AT_FDCWD, path, nullptr, 0);
  }
  return rc;
}

NVRTC_CACHE_EXPORT int fchdir(int fd) {
  const int rc = NVRTC_CACHE_REAL(fchdir, fd);
  if (rc == 0) NVRTC_CACHE_NOTE_TAINT(fchdir, kChangedDirectory);
  return rc;
}

NVRTC_CACHE_EXPORT char* getenv(const char* name) {
  auto* fn = g_real[static_cast<std::size_t>(Libc::getenv)].load(std::memory_order_acquire);
  char* value = fn ? reinterpret_cast<decltype(&::getenv)>(fn)(name) : scan_environment(name);
  NVRTC_CACHE_NOTE(getenv, WatchEventKind::kGetenv, value != nullptr, false, AT_FDCWD, name, value, length_of(value));
  return value;
}

// Before the real one is known: getenv's answer, except for a setuid/setgid process.
#define NVRTC_CACHE_SECURE_GETENV_HOOK(name)                                                            \
  NVRTC_CACHE_EXPORT char* name(const char* variable) {                                                 \
    auto* fn = real<decltype(&::name)>(Libc::name);                                                     \
    char* value = fn ? fn(variable) : (getauxval(AT_SECURE) ? nullptr : scan_environment(variable));    \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kGetenv, value != nullptr, false, AT_FDCWD, variable, value, \
                     length_of(value));                                                                 \
    return value;                                                                                       \
  }
NVRTC_CACHE_SECURE_GETENV_HOOK(secure_getenv)
#if defined(__x86_64__)  // aarch64 glibc has no __secure_getenv (shim/watch/watched_libc.def)
NVRTC_CACHE_SECURE_GETENV_HOOK(__secure_getenv)
#endif

// Programs NVRTC starts read files the shim cannot see; the compile is not cached.
NVRTC_CACHE_EXPORT pid_t fork() {
  const pid_t pid = NVRTC_CACHE_REAL(fork);
  if (pid > 0) NVRTC_CACHE_NOTE_TAINT(fork, kStartedProgram);
  return pid;
}

NVRTC_CACHE_EXPORT int system(const char* command) {
  const int rc = NVRTC_CACHE_REAL(system, command);
  if (command != nullptr) NVRTC_CACHE_NOTE_TAINT(system, kStartedProgram);
  return rc;
}

NVRTC_CACHE_EXPORT FILE* popen(const char* command, const char* mode) {
  FILE* f = NVRTC_CACHE_REAL(popen, command, mode);
  if (f != nullptr) NVRTC_CACHE_NOTE_TAINT(popen, kStartedProgram);
  return f;
}

#define NVRTC_CACHE_SPAWN_HOOK(name)                                                                         \
  NVRTC_CACHE_EXPORT int name(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,       \
                              const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) { \
    const int rc = NVRTC_CACHE_REAL(name, pid, path, actions, attributes, argv, envp);                       \
    if (rc == 0) NVRTC_CACHE_NOTE_TAINT(name, kStartedProgram);                                              \
    return rc;                                                                                               \
  }
NVRTC_CACHE_SPAWN_HOOK(posix_spawn)
NVRTC_CACHE_SPAWN_HOOK(posix_spawnp)

// The user database (home directories): read through NSS, out of the shim's sight.
NVRTC_CACHE_EXPORT struct passwd* getpwnam(const char* name) {
  struct passwd* entry = NVRTC_CACHE_REAL(getpwnam, name);
  NVRTC_CACHE_NOTE_TAINT(getpwnam, kReadUserDatabase);
  return entry;
}

NVRTC_CACHE_EXPORT struct passwd* getpwuid(uid_t uid) {
  struct passwd* entry = NVRTC_CACHE_REAL(getpwuid, uid);
  NVRTC_CACHE_NOTE_TAINT(getpwuid, kReadUserDatabase);
  return entry;
}

NVRTC_CACHE_EXPORT int getpwnam_r(const char* name, struct passwd* entry, char* buffer, size_t size,
                                  struct passwd** result) {
  const int rc = NVRTC_CACHE_REAL(getpwnam_r, name, entry, buffer, size, result);
  NVRTC_CACHE_NOTE_TAINT(getpwnam_r, kReadUserDatabase);
  return rc;
}

NVRTC_CACHE_EXPORT int getpwuid_r(uid_t uid, struct passwd* entry, char* buffer, size_t size, struct passwd** result) {
  const int rc = NVRTC_CACHE_REAL(getpwuid_r, uid, entry, buffer, size, result);
  NVRTC_CACHE_NOTE_TAINT(getpwuid_r, kReadUserDatabase);
  return rc;
}

// ---- the hooks as data, for import redirection (shim/watch/watched_functions.h) ----

// Hidden aliases: their addresses are the definitions above, never a global-scope binding of the
// same name (the proxy is loaded RTLD_LOCAL, where `&open` would bind to libc's).
#define NVRTC_CACHE_WATCHED(name, version) \
  extern "C" __attribute__((visibility("hidden"), alias(#name), copy(::name))) decltype(::name) nvrtc_cache_hook_##name;
#include "shim/watch/watched_libc.def"
#undef NVRTC_CACHE_WATCHED

namespace nvrtc_cache::shim::watch {

const WatchedFunction* watched_functions() {
  static const WatchedFunction kTable[] = {
#define NVRTC_CACHE_WATCHED(name, version) {#name, #version, reinterpret_cast<void*>(&nvrtc_cache_hook_##name)},
#include "shim/watch/watched_libc.def"
#undef NVRTC_CACHE_WATCHED
  };
  static_assert(sizeof kTable / sizeof kTable[0] == kWatchedFunctionCount);
  return kTable;
}

void* real_libc(std::size_t index) {
  if (index >= g_real.size()) return nullptr;
  return real<void*>(static_cast<Libc>(index));
}

}  // namespace nvrtc_cache::shim::watch
