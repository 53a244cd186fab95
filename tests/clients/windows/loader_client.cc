// loader_client: the Windows NVRTC probe reached the ways `nvrtc-cache.exe run` must reach
// (shim/windows/loader_redirect.h), none of which finds a proxy placed beside the .exe: it runs the
// portable scenarios of tests/support/probe_corpus.h and prints their dumps to stdout (binary mode).
// Usage: loader_client MODE ARG SCENARIO..., MODE one of
//   fullpath DLL        LoadLibraryW with the real DLL's full path
//   searchdirs DIR      AddDllDirectory(DIR), then LoadLibraryExW("nvrtc64_130_0.dll", nullptr,
//                       LOAD_LIBRARY_SEARCH_DEFAULT_DIRS), LoadLibraryExW found with GetProcAddress on
//                       KERNEL32 (as Python's ctypes calls it: how cuda.pathfinder loads NVRTC)
//   intermediate -      LoadLibraryW("nvrtc_intermediate.dll") (beside this .exe), which imports
//                       nvrtc64_130_0.dll (found on PATH) and hands out its import table's functions
//   child MODE ARG      runs this program again with MODE ARG SCENARIO... (CreateProcessW, the same
//                       standard handles) and exits as it did; this process never loads NVRTC
#include <fcntl.h>
#include <io.h>
#include <windows.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/support/probe_corpus.h"

namespace {

using nvrtc_cache::probe::Api;

std::string g_mode, g_arg;

std::wstring wide(const std::string& text) {
  std::wstring out(text.size() + 1, L'\0');
  const int n = MultiByteToWideChar(CP_UTF8, 0, text.c_str(), -1, out.data(), static_cast<int>(out.size()));
  out.resize(n > 0 ? static_cast<std::size_t>(n - 1) : 0);
  return out;
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "loader_client %s: %s failed: error %lu\n", g_mode.c_str(), what, GetLastError());
  std::exit(3);
}

void from_module(HMODULE nvrtc, Api& a) {
#define NVRTC_API(kind, ret, name, params, args) \
  a.name = reinterpret_cast<ret(*) params>(reinterpret_cast<void*>(GetProcAddress(nvrtc, #name)));
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
}

Api reach_nvrtc() {
  Api a;
  if (g_mode == "fullpath") {
    const HMODULE nvrtc = LoadLibraryW(wide(g_arg).c_str());
    if (nvrtc == nullptr) fail("LoadLibraryW(full path)");
    from_module(nvrtc, a);
  } else if (g_mode == "searchdirs") {
    if (AddDllDirectory(wide(g_arg).c_str()) == nullptr) fail("AddDllDirectory");
    using LoadLibraryExWFn = HMODULE(WINAPI*)(LPCWSTR, HANDLE, DWORD);
    const auto load = reinterpret_cast<LoadLibraryExWFn>(
        reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryExW")));
    if (load == nullptr) fail("GetProcAddress(LoadLibraryExW)");
    const HMODULE nvrtc = load(L"nvrtc64_130_0.dll", nullptr, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
    if (nvrtc == nullptr) fail("LoadLibraryExW(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)");
    from_module(nvrtc, a);
  } else if (g_mode == "intermediate") {
    const HMODULE intermediate = LoadLibraryW(L"nvrtc_intermediate.dll");
    if (intermediate == nullptr) fail("LoadLibraryW(nvrtc_intermediate.dll)");
    using FillFn = void (*)(Api*);
    const auto fill =
        reinterpret_cast<FillFn>(reinterpret_cast<void*>(GetProcAddress(intermediate, "nvrtc_intermediate_api")));
    if (fill == nullptr) fail("GetProcAddress(nvrtc_intermediate_api)");
    fill(&a);
  } else {
    std::fprintf(stderr, "loader_client: unknown mode %s\n", g_mode.c_str());
    std::exit(2);
  }
  return a;
}

void append_argument(std::wstring& line, const std::string& argument) { line += L" \"" + wide(argument) + L"\""; }

int run_child(int argc, char** argv) {
  wchar_t self[MAX_PATH];
  if (GetModuleFileNameW(nullptr, self, MAX_PATH) == 0) fail("GetModuleFileNameW");
  std::wstring line = L"\"" + std::wstring(self) + L"\"";
  for (int i = 2; i < argc; ++i) append_argument(line, argv[i]);
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  startup.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
  startup.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  PROCESS_INFORMATION child{};
  std::fflush(stdout);
  if (!CreateProcessW(self, line.data(), nullptr, nullptr, TRUE, 0, nullptr, nullptr, &startup, &child)) {
    fail("CreateProcessW");
  }
  WaitForSingleObject(child.hProcess, INFINITE);
  DWORD code = 1;
  GetExitCodeProcess(child.hProcess, &code);
  CloseHandle(child.hThread);
  CloseHandle(child.hProcess);
  return static_cast<int>(code);
}

}  // namespace

const Api& nvrtc_cache::probe::api() {
  static const Api reached = reach_nvrtc();
  return reached;
}

int main(int argc, char** argv) {
  _setmode(_fileno(stdout), _O_BINARY);
  if (argc < 3) {
    std::fprintf(stderr, "usage: loader_client fullpath|searchdirs|intermediate|child ARG SCENARIO...\n");
    return 2;
  }
  g_mode = argv[1];
  if (g_mode == "child") return run_child(argc, argv);
  g_arg = argv[2];
  // The scenarios, as run_scenarios reads them (its argv[0] is the program's name).
  argv[2] = argv[0];
  return nvrtc_cache::probe::run_scenarios(argc - 2, argv + 2, nvrtc_cache::probe::portable_scenarios());
}
