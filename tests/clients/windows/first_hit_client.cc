// first_hit_client: compiles in a fresh process, timed, as an application that loads NVRTC by name
// would: LoadLibraryA("nvrtc64_130_0.dll"), a templated kernel with a name expression,
// nvrtcCompileProgram timed with the performance counter (the compile alone: loading the DLLs and
// creating the program are outside it). For each compile it prints one line: the program, "compile_ns
// N", what the compile returned (its result code, the lowered name, the PTX's size and an FNV-1a hash
// of its bytes), so that runs can be compared for exactness. For the first-hit latency and the growing
// data file and single-flight between processes under Wine (tests/integration/wine_test.cc,
// docs/platforms.md).
// Usage: first_hit_client [STEP...], each STEP one of
//   (none)        the templated kernel alone, once
//   fill:N        the kernel with a 12,000-int device array seeded by N (about 150 KiB of PTX)
//   mark:PATH     creates the file PATH (to say the steps before it are done)
//   wait:PATH     waits (at most 300 s) until the file PATH exists
//   claims:DIR    the proxy's claims directory, for the two steps below
//   hold:CONTROL  from now on a watcher thread waits for a claim file in DIR (the proxy claimed a
//                 compile of this process), lets the compile run 50 ms more, suspends the main
//                 thread (the claim held), appends one byte to the existing file CONTROL and waits
//                 until CONTROL has 2 bytes (the test's go), then resumes the main thread
//   die:CONTROL   as hold:, but ends the process (TerminateProcess) instead of resuming it: a
//                 holder killed while it holds its claim
//   version       calls nvrtcVersion and prints "version MAJOR.MINOR"
//   unload        FreeLibrary on the DLL, then waits 300 ms and prints "unloaded" (no NVRTC call after)
#include <windows.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nvrtc.h>

namespace {

constexpr const char* kKernel = R"(
template <typename T, int N>
__global__ void scale(T* data) {
  data[threadIdx.x] *= static_cast<T>(N);
}
)";

template <typename Fn>
Fn function(HMODULE module, const char* name) {
  return reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(module, name)));
}

std::string fill_source(unsigned seed) {
  std::string source = kKernel;
  source += "__device__ int probe_fill[12000] = {";
  for (unsigned i = 0; i < 12000; ++i) source += std::to_string((i * 7919u + seed) % 100003u) + ",";
  return source + "};\n";
}

std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

struct Nvrtc {
  decltype(&nvrtcCreateProgram) create;
  decltype(&nvrtcAddNameExpression) add_name;
  decltype(&nvrtcCompileProgram) compile;
  decltype(&nvrtcGetLoweredName) lowered;
  decltype(&nvrtcGetPTXSize) ptx_size;
  decltype(&nvrtcGetPTX) ptx;
  decltype(&nvrtcDestroyProgram) destroy;
};

