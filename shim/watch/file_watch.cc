#include "shim/watch/file_watch.h"

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

#define NVRTC_CACHE_HOOK_TLS __attribute__((tls_model("initial-exec")))

extern char** environ;

namespace nvrtc_cache::shim::watch {

// ---- the record: an append-only log of events in one mmap reservation ----

struct CompileWatch::Buffer {
  char* base = nullptr;        // kCaptureBoundBytes reserved; [0, committed) readable and writable
  std::size_t committed = 0;
  std::size_t used = 0;
  std::size_t events = 0;
  const char* taint = nullptr;         // why the record cannot be trusted (a static string)
  const char* taint_detail = nullptr;  // e.g. the libc function involved (a static string)
  std::uint64_t foreign_calls_at_start = 0;
};

namespace {

constexpr std::size_t kCommitStep = std::size_t{1} << 20;

// Each event: this header, the subject's bytes, the value's bytes, padded to 8.
struct alignas(8) EventHeader {
  const void* caller;
  std::uint32_t subject_size;
  std::uint32_t value_size;
  WatchEventKind kind;
  bool succeeded;
  bool for_writing;
};

constexpr std::size_t align8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

constexpr const char* kOverflow = "the capture exceeded its bound";
constexpr const char* kCommitFailed = "the capture could not commit memory";
constexpr const char* kReserveFailed = "the capture could not reserve memory";
constexpr const char* kReentered = "a watched libc call re-entered the recorder (from a signal handler)";
constexpr const char* kNested = "a compile started inside another compile on the same thread";
constexpr const char* kUnresolvedDirectory = "NVRTC used a path relative to a directory descriptor that cannot be resolved";
constexpr const char* kListedDirectory = "NVRTC listed a directory";
constexpr const char* kChangedDirectory = "NVRTC changed the working directory";
constexpr const char* kStartedProgram = "NVRTC started another program, whose reads are not observed";
constexpr const char* kReadUserDatabase = "NVRTC read the user database";
constexpr const char* kForeignThread = "NVRTC called a watched libc function on another thread during the compile";

// The watch recording on this thread, and whether this thread is inside record() (a signal handler
// interrupting record() and calling a watched function must not append to a half-written event).
// initial-exec: reading them from a hook must not call __tls_get_addr (which can allocate).
thread_local CompileWatch::Buffer* t_active NVRTC_CACHE_HOOK_TLS = nullptr;
thread_local volatile sig_atomic_t t_recording NVRTC_CACHE_HOOK_TLS = 0;

// Compiles being watched in the process, and NVRTC's watched calls on threads not watching: a watch
// is tainted if the latter moved while it was active. Relaxed suffices for the check in hooks: NVRTC
// work on a helper thread that belongs to a compile is handed over by NVRTC after the compile began
// and joined before it returned, and those hand-overs order the count and the counter.
std::atomic<int> g_active_watches{0};
std::atomic<std::uint64_t> g_foreign_calls{0};
std::atomic<const char*> g_foreign_function{nullptr};
std::atomic<CompileWatch::CallerCheck> g_caller_check{nullptr};

void taint(CompileWatch::Buffer& b, const char* why, const char* detail = nullptr) {
  if (b.taint == nullptr) {
    b.taint = why;
    b.taint_detail = detail;
  }
}

// Makes [used, used + n) writable; false (and tainted) beyond the bound or when memory is short.
bool ensure(CompileWatch::Buffer& b, std::size_t end) {
  if (end > kCaptureBoundBytes) {
    taint(b, kOverflow);
    return false;
  }
  if (end <= b.committed) return true;
  std::size_t target = (end + kCommitStep - 1) / kCommitStep * kCommitStep;
  if (target > kCaptureBoundBytes) target = kCaptureBoundBytes;
  if (syscall(SYS_mprotect, b.base + b.committed, target - b.committed, PROT_READ | PROT_WRITE) != 0) {
    taint(b, kCommitFailed);
    return false;
  }
  b.committed = target;
  return true;
}

bool append(CompileWatch::Buffer& b, std::size_t& cursor, const char* bytes, std::size_t n) {
  if (n == 0) return true;
  if (!ensure(b, cursor + n)) return false;
  std::memcpy(b.base + cursor, bytes, n);
  cursor += n;
  return true;
}

// "/proc/self/fd/N" for a descriptor, without stdio.
void fd_link_path(int fd, char (&out)[32]) {
  char digits[12];
  int n = 0;
  unsigned value = static_cast<unsigned>(fd);
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0 && n < 11);
  std::memcpy(out, "/proc/self/fd/", 14);
  int i = 14;
  while (n > 0) out[i++] = digits[--n];
  out[i] = '\0';
}

// Appends the absolute directory a descriptor names, followed by '/'; false if it has none.
bool append_directory_of(CompileWatch::Buffer& b, std::size_t& cursor, int dirfd) {
  char link[32];
  fd_link_path(dirfd, link);
  char directory[PATH_MAX];
  const long n = syscall(SYS_readlinkat, AT_FDCWD, link, directory, sizeof directory);
  if (n <= 0 || n >= static_cast<long>(sizeof directory) || directory[0] != '/') return false;
  constexpr std::string_view kDeleted = " (deleted)";
  const std::string_view resolved(directory, static_cast<std::size_t>(n));
  if (resolved.ends_with(kDeleted)) return false;
  return append(b, cursor, directory, resolved.size()) && append(b, cursor, "/", 1);
}

// Appends one event. `dirfd` is AT_FDCWD or the descriptor a relative `subject` is relative to.
void record(CompileWatch::Buffer& b, WatchEventKind kind, bool succeeded, bool for_writing, int dirfd,
            const char* subject, const char* value, std::size_t value_size, const void* caller) {
  if (t_recording) {
    taint(b, kReentered);
    return;
  }
  t_recording = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::size_t cursor = b.used;
  const std::size_t header_at = cursor;
  const std::size_t subject_at = header_at + sizeof(EventHeader);
  cursor = subject_at;
  bool ok = ensure(b, cursor);
  if (ok && dirfd != AT_FDCWD && subject[0] != '/') {
    ok = append_directory_of(b, cursor, dirfd);
    if (!ok && b.taint == nullptr) taint(b, kUnresolvedDirectory);
  }
  ok = ok && append(b, cursor, subject, std::strlen(subject));
  const std::size_t subject_size = cursor - subject_at;
  ok = ok && append(b, cursor, value, value_size);
  ok = ok && ensure(b, align8(cursor));
  if (ok && subject_size <= UINT32_MAX && value_size <= UINT32_MAX) {
    const EventHeader header{caller, static_cast<std::uint32_t>(subject_size), static_cast<std::uint32_t>(value_size),
                             kind, succeeded, for_writing};
    std::memcpy(b.base + header_at, &header, sizeof header);
    b.used = align8(cursor);
    ++b.events;
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_recording = 0;
}

bool caller_in_nvrtc(const void* caller) {
  if (CompileWatch::CallerCheck check = g_caller_check.load(std::memory_order_acquire)) return check(caller);
  return address_in_nvrtc_code(caller);
}

// A watched call on a thread that is not watching, while some thread is.
void foreign_call(const char* function, const void* caller) {
  if (!caller_in_nvrtc(caller)) return;
  g_foreign_function.store(function, std::memory_order_relaxed);
  g_foreign_calls.fetch_add(1, std::memory_order_seq_cst);
}

// What a hook saw. `subject` is a path (or a variable name for kGetenv); nullptr or "" records
// nothing (such a call fails before touching the filesystem).
void observe(const char* function, WatchEventKind kind, bool succeeded, bool for_writing, int dirfd,
             const char* subject, const char* value, std::size_t value_size, const void* caller) {
  if (CompileWatch::Buffer* b = t_active) {
    if (subject != nullptr && subject[0] != '\0') {
      record(*b, kind, succeeded, for_writing, dirfd, subject, value, value_size, caller);
    }
    return;
  }
  foreign_call(function, caller);
}

// A call the record cannot represent (listing a directory by descriptor, changing directory).
void observe_taint(const char* function, const char* why, const void* caller) {
  if (CompileWatch::Buffer* b = t_active) {
    taint(*b, why, function);
    return;
  }
  foreign_call(function, caller);
}

bool anyone_watching() {
  return t_active != nullptr || g_active_watches.load(std::memory_order_relaxed) != 0;
}

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
  if (glibc_dlsym == nullptr) glibc_dlsym = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
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

// ---- NVRTC's code ranges, for other threads' calls ----

constexpr int kMaxCodeRanges = 64;
std::array<std::atomic<std::uintptr_t>, 2 * kMaxCodeRanges> g_code_ranges{};
std::atomic<int> g_code_range_count{0};
std::mutex g_register_mutex;
std::array<std::uintptr_t, kMaxCodeRanges> g_registered_bases{};
int g_registered_count = 0;

struct RegisterQuery {
  std::uintptr_t address;
  bool found = false;
};

bool is_builtins_library(const char* path) {
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  return std::strncmp(base, "libnvrtc-builtins", 17) == 0;
}

int register_object(dl_phdr_info* info, std::size_t, void* data) {
  auto* q = static_cast<RegisterQuery*>(data);
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && q->address >= start && q->address < start + ph.p_memsz) contains = true;
  }
  q->found = q->found || contains;
  if (!contains && (info->dlpi_name == nullptr || !is_builtins_library(info->dlpi_name))) return 0;
  for (int i = 0; i < g_registered_count; ++i) {
    if (g_registered_bases[static_cast<std::size_t>(i)] == info->dlpi_addr) return 0;
  }
  if (g_registered_count == kMaxCodeRanges) return 0;
  g_registered_bases[static_cast<std::size_t>(g_registered_count++)] = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const int n = g_code_range_count.load(std::memory_order_relaxed);
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0 || n == kMaxCodeRanges) continue;
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    g_code_ranges[static_cast<std::size_t>(2 * n)].store(start, std::memory_order_relaxed);
    g_code_ranges[static_cast<std::size_t>(2 * n + 1)].store(start + ph.p_memsz, std::memory_order_relaxed);
    g_code_range_count.store(n + 1, std::memory_order_release);
  }
  return 0;
}

}  // namespace

