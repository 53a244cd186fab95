// nvrtc-cache.exe, the Windows CLI: stats [--json], clear, verify on the proxy's store
// (store/windows/lmdb_store.h) in the directory the proxy uses (NVRTC_CACHE_DIR, else
// %LOCALAPPDATA%\nvrtc-cache; shim/windows/runtime.h). The output matches the Linux CLI's (tools/)
// where both have the field. Contract: each command returns the process's exit status; messages go
// to stderr, results to stdout.
#pragma once

#include <memory>
#include <string>

#include "store/windows/lmdb_store.h"

namespace nvrtc_cache::tools::windows {

// The store, opened read-only unless `write`; nullptr (said on stderr) when it cannot be.
std::unique_ptr<store::WindowsLmdbStore> open_store(bool write, std::string* directory);

int stats(bool json);
int clear();
int verify();

}  // namespace nvrtc_cache::tools::windows
