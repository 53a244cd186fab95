// An LTO link as JIT stacks do it (cuda.core's Linker, cuVS's and cuDF's JIT-LTO kernels): NVRTC
// compiles several CUB kernels to LTO-IR (-dlto), nvJitLink links them with -lto into one CUBIN;
// the link alone is timed, `repeat` times in one process. scripts/bench_suite.py (section "link")
// runs it directly, under the shim cold and warm. Prints one JSON line:
//   {"first_ns": ..., "repeat_median_ns": ..., "cubin_bytes": ..., "ltoir_bytes": ...}
// Usage: link_bench [REPEAT]
#include <nvJitLink.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// Each kernel instantiates a different CUB algorithm; together they make a link of seconds.
const char* const kKernels[] = {
    "#include <cub/block/block_reduce.cuh>\n"
    "extern \"C\" __global__ void block_sum(const int* in, int* out) {\n"
    "  using Reduce = cub::BlockReduce<int, 256>;\n"
    "  __shared__ typename Reduce::TempStorage temp;\n"
    "  int total = Reduce(temp).Sum(in[blockIdx.x * 256 + threadIdx.x]);\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = total;\n"
    "}\n",
    "#include <cub/block/block_radix_sort.cuh>\n"
    "extern \"C\" __global__ void block_sort(int* keys) {\n"
    "  using Sort = cub::BlockRadixSort<int, 128, 8>;\n"
    "  __shared__ typename Sort::TempStorage temp;\n"
    "  int items[8];\n"
    "  for (int i = 0; i < 8; ++i) items[i] = keys[blockIdx.x * 1024 + threadIdx.x * 8 + i];\n"
    "  Sort(temp).Sort(items);\n"
    "  for (int i = 0; i < 8; ++i) keys[blockIdx.x * 1024 + threadIdx.x * 8 + i] = items[i];\n"
    "}\n",
    "#include <cub/block/block_scan.cuh>\n"
    "extern \"C\" __global__ void block_scan(float* x) {\n"
    "  using Scan = cub::BlockScan<float, 256>;\n"
    "  __shared__ typename Scan::TempStorage temp;\n"
    "  float v = x[blockIdx.x * 256 + threadIdx.x];\n"
    "  Scan(temp).InclusiveSum(v, v);\n"
    "  x[blockIdx.x * 256 + threadIdx.x] = v;\n"
    "}\n",
    "#include <cub/block/block_histogram.cuh>\n"
    "extern \"C\" __global__ void block_histogram(const unsigned char* in, unsigned* bins) {\n"
    "  using Histogram = cub::BlockHistogram<unsigned char, 128, 4, 256>;\n"
    "  __shared__ typename Histogram::TempStorage temp;\n"
    "  __shared__ unsigned smem[256];\n"
    "  unsigned char items[4];\n"
    "  for (int i = 0; i < 4; ++i) items[i] = in[blockIdx.x * 512 + threadIdx.x * 4 + i];\n"
    "  Histogram(temp).Histogram(items, smem);\n"
    "  __syncthreads();\n"
    "  for (int i = threadIdx.x; i < 256; i += 128) atomicAdd(&bins[i], smem[i]);\n"
    "}\n",
};

std::string ltoir(const char* source) {
  nvrtcProgram prog;
  nvrtcCreateProgram(&prog, source, "link_bench.cu", 0, nullptr, nullptr);
  const char* options[] = {
      "-arch=sm_90", "-rdc=true", "-dlto", "-std=c++17", "-I/usr/local/cuda/include/cccl", "-I/usr/local/cuda/include"};
  if (nvrtcCompileProgram(prog, 6, options) != NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetProgramLogSize(prog, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::fprintf(stderr, "compile failed:\n%s\n", log.c_str());
    std::exit(1);
  }
  size_t size = 0;
  nvrtcGetLTOIRSize(prog, &size);
  std::string out(size, '\0');
  nvrtcGetLTOIR(prog, out.data());
  nvrtcDestroyProgram(&prog);
  return out;
}

// One link of every input; returns the CUBIN's size.
size_t link(const std::vector<std::string>& inputs) {
  nvJitLinkHandle handle;
  const char* options[] = {"-arch=sm_90", "-lto"};
  if (nvJitLinkCreate(&handle, 2, options) != NVJITLINK_SUCCESS) std::exit(1);
  for (const std::string& ir : inputs) nvJitLinkAddData(handle, NVJITLINK_INPUT_LTOIR, ir.data(), ir.size(), "k");
  if (nvJitLinkComplete(handle) != NVJITLINK_SUCCESS) {
    std::fprintf(stderr, "link failed\n");
    std::exit(1);
  }
  size_t size = 0;
  nvJitLinkGetLinkedCubinSize(handle, &size);
  std::string cubin(size, '\0');
  nvJitLinkGetLinkedCubin(handle, cubin.data());
  nvJitLinkDestroy(&handle);
  return size;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeat = argc > 1 ? std::atoi(argv[1]) : 3;
  std::vector<std::string> inputs;
  size_t ltoir_bytes = 0;
  for (const char* kernel : kKernels) {
    inputs.push_back(ltoir(kernel));
    ltoir_bytes += inputs.back().size();
  }
  std::vector<long long> times;
  size_t cubin_bytes = 0;
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    const auto start = std::chrono::steady_clock::now();
    cubin_bytes = link(inputs);
    times.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  }
  const long long first = times.front();
  std::vector<long long> rest(times.begin() + 1, times.end());
  std::sort(rest.begin(), rest.end());
  const long long median = rest.empty() ? first : rest[rest.size() / 2];
  std::printf("{\"first_ns\": %lld, \"repeat_median_ns\": %lld, \"cubin_bytes\": %zu, \"ltoir_bytes\": %zu}\n", first,
              median, cubin_bytes, ltoir_bytes);
  return 0;
}