bool register_nvrtc_code(const void* address_in_nvrtc) {
  RegisterQuery q{reinterpret_cast<std::uintptr_t>(address_in_nvrtc)};
  std::lock_guard lock(g_register_mutex);
  dl_iterate_phdr(register_object, &q);
  return q.found;
}

bool address_in_nvrtc_code(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  const int n = g_code_range_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (a >= g_code_ranges[static_cast<std::size_t>(2 * i)].load(std::memory_order_relaxed) &&
        a < g_code_ranges[static_cast<std::size_t>(2 * i + 1)].load(std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

void CompileWatch::set_caller_check_for_testing(CallerCheck check) {
  g_caller_check.store(check, std::memory_order_release);
}

CompileWatch::CompileWatch(const void* nvrtc_code) : buffer_(std::make_unique<Buffer>()) {
  if (nvrtc_code != nullptr) (void)register_nvrtc_code(nvrtc_code);
  Buffer& b = *buffer_;
  const long mapped = syscall(SYS_mmap, nullptr, kCaptureBoundBytes, PROT_NONE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == -1) {
    taint(b, kReserveFailed);
    return;
  }
  b.base = reinterpret_cast<char*>(mapped);
  if (t_active != nullptr) {
    taint(b, kNested);
    taint(*t_active, kNested);
    return;
  }
  g_active_watches.fetch_add(1, std::memory_order_seq_cst);
  b.foreign_calls_at_start = g_foreign_calls.load(std::memory_order_seq_cst);
  t_active = &b;
  active_ = true;
}

CompileWatch::~CompileWatch() {
  stop();
  if (buffer_->base != nullptr) syscall(SYS_munmap, buffer_->base, kCaptureBoundBytes);
}

void CompileWatch::stop() {
  if (!active_) return;
  t_active = nullptr;
  active_ = false;
  Buffer& b = *buffer_;
  if (g_foreign_calls.load(std::memory_order_seq_cst) != b.foreign_calls_at_start) {
    taint(b, kForeignThread, g_foreign_function.load(std::memory_order_relaxed));
  }
  g_active_watches.fetch_sub(1, std::memory_order_seq_cst);
}

bool CompileWatch::tainted() const { return buffer_->taint != nullptr; }

std::string CompileWatch::why_tainted() const {
  const Buffer& b = *buffer_;
  if (b.taint == nullptr) return {};
  std::string why = b.taint;
  if (b.taint == kOverflow) {
    why += " (" + std::to_string(kCaptureBoundBytes >> 20) + " MiB; " + std::to_string(b.events) + " events recorded)";
  } else if (b.taint_detail != nullptr) {
    why += std::string(" (") + b.taint_detail + ")";
  }
  return why;
}

std::size_t CompileWatch::event_count() const { return buffer_->events; }
std::size_t CompileWatch::bytes_used() const { return buffer_->used; }

WatchEvent CompileWatch::event_at(std::size_t& offset) const {
  const char* at = buffer_->base + offset;
  EventHeader h;
  std::memcpy(&h, at, sizeof h);
  const char* subject = at + sizeof h;
  const char* value = subject + h.subject_size;
  offset = align8(offset + sizeof h + h.subject_size + h.value_size);
  return {{h.kind, h.succeeded, h.for_writing, {subject, h.subject_size}, {value, h.value_size}}, h.caller};
}

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
#define NVRTC_CACHE_NOTE(name, ...)                                                \
  do {                                                                             \
    if (anyone_watching()) {                                                       \
      const int saved_errno_ = errno;                                              \
      observe(#name, __VA_ARGS__, __builtin_return_address(0));                    \
      errno = saved_errno_;                                                        \
    }                                                                              \
  } while (0)

#define NVRTC_CACHE_NOTE_TAINT(name, why)                                          \
  do {                                                                             \
    if (anyone_watching()) {                                                       \
      const int saved_errno_ = errno;                                              \
      observe_taint(#name, why, __builtin_return_address(0));                      \
      errno = saved_errno_;                                                        \
    }                                                                              \
  } while (0)

#define NVRTC_CACHE_MODE_ARGUMENT(flags, mode)                                     \
  mode_t mode = 0;                                                                 \
  if (mode_argument_present(flags)) {                                              \
    va_list ap;                                                                    \
    va_start(ap, flags);                                                           \
    mode = static_cast<mode_t>(va_arg(ap, int));                                   \
    va_end(ap);                                                                    \
  }

// open, open64: (path, flags, mode...)
#define NVRTC_CACHE_OPEN_HOOK(name)                                                              \
  NVRTC_CACHE_EXPORT int name(const char* path, int flags, ...) {                                \
    NVRTC_CACHE_MODE_ARGUMENT(flags, mode)                                                       \
    const int fd = NVRTC_CACHE_REAL(name, path, flags, mode);                                \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, fd >= 0, opens_for_writing(flags), AT_FDCWD, path, nullptr, 0); \
    return fd;                                                                                   \
  }
NVRTC_CACHE_OPEN_HOOK(open)
NVRTC_CACHE_OPEN_HOOK(open64)

#define NVRTC_CACHE_OPENAT_HOOK(name)                                                            \
  NVRTC_CACHE_EXPORT int name(int dirfd, const char* path, int flags, ...) {                     \
    NVRTC_CACHE_MODE_ARGUMENT(flags, mode)                                                       \
    const int fd = NVRTC_CACHE_REAL(name, dirfd, path, flags, mode);                         \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, fd >= 0, opens_for_writing(flags), dirfd, path, nullptr, 0); \
    return fd;                                                                                   \
  }
NVRTC_CACHE_OPENAT_HOOK(openat)
NVRTC_CACHE_OPENAT_HOOK(openat64)

// The _FORTIFY_SOURCE entry points: no mode argument.
#define NVRTC_CACHE_OPEN2_HOOK(name)                                                             \
  NVRTC_CACHE_EXPORT int name(const char* path, int flags) {                                     \
    const int fd = NVRTC_CACHE_REAL(name, path, flags);                                      \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, fd >= 0, opens_for_writing(flags), AT_FDCWD, path, nullptr, 0); \
    return fd;                                                                                   \
  }
NVRTC_CACHE_OPEN2_HOOK(__open_2)
NVRTC_CACHE_OPEN2_HOOK(__open64_2)

#define NVRTC_CACHE_OPENAT2_HOOK(name)                                                           \
  NVRTC_CACHE_EXPORT int name(int dirfd, const char* path, int flags) {                          \
    const int fd = NVRTC_CACHE_REAL(name, dirfd, path, flags);                               \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, fd >= 0, opens_for_writing(flags), dirfd, path, nullptr, 0); \
    return fd;                                                                                   \
  }
NVRTC_CACHE_OPENAT2_HOOK(__openat_2)
NVRTC_CACHE_OPENAT2_HOOK(__openat64_2)

#define NVRTC_CACHE_CREAT_HOOK(name)                                                             \
  NVRTC_CACHE_EXPORT int name(const char* path, mode_t mode) {                                   \
    const int fd = NVRTC_CACHE_REAL(name, path, mode);                                       \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, fd >= 0, true, AT_FDCWD, path, nullptr, 0);    \
    return fd;                                                                                   \
  }
