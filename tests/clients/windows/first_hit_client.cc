// first_hit_client: one compile in a fresh process, timed, as an application that loads NVRTC by name
// would run it: LoadLibraryA("nvrtc64_130_0.dll"), a templated kernel with a name expression,
// nvrtcCompileProgram timed with the performance counter (the compile alone: loading the DLLs and
// creating the program are outside it). Prints "compile_ns N", then what the compile returned (its
// result code, the lowered name, the PTX's size and an FNV-1a hash of its bytes) so that runs can be
// compared for exactness. For the first-hit latency under Wine (tests/integration/wine_test.cc,
// docs/platforms.md). Usage: first_hit_client
#include <windows.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include <nvrtc.h>

namespace {

constexpr const char* kSource = R"(
template <typename T, int N>
__global__ void scale(T* data) {
  data[threadIdx.x] *= static_cast<T>(N);
}
)";

template <typename Fn>
Fn function(HMODULE module, const char* name) {
  return reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(module, name)));
}

std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

}  // namespace

int main() {
  HMODULE nvrtc = LoadLibraryA("nvrtc64_130_0.dll");
  if (nvrtc == nullptr) {
    std::fprintf(stderr, "first_hit_client: LoadLibraryA(nvrtc64_130_0.dll) failed: error %lu\n", GetLastError());
    return 3;
  }
  const auto create = function<decltype(&nvrtcCreateProgram)>(nvrtc, "nvrtcCreateProgram");
  const auto add_name = function<decltype(&nvrtcAddNameExpression)>(nvrtc, "nvrtcAddNameExpression");
  const auto compile = function<decltype(&nvrtcCompileProgram)>(nvrtc, "nvrtcCompileProgram");
  const auto lowered = function<decltype(&nvrtcGetLoweredName)>(nvrtc, "nvrtcGetLoweredName");
  const auto ptx_size = function<decltype(&nvrtcGetPTXSize)>(nvrtc, "nvrtcGetPTXSize");
  const auto ptx = function<decltype(&nvrtcGetPTX)>(nvrtc, "nvrtcGetPTX");
  const auto destroy = function<decltype(&nvrtcDestroyProgram)>(nvrtc, "nvrtcDestroyProgram");
  if (!create || !add_name || !compile || !lowered || !ptx_size || !ptx || !destroy) {
    std::fprintf(stderr, "first_hit_client: an NVRTC function is missing\n");
    return 3;
  }
  nvrtcProgram program = nullptr;
  if (create(&program, kSource, "scale.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return 4;
  if (add_name(program, "scale<float, 2>") != NVRTC_SUCCESS) return 4;
  const char* options[] = {"-arch=compute_80", "-std=c++17"};
  LARGE_INTEGER frequency, start, end;
  QueryPerformanceFrequency(&frequency);
  QueryPerformanceCounter(&start);
  const nvrtcResult rc = compile(program, 2, options);
  QueryPerformanceCounter(&end);
  const double nanos = static_cast<double>(end.QuadPart - start.QuadPart) * 1e9 / static_cast<double>(frequency.QuadPart);
  std::printf("compile_ns %.0f\n", nanos);
  std::printf("compile rc=%d\n", static_cast<int>(rc));
  const char* name = nullptr;
  std::printf("lowered %s\n", lowered(program, "scale<float, 2>", &name) == NVRTC_SUCCESS && name ? name : "(none)");
  std::size_t size = 0;
  std::string bytes;
  if (ptx_size(program, &size) == NVRTC_SUCCESS) {
    bytes.resize(size);
    if (ptx(program, bytes.data()) != NVRTC_SUCCESS) bytes.clear();
  }
  std::printf("ptx %zu bytes fnv1a %016llx\n", bytes.size(), static_cast<unsigned long long>(fnv1a(bytes)));
  destroy(&program);
  return 0;
}
