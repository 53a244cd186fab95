// nvrtc_demo: compiles a small set of real kernels the way a JIT stack does (create, add name
// expressions, compile, read CUBIN, log and lowered names) and prints each compile's time.
#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

struct Kernel {
  const char* label;
  std::string source;
  std::vector<const char*> options;
  std::vector<const char*> names;
};

std::string polynomial_kernels() {
  // Deep template instantiation: a realistic front-end-heavy program with no on-disk headers.
  std::string s =
      "template <int N> struct Poly { __device__ static float eval(float x) { return x * Poly<N - 1>::eval(x) + N; } "
      "};\n"
      "template <> struct Poly<0> { __device__ static float eval(float) { return 1.0f; } };\n"
      "template <int N> __global__ void poly(float* x) { x[threadIdx.x] = Poly<N>::eval(x[threadIdx.x]); }\n";
  return s;
}

std::vector<Kernel> kernels() {
  return {
      {"axpy",
       "extern \"C\" __global__ void axpy(float a, const float* x, float* y, int n) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n",
       {"-arch=sm_80"},
       {}},
      {"templates",
       polynomial_kernels(),
       {"-arch=sm_90", "-std=c++17"},
       {"poly<64>", "poly<128>", "poly<256>", "poly<400>"}},
      {"cub_reduce",
       "#include <cub/block/block_reduce.cuh>\n"
       "extern \"C\" __global__ void block_sum(const int* in, int* out) {\n"
       "  using R = cub::BlockReduce<int, 128>; __shared__ typename R::TempStorage t;\n"
       "  int s = R(t).Sum(in[blockIdx.x * 128 + threadIdx.x]); if (threadIdx.x == 0) out[blockIdx.x] = s; }\n",
       {"-arch=sm_80", "-std=c++17", "-I/usr/local/cuda/include/cccl", "-I/usr/local/cuda/include"},
       {}},
  };
}

}  // namespace

int main() {
  double total = 0;
  for (const Kernel& k : kernels()) {
    const auto start = std::chrono::steady_clock::now();
    nvrtcProgram p;
    const std::string name = std::string(k.label) + ".cu";  // what `nvrtc-cache ls` and `stats` call it
    nvrtcCreateProgram(&p, k.source.c_str(), name.c_str(), 0, nullptr, nullptr);
    for (const char* n : k.names) nvrtcAddNameExpression(p, n);
    const nvrtcResult rc = nvrtcCompileProgram(p, static_cast<int>(k.options.size()), k.options.data());
    size_t size = 0;
    nvrtcGetCUBINSize(p, &size);
    std::string cubin(size, '\0');
    nvrtcGetCUBIN(p, cubin.data());
    for (const char* n : k.names) {
      const char* lowered = nullptr;
      nvrtcGetLoweredName(p, n, &lowered);
    }
    nvrtcDestroyProgram(&p);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    total += ms;
    std::printf("  %-11s %-8s cubin %6zu bytes  %9.2f ms\n", k.label, rc == NVRTC_SUCCESS ? "ok" : "FAILED", size, ms);
  }
  std::printf("  %-11s %37.2f ms\n", "total", total);
  return 0;
}