// Compiles `source`, printing one line labelled `label`; false if the program could not be made.
bool compile_and_print(const Nvrtc& nvrtc, const std::string& label, const std::string& source) {
  nvrtcProgram program = nullptr;
  if (nvrtc.create(&program, source.c_str(), "scale.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return false;
  if (nvrtc.add_name(program, "scale<float, 2>") != NVRTC_SUCCESS) return false;
  const char* options[] = {"-arch=compute_80", "-std=c++17"};
  LARGE_INTEGER frequency, start, end;
  QueryPerformanceFrequency(&frequency);
  QueryPerformanceCounter(&start);
  const nvrtcResult rc = nvrtc.compile(program, 2, options);
  QueryPerformanceCounter(&end);
  const double nanos =
      static_cast<double>(end.QuadPart - start.QuadPart) * 1e9 / static_cast<double>(frequency.QuadPart);
  const char* name = nullptr;
  if (nvrtc.lowered(program, "scale<float, 2>", &name) != NVRTC_SUCCESS || name == nullptr) name = "(none)";
  std::size_t size = 0;
  std::string bytes;
  if (nvrtc.ptx_size(program, &size) == NVRTC_SUCCESS) {
    bytes.resize(size);
    if (nvrtc.ptx(program, bytes.data()) != NVRTC_SUCCESS) bytes.clear();
  }
  std::printf("%s compile_ns %.0f rc=%d lowered %s ptx %zu bytes fnv1a %016llx\n", label.c_str(), nanos,
              static_cast<int>(rc), name, bytes.size(), static_cast<unsigned long long>(fnv1a(bytes)));
  std::fflush(stdout);
  nvrtc.destroy(&program);
  return true;
}

struct Holder {
  std::wstring claims;   // the claims directory
  std::wstring control;  // the file that says "held" (1 byte) and "go" (2 bytes)
  bool die = false;
  HANDLE main_thread = nullptr;
};

bool claim_file_in(const std::wstring& directory) {
  WIN32_FIND_DATAW found;
  const HANDLE search = FindFirstFileW((directory + L"\\*").c_str(), &found);
  if (search == INVALID_HANDLE_VALUE) return false;
  bool any = false;
  do {
    any = !(found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY);
  } while (!any && FindNextFileW(search, &found));
  FindClose(search);
  return any;
}

// The watcher of hold:/die:. Once the main thread is suspended it may hold any lock of the process
// (the heap's): only calls on handles opened before (no allocation) are made then.
DWORD WINAPI hold_claim(void* argument) {
  const Holder& holder = *static_cast<const Holder*>(argument);
  const HANDLE control =
      CreateFileW(holder.control.c_str(), FILE_APPEND_DATA | FILE_READ_ATTRIBUTES,
                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING, 0, nullptr);
  if (control == INVALID_HANDLE_VALUE) ExitProcess(6);
  for (int polls = 0; !claim_file_in(holder.claims); ++polls) {
    if (polls > 300000) ExitProcess(6);
    Sleep(1);
  }
  Sleep(50);  // the claim is taken (its file is created just before it) and the compile under way
  if (SuspendThread(holder.main_thread) == static_cast<DWORD>(-1)) ExitProcess(6);
  DWORD written = 0;
  if (!WriteFile(control, "h", 1, &written, nullptr)) ExitProcess(6);
  LARGE_INTEGER size{};
  for (int polls = 0; GetFileSizeEx(control, &size) && size.QuadPart < 2; ++polls) {
    if (polls > 60000) ExitProcess(7);
    Sleep(5);
  }
  if (holder.die) TerminateProcess(GetCurrentProcess(), 9);
  ResumeThread(holder.main_thread);
  CloseHandle(control);
  return 0;
}

std::wstring wide(const char* text) {
  std::wstring out;
  for (; *text; ++text) out.push_back(static_cast<wchar_t>(static_cast<unsigned char>(*text)));
  return out;
}

bool wait_for(const char* path) {
  for (int waited_ms = 0; waited_ms < 300000; waited_ms += 20) {
    if (GetFileAttributesA(path) != INVALID_FILE_ATTRIBUTES) return true;
    Sleep(20);
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  HMODULE module = LoadLibraryA("nvrtc64_130_0.dll");
  if (module == nullptr) {
    std::fprintf(stderr, "first_hit_client: LoadLibraryA(nvrtc64_130_0.dll) failed: error %lu\n", GetLastError());
    return 3;
  }
  const Nvrtc nvrtc{function<decltype(&nvrtcCreateProgram)>(module, "nvrtcCreateProgram"),
                    function<decltype(&nvrtcAddNameExpression)>(module, "nvrtcAddNameExpression"),
                    function<decltype(&nvrtcCompileProgram)>(module, "nvrtcCompileProgram"),
                    function<decltype(&nvrtcGetLoweredName)>(module, "nvrtcGetLoweredName"),
                    function<decltype(&nvrtcGetPTXSize)>(module, "nvrtcGetPTXSize"),
                    function<decltype(&nvrtcGetPTX)>(module, "nvrtcGetPTX"),
                    function<decltype(&nvrtcDestroyProgram)>(module, "nvrtcDestroyProgram")};
  if (!nvrtc.create || !nvrtc.add_name || !nvrtc.compile || !nvrtc.lowered || !nvrtc.ptx_size || !nvrtc.ptx ||
      !nvrtc.destroy) {
    std::fprintf(stderr, "first_hit_client: an NVRTC function is missing\n");
    return 3;
  }
  if (argc < 2) return compile_and_print(nvrtc, "kernel", kKernel) ? 0 : 4;
  static Holder holder;
  for (int i = 1; i < argc; ++i) {
    const std::string step = argv[i];
    if (step == "version") {
      int major = 0, minor = 0;
      const auto version = function<decltype(&nvrtcVersion)>(module, "nvrtcVersion");
      if (version == nullptr || version(&major, &minor) != NVRTC_SUCCESS) return 4;
      std::printf("version %d.%d\n", major, minor);
      std::fflush(stdout);
    } else if (step == "unload") {
      if (!FreeLibrary(module)) return 7;
      Sleep(300);
      std::printf("unloaded\n");
      std::fflush(stdout);
      return 0;
    } else if (step.rfind("fill:", 0) == 0) {
      if (!compile_and_print(nvrtc, step, fill_source(static_cast<unsigned>(std::atoi(step.c_str() + 5))))) return 4;
    } else if (step.rfind("mark:", 0) == 0) {
      const HANDLE file = CreateFileA(step.c_str() + 5, GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, 0, nullptr);
      if (file == INVALID_HANDLE_VALUE) return 5;
      CloseHandle(file);
    } else if (step.rfind("wait:", 0) == 0) {
      if (!wait_for(step.c_str() + 5)) {
        std::fprintf(stderr, "first_hit_client: %s did not appear\n", step.c_str() + 5);
        return 5;
      }
    } else if (step.rfind("claims:", 0) == 0) {
      holder.claims = wide(step.c_str() + 7);
    } else if (step.rfind("hold:", 0) == 0 || step.rfind("die:", 0) == 0) {
      holder.die = step[0] == 'd';
      holder.control = wide(step.c_str() + step.find(':') + 1);
      if (!DuplicateHandle(GetCurrentProcess(), GetCurrentThread(), GetCurrentProcess(), &holder.main_thread, 0, FALSE,
                           DUPLICATE_SAME_ACCESS) ||
          holder.claims.empty() || CreateThread(nullptr, 0, hold_claim, &holder, 0, nullptr) == nullptr) {
        std::fprintf(stderr, "first_hit_client: cannot watch for a claim\n");
        return 6;
      }
    } else {
      std::fprintf(stderr, "first_hit_client: unknown step %s\n", step.c_str());
      return 2;
    }
  }
  return 0;
}
