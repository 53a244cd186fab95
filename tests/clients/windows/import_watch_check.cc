// import_watch_check: loads the real nvrtc64_130_0.dll (LoadLibraryA: the DLL search order), installs
// the import watch on it (shim/windows/import_table_patch.h), compiles a kernel that includes
// probe_dep.h through `-I DIR`, and prints what it saw, one line each:
//   patch redirected=N already=N left=N parsed=0|1
//   compile rc=N
//   builtins loaded=0|1 redirected=N already=N left=N parsed=0|1   (the watch installed, after the
//                              compile, on the builtins DLL NVRTC loaded, nvrtc-builtins64_130.dll)
//   builtins again redirected=N already=N left=N
//   event FUNCTION kind=K ok=0|1 write=0|1 subject=S value=V
//   host_probe_observed=0|1   (this program's own CreateFileA of HOST_PROBE_PATH after the patch:
//                              the host's imports must stay untouched)
// Usage: import_watch_check DIR HOST_PROBE_PATH (Windows paths)
#include <fcntl.h>
#include <io.h>
#include <nvrtc.h>
#include <windows.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "shim/windows/import_table_patch.h"

namespace {

namespace win = nvrtc_cache::shim::windows;

std::mutex g_lock;
std::vector<std::string> g_events;

void record(const win::ImportEvent& event) {
  std::string line = std::string("event ") + event.function + " kind=" + std::to_string(static_cast<int>(event.kind)) +
                     " ok=" + (event.succeeded ? "1" : "0") + " write=" + (event.for_writing ? "1" : "0") +
                     " subject=" + (event.subject ? event.subject : "(none)") +
                     " value=" + (event.value ? event.value : "(none)");
  std::lock_guard<std::mutex> hold(g_lock);
  g_events.push_back(std::move(line));
}

template <typename Fn>
Fn find(HMODULE nvrtc, const char* name) {
  return reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(nvrtc, name)));
}

}  // namespace

int main(int argc, char** argv) {
  _setmode(_fileno(stdout), _O_BINARY);
  if (argc != 3) {
    std::fprintf(stderr, "usage: import_watch_check DIR HOST_PROBE_PATH\n");
    return 2;
  }
  HMODULE nvrtc = LoadLibraryA("nvrtc64_130_0.dll");
  if (nvrtc == nullptr) {
    std::fprintf(stderr, "import_watch_check: cannot load nvrtc64_130_0.dll: error %lu\n", GetLastError());
    return 3;
  }
  const win::ImportTablePatch patch = win::install_import_watch(nvrtc);
  std::printf("patch redirected=%d already=%d left=%d parsed=%d\n", patch.redirected, patch.already, patch.left,
              patch.parsed ? 1 : 0);
  const win::ImportTablePatch again = win::install_import_watch(nvrtc);
  std::printf("again redirected=%d already=%d left=%d\n", again.redirected, again.already, again.left);
  win::set_import_observer(record);

  auto create = find<decltype(&nvrtcCreateProgram)>(nvrtc, "nvrtcCreateProgram");
  auto compile = find<decltype(&nvrtcCompileProgram)>(nvrtc, "nvrtcCompileProgram");
  auto destroy = find<decltype(&nvrtcDestroyProgram)>(nvrtc, "nvrtcDestroyProgram");
  nvrtcProgram program = nullptr;
  create(&program, "#include \"probe_dep.h\"\n__global__ void k(int* x) { x[0] = PROBE_VALUE; }\n", "watch.cu", 0,
         nullptr, nullptr);
  const std::string include = std::string("-I") + argv[1];
  const char* options[] = {"-arch=sm_80", include.c_str()};
  const nvrtcResult rc = compile(program, 2, options);
  destroy(&program);

  // The host's own call, after the patch: must not be observed.
  SetLastError(12345);
  HANDLE host = CreateFileA(argv[2], GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, 0, nullptr);
  if (host != INVALID_HANDLE_VALUE) CloseHandle(host);
  win::set_import_observer(nullptr);

  std::printf("compile rc=%d\n", static_cast<int>(rc));
  HMODULE builtins = GetModuleHandleA("nvrtc-builtins64_130.dll");
  const win::ImportTablePatch on_builtins = win::install_import_watch(builtins);
  std::printf("builtins loaded=%d redirected=%d already=%d left=%d parsed=%d\n", builtins != nullptr ? 1 : 0,
              on_builtins.redirected, on_builtins.already, on_builtins.left, on_builtins.parsed ? 1 : 0);
  const win::ImportTablePatch builtins_again = win::install_import_watch(builtins);
  std::printf("builtins again redirected=%d already=%d left=%d\n", builtins_again.redirected, builtins_again.already,
              builtins_again.left);
  bool host_observed = false;
  for (const std::string& line : g_events) {
    std::printf("%s\n", line.c_str());
    if (line.find(argv[2]) != std::string::npos) host_observed = true;
  }
  std::printf("host_probe_observed=%d\n", host_observed ? 1 : 0);
  return 0;
}
