#include "shim/windows/store_open_ahead.h"

#include <windows.h>

#include <atomic>

#include "platform/windows/last_error.h"

namespace nvrtc_cache::shim::windows {
namespace {

enum State : int {
  kIdle,       // no thread has begun the open
  kRunning,    // the thread is opening the store
  kTakenOver,  // a compile opens it (or opened it) itself
  kDone,       // the thread's open is over
};

std::atomic<bool> g_started{false};
std::atomic<int> g_state{kIdle};
HANDLE g_done = nullptr;  // manual-reset; set when the thread's open is over (created before the thread)
void (*g_open)() = nullptr;

DWORD WINAPI open_ahead(void* module) {
  int idle = kIdle;
  if (g_state.compare_exchange_strong(idle, kRunning, std::memory_order_acq_rel)) {
    try {
      g_open();
    } catch (...) {
    }
    g_state.store(kDone, std::memory_order_release);
    SetEvent(g_done);
  }
  FreeLibraryAndExitThread(static_cast<HMODULE>(module), 0);
}

}  // namespace

void start_store_open_ahead(void (*open)()) {
  if (g_started.load(std::memory_order_acquire) || g_started.exchange(true, std::memory_order_acq_rel)) return;
  const platform::windows::LastErrorKept last_error;
  HMODULE module = nullptr;
  g_open = open;
  g_done = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  if (g_done == nullptr ||
      !GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS, reinterpret_cast<LPCWSTR>(&open_ahead), &module)) {
    return;  // no thread: every compile opens the store itself (kIdle stays)
  }
  const HANDLE thread = CreateThread(nullptr, 0, open_ahead, module, 0, nullptr);
  if (thread == nullptr) {
    FreeLibrary(module);
    return;
  }
  CloseHandle(thread);
}

OpenAheadTurn store_open_ahead_turn() {
  int state = g_state.load(std::memory_order_acquire);
  if (state == kIdle && g_state.compare_exchange_strong(state, kTakenOver, std::memory_order_acq_rel)) {
    return OpenAheadTurn::kOpenHere;
  }
  if (state == kRunning) {
    const platform::windows::LastErrorKept last_error;
    const DWORD waited = WaitForSingleObject(g_done, static_cast<DWORD>(kOpenAheadWait.count()));
    if (waited != WAIT_OBJECT_0) return OpenAheadTurn::kTimedOut;
    return OpenAheadTurn::kOpened;
  }
  return state == kDone ? OpenAheadTurn::kOpened : OpenAheadTurn::kOpenHere;
}

}  // namespace nvrtc_cache::shim::windows
