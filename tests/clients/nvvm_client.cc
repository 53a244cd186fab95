// libNVVM in one process: NVVM IR modules (written here, in the dialect libNVVM 13.0 reads) added to a
// program and compiled to PTX or LTO-IR; every return code, size, result byte and log libNVVM gives is
// printed, so runs under the shim can be compared with runs without it.
// Usage: nvvm_client SCENARIO...  (NVVM_ARCH, e.g. 80: the architecture compiled for instead of 90).
// Built twice: linked against libnvvm, and with NVVM_CLIENT_DLOPEN,
// which dlopens libnvvm.so.4 by soname and looks its functions up with dlsym; and for Windows
// (tests/clients/windows/CMakeLists.txt) with NVVM_CLIENT_LOADLIBRARY, which loads nvvm64_40_0.dll with
// LoadLibraryA (the DLL search order picks it) and prints in binary mode.
#include <nvvm.h>
#ifdef NVVM_CLIENT_DLOPEN
#include <dlfcn.h>
#endif
#ifdef NVVM_CLIENT_LOADLIBRARY
#include <fcntl.h>
#include <io.h>
#include <windows.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Api {
  nvvmResult (*create)(nvvmProgram*);
  nvvmResult (*destroy)(nvvmProgram*);
  nvvmResult (*add)(nvvmProgram, const char*, size_t, const char*);
  nvvmResult (*lazy_add)(nvvmProgram, const char*, size_t, const char*);
  nvvmResult (*compile)(nvvmProgram, int, const char**);
  nvvmResult (*verify)(nvvmProgram, int, const char**);
  nvvmResult (*result_size)(nvvmProgram, size_t*);
  nvvmResult (*result)(nvvmProgram, char*);
  nvvmResult (*log_size)(nvvmProgram, size_t*);
  nvvmResult (*log)(nvvmProgram, char*);
};

Api load_api() {
#if defined(NVVM_CLIENT_DLOPEN) || defined(NVVM_CLIENT_LOADLIBRARY)
#ifdef NVVM_CLIENT_LOADLIBRARY
  const HMODULE lib = LoadLibraryA("nvvm64_40_0.dll");
  if (lib == nullptr) {
    std::fprintf(stderr, "LoadLibraryA(nvvm64_40_0.dll): error %lu\n", GetLastError());
    std::exit(2);
  }
  const auto sym = [lib](const char* name) {
    void* f = reinterpret_cast<void*>(GetProcAddress(lib, name));
    if (f == nullptr) std::exit(2);
    return f;
  };
#else
  void* lib = dlopen("libnvvm.so.4", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    std::exit(2);
  }
  const auto sym = [lib](const char* name) {
    void* f = dlsym(lib, name);
    if (f == nullptr) std::exit(2);
    return f;
  };
#endif
#define NVVM_CLIENT_FN(field, name) reinterpret_cast<decltype(Api::field)>(sym(name))
  return {NVVM_CLIENT_FN(create, "nvvmCreateProgram"),
          NVVM_CLIENT_FN(destroy, "nvvmDestroyProgram"),
          NVVM_CLIENT_FN(add, "nvvmAddModuleToProgram"),
          NVVM_CLIENT_FN(lazy_add, "nvvmLazyAddModuleToProgram"),
          NVVM_CLIENT_FN(compile, "nvvmCompileProgram"),
          NVVM_CLIENT_FN(verify, "nvvmVerifyProgram"),
          NVVM_CLIENT_FN(result_size, "nvvmGetCompiledResultSize"),
          NVVM_CLIENT_FN(result, "nvvmGetCompiledResult"),
          NVVM_CLIENT_FN(log_size, "nvvmGetProgramLogSize"),
          NVVM_CLIENT_FN(log, "nvvmGetProgramLog")};
#undef NVVM_CLIENT_FN
#else
  return {nvvmCreateProgram,     nvvmDestroyProgram, nvvmAddModuleToProgram,    nvvmLazyAddModuleToProgram,
          nvvmCompileProgram,    nvvmVerifyProgram,  nvvmGetCompiledResultSize, nvvmGetCompiledResult,
          nvvmGetProgramLogSize, nvvmGetProgramLog};
#endif
}

const Api& api() {
  static const Api loaded = load_api();
  return loaded;
}

const std::string kComputeArch =
    std::string("-arch=compute_") + (std::getenv("NVVM_ARCH") ? std::getenv("NVVM_ARCH") : "90");
const char* compute_arch() { return kComputeArch.c_str(); }

constexpr const char* kHeader =
    "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-"
    "f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64\"\n"
    "target triple = \"nvptx64-nvidia-cuda\"\n";
constexpr const char* kVersion = "!nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0, i32 3, i32 2}\n";

