// Bundled headers: the install `--use-bundled-headers=DIR` makes (NVRTC 13.5+), done by the shim so a
// served compile leaves DIR as NVRTC would. Measured with NVRTC 13.5 (strace, docs/nvrtc-versions.md):
// each compile with the option creates DIR and its parents (mkdir), opens DIR/.nvrtc_install.lock for
// writing, takes a flock on it and reads DIR/.nvrtc_headers_version; only when that marker is missing
// does it extract the headers, marker last — the same files nvrtcInstallBundledHeaders(DIR, 0) writes.
// Then it compiles as with -IDIR -IDIR/cccl: the headers it reads are dependencies like any -I header.
// So before a compile with the option is looked up, each DIR whose marker does not name the loading
// NVRTC's version is installed through the real nvrtcInstallBundledHeaders (NVRTC's own skip-if-
// present check and file lock); the lock and the marker (whose timestamp changes with every install)
// are NVRTC's bookkeeping, not dependencies.
// Contract: thread-safe; reads the marker through platform::Env; the install is NVRTC's (it creates
// directories and files, process-safe by NVRTC's file lock); never throws except std::bad_alloc.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "keying/program_inputs.h"
#include "platform/env.h"
#include "libraries/nvrtc/real_nvrtc.h"

namespace nvrtc_cache::shim {

inline constexpr std::string_view kBundledHeadersMarker = ".nvrtc_headers_version";
inline constexpr std::string_view kBundledHeadersLock = ".nvrtc_install.lock";

// The directories the options (then NVRTC_APPEND_FLAGS') name with --use-bundled-headers=, in order.
std::vector<std::string> bundled_header_directories(int num_options, const char* const* options,
                                                    const std::optional<std::string>& append_flags,
                                                    const keying::LibraryIdentity& library);

// Whether DIR's version marker (format 1) names NVRTC major.minor's headers.
bool bundled_headers_marked(const std::string& dir, int major, int minor,
                            platform::Env& env = *platform::Env::system());

// Installs the headers into each directory whose marker does not name `real`'s version, through
// `real`'s nvrtcInstallBundledHeaders. nullopt when every directory holds them, else why not (NVRTC's
// error log): the compile then goes to NVRTC uncached, to fail as NVRTC fails.
std::optional<std::string> ensure_bundled_headers(const interpose::RealNvrtc& real,
                                                  std::span<const std::string> directories);

// Whether `path` (as NVRTC spelled it) is the install's lock or marker in one of `directories`.
bool is_bundled_headers_bookkeeping(std::string_view path, std::span<const std::string> directories);

}  // namespace nvrtc_cache::shim
