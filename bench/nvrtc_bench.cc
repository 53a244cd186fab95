// nvrtc_bench: compiles one named kernel REPEAT times, each in a fresh program (create, compile,
// read CUBIN and log, destroy), and prints each iteration's wall time in nanoseconds, one per line.
// Run directly, under the shim cold and under the shim warm by scripts/bench.py.
#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Kernel {
  const char* source;
  std::vector<const char*> options;
};

Kernel kernel_named(const std::string& name) {
  if (name == "trivial") {
    return {"extern \"C\" __global__ void axpy(float a, const float* x, float* y, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) y[i] = a * x[i] + y[i];\n"
            "}\n",
            {"-arch=sm_80"}};
  }
  if (name == "cub") {
    return {"#include <cub/block/block_reduce.cuh>\n"
            "extern \"C\" __global__ void block_sum(const int* in, int* out) {\n"
            "  using Reduce = cub::BlockReduce<int, 128>;\n"
            "  __shared__ typename Reduce::TempStorage temp;\n"
            "  int v = in[blockIdx.x * 128 + threadIdx.x];\n"
            "  int total = Reduce(temp).Sum(v);\n"
            "  if (threadIdx.x == 0) out[blockIdx.x] = total;\n"
            "}\n",
            {"-arch=sm_80", "-std=c++17", "-I/usr/local/cuda/include/cccl", "-I/usr/local/cuda/include"}};
  }
  if (name == "cute") {  // needs CUTLASS_INCLUDE_DIR (a CUTLASS include tree)
    static std::string cutlass = std::string("-I") + (std::getenv("CUTLASS_INCLUDE_DIR") ? std::getenv("CUTLASS_INCLUDE_DIR") : "");
    return {"#include <cute/tensor.hpp>\n"
            "using namespace cute;\n"
            "extern \"C\" __global__ void copy_tile(const float* src, float* dst) {\n"
            "  auto layout = make_layout(make_shape(Int<32>{}, Int<8>{}), make_stride(Int<8>{}, Int<1>{}));\n"
            "  Tensor s = make_tensor(make_gmem_ptr(src), layout);\n"
            "  Tensor d = make_tensor(make_gmem_ptr(dst), layout);\n"
            "  for (int i = threadIdx.x; i < size(layout); i += blockDim.x) d(i) = s(i);\n"
            "}\n",
            {"-arch=sm_80", "-std=c++17", "-default-device", cutlass.c_str(), "-I/usr/local/cuda/include/cccl",
             "-I/usr/local/cuda/include"}};
  }
  return {nullptr, {}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: nvrtc_bench trivial|cub|cute REPEAT\n");
    return 2;
  }
  const Kernel k = kernel_named(argv[1]);
  const int repeat = std::atoi(argv[2]);
  if (k.source == nullptr || repeat <= 0) return 2;
  for (int i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    nvrtcProgram p;
    if (nvrtcCreateProgram(&p, k.source, "bench.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return 1;
    const nvrtcResult rc = nvrtcCompileProgram(p, static_cast<int>(k.options.size()), k.options.data());
    size_t size = 0;
    nvrtcGetProgramLogSize(p, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(p, log.data());
    if (rc != NVRTC_SUCCESS) {
      std::fprintf(stderr, "compile failed: %s\n", log.c_str());
      return 1;
    }
    nvrtcGetCUBINSize(p, &size);
    std::string cubin(size, '\0');
    nvrtcGetCUBIN(p, cubin.data());
    nvrtcDestroyProgram(&p);
    const auto end = std::chrono::steady_clock::now();
    std::printf("%lld\n", static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count()));
  }
  return 0;
}