std::string kernel_module(const char* body) {
  return std::string(kHeader) +
         "declare float @scale(float)\n"
         "define void @apply(float* %a) {\n"
         "entry:\n"
         "  %v = load float, float* %a\n" +
         body +
         "  store float %m, float* %a\n"
         "  ret void\n"
         "}\n"
         "!nvvm.annotations = !{!0}\n"
         "!0 = !{void (float*)* @apply, !\"kernel\", i32 1}\n" +
         kVersion;
}

const std::string kKernel = kernel_module("  %m = call float @scale(float %v)\n");
const std::string kLibrary = std::string(kHeader) +
                             "define float @scale(float %v) {\n"
                             "  %m = fmul float %v, 2.0\n"
                             "  ret float %m\n"
                             "}\n" +
                             kVersion;
const std::string kBroken = kernel_module("  %m = fadd i32 %v, 1\n");

void print_output(const char* what, nvvmProgram p, nvvmResult (*size_fn)(nvvmProgram, size_t*),
                  nvvmResult (*data_fn)(nvvmProgram, char*)) {
  size_t size = 12345;
  const nvvmResult size_rc = size_fn(p, &size);
  std::printf("  %s size_rc=%d size=%zu\n", what, size_rc, size);
  if (size_rc != NVVM_SUCCESS) size = 0;
  std::string bytes(size + 16, '\x5a');
  std::printf("  %s data_rc=%d\n  %s bytes=", what, data_fn(p, bytes.data()), what);
  for (unsigned char c : bytes) std::printf("%02x", c);
  std::printf("\n");
}

void print_all(nvvmProgram p) {
  print_output("result", p, api().result_size, api().result);
  print_output("log", p, api().log_size, api().log);
}

// Adds the modules (a lazy one last), optionally verifies, compiles, prints everything.
void compile(const char* scenario, const std::vector<std::string>& modules, std::vector<const char*> options,
             bool lazy_library = false, bool verify = false) {
  std::printf("%s\n", scenario);
  nvvmProgram p = nullptr;
  std::printf("  create=%d\n", api().create(&p));
  int i = 0;
  for (const std::string& m : modules) {
    const std::string name = "module" + std::to_string(i++);
    std::printf("  add=%d\n", api().add(p, m.data(), m.size(), name.c_str()));
  }
  if (lazy_library) std::printf("  lazy_add=%d\n", api().lazy_add(p, kLibrary.data(), kLibrary.size(), "libscale"));
  if (verify) std::printf("  verify=%d\n", api().verify(p, static_cast<int>(options.size()), options.data()));
  std::printf("  compile=%d\n", api().compile(p, static_cast<int>(options.size()), options.data()));
  print_all(p);
  std::printf("  destroy=%d\n", api().destroy(&p));
}

}  // namespace

int main(int argc, char** argv) {
#ifdef NVVM_CLIENT_LOADLIBRARY
  _setmode(_fileno(stdout), _O_BINARY);
#endif
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "ptx") {
      compile("ptx", {kKernel, kLibrary}, {compute_arch(), "-opt=3"});
    } else if (s == "gen_lto") {
      compile("gen_lto", {kKernel, kLibrary}, {compute_arch(), "-gen-lto"});
    } else if (s == "lazy") {
      compile("lazy", {kKernel}, {compute_arch()}, true);
    } else if (s == "verified") {  // as cuda.core does: verify, then compile
      compile("verified", {kKernel, kLibrary}, {compute_arch()}, false, true);
    } else if (s == "broken") {
      compile("broken", {kBroken, kLibrary}, {compute_arch()});
    } else if (s == "bad_option") {
      compile("bad_option", {kKernel, kLibrary}, {compute_arch(), "-no-such-option"});
    } else if (s == "no_module") {
      compile("no_module", {}, {compute_arch()});
    } else if (s == "after_compile") {  // a verify and a second compile after the compile (libNVVM 13.0
      // checks no getter argument for NULL: it crashes, so none is passed)
      std::printf("after_compile\n");
      nvvmProgram p = nullptr;
      std::printf("  create=%d\n", api().create(&p));
      std::printf("  add=%d\n", api().add(p, kKernel.data(), kKernel.size(), "k"));
      std::printf("  add=%d\n", api().add(p, kLibrary.data(), kLibrary.size(), "l"));
      const char* options[] = {compute_arch()};
      std::printf("  compile=%d\n", api().compile(p, 1, options));
      std::printf("  verify after=%d\n", api().verify(p, 1, options));
      print_all(p);
      std::printf("  compile again=%d\n", api().compile(p, 1, options));
      print_all(p);
      std::printf("  destroy=%d\n", api().destroy(&p));
    } else {
      std::fprintf(stderr, "unknown scenario %s\n", argv[i]);
      return 2;
    }
  }
  return 0;
}
