// fork_storm: a client linked with -lnvrtc that forks while other threads are inside NVRTC calls
// (under the shim: inside the shim), as Python multiprocessing, DataLoader workers and MPI
// launchers do, and checks that every child finishes with the right bytes.
//   fork_storm expected FILE   compiles each program once and writes its results to FILE
//   fork_storm hits FILE       compiles each program once, then FORK_STORM_THREADS threads (3)
//                              compile those programs nonstop while the main thread forks
//                              FORK_STORM_CHILDREN children (500), each compiling one of them
//   fork_storm misses FILE     the same, but the threads (1) compile new programs (real compiles)
//                              nonstop, and 100 children by default
// Each child writes its result to a pipe and leaves by _exit; the parent gives it FORK_STORM_WAIT_S
// seconds (20), then kills it and counts it as hung. Results are compared byte for byte with FILE.
// Whether a compile was served from the cache is asked of the real NVRTC (reached with dlvsym,
// which the shim does not interpose): the shim leaves a served program uncompiled, and NVRTC's
// PTX size of an uncompiled program is 1 (an empty string).
// Prints "name value" lines: children, hung, unclean, differing, children_from_cache,
// forks_with_thread_inside (forks whose fork handlers started while a thread was inside an NVRTC
// call), forks_during_compile (... inside nvrtcCompileProgram), thread_compiles,
// thread_real_compiles, thread_differing, max_fork_us.
#include <dlfcn.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Program {
  const char* source;
  const char* name;
  std::vector<const char*> options;
  const char* name_expression;  // or nullptr
};

const Program kPrograms[] = {
    {"extern \"C\" __global__ void axpy(float a, const float* x, float* y, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) y[i] = a * x[i] + y[i];\n"
     "}\n",
     "axpy.cu",
     {"-arch=sm_80"},
     nullptr},
    {"template <typename T, int N> __global__ void scale(T* x) { x[threadIdx.x] *= N; }\n",
     "scale.cu",
     {"-arch=compute_80", "-std=c++17"},
     "scale<float, 2>"},
    {"__global__ void k(int* x) { int unused; x[0] = 1; }\n#warning \"a warning from the source\"\n",
     "warn.cu",
     {"-arch=sm_80", "-lineinfo"},
     nullptr},
};
constexpr int kProgramCount = sizeof(kPrograms) / sizeof(kPrograms[0]);

// Threads currently inside an NVRTC call (and inside nvrtcCompileProgram), and forks that began
// while one was.
std::atomic<int> g_inside{0};
std::atomic<int> g_compiling{0};
std::atomic<int> g_forks_with_thread_inside{0};
std::atomic<int> g_forks_during_compile{0};

struct Inside {
  Inside() { g_inside.fetch_add(1); }
  ~Inside() { g_inside.fetch_sub(1); }
};

// Registered after NVRTC (and the shim) are loaded, so it runs before their prepare handlers.
void count_fork_while_inside() {
  if (g_inside.load() > 0) g_forks_with_thread_inside.fetch_add(1);
  if (g_compiling.load() > 0) g_forks_during_compile.fetch_add(1);
}

std::string hex(const std::vector<char>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out.push_back(digits[static_cast<unsigned char>(c) >> 4]);
    out.push_back(digits[static_cast<unsigned char>(c) & 15]);
  }
  return out;
}

using SizeFn = nvrtcResult (*)(nvrtcProgram, size_t*);
using DataFn = nvrtcResult (*)(nvrtcProgram, char*);

// True if the real NVRTC compiled `p` (false: the shim served the compile from its cache).
bool really_compiled(nvrtcProgram p) {
  static const auto real_ptx_size = [] {
    void* nvrtc = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_NOLOAD);
    return reinterpret_cast<SizeFn>(nvrtc ? dlvsym(nvrtc, "nvrtcGetPTXSize", "libnvrtc.so.13") : nullptr);
  }();
  size_t size = 0;
  return real_ptx_size == nullptr || real_ptx_size(p, &size) != NVRTC_SUCCESS || size > 1;
}

