// A JIT pipeline in one process: NVRTC compiles CUDA C++ to LTO-IR or PTX, nvJitLink links it (with
// inputs added as data and as files) into a CUBIN or PTX; every return code, size, output byte and
// log nvJitLink gives is printed, so runs under the shim can be compared with runs without it.
// Usage: link_client SCENARIO...  (scenarios below; LINK_FILE names the file the `file` scenarios add;
// LINK_ARCH, e.g. 80, the architecture every compile and link targets instead of 90).
// Built three times: linked against libnvJitLink.so.13 (its inline functions call
// __nvJitLinkCreate_13_0 etc.); with LINK_CLIENT_DLOPEN, which dlopens nvJitLink by soname
// ($LINK_CLIENT_NVJITLINK, else libnvJitLink.so.13) and looks the plain names up with dlsym, as the
// Python bindings do (and AddFile under its major's first release suffix, _13_0 or _12_0); and with
// LINK_CLIENT_NVJITLINK12, linked against libnvJitLink.so.12 (tests/clients/nvjitlink12_stub.cc at
// link time, the real one at run time), calling what 12.9's inline functions call
// (__nvJitLinkCreate_12_9 etc.; AddFile as __nvJitLinkAddFile_12_0, as a 12.0 header's would).
// $LINK_CLIENT_NVRTC, when set, is the NVRTC to compile with, by path (the LTO-IR of NVRTC 12.9 is what
// nvJitLink 12.9 links); the 12 build needs it.
#include <dlfcn.h>
#include <nvrtc.h>
#if defined(LINK_CLIENT_DLOPEN) || defined(LINK_CLIENT_NVJITLINK12)
#define NVJITLINK_NO_INLINE
#endif
#include <nvJitLink.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef LINK_CLIENT_NVJITLINK12
// What nvJitLink 12.9's nvJitLink.h declares (and its inline functions call).
#define LINK_CLIENT_DECLARE(suffix)                                                                                \
  nvJitLinkResult __nvJitLinkCreate##suffix(nvJitLinkHandle*, uint32_t, const char**);                           \
  nvJitLinkResult __nvJitLinkDestroy##suffix(nvJitLinkHandle*);                                                  \
  nvJitLinkResult __nvJitLinkAddData##suffix(nvJitLinkHandle, nvJitLinkInputType, const void*, size_t, const char*); \
  nvJitLinkResult __nvJitLinkAddFile##suffix(nvJitLinkHandle, nvJitLinkInputType, const char*);                  \
  nvJitLinkResult __nvJitLinkComplete##suffix(nvJitLinkHandle);                                                  \
  nvJitLinkResult __nvJitLinkGetLinkedCubinSize##suffix(nvJitLinkHandle, size_t*);                               \
  nvJitLinkResult __nvJitLinkGetLinkedCubin##suffix(nvJitLinkHandle, void*);                                     \
  nvJitLinkResult __nvJitLinkGetLinkedPtxSize##suffix(nvJitLinkHandle, size_t*);                                 \
  nvJitLinkResult __nvJitLinkGetLinkedPtx##suffix(nvJitLinkHandle, char*);                                       \
  nvJitLinkResult __nvJitLinkGetErrorLogSize##suffix(nvJitLinkHandle, size_t*);                                  \
  nvJitLinkResult __nvJitLinkGetErrorLog##suffix(nvJitLinkHandle, char*);                                        \
  nvJitLinkResult __nvJitLinkGetInfoLogSize##suffix(nvJitLinkHandle, size_t*);                                   \
  nvJitLinkResult __nvJitLinkGetInfoLog##suffix(nvJitLinkHandle, char*);
extern "C" {
LINK_CLIENT_DECLARE(_12_9)
LINK_CLIENT_DECLARE(_12_0)
}
#undef LINK_CLIENT_DECLARE
#endif

