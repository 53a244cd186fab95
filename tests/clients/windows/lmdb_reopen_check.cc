// LMDB's open of its lock file's mutexes on Windows (store/lmdb/lock_file_information_windows.h) under
// Wine, for tests/integration/wine_test.cc: LMDB built as the Windows port builds it (mdb.c with that
// header forced in) opens the environment in DIR, adds one to a counter in a write transaction and
// closes the environment, N times. Run by several processes at once, each of them is at times the
// last to close while another opens: every open succeeds, and the counter ends at the sum of their
// commits (the mutex an opener made again serialises the writers as the first one did).
// Usage: lmdb_reopen_check DIR N; prints "opens N failed F commits C counter V" (V: the counter after
// this process's last commit, or as found with N = 0).
#include <windows.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lmdb.h"

namespace {

constexpr char kKey[] = "counter";

// Adds one to the counter in `env` (or only reads it, `add` false); false if a call failed.
bool add_one(MDB_env* env, bool add, unsigned long long* counter) {
  MDB_txn* txn = nullptr;
  if (mdb_txn_begin(env, nullptr, add ? 0 : MDB_RDONLY, &txn) != MDB_SUCCESS) return false;
  MDB_dbi dbi = 0;
  MDB_val key{sizeof kKey, const_cast<char*>(kKey)};
  MDB_val value{};
  unsigned long long n = 0;
  if (mdb_dbi_open(txn, nullptr, 0, &dbi) != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    return false;
  }
  if (mdb_get(txn, dbi, &key, &value) == MDB_SUCCESS && value.mv_size == sizeof n)
    std::memcpy(&n, value.mv_data, sizeof n);
  if (!add) {
    mdb_txn_abort(txn);
    *counter = n;
    return true;
  }
  ++n;
  value = MDB_val{sizeof n, &n};
  if (mdb_put(txn, dbi, &key, &value, 0) != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    return false;
  }
  if (mdb_txn_commit(txn) != MDB_SUCCESS) return false;
  *counter = n;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const int rounds = std::atoi(argv[2]);
  int failed = 0;
  int commits = 0;
  unsigned long long counter = 0;
  for (int i = 0; i < (rounds > 0 ? rounds : 1); ++i) {
    MDB_env* env = nullptr;
    if (mdb_env_create(&env) != MDB_SUCCESS) return 3;
    mdb_env_set_mapsize(env, std::size_t{1} << 20);
    const int rc = mdb_env_open(env, argv[1], MDB_NOTLS, 0600);
    if (rc != MDB_SUCCESS) {
      ++failed;
      if (failed == 1) std::fprintf(stderr, "mdb_env_open: %s (%d)\n", mdb_strerror(rc), rc);
    } else if (add_one(env, rounds > 0, &counter) && rounds > 0) {
      ++commits;
    }
    mdb_env_close(env);
  }
  std::printf("opens %d failed %d commits %d counter %llu\n", rounds, failed, commits, counter);
  return 0;
}