NVRTC_CACHE_CREAT_HOOK(creat)
NVRTC_CACHE_CREAT_HOOK(creat64)

#define NVRTC_CACHE_FOPEN_HOOK(name)                                                             \
  NVRTC_CACHE_EXPORT FILE* name(const char* path, const char* mode) {                            \
    FILE* f = NVRTC_CACHE_REAL(name, path, mode);                                       \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, f != nullptr, opens_for_writing(mode), AT_FDCWD, path, nullptr, 0); \
    return f;                                                                                    \
  }
NVRTC_CACHE_FOPEN_HOOK(fopen)
NVRTC_CACHE_FOPEN_HOOK(fopen64)

// freopen(NULL, ...) changes the mode of the stream's own file: no new path (observe() skips it).
#define NVRTC_CACHE_FREOPEN_HOOK(name)                                                           \
  NVRTC_CACHE_EXPORT FILE* name(const char* path, const char* mode, FILE* stream) {              \
    FILE* f = NVRTC_CACHE_REAL(name, path, mode, stream);                               \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kOpen, f != nullptr, opens_for_writing(mode), AT_FDCWD, path, nullptr, 0); \
    return f;                                                                                    \
  }
NVRTC_CACHE_FREOPEN_HOOK(freopen)
NVRTC_CACHE_FREOPEN_HOOK(freopen64)