namespace {

struct Api {
  nvJitLinkResult (*create)(nvJitLinkHandle*, uint32_t, const char**);
  nvJitLinkResult (*destroy)(nvJitLinkHandle*);
  nvJitLinkResult (*add_data)(nvJitLinkHandle, nvJitLinkInputType, const void*, size_t, const char*);
  nvJitLinkResult (*add_file)(nvJitLinkHandle, nvJitLinkInputType, const char*);
  nvJitLinkResult (*complete)(nvJitLinkHandle);
  nvJitLinkResult (*cubin_size)(nvJitLinkHandle, size_t*);
  nvJitLinkResult (*cubin)(nvJitLinkHandle, void*);
  nvJitLinkResult (*ptx_size)(nvJitLinkHandle, size_t*);
  nvJitLinkResult (*ptx)(nvJitLinkHandle, char*);
  nvJitLinkResult (*error_log_size)(nvJitLinkHandle, size_t*);
  nvJitLinkResult (*error_log)(nvJitLinkHandle, char*);
  nvJitLinkResult (*info_log_size)(nvJitLinkHandle, size_t*);
  nvJitLinkResult (*info_log)(nvJitLinkHandle, char*);
};

[[noreturn]] void fail_to_load(const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, dlerror());
  std::exit(2);
}

void* symbol_of(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  if (f == nullptr) {
    std::fprintf(stderr, "dlsym %s failed\n", name);
    std::exit(2);
  }
  return f;
}

Api load_api() {
#ifdef LINK_CLIENT_DLOPEN
  const char* soname = std::getenv("LINK_CLIENT_NVJITLINK");
  if (soname == nullptr || *soname == '\0') soname = "libnvJitLink.so.13";
  void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) fail_to_load("dlopen");
  const char* add_file = std::strstr(soname, ".so.12") ? "__nvJitLinkAddFile_12_0" : "__nvJitLinkAddFile_13_0";
  const auto sym = [lib](const char* name) { return symbol_of(lib, name); };
#define LINK_CLIENT_FN(field, name) reinterpret_cast<decltype(Api::field)>(sym(name))
  return {LINK_CLIENT_FN(create, "nvJitLinkCreate"),         LINK_CLIENT_FN(destroy, "nvJitLinkDestroy"),
          LINK_CLIENT_FN(add_data, "nvJitLinkAddData"),      LINK_CLIENT_FN(add_file, add_file),
          LINK_CLIENT_FN(complete, "nvJitLinkComplete"),     LINK_CLIENT_FN(cubin_size, "nvJitLinkGetLinkedCubinSize"),
          LINK_CLIENT_FN(cubin, "nvJitLinkGetLinkedCubin"),  LINK_CLIENT_FN(ptx_size, "nvJitLinkGetLinkedPtxSize"),
          LINK_CLIENT_FN(ptx, "nvJitLinkGetLinkedPtx"),      LINK_CLIENT_FN(error_log_size, "nvJitLinkGetErrorLogSize"),
          LINK_CLIENT_FN(error_log, "nvJitLinkGetErrorLog"), LINK_CLIENT_FN(info_log_size, "nvJitLinkGetInfoLogSize"),
          LINK_CLIENT_FN(info_log, "nvJitLinkGetInfoLog")};
#undef LINK_CLIENT_FN
#elif defined(LINK_CLIENT_NVJITLINK12)
  return {__nvJitLinkCreate_12_9,         __nvJitLinkDestroy_12_9,         __nvJitLinkAddData_12_9,
          __nvJitLinkAddFile_12_0,        __nvJitLinkComplete_12_9,        __nvJitLinkGetLinkedCubinSize_12_9,
          __nvJitLinkGetLinkedCubin_12_9, __nvJitLinkGetLinkedPtxSize_12_9, __nvJitLinkGetLinkedPtx_12_9,
          __nvJitLinkGetErrorLogSize_12_9, __nvJitLinkGetErrorLog_12_9,    __nvJitLinkGetInfoLogSize_12_9,
          __nvJitLinkGetInfoLog_12_9};
