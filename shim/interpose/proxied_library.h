// Proxy mode (interpose/host_mode.h): the real NVRTC, nvJitLink and libNVVM the proxy core (the stand-in
// libnvrtc.so.13, and the stand-in libnvrtc.so.12) forwards to, each opened by absolute path: the
// variable's value when set (and of that major), else the first library of the stand-in's major the
// run-time search finds (shim/interpose/library_search.h: the
// interpreter's wheels, conda, the loader's directories but the proxy's own, CUDA_PATH/CUDA_HOME,
// /usr/local/cuda). The stand-ins libnvJitLink.so.13 and libnvvm.so.4 (shim/interpose/standin/)
// reach them only through the core (shim/interpose/proxy_entries.h).
// Contract: thread-safe; never throws; the search runs once per library (first use); a library that
// cannot be found or opened is said once (an error in the log) and answered with nullptr, every
// time, without retrying the load in a loop.
#pragma once

#include <string>

#include "shim/interpose/library_search.h"

namespace nvrtc_cache::shim::interpose {

struct ProxiedLibrary {
  RealLibrary library;
  const char* soname;           // the one the proxy stands in for: only a real library of that major will do,
  const char* node;             // the version node its functions are in, or nullptr
  const char* fallback_soname;  // but this one, where none of that major is found, or nullptr
  int search_slot;              // which once-only search result is its (one per ProxiedLibrary)
};

// The core's NVRTC (a client of libnvrtc.so.13, or one that asked cuda.pathfinder, which tries
// libnvrtc.so.13 first and finds the core): a 13.x NVRTC, else a 12.x one, as the stack would have
// loaded without the proxy. The stand-in libnvrtc.so.12's (a client linked against 12, or loading it by
// soname): a 12.x NVRTC only.
inline constexpr ProxiedLibrary kProxiedNvrtc = {RealLibrary::kNvrtc, "libnvrtc.so.13", nullptr, "libnvrtc.so.12", 0};
inline constexpr ProxiedLibrary kProxiedNvrtc12 = {RealLibrary::kNvrtc, "libnvrtc.so.12", "libnvrtc.so.12", nullptr, 1};
inline constexpr ProxiedLibrary kProxiedNvJitLink = {RealLibrary::kNvJitLink, "libnvJitLink.so.13",
                                                     "libnvJitLink.so.13", nullptr, 2};
inline constexpr ProxiedLibrary kProxiedNvvm = {RealLibrary::kNvvm, "libnvvm.so.4", nullptr, nullptr, 3};
// The stand-in libnvJitLink.so.12's: a 12.x nvJitLink only.
inline constexpr ProxiedLibrary kProxiedNvJitLink12 = {RealLibrary::kNvJitLink, "libnvJitLink.so.12",
                                                       "libnvJitLink.so.12", nullptr, 4};
inline constexpr int kProxiedLibraryCount = 5;

// Whether the override variable's `path` may stand for `library`: its file name names no major
// (libnvrtc.so, a custom build) or the major of library.soname (or of its fallback).
bool override_fits(const ProxiedLibrary& library, const std::string& path);

// The path of the real library: the variable's value where it fits, else the search's first find
// ("" if none).
std::string proxied_library_path(const ProxiedLibrary& library);
// The real library's handle (dlopen RTLD_NOW | RTLD_LOCAL, never closed), or nullptr.
void* open_proxied_library(const ProxiedLibrary& library);
// The function `name` of the real library (in its version node where it has one), or nullptr.
void* proxied_function(const ProxiedLibrary& library, const char* name);

}  // namespace nvrtc_cache::shim::interpose
