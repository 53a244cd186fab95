#include "tests/support/store_testing.h"

#include <errno.h>
#include <lmdb.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string_view>
#include <type_traits>
#include <vector>

#include "util/binary_io.h"
#include "store/envelope.h"
#include "store/lmdb/lmdb_store.h"

namespace nvrtc_cache::store::testing {
namespace {

// Runs `body` in a forked child that sends back a trivially copyable result on a pipe; nullopt if
// the child did not deliver one.
template <typename Result, typename Body>
std::optional<Result> in_child(Body body) {
  static_assert(std::is_trivially_copyable_v<Result>);
  int fds[2];
  if (::pipe(fds) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(120);  // a hang fails the caller instead of blocking it forever
    const Result result = body();
    const ssize_t written = ::write(fds[1], &result, sizeof result);
    ::_exit(written == static_cast<ssize_t>(sizeof result) ? 0 : 1);
  }
  ::close(fds[1]);
  Result result{};
  std::size_t got = 0;
  while (got < sizeof result) {
    const ssize_t n = ::read(fds[0], reinterpret_cast<char*>(&result) + got, sizeof result - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (got != sizeof result) return std::nullopt;
  return result;
}

std::uint64_t le64(const MDB_val& value) {
  if (value.mv_size != 8) return ~0ull;
  return util::load_le(static_cast<const char*>(value.mv_data), 8);
}

// Raw LMDB, in a child only.
struct RawEnv {
  MDB_env* env = nullptr;
  explicit RawEnv(const std::string& directory, unsigned flags) {
    if (mdb_env_create(&env) != 0) {
      env = nullptr;
      return;
    }
    mdb_env_set_maxdbs(env, 8);
    mdb_env_set_maxreaders(env, 1024);
    if (mdb_env_open(env, directory.c_str(), flags, 0600) != 0) {
      mdb_env_close(env);
      env = nullptr;
    }
  }
  ~RawEnv() {
    if (env != nullptr) mdb_env_close(env);
  }
};

Recount recount_in_child(const std::string& directory) {
  Recount out;
  RawEnv raw(directory, MDB_RDONLY | MDB_NOTLS);
  if (raw.env == nullptr) return out;
  MDB_txn* txn = nullptr;
  if (mdb_txn_begin(raw.env, nullptr, MDB_RDONLY, &txn) != 0) return out;
  MDB_dbi entries = 0;
  MDB_dbi access = 0;
  MDB_dbi meta = 0;
  if (mdb_dbi_open(txn, "entries", 0, &entries) != 0 || mdb_dbi_open(txn, "access", 0, &access) != 0 ||
      mdb_dbi_open(txn, "meta", 0, &meta) != 0) {
    mdb_txn_abort(txn);
    return out;
  }
  MDB_cursor* cursor = nullptr;
  MDB_val key;
  MDB_val value;
  if (mdb_cursor_open(txn, entries, &cursor) != 0) return out;
  for (int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    ++out.entries;
    const std::uint64_t payload = payload_size_of(value.mv_size);
    out.payload_bytes += payload;
    MDB_val record;
    if (mdb_get(txn, access, &key, &record) != 0 || record.mv_size != 24 ||
        le64(MDB_val{8, record.mv_data}) != payload) {
      ++out.access_mismatches;
    }
  }
  mdb_cursor_close(cursor);
  if (mdb_cursor_open(txn, access, &cursor) != 0) return out;
  for (int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    ++out.access_records;
    MDB_val entry;
    if (mdb_get(txn, entries, &key, &entry) != 0) ++out.access_mismatches;
  }
  mdb_cursor_close(cursor);
  for (const auto& [name, field] : {std::pair{std::string_view("entry_count"), &out.recorded_entries},
                                    std::pair{std::string_view("payload_bytes"), &out.recorded_payload_bytes}}) {
    MDB_val k{name.size(), const_cast<char*>(name.data())};
    *field = mdb_get(txn, meta, &k, &value) == 0 ? le64(value) : 0;
  }
  mdb_txn_abort(txn);
  out.ok = true;
  return out;
}

// splitmix64: a deterministic stream of bytes for crash values.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// What the verifier child finds.
struct Verification {
  bool opened = false;
  std::uint64_t lost = 0;
  std::uint64_t evicted = 0;
  std::uint64_t wrong = 0;
  char problem[160] = {};
};

void note(Verification& v, const std::string& what) {
  if (v.problem[0] == '\0') std::snprintf(v.problem, sizeof v.problem, "%s", what.c_str());
}

using TrialEntries = std::vector<std::pair<int, int>>;  // (trial, index)

Verification verify(const std::string& directory, std::uint64_t map_size, const TrialEntries& committed,
                    const TrialEntries& maybe, bool expect_kept) {
  Verification v;
  Status status;
  auto store = LmdbStore::open(LmdbOptions{directory, map_size}, &status);
  if (store == nullptr) {
    note(v, "open failed: " + status.message());
    return v;
  }
  v.opened = true;
  for (const auto& [trial, index] : committed) {
    const auto got = store->get(crash_key(trial, index));
    if (!got) {
      if (expect_kept) {
        ++v.lost;
        note(v, "lost " + crash_key(trial, index));
      } else {
        ++v.evicted;
      }
    } else if (*got != crash_value(trial, index)) {
      ++v.wrong;
      note(v, "wrong bytes in " + crash_key(trial, index));
    }
  }
  for (const auto& [trial, index] : maybe) {  // committed but possibly not yet reported
    const auto got = store->get(crash_key(trial, index));
    if (got && *got != crash_value(trial, index)) {
      ++v.wrong;
      note(v, "wrong bytes in unreported " + crash_key(trial, index));
    }
  }
  return v;
}

}  // namespace

Recount recount(const std::string& directory) {
  return in_child<Recount>([&] { return recount_in_child(directory); }).value_or(Recount{});
}

std::optional<std::int64_t> recorded_last_access(const std::string& directory, const std::string& key) {
  struct Found {
    bool found;
    std::int64_t last_access;
  };
  const auto result = in_child<Found>([&] {
    Found out{false, 0};
    RawEnv raw(directory, MDB_RDONLY | MDB_NOTLS);
    MDB_txn* txn = nullptr;
    if (raw.env == nullptr || mdb_txn_begin(raw.env, nullptr, MDB_RDONLY, &txn) != 0) return out;
    MDB_dbi access = 0;
    MDB_val k{key.size(), const_cast<char*>(key.data())};
    MDB_val record;
    if (mdb_dbi_open(txn, "access", 0, &access) == 0 && mdb_get(txn, access, &k, &record) == 0 &&
        record.mv_size == 24) {
      out = {true, static_cast<std::int64_t>(le64(MDB_val{8, static_cast<char*>(record.mv_data) + 16}))};
    }
    mdb_txn_abort(txn);
    return out;
  });
  if (!result || !result->found) return std::nullopt;
  return result->last_access;
}

int dead_reader_slots(const std::string& directory) {
  return in_child<int>([&] {
           RawEnv raw(directory, 0);
           int dead = 0;
           if (raw.env == nullptr || mdb_reader_check(raw.env, &dead) != 0) return -1;
           return dead;
         })
      .value_or(-1);
}

std::string crash_key(int trial, int index) { return "crash-" + std::to_string(trial) + "-" + std::to_string(index); }

std::string crash_value(int trial, int index) {
  const std::uint64_t seed = mix((static_cast<std::uint64_t>(trial) << 32) ^ static_cast<std::uint32_t>(index));
  // Mostly small and medium values (inline and a few overflow pages), now and then a large one.
  static constexpr std::size_t kSizes[] = {16, 200, 1500, 3000, 9000, 40000, 70000, 250000};
  const std::size_t size = kSizes[seed % 8] + (seed >> 8) % 97;
  std::string value(size, '\0');
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < size; i += 8) {
    state = mix(state);
    std::memcpy(value.data() + i, &state, std::min<std::size_t>(8, size - i));
  }
  return value;
}

CrashTrialReport run_crash_trials(const std::string& directory, const CrashTrialOptions& options) {
  CrashTrialReport report;
  std::mt19937 random(options.seed);
  std::uniform_int_distribution<int> delay(0, options.max_kill_delay_us);
  std::vector<std::pair<int, int>> all_committed;
  auto problem = [&report](const std::string& what) {
    if (report.first_problem.empty()) report.first_problem = what;
  };
  for (int trial = 0; trial < options.trials; ++trial) {
    int fds[2];
    if (::pipe(fds) != 0) {
      problem("pipe failed");
      break;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      problem("fork failed");
      break;
    }
    if (pid == 0) {  // the writer
      ::close(fds[0]);
      ::alarm(60);
      Status status;
      auto store = LmdbStore::open(LmdbOptions{directory, options.map_size_bytes}, &status);
      if (store == nullptr) ::_exit(4);
      std::minstd_rand pick(static_cast<unsigned>(trial) + 1);
      for (int i = 0; i < 100000; ++i) {
        if (const Status put = store->put(crash_key(trial, i), crash_value(trial, i)); !put.is_ok()) {
          std::fprintf(stderr, "crash trial %d: put %d failed: %s\n", trial, i, put.message().c_str());
          ::_exit(2);
        }
        const std::uint32_t committed = static_cast<std::uint32_t>(i);
        if (::write(fds[1], &committed, sizeof committed) != static_cast<ssize_t>(sizeof committed)) ::_exit(5);
        const int earlier = static_cast<int>(pick() % static_cast<unsigned>(i + 1));
        const auto got = store->get(crash_key(trial, earlier));
        if (got ? *got != crash_value(trial, earlier) : options.expect_everything_kept) ::_exit(3);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    std::vector<std::pair<int, int>> committed;
    std::uint32_t index = 0;
    int next = 0;
    if (trial % 2 == 1 && ::read(fds[0], &index, sizeof index) == static_cast<ssize_t>(sizeof index)) {
      committed.emplace_back(trial, static_cast<int>(index));  // the first commit: start the delay now
      next = static_cast<int>(index) + 1;
    }
    ::usleep(static_cast<useconds_t>(delay(random)));
    ::kill(pid, SIGKILL);
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    ++report.trials;
    if (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL) {
      ++report.killed;
    } else if (WIFEXITED(wstatus) && (WEXITSTATUS(wstatus) == 2 || WEXITSTATUS(wstatus) == 3)) {
      ++report.put_failures;
      problem("trial " + std::to_string(trial) + ": the writer saw a failing " +
              (WEXITSTATUS(wstatus) == 2 ? "put" : "read-back"));
    } else if (!(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)) {
      ++report.other_crashes;
      problem("trial " + std::to_string(trial) + ": writer ended with wait status " + std::to_string(wstatus));
    }
    while (::read(fds[0], &index, sizeof index) == static_cast<ssize_t>(sizeof index)) {
      committed.emplace_back(trial, static_cast<int>(index));
      next = static_cast<int>(index) + 1;
    }
    ::close(fds[0]);
    report.committed += committed.size();
    all_committed.insert(all_committed.end(), committed.begin(), committed.end());
    const auto verified = in_child<Verification>([&] {
      return verify(directory, options.map_size_bytes, committed, {{trial, next}, {trial, next + 1}},
                    options.expect_everything_kept);
    });
    if (!verified || !verified->opened) {
      ++report.open_failures;
      problem("trial " + std::to_string(trial) + ": " + (verified ? verified->problem : "verifier died"));
      continue;
    }
    report.lost += verified->lost;
    report.evicted += verified->evicted;
    report.wrong_bytes += verified->wrong;
    if (verified->problem[0] != '\0') problem("trial " + std::to_string(trial) + ": " + verified->problem);
    const Recount counted = recount(directory);
    if (!counted.totals_match()) {
      ++report.totals_mismatches;
      problem("trial " + std::to_string(trial) + ": totals " + std::to_string(counted.recorded_entries) + "/" +
              std::to_string(counted.recorded_payload_bytes) + " but recount " + std::to_string(counted.entries) + "/" +
              std::to_string(counted.payload_bytes) + ", access mismatches " +
              std::to_string(counted.access_mismatches));
    }
  }
  // Everything committed in any trial, once more at the end (a later crash must not damage it).
  if (options.expect_everything_kept) {
    const auto final_check =
        in_child<Verification>([&] { return verify(directory, options.map_size_bytes, all_committed, {}, true); });
    if (!final_check || !final_check->opened) {
      ++report.open_failures;
      problem("final check: store did not open");
    } else {
      report.lost += final_check->lost;
      report.wrong_bytes += final_check->wrong;
      if (final_check->problem[0] != '\0') problem(std::string("final check: ") + final_check->problem);
    }
  }
  return report;
}

}  // namespace nvrtc_cache::store::testing
