// The benchmark corpus: named NVRTC programs (source, options, name expressions) shared by
// nvrtc_bench (which compiles them) and hit_floor (which measures the cost floor of a cache hit on
// them). Header-only, no state beyond function-local statics; not thread-safe on first use.
// Two kernels read their include tree from the environment (read once, before any compile):
//   cute     CUTLASS_INCLUDE_DIR     a CUTLASS include tree (e.g. the nvidia-cutlass wheel's
//                                    cutlass_library/source/include)
//   headers  NVRTC_BENCH_HEADERS_DIR a generated tree whose all.h includes every header and defines
//                                    `int generated_entry(int)` (scripts/bench_suite.py writes it)
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

namespace nvrtc_bench {

struct Kernel {
  const char* source = nullptr;
  std::vector<const char*> options;
  std::vector<const char*> name_expressions;  // added before the compile, lowered after it
};

inline std::string include_option(const char* variable) {
  const char* dir = std::getenv(variable);
  return std::string("-I") + (dir ? dir : "/nonexistent");
}

inline Kernel kernel_named(const std::string& name) {
  if (name == "trivial") {
    return {
        "extern \"C\" __global__ void axpy(float a, const float* x, float* y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = a * x[i] + y[i];\n"
        "}\n",
        {"-arch=sm_80"},
        {}};
  }
  if (name == "names") {  // templates instantiated only through name expressions
    return {
        "template <typename T, int N> __global__ void poly(T* x) {\n"
        "  T v = x[threadIdx.x];\n"
        "  for (int i = 0; i < N; ++i) v = v * v + T(i);\n"
        "  x[threadIdx.x] = v;\n"
        "}\n"
        "template <typename T> __global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }\n",
        {"-arch=sm_80", "-std=c++17"},
        {"poly<float, 16>", "poly<double, 32>", "poly<int, 8>", "scale<float>", "scale<double>"}};
  }
  if (name == "cub") {  // CUB block reduce and block radix sort from the toolkit's CCCL
    return {
        "#include <cub/block/block_reduce.cuh>\n"
        "#include <cub/block/block_radix_sort.cuh>\n"
        "extern \"C\" __global__ void block_sum(const int* in, int* out) {\n"
        "  using Reduce = cub::BlockReduce<int, 128>;\n"
        "  __shared__ typename Reduce::TempStorage temp;\n"
        "  int v = in[blockIdx.x * 128 + threadIdx.x];\n"
        "  int total = Reduce(temp).Sum(v);\n"
        "  if (threadIdx.x == 0) out[blockIdx.x] = total;\n"
        "}\n"
        "extern \"C\" __global__ void block_sort(int* keys) {\n"
        "  using Sort = cub::BlockRadixSort<int, 128, 4>;\n"
        "  __shared__ typename Sort::TempStorage temp;\n"
        "  int items[4];\n"
        "  for (int i = 0; i < 4; ++i) items[i] = keys[blockIdx.x * 512 + threadIdx.x * 4 + i];\n"
        "  Sort(temp).Sort(items);\n"
        "  for (int i = 0; i < 4; ++i) keys[blockIdx.x * 512 + threadIdx.x * 4 + i] = items[i];\n"
        "}\n",
        {"-arch=sm_80", "-std=c++17", "-I/usr/local/cuda/include/cccl", "-I/usr/local/cuda/include"},
        {}};
  }
  if (name == "cute") {  // a cute::Tensor tile copy through shared memory
    static const std::string cutlass = include_option("CUTLASS_INCLUDE_DIR");
    return {
        "#include <cute/tensor.hpp>\n"
        "using namespace cute;\n"
        "extern \"C\" __global__ void copy_tile(const float* src, float* dst) {\n"
        "  auto layout = make_layout(make_shape(Int<32>{}, Int<8>{}), make_stride(Int<8>{}, Int<1>{}));\n"
        "  __shared__ float smem[32 * 8];\n"
        "  Tensor s = make_tensor(make_gmem_ptr(src), layout);\n"
        "  Tensor t = make_tensor(make_smem_ptr(smem), layout);\n"
        "  Tensor d = make_tensor(make_gmem_ptr(dst), layout);\n"
        "  for (int i = threadIdx.x; i < size(layout); i += blockDim.x) t(i) = s(i);\n"
        "  __syncthreads();\n"
        "  for (int i = threadIdx.x; i < size(layout); i += blockDim.x) d(i) = t(i);\n"
        "}\n",
        {"-arch=sm_80", "-std=c++17", "-default-device", cutlass.c_str(), "-I/usr/local/cuda/include/cccl",
         "-I/usr/local/cuda/include"},
        {}};
  }
  if (name == "headers") {  // thousands of generated headers
    static const std::string headers = include_option("NVRTC_BENCH_HEADERS_DIR");
    return {
        "#include \"all.h\"\n"
        "extern \"C\" __global__ void entry(int* x) { x[threadIdx.x] = generated_entry(x[threadIdx.x]); }\n",
        {"-arch=sm_80", headers.c_str()},
        {}};
  }
  return {};
}

}  // namespace nvrtc_bench
