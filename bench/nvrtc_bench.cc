// nvrtc_bench: compiles one kernel of the corpus (bench/bench_kernels.h) REPEAT times, each in a fresh
// program (create, add name expressions, compile, lower the names, read CUBIN and log, destroy), and
// prints one line per iteration: its wall time in nanoseconds, the CUBIN size and the log size in
// bytes. Run directly and under the shim by scripts/bench_suite.py and scripts/bench_single_flight.sh.
// With NVRTC_BENCH_PAUSE_AFTER_FIRST=1 it waits, after the first line, for a line on stdin (so that the
// caller can read the cache's statistics between the first compile and the others).
#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/bench_kernels.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: nvrtc_bench trivial|names|cub|cute|headers REPEAT\n");
    return 2;
  }
  const nvrtc_bench::Kernel k = nvrtc_bench::kernel_named(argv[1]);
  const int repeat = std::atoi(argv[2]);
  if (k.source == nullptr || repeat <= 0) return 2;
  const char* pause = std::getenv("NVRTC_BENCH_PAUSE_AFTER_FIRST");
  const bool pause_after_first = pause != nullptr && std::string(pause) == "1";
  for (int i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    nvrtcProgram p;
    if (nvrtcCreateProgram(&p, k.source, "bench.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return 1;
    for (const char* name : k.name_expressions) nvrtcAddNameExpression(p, name);
    const nvrtcResult rc = nvrtcCompileProgram(p, static_cast<int>(k.options.size()), k.options.data());
    size_t log_size = 0;
    nvrtcGetProgramLogSize(p, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(p, log.data());
    if (rc != NVRTC_SUCCESS) {
      std::fprintf(stderr, "compile failed: %s\n", log.c_str());
      return 1;
    }
    for (const char* name : k.name_expressions) {
      const char* lowered = nullptr;
      if (nvrtcGetLoweredName(p, name, &lowered) != NVRTC_SUCCESS || lowered == nullptr) return 1;
    }
    size_t cubin_size = 0;
    nvrtcGetCUBINSize(p, &cubin_size);
    std::string cubin(cubin_size, '\0');
    nvrtcGetCUBIN(p, cubin.data());
    nvrtcDestroyProgram(&p);
    const auto end = std::chrono::steady_clock::now();
    std::printf("%lld %zu %zu\n",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count()),
                cubin_size, log_size);
    if (i == 0 && pause_after_first) {
      std::fflush(stdout);
      for (int c = std::getchar(); c != '\n' && c != EOF;) c = std::getchar();
    }
  }
  return 0;
}
