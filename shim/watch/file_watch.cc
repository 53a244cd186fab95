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
#include <ctime>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <utility>

#include "platform/fork_locks.h"
#include "shim/watch/import_patch.h"
#include "shim/watch/recorder.h"

namespace nvrtc_cache::shim::watch {

// ---- the record: an append-only log of events in one mmap reservation ----

struct CompileWatch::Buffer {
  char* base = nullptr;  // kCaptureBoundBytes reserved; [0, committed) readable and writable
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
constexpr const char* kUnresolvedDirectory =
    "NVRTC used a path relative to a directory descriptor that cannot be resolved";
constexpr const char* kForeignThread = "NVRTC called a watched libc function on another thread during the compile";

// The watch recording on this thread, and whether this thread is inside record() (a signal handler
// interrupting record() and calling a watched function must not append to a half-written event).
// initial-exec: reading them from a hook must not call __tls_get_addr (which can allocate).
thread_local volatile sig_atomic_t t_recording NVRTC_CACHE_HOOK_TLS = 0;

// Compiles being watched in the process, and NVRTC's watched calls on threads not watching: a watch
// is tainted if the latter moved while it was active. Relaxed suffices for the check in hooks: NVRTC
// work on a helper thread that belongs to a compile is handed over by NVRTC after the compile began
// and joined before it returned, and those hand-overs order the count and the counter.
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
    const EventHeader header{
        caller,     static_cast<std::uint32_t>(subject_size), static_cast<std::uint32_t>(value_size), kind, succeeded,
        for_writing};
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

// ---- NVRTC's code ranges, for other threads' calls ----

constexpr int kMaxCodeRanges = 64;
std::array<std::atomic<std::uintptr_t>, 2 * kMaxCodeRanges> g_code_ranges{};
std::atomic<int> g_code_range_count{0};
std::mutex g_register_mutex;  // platform::ForkRank::kNvrtcCode
std::array<std::uintptr_t, kMaxCodeRanges> g_registered_bases{};
int g_registered_count = 0;
ImportRedirection g_redirection;  // under g_register_mutex

__attribute__((constructor)) void join_fork_order() {
  platform::join_fork_order(platform::ForkRank::kNvrtcCode,
                            {[] { g_register_mutex.lock(); }, [] { g_register_mutex.unlock(); },
                             [] { platform::renew_in_child(g_register_mutex); }});
}

std::int64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// NVRTC's own imports of the watched functions now lead to the hooks, whatever scope it was loaded
// in (once per library: it is registered once).
void redirect_imports(const dl_phdr_info& info) {
  const std::int64_t start = monotonic_ns();
  const ImportPatch patch = redirect_watched_imports(info);
  g_redirection.nanos += monotonic_ns() - start;
  ++g_redirection.libraries;
  g_redirection.redirected += patch.redirected;
  g_redirection.already += patch.already;
  g_redirection.left += patch.left;
}

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
  redirect_imports(*info);
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

thread_local CompileWatch::Buffer* t_active NVRTC_CACHE_HOOK_TLS = nullptr;
std::atomic<int> g_active_watches{0};

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

bool register_nvrtc_code(const void* address_in_nvrtc) {
  RegisterQuery q{reinterpret_cast<std::uintptr_t>(address_in_nvrtc)};
  std::lock_guard lock(g_register_mutex);
  dl_iterate_phdr(register_object, &q);
  return q.found;
}

ImportRedirection import_redirection_so_far() {
  std::lock_guard lock(g_register_mutex);
  return g_redirection;
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
  const long mapped =
      syscall(SYS_mmap, nullptr, kCaptureBoundBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
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

direct::NotRecorded CompileWatch::taint_reason() const {
  return buffer_->taint == kListedDirectory ? direct::NotRecorded::kWroteOrListed : direct::NotRecorded::kUnwatchable;
}

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
