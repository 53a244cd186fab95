#include "store/lmdb/errors.h"

#include <errno.h>
#include <lmdb.h>
#include <string.h>

#include <string>
#include <utility>

#include "platform/c_runtime.h"
#include "store/lmdb/library.h"

namespace nvrtc_cache::store::lmdb {
namespace {

std::string describe(int rc) {
  if (rc >= MDB_KEYEXIST && rc <= MDB_LAST_ERRCODE) return api().mdb_strerror(rc);
  return platform::error_message(rc);
}

}  // namespace

Status to_status(int rc, std::string_view what) { return classified(rc, std::string(what) + ": " + describe(rc)); }

Status classified(int rc, std::string message) {
  if (rc == MDB_MAP_FULL || rc == MDB_TXN_FULL) return Status::full(std::move(message));
  if (is_corruption(rc)) return Status::corruption(std::move(message));
  if (is_permission_error(rc)) return Status::read_only(std::move(message));
  return Status::io_error(std::move(message));
}

bool is_corruption(int rc) {
  return rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH;
}

bool is_permission_error(int rc) { return rc == EACCES || rc == EROFS || rc == EPERM; }

bool is_out_of_space(int error) {
#ifdef EDQUOT
  if (error == EDQUOT) return true;
#endif
  return error == ENOSPC;
}

}  // namespace nvrtc_cache::store::lmdb