#else
  return {[](nvJitLinkHandle* h, uint32_t n, const char** o) { return nvJitLinkCreate(h, n, o); },
          [](nvJitLinkHandle* h) { return nvJitLinkDestroy(h); },
          [](nvJitLinkHandle h, nvJitLinkInputType t, const void* d, size_t s, const char* n) {
            return nvJitLinkAddData(h, t, d, s, n);
          },
          [](nvJitLinkHandle h, nvJitLinkInputType t, const char* f) { return nvJitLinkAddFile(h, t, f); },
          [](nvJitLinkHandle h) { return nvJitLinkComplete(h); },
          [](nvJitLinkHandle h, size_t* s) { return nvJitLinkGetLinkedCubinSize(h, s); },
          [](nvJitLinkHandle h, void* c) { return nvJitLinkGetLinkedCubin(h, c); },
          [](nvJitLinkHandle h, size_t* s) { return nvJitLinkGetLinkedPtxSize(h, s); },
          [](nvJitLinkHandle h, char* p) { return nvJitLinkGetLinkedPtx(h, p); },
          [](nvJitLinkHandle h, size_t* s) { return nvJitLinkGetErrorLogSize(h, s); },
          [](nvJitLinkHandle h, char* l) { return nvJitLinkGetErrorLog(h, l); },
          [](nvJitLinkHandle h, size_t* s) { return nvJitLinkGetInfoLogSize(h, s); },
          [](nvJitLinkHandle h, char* l) { return nvJitLinkGetInfoLog(h, l); }};
#endif
}

const Api api = load_api();

// NVRTC: $LINK_CLIENT_NVRTC by path, else the one linked in.
struct Nvrtc {
  nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*compile)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*ptx_size)(nvrtcProgram, size_t*);
  nvrtcResult (*ptx)(nvrtcProgram, char*);
  nvrtcResult (*ltoir_size)(nvrtcProgram, size_t*);
  nvrtcResult (*ltoir)(nvrtcProgram, char*);
  nvrtcResult (*destroy)(nvrtcProgram*);
};

Nvrtc load_nvrtc() {
  const char* path = std::getenv("LINK_CLIENT_NVRTC");
  if (path != nullptr && *path != '\0') {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) fail_to_load("dlopen NVRTC");
#define LINK_CLIENT_NVRTC_FN(field, name) reinterpret_cast<decltype(Nvrtc::field)>(symbol_of(lib, name))
    return {LINK_CLIENT_NVRTC_FN(create, "nvrtcCreateProgram"), LINK_CLIENT_NVRTC_FN(compile, "nvrtcCompileProgram"),
            LINK_CLIENT_NVRTC_FN(ptx_size, "nvrtcGetPTXSize"),  LINK_CLIENT_NVRTC_FN(ptx, "nvrtcGetPTX"),
            LINK_CLIENT_NVRTC_FN(ltoir_size, "nvrtcGetLTOIRSize"), LINK_CLIENT_NVRTC_FN(ltoir, "nvrtcGetLTOIR"),
            LINK_CLIENT_NVRTC_FN(destroy, "nvrtcDestroyProgram")};
#undef LINK_CLIENT_NVRTC_FN
  }
#ifdef LINK_CLIENT_NVJITLINK12
  std::fprintf(stderr, "set LINK_CLIENT_NVRTC (NVRTC 12.9's libnvrtc.so.12)\n");
  std::exit(2);
#else
  return {nvrtcCreateProgram, nvrtcCompileProgram, nvrtcGetPTXSize,    nvrtcGetPTX,
          nvrtcGetLTOIRSize,  nvrtcGetLTOIR,       nvrtcDestroyProgram};
#endif
}

const Nvrtc nvrtc = load_nvrtc();

// "-arch=sm_90" and "-arch=compute_90", or the same for LINK_ARCH.
const std::string kArchNumber = std::getenv("LINK_ARCH") ? std::getenv("LINK_ARCH") : "90";
const std::string kSmArch = "-arch=sm_" + kArchNumber;
const std::string kComputeArch = "-arch=compute_" + kArchNumber;
const char* sm_arch() { return kSmArch.c_str(); }
const char* compute_arch() { return kComputeArch.c_str(); }

