// nvjitlink_client: JIT LTO on Windows, for the Wine tests of the proxy's nvJitLink
// (tests/integration/wine_jit_libraries_test.cc). NVRTC compiles two programs to LTO-IR (-dlto), then
// nvJitLink links them (-lto) into a CUBIN, twice in the process; a third link leaves a function
// undefined and fails. Every return code and every output (CUBIN, PTX, both logs: size, return codes
// and bytes in hex) is printed, so that a run against the real DLLs and runs through the proxy cold
// and warm compare byte for byte. nvrtc64_130_0.dll and nvJitLink_130_0.dll are loaded with
// LoadLibraryA, so the DLL search order (the .exe's directory, then PATH) picks them.
// Usage: nvjitlink_client
#include <fcntl.h>
#include <io.h>
#include <nvrtc.h>
#include <windows.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Handle = struct nvJitLink*;
using Create = int (*)(Handle*, std::uint32_t, const char* const*);
using Destroy = int (*)(Handle*);
using AddData = int (*)(Handle, int, const void*, size_t, const char*);
using Complete = int (*)(Handle);
using SizeOf = int (*)(Handle, size_t*);
using DataOf = int (*)(Handle, void*);
constexpr int kInputLtoir = 3;  // NVJITLINK_INPUT_LTOIR

HMODULE load(const char* name) {
  const HMODULE module = LoadLibraryA(name);
  if (module == nullptr) {
    std::fprintf(stderr, "nvjitlink_client: LoadLibraryA(%s) failed: error %lu\n", name, GetLastError());
    std::exit(3);
  }
  return module;
}

template <typename Fn>
Fn function(HMODULE module, const char* name) {
  const auto fn = reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(module, name)));
  if (fn == nullptr) {
    std::fprintf(stderr, "nvjitlink_client: no %s\n", name);
    std::exit(3);
  }
  return fn;
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string lto_ir(HMODULE nvrtc, const char* source, const char* name) {
  const auto create = function<decltype(&nvrtcCreateProgram)>(nvrtc, "nvrtcCreateProgram");
  const auto compile = function<decltype(&nvrtcCompileProgram)>(nvrtc, "nvrtcCompileProgram");
  const auto size_of = function<decltype(&nvrtcGetLTOIRSize)>(nvrtc, "nvrtcGetLTOIRSize");
  const auto data_of = function<decltype(&nvrtcGetLTOIR)>(nvrtc, "nvrtcGetLTOIR");
  const auto destroy = function<decltype(&nvrtcDestroyProgram)>(nvrtc, "nvrtcDestroyProgram");
  nvrtcProgram prog = nullptr;
  if (create(&prog, source, name, 0, nullptr, nullptr) != NVRTC_SUCCESS) std::exit(4);
  const char* options[] = {"-dlto", "-rdc=true", "-arch=sm_90"};
  const nvrtcResult rc = compile(prog, 3, options);
  size_t size = 0;
  std::string bytes;
  if (rc == NVRTC_SUCCESS && size_of(prog, &size) == NVRTC_SUCCESS) {
    bytes.resize(size);
    if (data_of(prog, bytes.data()) != NVRTC_SUCCESS) bytes.clear();
  }
  std::printf("compile %s rc=%d ltoir=%zu\n", name, static_cast<int>(rc), bytes.size());
  destroy(&prog);
  return bytes;
}

void print_output(HMODULE nvjitlink, Handle handle, const char* what, const char* size_name, const char* data_name) {
  size_t size = 0;
  const int size_rc = function<SizeOf>(nvjitlink, size_name)(handle, &size);
  std::string bytes;
  int data_rc = -1;
  if (size_rc == 0) {
    bytes.assign(size, '\0');
    data_rc = function<DataOf>(nvjitlink, data_name)(handle, bytes.data());
  }
  std::printf("  %s size_rc=%d size=%zu data_rc=%d %s\n", what, size_rc, size_rc == 0 ? size : 0, data_rc,
              hex(bytes).c_str());
}

void link(HMODULE nvjitlink, const char* title, const std::vector<std::pair<std::string, const char*>>& inputs) {
  Handle handle = nullptr;
  const char* options[] = {"-lto", "-arch=sm_90"};
  std::printf("### %s\n", title);
  const int create_rc = function<Create>(nvjitlink, "nvJitLinkCreate")(&handle, 2, options);
  std::printf("  create rc=%d\n", create_rc);
  if (create_rc != 0) return;
  for (const auto& [bytes, name] : inputs) {
    std::printf(
        "  add %s rc=%d\n", name,
        function<AddData>(nvjitlink, "nvJitLinkAddData")(handle, kInputLtoir, bytes.data(), bytes.size(), name));
  }
  std::printf("  complete rc=%d\n", function<Complete>(nvjitlink, "nvJitLinkComplete")(handle));
  print_output(nvjitlink, handle, "cubin", "nvJitLinkGetLinkedCubinSize", "nvJitLinkGetLinkedCubin");
  print_output(nvjitlink, handle, "ptx", "nvJitLinkGetLinkedPtxSize", "nvJitLinkGetLinkedPtx");
  print_output(nvjitlink, handle, "error_log", "nvJitLinkGetErrorLogSize", "nvJitLinkGetErrorLog");
  print_output(nvjitlink, handle, "info_log", "nvJitLinkGetInfoLogSize", "nvJitLinkGetInfoLog");
  std::printf("  destroy rc=%d\n", function<Destroy>(nvjitlink, "nvJitLinkDestroy")(&handle));
}

}  // namespace

int main() {
  _setmode(_fileno(stdout), _O_BINARY);
  const HMODULE nvrtc = load("nvrtc64_130_0.dll");
  const HMODULE nvjitlink = load("nvJitLink_130_0.dll");
  unsigned major = 0, minor = 0;
  using Version = int (*)(unsigned*, unsigned*);
  const int version_rc = function<Version>(nvjitlink, "nvJitLinkVersion")(&major, &minor);
  std::printf("nvJitLinkVersion rc=%d %u.%u\n", version_rc, major, minor);
  const std::string kernel = lto_ir(nvrtc,
                                    "extern __device__ float scale(float);\n"
                                    "extern \"C\" __global__ void kernel(float* x) { x[0] = scale(x[0]); }\n",
                                    "kernel.cu");
  const std::string helper = lto_ir(nvrtc, "__device__ float scale(float v) { return v * 2.0f; }\n", "helper.cu");
  link(nvjitlink, "link", {{kernel, "kernel.ltoir"}, {helper, "helper.ltoir"}});
  link(nvjitlink, "link again", {{kernel, "kernel.ltoir"}, {helper, "helper.ltoir"}});
  link(nvjitlink, "undefined", {{kernel, "kernel.ltoir"}});
  return 0;
}
