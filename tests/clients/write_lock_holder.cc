// write_lock_holder DIR: opens the LMDB store in DIR, begins a write transaction (taking LMDB's one
// writer lock), says "held" on stdout, and stops itself (SIGSTOP) inside it, as a process suspended
// by Ctrl-Z or a debugger mid-write would be. For tests/integration/bounded_writes_test.cc.
#include <lmdb.h>
#include <signal.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  MDB_env* env = nullptr;
  if (mdb_env_create(&env) != MDB_SUCCESS || mdb_env_set_maxdbs(env, 8) != MDB_SUCCESS ||
      mdb_env_set_maxreaders(env, 1024) != MDB_SUCCESS || mdb_env_open(env, argv[1], MDB_NOTLS, 0600) != MDB_SUCCESS) {
    std::fprintf(stderr, "write_lock_holder: cannot open %s\n", argv[1]);
    return 1;
  }
  MDB_txn* txn = nullptr;
  if (mdb_txn_begin(env, nullptr, 0, &txn) != MDB_SUCCESS) return 1;
  std::printf("held\n");
  std::fflush(stdout);
  raise(SIGSTOP);
  mdb_txn_abort(txn);
  mdb_env_close(env);
  return 0;
}
