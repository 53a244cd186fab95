// Corruption LMDB cannot detect: scattered byte flips and garbage pages in data.mdb. Each trial
// damages a filled store, then a forked child (standing in for a host process) opens it through
// open_cache and reads every key. The child must never crash and never see a wrong byte; damaged
// entries are misses. NVRTC_CACHE_CORRUPTION_TRIALS sets the trial count (scripts/corruption_trials.sh
// runs 500, and also writes after the damage with NVRTC_CACHE_CORRUPTION_WRITES=1).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "store/cache_directory.h"

namespace nvrtc_cache::store {
namespace {

namespace fs = std::filesystem;

constexpr int kKeys = 200;
std::string key_of(int i) { return "key-" + std::to_string(i); }
std::string value_of(int i) {
  return std::string(100 + static_cast<std::size_t>(i) * 37, static_cast<char>('a' + i % 26));
}

CachePolicy policy(const std::string& dir) {
  CachePolicy p;
  p.directory = dir;
  p.max_bytes = 64ull << 20;
  return p;
}

struct TrialOutcome {
  int crashed = 0, wrong = 0, served = 0, missed = 0;
};

enum class Damage { kByteFlips, kGarbagePages };

void damage(const std::string& data, Damage kind, std::mt19937& rng) {
  const auto size = fs::file_size(data);
  std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
  constexpr std::uint64_t kPage = 4096;
  if (kind == Damage::kByteFlips) {
    for (int k = 0; k < 20; ++k) {  // past the two meta pages: the open-time check covers those
      f.seekp(static_cast<std::streamoff>(2 * kPage + rng() % (size - 2 * kPage)));
      f.put(static_cast<char>(rng()));
    }
  } else {
    const std::uint64_t pages = size / kPage;
    for (int k = 0; k < 3; ++k) {
      f.seekp(static_cast<std::streamoff>((2 + rng() % (pages - 2)) * kPage));
      for (std::uint64_t b = 0; b < kPage; ++b) f.put(static_cast<char>(rng()));
    }
  }
}

TrialOutcome run_trial(const std::string& dir, Damage kind, std::mt19937& rng) {
  fs::remove_all(dir);
  {
    OpenedCache opened = open_cache(policy(dir));
    if (!opened.store) return {1, 0, 0, 0};
    for (int i = 0; i < kKeys; ++i) (void)opened.store->put(key_of(i), value_of(i));
  }
  damage(dir + "/store/data.mdb", kind, rng);
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {1, 0, 0, 0};
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    int counts[3] = {0, 0, 0};  // wrong, served, missed
    OpenedCache opened = open_cache(policy(dir));
    for (int i = 0; opened.store && i < kKeys; ++i) {
      const auto v = opened.store->get(key_of(i));
      ++counts[!v ? 2 : (*v == value_of(i) ? 1 : 0)];
    }
    if (opened.store && std::getenv("NVRTC_CACHE_CORRUPTION_WRITES")) {
      // Writing after the damage: the store is verified before its first write in a process, but
      // LMDB can still meet damage the verification cannot see (a known residual risk, measured by
      // scripts/corruption_trials.sh, not asserted here).
      (void)opened.store->put("after", "damage");
    }
    if (write(pipe_fds[1], counts, sizeof counts) != sizeof counts) _exit(3);
    _exit(0);
  }
  close(pipe_fds[1]);
  int counts[3] = {0, 0, 0};
  const bool reported = read(pipe_fds[0], counts, sizeof counts) == sizeof counts;
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  const bool clean_exit = WIFEXITED(status) && WEXITSTATUS(status) == 0 && reported;
  return {clean_exit ? 0 : 1, counts[0], counts[1], counts[2]};
}

class Corruption : public ::testing::TestWithParam<Damage> {};

TEST_P(Corruption, NeverCrashesAndNeverServesAWrongByte) {
  const char* configured = std::getenv("NVRTC_CACHE_CORRUPTION_TRIALS");
  const int trials = configured ? std::atoi(configured) : 40;
  std::string base = (fs::temp_directory_path() / "nvrtc-cache-corrupt-XXXXXX").string();
  ASSERT_NE(mkdtemp(base.data()), nullptr);
  std::mt19937 rng(GetParam() == Damage::kByteFlips ? 1234 : 5678);
  TrialOutcome total;
  for (int t = 0; t < trials; ++t) {
    const TrialOutcome o = run_trial(base + "/cache", GetParam(), rng);
    total.crashed += o.crashed;
    total.wrong += o.wrong;
    total.served += o.served;
    total.missed += o.missed;
  }
  fs::remove_all(base);
  std::printf("corruption trials: %d, host crashes: %d, wrong bytes served: %d, entries served: %d, misses: %d\n",
              trials, total.crashed, total.wrong, total.served, total.missed);
  EXPECT_EQ(total.crashed, 0);
  EXPECT_EQ(total.wrong, 0);
  EXPECT_GT(total.served, 0);
}

INSTANTIATE_TEST_SUITE_P(Store, Corruption, ::testing::Values(Damage::kByteFlips, Damage::kGarbagePages),
                         [](const auto& param_info) {
                           return std::string(param_info.param == Damage::kByteFlips ? "ScatteredByteFlips"
                                                                                     : "GarbagePages");
                         });

}  // namespace
}  // namespace nvrtc_cache::store
