#include "shim/windows/compile_watch.h"

#include <atomic>
#include <mutex>

#include "shim/windows/import_table_patch.h"

namespace nvrtc_cache::shim::windows {
namespace {

thread_local CompileWatch* t_watch = nullptr;
std::atomic<int> g_active{0};
std::atomic<std::uint64_t> g_foreign{0};  // events on threads without a watch while one was active

using direct::ObservationKind;

void observe(const ImportEvent& e) {
  CompileWatch* watch = t_watch;
  if (watch == nullptr) {
    if (g_active.load(std::memory_order_acquire) > 0) g_foreign.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  try {
    if (e.subject_too_long)
      return watch->taint(std::string("NVRTC used a path too long to record (") + e.function + ")");
    switch (e.kind) {
      case ImportEventKind::kOpen:
        return watch->add(ObservationKind::kOpen, e.succeeded, e.for_writing, e.subject, nullptr);
      case ImportEventKind::kStat:
        return watch->add(ObservationKind::kStat, e.succeeded, false, e.subject, nullptr);
      case ImportEventKind::kGetenv:
        return watch->add(ObservationKind::kGetenv, e.succeeded, false, e.subject, e.value);
      case ImportEventKind::kResolve:
        if (std::string_view(e.function) != "SearchPathW") return;
        if (e.succeeded && e.value != nullptr) return watch->add(ObservationKind::kStat, true, false, e.value, nullptr);
        return watch->taint("NVRTC searched a path list (SearchPathW)");
      case ImportEventKind::kList:
        if (!e.succeeded) return watch->add(ObservationKind::kStat, false, false, e.subject, nullptr);
        return watch->taint(std::string("NVRTC listed the directory ") + (e.subject ? e.subject : "?"),
                            direct::NotRecorded::kWroteOrListed);
      case ImportEventKind::kEnvironmentBlock:
        return watch->note_environment_block();
      case ImportEventKind::kTempPath:
        return;
      case ImportEventKind::kExpandEnvironment:
        return watch->taint("NVRTC expanded environment variables in a string");
      case ImportEventKind::kChangedDirectory:
        return watch->taint("NVRTC changed the working directory");
      case ImportEventKind::kStartedProgram:
        return watch->taint("NVRTC started a program");
    }
  } catch (...) {
    watch->taint("out of memory while recording NVRTC's file accesses (capture)");
  }
}

std::mutex g_install_mu;

bool patched_fully(const ImportTablePatch& patch) { return patch.parsed && patch.left == 0; }

}  // namespace

bool install_compile_watch(HMODULE real_nvrtc) {
  std::lock_guard lock(g_install_mu);
  const DWORD last_error = GetLastError();
  set_import_observer(&observe);
  bool ok = patched_fully(install_import_watch(real_nvrtc));
  // The builtins DLLs NVRTC loads (shim/windows/real_dll.cc loads them beside it first).
  for (const wchar_t* name : {L"nvrtc-builtins64_130.dll", L"nvrtc-builtins64_131.dll", L"nvrtc-builtins64_132.dll",
                              L"nvrtc-builtins64_133.dll", L"nvrtc-builtins64_134.dll", L"nvrtc-builtins64_135.dll"}) {
    if (HMODULE builtins = GetModuleHandleW(name)) ok = patched_fully(install_import_watch(builtins)) && ok;
  }
  SetLastError(last_error);
  return ok;
}

CompileWatch::CompileWatch() {
  foreign_at_start_ = g_foreign.load(std::memory_order_acquire);
  g_active.fetch_add(1, std::memory_order_acq_rel);
  t_watch = this;
}

CompileWatch::~CompileWatch() { stop(); }

void CompileWatch::stop() {
  if (!active_) return;
  active_ = false;
  t_watch = nullptr;
  g_active.fetch_sub(1, std::memory_order_acq_rel);
  if (g_foreign.load(std::memory_order_acquire) != foreign_at_start_ && why_tainted_.empty()) {
    why_tainted_ = "NVRTC read files on another thread during the compile";
  }
}

void CompileWatch::add(direct::ObservationKind kind, bool succeeded, bool for_writing, const char* subject,
                       const char* value) {
  events_.push_back({kind, succeeded, for_writing, subject ? subject : "", value ? value : ""});
}

void CompileWatch::taint(std::string why, direct::NotRecorded reason) {
  if (!why_tainted_.empty()) return;
  why_tainted_ = std::move(why);
  taint_reason_ = reason;
}

std::vector<direct::Observation> CompileWatch::observations() const {
  std::vector<direct::Observation> out;
  out.reserve(events_.size());
  for (const Event& e : events_) out.push_back({e.kind, e.succeeded, e.for_writing, e.subject, e.value});
  return out;
}

}  // namespace nvrtc_cache::shim::windows
