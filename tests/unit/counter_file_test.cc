// The mapped counters file (store/counter_file.h): counts from many processes, each leaving through
// _exit or SIGKILL right after counting, all add up; names are added lock-free; a file that is not a
// counters file of this user's is refused.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "store/counter_file.h"

namespace nvrtc_cache::store {
namespace {

std::string fresh_directory() {
  static int n = 0;
  const std::string dir = std::filesystem::temp_directory_path().string() + "/counter-file-" +
                          std::to_string(::getpid()) + "-" + std::to_string(n++);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(CounterFile, CountsOfProcessesThatExitOrAreKilledAllAddUp) {
  const std::string dir = fresh_directory();
  std::string problem;
  auto file = CounterFile::open(dir, true, false, &problem);
  ASSERT_TRUE(file) << problem;
  constexpr int kProcesses = 12, kAdds = 2000;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      // Each child opens the file itself (as a new process would) and counts names both new and
      // shared, racing the others to add the names.
      std::string child_problem;
      auto own = CounterFile::open(dir, true, false, &child_problem);
      if (!own) ::_exit(3);
      for (int i = 0; i < kAdds; ++i) {
        own->add("hits", 1);
        own->add("name." + std::to_string(i % 7), 2);
      }
      if (p % 2 == 0) ::_exit(0);  // no destructor, no flush
      ::raise(SIGKILL);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  }
  const Counters counts = file->read();
  EXPECT_EQ(counts.at("hits"), kProcesses * kAdds);
  std::int64_t named = 0;
  for (int k = 0; k < 7; ++k) named += counts.at("name." + std::to_string(k));
  EXPECT_EQ(named, 2 * kProcesses * kAdds);
  file->zero();
  EXPECT_EQ(file->read().count("hits"), 0u) << "zeroed counters are not listed";
  std::filesystem::remove_all(dir);
}

// Every page of the file is backed by the filesystem (no holes a full filesystem could not fill).
TEST(CounterFile, ItsSpaceIsReservedForReal) {
  const std::string dir = fresh_directory();
  std::string problem;
  auto file = CounterFile::open(dir, true, false, &problem);
  ASSERT_TRUE(file) << problem;
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/counters").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(CounterFile::kFileSize));
  EXPECT_GE(st.st_blocks * 512, static_cast<off_t>(CounterFile::kFileSize)) << "the file has holes";
  std::filesystem::remove_all(dir);
}

// Truncated by another process under its mapping (as any member of a shared cache can): the next
// count faults inside the guard, counting stops in that process (said by every call's result), and
// the process goes on; in a child, since stopping is for the whole process.
TEST(CounterFile, TruncatedUnderItsMappingStopsCountingWithoutASignal) {
  const std::string dir = fresh_directory();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string problem;
    auto file = CounterFile::open(dir, true, false, &problem);
    if (!file) ::_exit(10);
    std::atomic<std::int64_t>* hits = file->cell("hits");
    if (hits == nullptr || !CounterFile::add_to(hits, 1) || file->read().at("hits") != 1) ::_exit(11);
    const std::uint64_t generation = counter_file_generation();
    if (::truncate((dir + "/counters").c_str(), 0) != 0) ::_exit(12);
    if (CounterFile::add_to(hits, 1)) ::_exit(13);  // faulted: not added
    if (!CounterFile::counting_stopped()) ::_exit(14);
    if (counter_file_generation() == generation) ::_exit(15);  // holders of cells look again
    if (file->cell("misses") != nullptr || file->add("hits", 1) || !file->read().empty() || file->zero()) ::_exit(16);
    if (CounterFile::open(dir, true, false, &problem)) ::_exit(17);  // a new file is not counted into either
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::filesystem::remove_all(dir);
}

TEST(CounterFile, CellsAreStableAndBadNamesHaveNone) {
  const std::string dir = fresh_directory();
  std::string problem;
  auto file = CounterFile::open(dir, true, false, &problem);
  ASSERT_TRUE(file) << problem;
  std::atomic<std::int64_t>* a = file->cell("tier.0.hits");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(file->cell("tier.0.hits"), a);
  EXPECT_EQ(file->cell(""), nullptr);
  EXPECT_EQ(file->cell("with space"), nullptr);
  EXPECT_EQ(file->cell(std::string(CounterFile::kMaxName + 1, 'x')), nullptr);
  EXPECT_NE(file->cell(std::string(CounterFile::kMaxName, 'x')), nullptr);
  for (std::size_t i = 0; i < CounterFile::kSlotCount; ++i) (void)file->cell("n" + std::to_string(i));
  EXPECT_EQ(file->cell("one.too.many"), nullptr) << "a full file handed out a cell";
  file->add("one.too.many", 5);  // dropped, not a crash
  EXPECT_EQ(file->read().count("one.too.many"), 0u);
  std::filesystem::remove_all(dir);
}

TEST(CounterFile, WhatIsNotThisUsersCountersFileIsRefused) {
  std::string problem;
  {  // a link to a file elsewhere is not followed
    const std::string dir = fresh_directory();
    std::ofstream(dir + "/elsewhere") << "precious";
    std::filesystem::create_symlink(dir + "/elsewhere", dir + "/counters");
    EXPECT_FALSE(CounterFile::open(dir, true, false, &problem));
    std::ifstream in(dir + "/elsewhere");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "precious");
    std::filesystem::remove_all(dir);
  }
  {  // another size, another magic, a FIFO
    const std::string dir = fresh_directory();
    std::ofstream(dir + "/counters") << "short";
    EXPECT_FALSE(CounterFile::open(dir, true, false, &problem));
    EXPECT_NE(problem.find("size"), std::string::npos) << problem;
    std::filesystem::remove(dir + "/counters");
    std::ofstream(dir + "/counters") << std::string(CounterFile::kFileSize, 'g');
    EXPECT_FALSE(CounterFile::open(dir, true, false, &problem));
    EXPECT_NE(problem.find("not a counters file"), std::string::npos) << problem;
    std::filesystem::remove(dir + "/counters");
    ASSERT_EQ(::mkfifo((dir + "/counters").c_str(), 0600), 0);
    EXPECT_FALSE(CounterFile::open(dir, true, false, &problem));
    std::filesystem::remove_all(dir);
  }
  {  // damaged names are skipped by readers, the rest read
    const std::string dir = fresh_directory();
    auto file = CounterFile::open(dir, true, false, &problem);
    ASSERT_TRUE(file);
    file->add("first", 1);
    file->add("second", 2);
    file.reset();
    std::fstream raw(dir + "/counters", std::ios::in | std::ios::out | std::ios::binary);
    raw.seekp(64 + 8);  // the first slot's name
    raw.write("\x01\x02", 2);
    raw.close();
    file = CounterFile::open(dir, true, false, &problem);
    ASSERT_TRUE(file) << problem;
    const Counters counts = file->read();
    EXPECT_EQ(counts.count("first"), 0u);
    EXPECT_EQ(counts.at("second"), 2);
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace nvrtc_cache::store
