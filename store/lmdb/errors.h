// How LMDB's return codes (and errno values met on the way) become the store's Status.
// Contract: pure apart from reading LMDB's message table; thread-safe; never throws except
// std::bad_alloc while building a message.
#pragma once

#include <string_view>

#include "store/status.h"

namespace nvrtc_cache::store::lmdb {

// `what: <message>`, classified: full map -> full, damage -> corruption, permissions -> read_only,
// anything else -> io_error.
Status to_status(int rc, std::string_view what);
// The Status of the kind `rc` is, with `message` as it is (which already says what rc means).
Status classified(int rc, std::string message);

// LMDB's codes for a store it cannot read as written (damaged, or not an LMDB 0.9 file).
bool is_corruption(int rc);

// The directory or files are not writable (the store is then opened read-only).
bool is_permission_error(int rc);

// The errors of a filesystem (or a quota) with no space left: ENOSPC, EDQUOT where it exists.
bool is_out_of_space(int error);

}  // namespace nvrtc_cache::store::lmdb
