// Processes opening a new store at the same time (a cold start on one node): each must open it
// sound; none may take another's freshly created databases for damage.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/lmdb/lmdb_store.h"

namespace nvrtc_cache::store {
namespace {

TEST(LmdbConcurrentOpen, ProcessesOpeningANewStoreTogetherAllSeeItSound) {
  constexpr int kRounds = 20;
  constexpr int kProcesses = 8;
  const std::string root = std::filesystem::temp_directory_path() / ("concurrent-open-" + std::to_string(getpid()));
  for (int round = 0; round < kRounds; ++round) {
    const std::string directory = root + "/store" + std::to_string(round);
    std::filesystem::create_directories(directory);
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        close(go[1]);
        char byte;
        (void)!read(go[0], &byte, 1);  // all start at once: the pipe closes
        Status status;
        auto store = LmdbStore::open(LmdbOptions{directory, 16ull << 20}, &status);
        const bool sound = store && store->put("k" + std::to_string(i), "v") && store->get("k" + std::to_string(i));
        _exit(sound ? 0 : 1);
      }
      children.push_back(pid);
    }
    close(go[0]);
    close(go[1]);
    int failed = 0;
    for (const pid_t pid : children) {
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    EXPECT_EQ(failed, 0) << "round " << round << ": a process could not open the new store";
    Status status;
    auto store = LmdbStore::open(LmdbOptions{directory, 16ull << 20}, &status);
    ASSERT_TRUE(store) << status.message();
    EXPECT_EQ(store->entry_count(), static_cast<std::uint64_t>(kProcesses)) << "round " << round << ": entries lost";
  }
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace nvrtc_cache::store