std::string output(const char* label, nvrtcProgram p, SizeFn size_fn, DataFn data_fn) {
  size_t size = 0;
  std::vector<char> bytes;
  nvrtcResult size_rc, data_rc = NVRTC_SUCCESS;
  {
    Inside inside;
    size_rc = size_fn(p, &size);
    bytes.resize(size_rc == NVRTC_SUCCESS ? size : 0);
    if (!bytes.empty()) data_rc = data_fn(p, bytes.data());
  }
  return std::string(label) + " " + std::to_string(size_rc) + " " + std::to_string(data_rc) + " " + hex(bytes) + "\n";
}

// Compiles `program` (with `extra` appended to its source) and returns every result as text.
std::string compile(const Program& program, bool* compiled_for_real, const std::string& extra = "") {
  const std::string source = program.source + extra;
  nvrtcProgram p = nullptr;
  std::string out = "program " + std::string(program.name) + "\n";
  {
    Inside inside;
    out += "create " + std::to_string(nvrtcCreateProgram(&p, source.c_str(), program.name, 0, nullptr, nullptr)) + "\n";
    if (program.name_expression)
      out += "add " + std::to_string(nvrtcAddNameExpression(p, program.name_expression)) + "\n";
    g_compiling.fetch_add(1);
    const nvrtcResult rc = nvrtcCompileProgram(p, static_cast<int>(program.options.size()), program.options.data());
    g_compiling.fetch_sub(1);
    out += "compile " + std::to_string(rc) + "\n";
  }
  out += output("log", p, nvrtcGetProgramLogSize, nvrtcGetProgramLog);
  out += output("ptx", p, nvrtcGetPTXSize, nvrtcGetPTX);
  out += output("cubin", p, nvrtcGetCUBINSize, nvrtcGetCUBIN);
  if (program.name_expression) {
    Inside inside;
    const char* lowered = nullptr;
    const nvrtcResult rc = nvrtcGetLoweredName(p, program.name_expression, &lowered);
    out += "lowered " + std::to_string(rc) + " " + (lowered ? lowered : "(null)") + "\n";
  }
  *compiled_for_real = really_compiled(p);
  Inside inside;
  out += "destroy " + std::to_string(nvrtcDestroyProgram(&p)) + "\n";
  return out;
}

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

std::vector<std::string> read_expected(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  std::vector<std::string> out;
  const std::string text = all.str();
  for (std::size_t start = 0; start < text.size();) {
    std::size_t next = text.find("\nprogram ", start);
    next = next == std::string::npos ? text.size() : next + 1;
    out.push_back(text.substr(start, next - start));
    start = next;
  }
  return out;
}

struct ChildOutcome {
  bool hung = false;
  bool exited_cleanly = false;
  std::string result;
};

// Waits up to `wait` for the child's result and exit; kills it when it does not finish.
ChildOutcome wait_for_child(pid_t pid, int fd, std::chrono::seconds wait) {
  ChildOutcome outcome;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto ms_left = [&] {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, left.count()));
  };
  char buffer[65536];
  for (bool open = true; open;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, ms_left()) <= 0) break;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) outcome.result.append(buffer, static_cast<std::size_t>(n));
    open = n > 0 || (n < 0 && errno == EINTR);
  }
  int status = 0;
  for (;;) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      outcome.exited_cleanly = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      return outcome;
    }
    if (ms_left() == 0) break;
    usleep(1000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  outcome.hung = true;
  return outcome;
}

