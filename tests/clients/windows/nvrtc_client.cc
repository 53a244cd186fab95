// nvrtc_client: the Windows NVRTC probe. Runs the portable scenarios of tests/support/probe_corpus.h and
// prints their dumps to stdout (binary mode: the bytes are the same as on Linux), so that runs
// directly against the real nvrtc64_130_0.dll, and through the proxy cold and warm, can be compared
// byte for byte. Built twice with mingw-w64 (tests/clients/windows/CMakeLists.txt):
//   NVRTC_CLIENT_LOADLIBRARY  LoadLibraryA("nvrtc64_130_0.dll") + GetProcAddress: the DLL search order
//                             (the .exe's directory first, then PATH) picks the DLL
//   otherwise                 linked with an import library (nvrtc64_130_0.dll in its import table)
// Usage: nvrtc_client SCENARIO... | list
#include <fcntl.h>
#include <io.h>
#include <windows.h>

#include <cstdio>

#include "tests/support/probe_corpus.h"

namespace {

using nvrtc_cache::probe::Api;

Api reach_nvrtc() {
  Api a;
#ifdef NVRTC_CLIENT_LOADLIBRARY
  HMODULE nvrtc = LoadLibraryA("nvrtc64_130_0.dll");
  if (nvrtc == nullptr) {
    std::fprintf(stderr, "nvrtc_client: LoadLibraryA(nvrtc64_130_0.dll) failed: error %lu\n", GetLastError());
    std::exit(3);
  }
#define NVRTC_API(kind, ret, name, params, args) \
  a.name = reinterpret_cast<ret(*) params>(reinterpret_cast<void*>(GetProcAddress(nvrtc, #name)));
#else
#define NVRTC_API(kind, ret, name, params, args) a.name = ::name;
#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)  // not in the nvrtc.h it is built against
#endif
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
#ifdef NVRTC_API_OUTSIDE_HEADER
#undef NVRTC_API_OUTSIDE_HEADER
#endif
  return a;
}

}  // namespace

const Api& nvrtc_cache::probe::api() {
  static const Api reached = reach_nvrtc();
  return reached;
}

int main(int argc, char** argv) {
  _setmode(_fileno(stdout), _O_BINARY);
  return nvrtc_cache::probe::run_scenarios(argc, argv, nvrtc_cache::probe::portable_scenarios());
}
