// first_hit_bench: the cost a fresh process pays on its first NVRTC calls. One run is one sample:
// it times (CLOCK_MONOTONIC, around each call only) the process's first nvrtcCreateProgram, its
// first nvrtcCompileProgram, and a second create + compile of the same program, and prints one line
//   create_ns compile_ns second_compile_ns rc
// Kernels: "trivial" (a small kernel), "reject" (the same kernel with an option NVRTC rejects:
// NVRTC_ERROR_INVALID_OPTION). Run it many times in fresh processes, directly and under the shim: the
// benchmark suite's first-hit section (scripts/bench_suite.py).
#include <nvrtc.h>

#include <time.h>

#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr const char* kSource =
    "extern \"C\" __global__ void axpy(float a, const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct Sample {
  std::int64_t create_ns;
  std::int64_t compile_ns;
  nvrtcResult rc;
};

Sample compile_once(const std::vector<const char*>& options) {
  Sample s{};
  nvrtcProgram p = nullptr;
  std::int64_t t0 = now_ns();
  if (nvrtcCreateProgram(&p, kSource, "first_hit.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    s.rc = NVRTC_ERROR_PROGRAM_CREATION_FAILURE;
    return s;
  }
  std::int64_t t1 = now_ns();
  s.rc = nvrtcCompileProgram(p, static_cast<int>(options.size()), options.data());
  std::int64_t t2 = now_ns();
  s.create_ns = t1 - t0;
  s.compile_ns = t2 - t1;
  std::size_t size = 0;
  nvrtcGetProgramLogSize(p, &size);  // read the results, as a client would
  std::vector<char> log(size + 1);
  nvrtcGetProgramLog(p, log.data());
  nvrtcDestroyProgram(&p);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "trivial") != 0 && std::strcmp(argv[1], "reject") != 0)) {
    std::fprintf(stderr, "usage: first_hit_bench trivial|reject\n");
    return 2;
  }
  std::vector<const char*> options = {"-arch=sm_80"};
  if (std::strcmp(argv[1], "reject") == 0) options.push_back("--no-such-option");
  const Sample first = compile_once(options);
  const Sample second = compile_once(options);
  std::printf("%lld %lld %lld %d\n", static_cast<long long>(first.create_ns), static_cast<long long>(first.compile_ns),
              static_cast<long long>(second.compile_ns), static_cast<int>(first.rc));
  return first.rc == second.rc ? 0 : 1;
}
