// CompileWatch and the libc hooks, in-process: this executable links shim/watch/file_watch.cc and exports
// its hooks (ENABLE_EXPORTS), so its own libc calls and those of the real NVRTC it loads go through
// them exactly as in a process the shim is preloaded into.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nvrtc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shim/watch/file_watch.h"
#include "shim/watch/import_patch.h"
#include "shim/watch/libc_symbols.h"
#include "tests/support/process.h"

namespace nvrtc_cache {
namespace {

using direct::ObservationKind;
using shim::watch::CompileWatch;
using shim::watch::WatchEvent;

std::vector<WatchEvent> events_of(const CompileWatch& watch) {
  std::vector<WatchEvent> out;
  watch.for_each_event([&out](const WatchEvent& e) { out.push_back(e); });
  return out;
}

bool has_event(const CompileWatch& watch, ObservationKind kind, const std::string& subject, bool succeeded) {
  for (const WatchEvent& e : events_of(watch)) {
    if (e.observation.kind == kind && e.observation.subject == subject && e.observation.succeeded == succeeded) {
      return true;
    }
  }
  return false;
}

TEST(LibcSymbols, FindsEveryWatchedFunctionWhereTheLoaderDoes) {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
#define NVRTC_CACHE_WATCHED(name, version)                                     \
  {                                                                            \
    void* expected = dlvsym(libc, #name, #version);                            \
    EXPECT_NE(expected, nullptr) << #name "@" #version;                        \
    EXPECT_EQ(shim::watch::libc_function(#name, #version), expected) << #name; \
  }
#include "shim/watch/watched_libc.def"
#undef NVRTC_CACHE_WATCHED
  EXPECT_EQ(shim::watch::libc_function("open", "GLIBC_9.99"), nullptr);
  EXPECT_EQ(shim::watch::libc_function("no_such_function_anywhere", "GLIBC_2.2.5"), nullptr);
  dlclose(libc);
}

TEST(CompileWatch, RecordsWhatTheWatchingThreadObservesWithOutcomesAndErrnoKept) {
  testing::TempDir dir;
  const std::string present = dir.path() + "/present.h";
  close(::open(present.c_str(), O_CREAT | O_WRONLY, 0644));
  setenv("WATCH_TEST_VARIABLE", "value", 1);
  CompileWatch watch;
  struct stat st;
  errno = 4242;
  EXPECT_EQ(::stat((dir.path() + "/absent.h").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
  const int fd = ::open(present.c_str(), O_RDONLY);
  errno = 4242;
  EXPECT_STREQ(std::getenv("WATCH_TEST_VARIABLE"), "value");
  EXPECT_EQ(errno, 4242);
  watch.stop();
  close(fd);
  EXPECT_FALSE(watch.tainted()) << watch.why_tainted();
  EXPECT_TRUE(has_event(watch, ObservationKind::kStat, dir.path() + "/absent.h", false));
  EXPECT_TRUE(has_event(watch, ObservationKind::kOpen, present, true));
  bool saw_variable = false;
  for (const WatchEvent& e : events_of(watch)) {
    saw_variable = saw_variable || (e.observation.kind == ObservationKind::kGetenv &&
                                    e.observation.subject == "WATCH_TEST_VARIABLE" && e.observation.value == "value");
  }
  EXPECT_TRUE(saw_variable);
}

TEST(CompileWatch, PathsRelativeToADirectoryDescriptorAreRecordedAbsolute) {
  testing::TempDir dir;
  const std::string real_dir = std::filesystem::canonical(dir.path()).string();
  const int dirfd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dirfd, 0);
  CompileWatch watch;
  EXPECT_EQ(::openat(dirfd, "missing.h", O_RDONLY), -1);
  struct stat st;
  EXPECT_EQ(::fstatat(dirfd, "also_missing.h", &st, 0), -1);
  EXPECT_EQ(::fstatat(dirfd, "", &st, AT_EMPTY_PATH), 0);  // the descriptor itself: no path observed
  watch.stop();
  close(dirfd);
  EXPECT_FALSE(watch.tainted()) << watch.why_tainted();
  EXPECT_TRUE(has_event(watch, ObservationKind::kOpen, real_dir + "/missing.h", false));
  EXPECT_TRUE(has_event(watch, ObservationKind::kStat, real_dir + "/also_missing.h", false));
  EXPECT_EQ(watch.event_count(), 2u);
}

TEST(CompileWatch, GrowsPastAnyFixedBufferAndTaintsOnlyBeyondItsBound) {
  // 200,000 probes of ~100-byte paths: far beyond the old 8192 events / 256 KiB.
  const std::string prefix = "/nonexistent-watch-test/" + std::string(64, 'p') + "/";
  {
    CompileWatch watch;
    struct stat st;
    for (int i = 0; i < 200000; ++i) (void)::stat((prefix + std::to_string(i)).c_str(), &st);
    watch.stop();
    EXPECT_FALSE(watch.tainted()) << watch.why_tainted();
    EXPECT_EQ(watch.event_count(), 200000u);
    EXPECT_TRUE(has_event(watch, ObservationKind::kStat, prefix + "199999", false));
  }
  {
    // ~4 KiB per event: the 64 MiB bound is passed after about 16,000.
    std::string long_prefix = "/nonexistent-watch-test";
    while (long_prefix.size() < 4000) long_prefix += "/" + std::string(200, 'q');
    CompileWatch watch;
    struct stat st;
    for (int i = 0; i < 20000; ++i) (void)::stat((long_prefix + std::to_string(i)).c_str(), &st);
    watch.stop();
    EXPECT_TRUE(watch.tainted());
    EXPECT_NE(watch.why_tainted().find("exceeded"), std::string::npos) << watch.why_tainted();
    EXPECT_NE(watch.why_tainted().find("64 MiB"), std::string::npos) << watch.why_tainted();
    EXPECT_LE(watch.bytes_used(), shim::watch::kCaptureBoundBytes);
  }
  CompileWatch next;  // a fresh watch is unaffected
  next.stop();
  EXPECT_FALSE(next.tainted());
}

TEST(CompileWatch, NestedWatchesTaintBoth) {
  CompileWatch outer;
  {
    CompileWatch inner;
    EXPECT_TRUE(inner.tainted());
  }
  outer.stop();
  EXPECT_TRUE(outer.tainted());
}

TEST(CompileWatch, ChangingDirectoryTaintsTheCompile) {
  const std::string cwd = std::filesystem::current_path().string();
  CompileWatch watch;
  ASSERT_EQ(::chdir("/"), 0);
  watch.stop();
  ASSERT_EQ(::chdir(cwd.c_str()), 0);
  EXPECT_TRUE(watch.tainted());
  EXPECT_NE(watch.why_tainted().find("working directory"), std::string::npos) << watch.why_tainted();
}

// Runs `neighbour` on another thread while this thread's watch is active; returns the watch.
template <typename Neighbour>
std::unique_ptr<CompileWatch> watch_while_another_thread(Neighbour neighbour) {
  auto watch = std::make_unique<CompileWatch>();
  std::thread other(neighbour);
  other.join();
  watch->stop();
  return watch;
}

TEST(CrossThread, CallsFromNvrtcOnAnotherThreadTaintTheActiveWatch) {
  CompileWatch::set_caller_check_for_testing([](const void*) { return true; });  // every caller is "NVRTC"
  const auto tainted = watch_while_another_thread([] { (void)::access("/", F_OK); });
  EXPECT_TRUE(tainted->tainted());
  EXPECT_NE(tainted->why_tainted().find("another thread"), std::string::npos) << tainted->why_tainted();
  EXPECT_NE(tainted->why_tainted().find("(access)"), std::string::npos) << tainted->why_tainted();
  EXPECT_EQ(tainted->event_count(), 0u);  // nothing of the other thread's is recorded as the compile's

  // Calls made when no watch is active leave later watches alone.
  std::thread([] { (void)::access("/", F_OK); }).join();
  CompileWatch later;
  later.stop();
  EXPECT_FALSE(later.tainted()) << later.why_tainted();

  CompileWatch::set_caller_check_for_testing([](const void*) { return false; });  // the host's own code
  const auto clean = watch_while_another_thread([] { (void)::access("/", F_OK); });
  EXPECT_FALSE(clean->tainted()) << clean->why_tainted();
  CompileWatch::set_caller_check_for_testing(nullptr);
}

// The real check: NVRTC's own code (a real compile on another thread, which probes paths and reads
// the environment) taints the watch; the same calls from this test's code do not.
TEST(CrossThread, RealNvrtcCompilingOnAnotherThreadTaintsTheWatch) {
  void* nvrtc = dlopen(CUDA_NVRTC_LIBRARY_DIR "/libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(nvrtc, nullptr) << dlerror();
  auto create = reinterpret_cast<decltype(&nvrtcCreateProgram)>(dlsym(nvrtc, "nvrtcCreateProgram"));
  auto compile = reinterpret_cast<decltype(&nvrtcCompileProgram)>(dlsym(nvrtc, "nvrtcCompileProgram"));
  auto destroy = reinterpret_cast<decltype(&nvrtcDestroyProgram)>(dlsym(nvrtc, "nvrtcDestroyProgram"));
  ASSERT_TRUE(create && compile && destroy);
  ASSERT_TRUE(shim::watch::register_nvrtc_code(reinterpret_cast<const void*>(compile)));
  EXPECT_TRUE(shim::watch::address_in_nvrtc_code(reinterpret_cast<const void*>(compile)));
  EXPECT_FALSE(shim::watch::address_in_nvrtc_code(reinterpret_cast<const void*>(&events_of)));
  if (void* builtins = dlopen("libnvrtc-builtins.so.13.0", RTLD_NOW | RTLD_NOLOAD)) {
    void* header = dlsym(builtins, "__nvrtc_builtins__13_0_getBuiltinHeader");
    EXPECT_TRUE(header && shim::watch::address_in_nvrtc_code(header)) << "the builtins library counts as NVRTC";
    dlclose(builtins);
  }

  const auto compile_on_another_thread = [&] {
    nvrtcProgram prog = nullptr;
    ASSERT_EQ(create(&prog, "__global__ void k() {}", "k.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
    const char* options[] = {"-arch=compute_80"};
    EXPECT_EQ(compile(prog, 1, options), NVRTC_SUCCESS);
    destroy(&prog);
  };
  const auto tainted = watch_while_another_thread(compile_on_another_thread);
  EXPECT_TRUE(tainted->tainted());
  EXPECT_NE(tainted->why_tainted().find("another thread"), std::string::npos) << tainted->why_tainted();

  const auto clean = watch_while_another_thread([] {
    struct stat st;
    (void)::stat("/", &st);
    (void)std::getenv("HOME");
  });
  EXPECT_FALSE(clean->tainted()) << clean->why_tainted();
  // NVRTC stays loaded, as in any host: unloading it would orphan what it keeps for the process.
}

}  // namespace
}  // namespace nvrtc_cache

namespace nvrtc_cache {
namespace {

using direct::ObservationKind;
using shim::watch::CompileWatch;

// The redirection of NVRTC's own imports, in a fresh process (NVRTC must not be loaded yet): NVRTC
// loaded RTLD_DEEPBIND binds its libc calls to libc ahead of this executable's exported hooks, so a
// compile reading a header is invisible until register_nvrtc_code redirects NVRTC's GOT slots.
TEST(ImportRedirection, MakesNvrtcLoadedWithRtldDeepbindObservable) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer refuses dlopen with RTLD_DEEPBIND; the unsanitized build runs this test";
#endif
  const testing::ProcessResult child = testing::run_process(
      {testing::this_executable(), "--gtest_filter=ImportRedirectionChild.*"}, {{"NVRTC_CACHE_IMPORT_CHILD", "1"}});
  EXPECT_EQ(child.exit_code, 0) << child.out << child.err;
  EXPECT_NE(child.out.find("[  PASSED  ] 1 test"), std::string::npos) << child.out;
  for (std::size_t at = 0, end; (end = child.out.find('\n', at)) != std::string::npos; at = end + 1) {
    const std::string line = child.out.substr(at, end - at);
    if (line.ends_with(" us")) std::printf("%s\n", line.c_str());  // the measured cost
  }
}

int find_nvrtc(dl_phdr_info* info, std::size_t, void* data) {
  const std::string name = info->dlpi_name ? info->dlpi_name : "";
  if (name.find("/libnvrtc.so.13") == std::string::npos) return 0;
  *static_cast<shim::watch::ImportPatch*>(data) = shim::watch::redirect_watched_imports(*info);
  return 1;
}

TEST(ImportRedirectionChild, Run) {
  if (std::getenv("NVRTC_CACHE_IMPORT_CHILD") == nullptr) GTEST_SKIP() << "run by ImportRedirection.*";
  ASSERT_EQ(dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_NOLOAD), nullptr) << "NVRTC must not be loaded yet";
  void* nvrtc = dlopen(CUDA_NVRTC_LIBRARY_DIR "/libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  ASSERT_NE(nvrtc, nullptr) << dlerror();
  auto create = reinterpret_cast<decltype(&nvrtcCreateProgram)>(dlsym(nvrtc, "nvrtcCreateProgram"));
  auto compile = reinterpret_cast<decltype(&nvrtcCompileProgram)>(dlsym(nvrtc, "nvrtcCompileProgram"));
  auto destroy = reinterpret_cast<decltype(&nvrtcDestroyProgram)>(dlsym(nvrtc, "nvrtcDestroyProgram"));
  ASSERT_TRUE(create && compile && destroy);
  testing::TempDir dir;
  const std::string header = dir.path() + "/redirected.h";
  std::ofstream(header) << "#define VALUE 1\n";
  const std::string option = "-I" + dir.path();
  const auto compile_watched = [&] {
    auto watch = std::make_unique<CompileWatch>();
    nvrtcProgram prog = nullptr;
    EXPECT_EQ(create(&prog, "#include \"redirected.h\"\n__global__ void k(int* x) { *x = VALUE; }", "k.cu", 0, nullptr,
                     nullptr),
              NVRTC_SUCCESS);
    const char* options[] = {"-arch=compute_80", option.c_str()};
    EXPECT_EQ(compile(prog, 2, options), NVRTC_SUCCESS);
    watch->stop();
    destroy(&prog);
    return watch;
  };
  EXPECT_FALSE(has_event(*compile_watched(), ObservationKind::kOpen, header, true))
      << "RTLD_DEEPBIND must bypass the exported hooks (the precondition)";

  ASSERT_TRUE(shim::watch::register_nvrtc_code(reinterpret_cast<const void*>(compile)));
  const auto redirection = shim::watch::import_redirection_so_far();
  EXPECT_GT(redirection.redirected, 0);
  EXPECT_EQ(redirection.left, 0);
  std::printf("redirected %d GOT slots in %d libraries (%d already hooked) in %.1f us\n", redirection.redirected,
              redirection.libraries, redirection.already, static_cast<double>(redirection.nanos) / 1000);

  const auto seen = compile_watched();
  EXPECT_FALSE(seen->tainted()) << seen->why_tainted();
  EXPECT_TRUE(has_event(*seen, ObservationKind::kOpen, header, true)) << "NVRTC's read of the header is observed";

  // Idempotent: a second pass finds every slot hooked. Its time is the scan alone.
  constexpr int kPasses = 100;
  shim::watch::ImportPatch again;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kPasses; ++i) dl_iterate_phdr(find_nvrtc, &again);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(again.redirected, 0);
  EXPECT_EQ(again.already, redirection.redirected + redirection.already);
  std::printf("a pass over NVRTC's relocations that changes nothing: %.1f us\n",
              std::chrono::duration<double, std::micro>(elapsed).count() / kPasses);
}

}  // namespace
}  // namespace nvrtc_cache