int run_storm(const std::vector<std::string>& expected, bool real_compiles) {
  const int children = env_int("FORK_STORM_CHILDREN", real_compiles ? 100 : 500);
  const int thread_count = env_int("FORK_STORM_THREADS", real_compiles ? 1 : 3);
  const std::chrono::seconds wait(env_int("FORK_STORM_WAIT_S", 20));
  if (static_cast<int>(expected.size()) != kProgramCount) {
    std::fprintf(stderr, "fork_storm: the expected file has %zu programs\n", expected.size());
    return 2;
  }
  bool real = false;
  for (int i = 0; i < kProgramCount; ++i) {
    if (compile(kPrograms[i], &real) != expected[static_cast<std::size_t>(i)]) {
      std::fprintf(stderr, "fork_storm: program %d differs before the storm\n", i);
      return 2;
    }
  }
  pthread_atfork(&count_fork_while_inside, nullptr, nullptr);

  std::atomic<bool> stop{false};
  std::atomic<int> thread_compiles{0}, thread_real_compiles{0}, thread_differing{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; !stop.load(); ++i) {
        const int which = (t + i) % kProgramCount;
        bool compiled_for_real = false;
        if (real_compiles) {
          // A source never compiled before: a miss, so the real NVRTC compiles it.
          (void)compile(kPrograms[which], &compiled_for_real,
                        "// " + std::to_string(getpid()) + " " + std::to_string(t) + " " + std::to_string(i) + "\n");
        } else if (compile(kPrograms[which], &compiled_for_real) != expected[static_cast<std::size_t>(which)]) {
          thread_differing.fetch_add(1);
        }
        thread_compiles.fetch_add(1);
        if (compiled_for_real) thread_real_compiles.fetch_add(1);
      }
    });
  }
  while (g_inside.load() == 0) std::this_thread::yield();

  int hung = 0, differing = 0, unclean = 0, from_cache = 0;
  std::int64_t max_fork_us = 0;
  for (int c = 0; c < children; ++c) {
    const int which = c % kProgramCount;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return 2;
    const auto before = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      bool compiled_for_real = false;
      std::string result = compile(kPrograms[which], &compiled_for_real);
      result.insert(0, 1, compiled_for_real ? 'R' : 'C');  // how it was answered, then the result
      for (std::size_t done = 0; done < result.size();) {
        const ssize_t n = write(fds[1], result.data() + done, result.size() - done);
        if (n <= 0) _exit(3);
        done += static_cast<std::size_t>(n);
      }
      _exit(0);
    }
    const auto fork_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - before).count();
    max_fork_us = std::max<std::int64_t>(max_fork_us, fork_us);
    close(fds[1]);
    if (pid < 0) return 2;
    const ChildOutcome outcome = wait_for_child(pid, fds[0], wait);
    close(fds[0]);
    if (outcome.hung) {
      ++hung;
      std::fprintf(stderr, "fork_storm: child %d (pid %d) hung\n", c, pid);
    } else if (!outcome.exited_cleanly) {
      ++unclean;
    } else if (outcome.result.empty() || outcome.result.substr(1) != expected[static_cast<std::size_t>(which)]) {
      if (differing++ == 0) std::fprintf(stderr, "fork_storm: child %d returned:\n%s", c, outcome.result.c_str());
    } else if (outcome.result[0] == 'C') {
      ++from_cache;
    }
  }
  stop.store(true);
  for (auto& t : threads) t.join();
  std::printf(
      "children %d\nhung %d\nunclean %d\ndiffering %d\nchildren_from_cache %d\n"
      "forks_with_thread_inside %d\nforks_during_compile %d\nthread_compiles %d\nthread_real_compiles %d\n"
      "thread_differing %d\nmax_fork_us %lld\n",
      children, hung, unclean, differing, from_cache, g_forks_with_thread_inside.load(), g_forks_during_compile.load(),
      thread_compiles.load(), thread_real_compiles.load(), thread_differing.load(),
      static_cast<long long>(max_fork_us));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fork_storm expected|hits|misses FILE\n");
    return 2;
  }
  const std::string mode = argv[1];
  if (mode == "expected") {
    std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
    bool real = false;
    for (const Program& program : kPrograms) out << compile(program, &real);
    return out ? 0 : 2;
  }
  if (mode == "hits" || mode == "misses") return run_storm(read_expected(argv[2]), mode == "misses");
  std::fprintf(stderr, "unknown mode %s\n", argv[1]);
  return 2;
}