constexpr const char* kCaller =
    "extern __device__ float scale(float);\n"
    "__global__ void apply(float* x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = scale(x[i]);\n"
    "}\n";
constexpr const char* kCallee = "__device__ float scale(float v) { return v * v + 1.0f; }\n";
constexpr const char* kOtherCallee = "__device__ float scale(float v) { return v * 3.0f - 2.0f; }\n";
constexpr const char* kUndefined =
    "extern __device__ float missing(float);\n"
    "__global__ void broken(float* x) { x[0] = missing(x[0]); }\n";

// NVRTC's output for `source`: LTO-IR with -dlto, else PTX (relocatable).
std::string compile(const char* source, bool lto) {
  nvrtcProgram prog;
  nvrtc.create(&prog, source, "link_client.cu", 0, nullptr, nullptr);
  const char* lto_options[] = {sm_arch(), "-rdc=true", "-dlto"};
  const char* ptx_options[] = {compute_arch(), "-rdc=true"};
  const nvrtcResult rc = lto ? nvrtc.compile(prog, 3, lto_options) : nvrtc.compile(prog, 2, ptx_options);
  size_t size = 0;
  std::string out;
  if (rc == NVRTC_SUCCESS) {
    (lto ? nvrtc.ltoir_size : nvrtc.ptx_size)(prog, &size);
    out.resize(size);
    (lto ? nvrtc.ltoir : nvrtc.ptx)(prog, out.data());
  }
  nvrtc.destroy(&prog);
  if (rc != NVRTC_SUCCESS) {
    std::fprintf(stderr, "nvrtc failed: %d\n", rc);
    std::exit(3);
  }
  return out;
}

void print_bytes(const char* what, const std::string& bytes) {
  std::printf("  %s bytes=", what);
  for (unsigned char c : bytes) std::printf("%02x", c);
  std::printf("\n");
}

template <typename SizeFn, typename DataFn, typename Data>
void print_output(const char* what, nvJitLinkHandle h, SizeFn size_fn, DataFn data_fn, Data*) {
  size_t size = 12345;
  const nvJitLinkResult size_rc = size_fn(h, &size);
  std::printf("  %s size_rc=%d size=%zu\n", what, size_rc, size);
  if (size_rc != NVJITLINK_SUCCESS) size = 0;
  std::string bytes(size + 16, '\x5a');
  const nvJitLinkResult data_rc = data_fn(h, reinterpret_cast<Data*>(bytes.data()));
  std::printf("  %s data_rc=%d\n", what, data_rc);
  print_bytes(what, bytes);
}

void print_all(nvJitLinkHandle h) {
  print_output("cubin", h, api.cubin_size, api.cubin, static_cast<void*>(nullptr));
  print_output("ptx", h, api.ptx_size, api.ptx, static_cast<char*>(nullptr));
  print_output("error_log", h, api.error_log_size, api.error_log, static_cast<char*>(nullptr));
  print_output("info_log", h, api.info_log_size, api.info_log, static_cast<char*>(nullptr));
}

void link(const char* scenario, std::vector<const char*> options,
          const std::vector<std::pair<nvJitLinkInputType, std::string>>& data, const char* file = nullptr,
          nvJitLinkInputType file_type = NVJITLINK_INPUT_PTX) {
  std::printf("%s\n", scenario);
  nvJitLinkHandle h = nullptr;
  const nvJitLinkResult create_rc = api.create(&h, static_cast<uint32_t>(options.size()), options.data());
  std::printf("  create=%d\n", create_rc);
  if (create_rc != NVJITLINK_SUCCESS) return;
  int i = 0;
  for (const auto& [type, bytes] : data) {
    const std::string name = "input" + std::to_string(i++);
    std::printf("  add_data=%d\n", api.add_data(h, type, bytes.data(), bytes.size(), name.c_str()));
  }
  if (file) std::printf("  add_file=%d\n", api.add_file(h, file_type, file));
  std::printf("  complete=%d\n", api.complete(h));
  print_all(h);
  std::printf("  destroy=%d\n", api.destroy(&h));
}

}  // namespace