// Path probes: (path, buffer) with the outcome 0 / -1.
#define NVRTC_CACHE_PROBE_HOOK(name, buffer_type)                                                \
  NVRTC_CACHE_EXPORT int name(const char* path, buffer_type* buffer) {                           \
    const int rc = NVRTC_CACHE_REAL(name, path, buffer);                                     \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kStat, rc == 0, false, AT_FDCWD, path, nullptr, 0);   \
    return rc;                                                                                   \
  }
NVRTC_CACHE_PROBE_HOOK(stat, struct stat)
NVRTC_CACHE_PROBE_HOOK(stat64, struct stat64)
NVRTC_CACHE_PROBE_HOOK(lstat, struct stat)
NVRTC_CACHE_PROBE_HOOK(lstat64, struct stat64)
NVRTC_CACHE_PROBE_HOOK(statfs, struct statfs)
NVRTC_CACHE_PROBE_HOOK(statfs64, struct statfs64)
NVRTC_CACHE_PROBE_HOOK(statvfs, struct statvfs)
NVRTC_CACHE_PROBE_HOOK(statvfs64, struct statvfs64)

#define NVRTC_CACHE_XSTAT_HOOK(name, buffer_type)                                                \
  NVRTC_CACHE_EXPORT int name(int version, const char* path, buffer_type* buffer) {              \
    const int rc = NVRTC_CACHE_REAL(name, version, path, buffer);                            \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kStat, rc == 0, false, AT_FDCWD, path, nullptr, 0);   \
    return rc;                                                                                   \
  }
