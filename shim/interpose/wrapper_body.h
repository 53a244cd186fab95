// The body every NVRTC wrapper shares, whether exported (the caller's NVRTC is found through its
// scope) or handed out by dlsym (bound to a slot): find `real`, then forward (PASS) or hand over to
// hooks:: (HOOK), never letting an exception cross the C ABI.
// A real NVRTC that lacks the function called (an older NVRTC than the client was linked against:
// nvrtcGetTileIR with 13.0) is answered as the dynamic loader answers an undefined symbol at a lazy
// binding: its message on stderr, exit status 127 (function_missing_in_real_nvrtc).
// Contract: header-only helpers for libraries/nvrtc/exports.cc and shim/interpose/slot_wrappers.cc.
#pragma once

#include <nvrtc.h>
#ifndef NVJITLINK_NO_INLINE
#define NVJITLINK_NO_INLINE
#endif
#include <nvJitLink.h>
#include <nvvm.h>

#include <type_traits>

#include "core/log.h"
#include "libraries/nvrtc/hooks.h"
#include "libraries/nvjitlink/hooks.h"
#include "libraries/nvvm/hooks.h"
#include "libraries/nvrtc/real_nvrtc.h"

namespace nvrtc_cache::shim::interpose {

template <typename Ret>
Ret failure_result() {
  if constexpr (std::is_same_v<Ret, nvrtcResult>) {
    return NVRTC_ERROR_INTERNAL_ERROR;
  } else if constexpr (std::is_same_v<Ret, nvJitLinkResult>) {
    return NVJITLINK_ERROR_INTERNAL;
  } else if constexpr (std::is_same_v<Ret, nvvmResult>) {
    return NVVM_ERROR_INVALID_PROGRAM;
  } else {
    return nullptr;
  }
}

template <typename Ret>
Ret no_real_nvrtc() {
  if constexpr (std::is_same_v<Ret, nvJitLinkResult>) {
    core::log_once(core::LogLevel::kError, "no-real-nvjitlink", "no real nvJitLink is loaded in the caller's scope");
  } else if constexpr (std::is_same_v<Ret, nvvmResult>) {
    core::log_once(core::LogLevel::kError, "no-real-nvvm", "no real libNVVM is loaded in the caller's scope");
  } else {
    core::log_once(core::LogLevel::kError, "no-real-nvrtc", "no real NVRTC is loaded in the caller's scope");
  }
  return failure_result<Ret>();
}

// Writes "<program>: symbol lookup error: <caller's object>: undefined symbol: <name>, version <node>"
// (without the version when `node` is nullptr) to stderr and ends the process with status 127, as
// ld.so does when a lazily bound call finds no definition.
[[noreturn]] void function_missing_in_real_nvrtc(const char* name, const void* caller, const char* node);

}  // namespace nvrtc_cache::shim::interpose

#define NVRTC_CACHE_CALL_PASS(name, args) real->name args
#define NVRTC_CACHE_CALL_HOOK(name, args) nvrtc_cache::shim::hooks::name(*real, NVRTC_CACHE_UNPAREN args)

// `node`: the version node the caller's reference names ("libnvrtc.so.13"), or nullptr.
#define NVRTC_CACHE_WRAPPER_BODY(kind, ret, name, args, find_real, node)                                      \
  {                                                                                                           \
    const auto* real = find_real;                                                                             \
    if (real == nullptr) return nvrtc_cache::shim::interpose::no_real_nvrtc<ret>();                           \
    if (real->name == nullptr) {                                                                              \
      nvrtc_cache::shim::interpose::function_missing_in_real_nvrtc(#name, __builtin_return_address(0), node); \
    }                                                                                                         \
    try {                                                                                                     \
      return NVRTC_CACHE_CALL_##kind(name, args);                                                             \
    } catch (...) {                                                                                           \
      return nvrtc_cache::shim::interpose::failure_result<ret>();                                             \
    }                                                                                                         \
  }