int main(int argc, char** argv) {
  const char* file = std::getenv("LINK_FILE");
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "lto") {
      link("lto", {sm_arch(), "-lto"},
           {{NVJITLINK_INPUT_LTOIR, compile(kCaller, true)}, {NVJITLINK_INPUT_LTOIR, compile(kCallee, true)}});
    } else if (s == "lto_ptx") {
      link("lto_ptx", {sm_arch(), "-lto", "-ptx"},
           {{NVJITLINK_INPUT_LTOIR, compile(kCaller, true)}, {NVJITLINK_INPUT_LTOIR, compile(kCallee, true)}});
    } else if (s == "ptx") {
      link("ptx", {sm_arch(), "-O3"},
           {{NVJITLINK_INPUT_PTX, compile(kCaller, false)}, {NVJITLINK_INPUT_PTX, compile(kCallee, false)}});
    } else if (s == "file") {  // the callee from LINK_FILE (PTX)
      link("file", {sm_arch()}, {{NVJITLINK_INPUT_PTX, compile(kCaller, false)}}, file);
    } else if (s == "write_callee_ptx" || s == "write_other_callee_ptx") {  // a callee's PTX to LINK_FILE
      const std::string ptx = compile(s == "write_callee_ptx" ? kCallee : kOtherCallee, false);
      FILE* f = std::fopen(file, "wb");
      std::fwrite(ptx.data(), 1, ptx.size(), f);
      std::fclose(f);
    } else if (s == "undefined") {
      link("undefined", {sm_arch(), "-lto"}, {{NVJITLINK_INPUT_LTOIR, compile(kUndefined, true)}});
    } else if (s == "bad_option") {
      link("bad_option", {sm_arch(), "-no-such-option"}, {{NVJITLINK_INPUT_PTX, compile(kCallee, false)}});
    } else if (s == "missing_arch") {
      link("missing_arch", {"-lto"}, {{NVJITLINK_INPUT_LTOIR, compile(kCallee, true)}});
    } else if (s == "wrong_type") {
      link("wrong_type", {sm_arch()}, {{NVJITLINK_INPUT_CUBIN, compile(kCallee, false)}});
    } else if (s == "time") {
      link("time", {sm_arch(), "-lto", "-time"}, {{NVJITLINK_INPUT_LTOIR, compile(kCallee, true)}});
    } else if (s == "verbose") {
      link("verbose", {sm_arch(), "-lto", "-verbose"},
           {{NVJITLINK_INPUT_LTOIR, compile(kCaller, true)}, {NVJITLINK_INPUT_LTOIR, compile(kCallee, true)}});
    } else if (s == "null_arguments") {  // getters with NULL, a second Complete, an Add after Complete
      std::printf("null_arguments\n");
      nvJitLinkHandle h = nullptr;
      const char* options[] = {sm_arch(), "-lto"};
      std::printf("  create=%d\n", api.create(&h, 2, options));
      const std::string ir = compile(kCallee, true);
      std::printf("  add_data=%d\n", api.add_data(h, NVJITLINK_INPUT_LTOIR, ir.data(), ir.size(), nullptr));
      std::printf("  complete=%d\n", api.complete(h));
      std::printf("  cubin_size(NULL)=%d\n", api.cubin_size(h, nullptr));
      std::printf("  cubin(NULL)=%d\n", api.cubin(h, nullptr));
      std::printf("  complete again=%d\n", api.complete(h));
      print_all(h);
      std::printf("  add_data after=%d\n", api.add_data(h, NVJITLINK_INPUT_LTOIR, ir.data(), ir.size(), "late"));
      std::printf("  destroy=%d\n", api.destroy(&h));
    } else {
      std::fprintf(stderr, "unknown scenario %s\n", argv[i]);
      return 2;
    }
  }
  return 0;
}