NVRTC_CACHE_XSTAT_HOOK(__xstat, struct stat)
NVRTC_CACHE_XSTAT_HOOK(__xstat64, struct stat64)
NVRTC_CACHE_XSTAT_HOOK(__lxstat, struct stat)
NVRTC_CACHE_XSTAT_HOOK(__lxstat64, struct stat64)

#define NVRTC_CACHE_FSTATAT_HOOK(name, buffer_type)                                              \
  NVRTC_CACHE_EXPORT int name(int dirfd, const char* path, buffer_type* buffer, int flags) {     \
    const int rc = NVRTC_CACHE_REAL(name, dirfd, path, buffer, flags);                       \
    if (!stats_the_descriptor(path, flags)) {                                                    \
      NVRTC_CACHE_NOTE(name, WatchEventKind::kStat, rc == 0, false, dirfd, path, nullptr, 0);    \
    }                                                                                            \
    return rc;                                                                                   \
  }
NVRTC_CACHE_FSTATAT_HOOK(fstatat, struct stat)
NVRTC_CACHE_FSTATAT_HOOK(fstatat64, struct stat64)

#define NVRTC_CACHE_FXSTATAT_HOOK(name, buffer_type)                                             \
  NVRTC_CACHE_EXPORT int name(int version, int dirfd, const char* path, buffer_type* buffer, int flags) { \
    const int rc = NVRTC_CACHE_REAL(name, version, dirfd, path, buffer, flags);              \
    if (!stats_the_descriptor(path, flags)) {                                                    \
      NVRTC_CACHE_NOTE(name, WatchEventKind::kStat, rc == 0, false, dirfd, path, nullptr, 0);    \
    }                                                                                            \
    return rc;                                                                                   \
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
    const int rc = NVRTC_CACHE_REAL(name, path, mode);                                       \
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
#define NVRTC_CACHE_SECURE_GETENV_HOOK(name)                                                     \
  NVRTC_CACHE_EXPORT char* name(const char* variable) {                                          \
    auto* fn = real<decltype(&::name)>(Libc::name);                                              \
    char* value = fn ? fn(variable) : (getauxval(AT_SECURE) ? nullptr : scan_environment(variable)); \
    NVRTC_CACHE_NOTE(name, WatchEventKind::kGetenv, value != nullptr, false, AT_FDCWD, variable, value, \
                     length_of(value));                                                          \
    return value;                                                                                \
  }
NVRTC_CACHE_SECURE_GETENV_HOOK(secure_getenv)
NVRTC_CACHE_SECURE_GETENV_HOOK(__secure_getenv)

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

#define NVRTC_CACHE_SPAWN_HOOK(name)                                                             \
  NVRTC_CACHE_EXPORT int name(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions, \
                              const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) { \
    const int rc = NVRTC_CACHE_REAL(name, pid, path, actions, attributes, argv, envp);           \
    if (rc == 0) NVRTC_CACHE_NOTE_TAINT(name, kStartedProgram);                                  \
    return rc;                                                                                   \
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

NVRTC_CACHE_EXPORT int getpwuid_r(uid_t uid, struct passwd* entry, char* buffer, size_t size,
                                  struct passwd** result) {
  const int rc = NVRTC_CACHE_REAL(getpwuid_r, uid, entry, buffer, size, result);
  NVRTC_CACHE_NOTE_TAINT(getpwuid_r, kReadUserDatabase);
  return rc;
}
