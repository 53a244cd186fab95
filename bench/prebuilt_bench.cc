// The read-only prebuilt tier: which is cheaper to serve a hit from, a shared directory of sealed
// files (file:///DIR?read-only) or an LMDB store opened read-only (MDB_RDONLY | MDB_NOLOCK, as
// LmdbStore opens a directory it cannot write, e.g. an image layer)?
//   prebuilt_bench [ENTRIES] [VALUE_BYTES]
// Fills both with the same ENTRIES values, makes both read-only (directories 0555, files 0444),
// then times (a) a hit in a warm process: get (+ unseal for the file tier) per key, median and
// mean over every key, page cache warm; (b) a process's first hit: open + one get, in a fresh
// process each time (the child times itself), median of 30. Prints milliseconds.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "store/lmdb/lmdb_store.h"
#include "store/remote/sealed_value.h"
#include "store/remote/tier.h"

extern char** environ;

namespace fs = std::filesystem;
using namespace nvrtc_cache;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void report(const char* what, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double m : ms) sum += m;
  std::printf("%-44s median %.4f ms  mean %.4f ms  (n=%zu)\n", what, ms[ms.size() / 2],
              sum / static_cast<double>(ms.size()), ms.size());
}

std::string key_of(int i) {
  std::string key = "R" + std::string(32, '\0');
  std::mt19937_64 random(static_cast<std::uint64_t>(i) * 7919 + 1);
  for (int b = 1; b < 33; ++b) key[b] = static_cast<char>(random());
  return key;
}

std::unique_ptr<store::remote::Tier> file_tier(const std::string& dir) {
  std::string problem;
  const auto url = store::remote::parse_tier_url("file://" + dir + "?read-only", &problem);
  const auto options = store::remote::tier_options(*url, &problem);
  return store::remote::make_tier(*url, options, &problem);
}

// Child: open + one get; prints the milliseconds it took.
int first_hit(const std::string& kind, const std::string& dir, int index) {
  const std::string key = key_of(index);
  const auto start = Clock::now();
  bool hit = false;
  if (kind == "lmdb") {
    store::Status status;
    auto s = store::LmdbStore::open({dir, 1ull << 30}, &status);
    hit = s && s->get(key).has_value();
  } else {
    auto tier = file_tier(dir);
    auto r = tier->get(key, store::remote::Clock::now() + std::chrono::seconds(10));
    hit = r.ok() && store::remote::unseal_value(key, r.value, nullptr).code == store::remote::UnsealCode::kOk;
  }
  const double ms = ms_since(start);
  if (!hit) return 1;
  std::printf("%.6f\n", ms);
  return 0;
}

double spawn_first_hit(const std::string& kind, const std::string& dir, int index) {
  const std::string self = fs::read_symlink("/proc/self/exe");
  const std::string i = std::to_string(index);
  std::vector<char*> argv = {const_cast<char*>(self.c_str()), const_cast<char*>("--first-hit"),
                             const_cast<char*>(kind.c_str()), const_cast<char*>(dir.c_str()),
                             const_cast<char*>(i.c_str()),    nullptr};
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) std::exit(1);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  pid_t pid;
  if (posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ) != 0) std::exit(1);
  close(pipe_fds[1]);
  char buffer[64] = {};
  const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer - 1);
  close(pipe_fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (n <= 0 || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    std::fprintf(stderr, "first hit (%s) failed\n", kind.c_str());
    std::exit(1);
  }
  return std::atof(buffer);
}

void make_read_only(const std::string& dir) {
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    chmod(it->path().c_str(), it->is_directory() ? 0555 : 0444);
  }
  chmod(dir.c_str(), 0555);
}

void make_writable(const std::string& dir) {
  chmod(dir.c_str(), 0755);
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    chmod(it->path().c_str(), it->is_directory() ? 0755 : 0644);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--first-hit") return first_hit(argv[2], argv[3], std::atoi(argv[4]));
  const int entries = argc > 1 ? std::atoi(argv[1]) : 2000;
  const std::size_t value_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64 * 1024;
  char pattern[] = "/tmp/prebuilt-bench-XXXXXX";
  const std::string root = mkdtemp(pattern);
  const std::string lmdb_dir = root + "/lmdb", file_dir = root + "/files";
  fs::create_directories(file_dir);
  {
    store::Status status;
    auto s = store::LmdbStore::open({lmdb_dir, 4ull << 30}, &status);
    std::string problem;
    const auto url = store::remote::parse_tier_url("file://" + file_dir, &problem);
    auto tier = store::remote::make_tier(*url, store::remote::tier_options(*url, &problem), &problem);
    std::mt19937_64 random(1);
    std::string value(value_bytes, '\0');
    for (int i = 0; i < entries; ++i) {
      for (auto& c : value) c = static_cast<char>(random() & 0x3f);
      const std::string key = key_of(i);
      if (!s->put(key, value).is_ok()) return 1;
      if (!tier->put(key, store::remote::seal_value(key, value, nullptr),
                     store::remote::Clock::now() + std::chrono::seconds(10))
               .ok())
        return 1;
    }
  }
  make_read_only(lmdb_dir);
  make_read_only(file_dir);
  std::printf("%d entries of %zu bytes; both read-only; warm page cache\n", entries, value_bytes);

  std::vector<double> file_ms, lmdb_ms;
  auto tier = file_tier(file_dir);
  store::Status status;
  auto s = store::LmdbStore::open({lmdb_dir, 1ull << 30}, &status);
  if (!s) return 1;
  // root writes regardless of modes: the store then opens read-write; its hit path (a read
  // transaction, mdb_get, the envelope check) is the one a read-only open takes.
  if (!s->read_only()) std::printf("note: running as root, the LMDB store opened read-write\n");
  for (int pass = 0; pass < 2; ++pass) {
    file_ms.clear();
    lmdb_ms.clear();
    for (int i = 0; i < entries; ++i) {
      const std::string key = key_of(i);
      auto start = Clock::now();
      auto r = tier->get(key, store::remote::Clock::now() + std::chrono::seconds(10));
      const auto unsealed = store::remote::unseal_value(key, r.value, nullptr);
      std::string copy(unsealed.payload);  // what a caller receives: its own bytes
      file_ms.push_back(ms_since(start));
      if (unsealed.code != store::remote::UnsealCode::kOk) return 1;
      start = Clock::now();
      auto v = s->get(key);
      lmdb_ms.push_back(ms_since(start));
      if (!v || *v != copy) return 1;
    }
  }
  report("warm hit, file:///dir?read-only (get+unseal)", file_ms);
  report("warm hit, LMDB read-only (MDB_RDONLY|NOLOCK)", lmdb_ms);
  s.reset();

  std::vector<double> file_first, lmdb_first;
  for (int i = 0; i < 30; ++i) {
    file_first.push_back(spawn_first_hit("file", file_dir, i % entries));
    lmdb_first.push_back(spawn_first_hit("lmdb", lmdb_dir, i % entries));
  }
  report("first hit in a process, file:// (open+get)", file_first);
  report("first hit in a process, LMDB ro (open+get)", lmdb_first);
  make_writable(root);
  fs::remove_all(root);
  return 0;
}
