// nvrtc-cache.exe, the Windows CLI: run [--] CMD (the program with the cache loaded into it), and
// stats [--json], clear, verify on the proxy's store (the LMDB
// store of store/lmdb/lmdb_store.h, opened as store/cache_directory.h says) in the directory the
// proxy uses, from the same settings (core/config.h: environment > user file > system file >
// default, %LOCALAPPDATA%\nvrtc-cache by default). The output matches the Linux CLI's (tools/)
// where both have the field. Contract: each command returns the process's exit status; messages go
// to stderr, results to stdout.
#pragma once

#include <memory>
#include <string>

#include "store/lmdb/lmdb_store.h"

namespace nvrtc_cache::tools::windows {

// The store (created if missing; a damaged one is moved aside, said on stderr); nullptr (said on
// stderr) when it cannot be opened.
std::unique_ptr<store::LmdbStore> open_store(std::string* directory);

// run [--] CMD [ARGS...] (tools/windows/run_command.cc): its arguments are read from the wide
// command line; CMD's exit code.
int run_command();
int stats(bool json);
int clear();
int verify();

}  // namespace nvrtc_cache::tools::windows
