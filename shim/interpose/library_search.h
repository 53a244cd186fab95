// Where the real NVRTC, nvJitLink and libNVVM are found at run time: the order cuda.pathfinder (1.9)
// searches, written once for the proxy (run --proxy), `doctor` and `replay`. Nothing is baked in at
// build time. The order, first existing file wins:
//   0. NVRTC_CACHE_REAL_NVRTC / _NVJITLINK / _NVVM (the caller checks them: override_variable);
//   1. the running interpreter's site-packages, wheel directory by wheel directory (nvidia/cu13/lib in
//      every site-packages, then nvidia/cuda_nvrtc/lib ...), each soname in order (13 before 12);
//   2. $CONDA_PREFIX/lib64, /lib;
//   3. the system loader's directories: LD_LIBRARY_PATH, /etc/ld.so.conf (and its includes), the
//      loader's defaults (what dlopen(soname) would search, read as directories so that the proxy,
//      which has the soname, can skip its own directory);
//   4. $CUDA_PATH, else $CUDA_HOME (lib64, lib; nvvm/lib64 for libNVVM);
//   5. /usr/local/cuda.
// Everything the search reads comes in SearchRoots, so tests run it over fake directory trees;
// roots_of_this_process() fills them from the environment and /proc/self.
// Contract: thread-safe (no shared state); never throws but std::bad_alloc; reads the filesystem
// (stat, glob, /etc/ld.so.conf) and the environment (getenv); loads nothing; no fork.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nvrtc_cache::shim::interpose {

enum class RealLibrary { kNvrtc, kNvJitLink, kNvvm };

// What is searched for one library: its sonames (preferred first), its directories inside a
// site-packages, and inside a toolkit-like root (CONDA_PREFIX, CUDA_PATH, /usr/local/cuda).
struct LibrarySpec {
  std::vector<std::string> sonames;
  std::vector<std::string> wheel_dirs;
  std::vector<std::string> root_dirs;
};
// Every soname the stacks load (NVRTC 13 and 12, nvJitLink 13 and 12, libNVVM 4).
LibrarySpec spec_of(RealLibrary library);
// "NVRTC_CACHE_REAL_NVRTC", "NVRTC_CACHE_REAL_NVJITLINK", "NVRTC_CACHE_REAL_NVVM".
const char* override_variable(RealLibrary library);
// "NVRTC", "nvJitLink", "libNVVM".
const char* library_name(RealLibrary library);

struct SearchRoots {
  std::vector<std::string> site_packages;  // the interpreter's, in its order
  std::string conda_prefix;                // $CONDA_PREFIX
  std::string cuda_path;                   // $CUDA_PATH, else $CUDA_HOME
  std::string cuda_path_variable;          // which of the two ("CUDA_PATH", "CUDA_HOME")
  std::vector<std::string> loader_dirs;    // LD_LIBRARY_PATH's, ld.so.conf's, the loader's defaults
  std::vector<std::string> toolkit_roots = {"/usr/local/cuda"};
  std::vector<std::string> skip_dirs;  // directories never chosen from (the proxy's own)
};

struct FoundLibrary {
  std::string path;       // as found (not resolved)
  std::string found_via;  // "site-packages", "conda", "system", "CUDA_PATH", "CUDA_HOME", "/usr/local/cuda"
};

// Every existing candidate, in search order (no duplicates by file).
std::vector<FoundLibrary> search_library(const LibrarySpec& spec, const SearchRoots& roots);
// The first candidate, if any.
std::optional<FoundLibrary> find_library(const LibrarySpec& spec, const SearchRoots& roots);

// The site-packages an interpreter started as `executable` (as invoked, e.g. .venv/bin/python: a
// venv is known by the pyvenv.cfg beside or above it) searches, in site.getsitepackages() order,
// with the user's site (under `home`) where Python adds it (outside a venv, or a venv that includes
// the system's packages).
std::vector<std::string> interpreter_site_packages(const std::string& executable, const std::string& home);
// The directories /etc/ld.so.conf (at `conf`) lists, following `include` globs.
std::vector<std::string> ld_so_conf_dirs(const std::string& conf);

// The roots of this process: the site-packages of the interpreter this process is (when it is a
// Python: a program that is not searches no wheel, as its loader does not), then, with
// `virtual_env`, of $VIRTUAL_ENV's interpreter (what a Python started here would search: the CLI),
// then `extra_site_packages`; the environment's CONDA_PREFIX, CUDA_PATH/CUDA_HOME, LD_LIBRARY_PATH;
// /etc/ld.so.conf; the loader's defaults.
SearchRoots roots_of_this_process(const std::vector<std::string>& extra_site_packages = {}, bool virtual_env = false);

}  // namespace nvrtc_cache::shim::interpose
