// nvrtc_probe: a client linked with -lnvrtc that runs named scenarios and prints every observable
// result (each return code, each size, every byte of every output, lowered names) to stdout, so
// that runs directly, under the shim cold and under the shim warm can be compared byte for byte.
// Usage: nvrtc_probe SCENARIO...   (or "list"). PROBE_INCLUDE_DIR names the directory for the
// on-disk header scenario.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <nvrtc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

// Every NVRTC function the probe calls, reached the way PROBE_LOAD says:
//   linked (default)   the -lnvrtc symbols (PLT)
//   soname             dlopen("libnvrtc.so.13", RTLD_LOCAL) + dlsym
//   path:/abs/lib.so   dlopen by absolute path + dlsym
//   loader:/abs/lib.so through an intermediate library opened RTLD_LOCAL that dlopens NVRTC itself
//   deepbind           dlopen("libnvrtc.so.13", RTLD_LOCAL | RTLD_DEEPBIND) + dlsym
// (PROBE_LAZY=1: those dlopen calls bind lazily, RTLD_LAZY instead of RTLD_NOW.) Built twice: linked
// with -lnvrtc (nvrtc_probe), and without any reference to NVRTC (nvrtc_probe_unlinked,
// NVRTC_PROBE_UNLINKED: no DT_NEEDED on it, "linked" is refused).
struct Api {
#ifdef NVRTC_PROBE_UNLINKED
#define NVRTC_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#else
#define NVRTC_API(kind, ret, name, params, args) ret(*name) params = ::name;
#endif
#include "shim/interpose/nvrtc_api.def"
#undef NVRTC_API
};

Api load_api(const std::string& how) {
  Api a;
  void* (*lookup)(const char*) = nullptr;
  static thread_local void* handle = nullptr;
  const char* lazy = std::getenv("PROBE_LAZY");
  const int binding = lazy && std::strcmp(lazy, "1") == 0 ? RTLD_LAZY : RTLD_NOW;
  if (how == "soname" || how == "deepbind" || how.rfind("path:", 0) == 0) {
    const int flags = binding | RTLD_LOCAL | (how == "deepbind" ? RTLD_DEEPBIND : 0);
    handle = dlopen(how.rfind("path:", 0) == 0 ? how.substr(5).c_str() : "libnvrtc.so.13", flags);
    lookup = [](const char* name) { return dlsym(handle, name); };
  } else if (how.rfind("loader:", 0) == 0) {
    handle = dlopen(how.substr(7).c_str(), RTLD_NOW | RTLD_LOCAL);
    lookup = [](const char* name) {
      auto via = reinterpret_cast<void* (*)(const char*)>(dlsym(handle, "probe_loader_lookup"));
      return via ? via(name) : nullptr;
    };
  } else {
#ifdef NVRTC_PROBE_UNLINKED
    std::fprintf(stderr, "probe: not linked to NVRTC; PROBE_LOAD must name a way to load it\n");
    std::exit(3);
#endif
    return a;
  }
  if (handle == nullptr) {
    std::fprintf(stderr, "probe: cannot load NVRTC (%s): %s\n", how.c_str(), dlerror());
    std::exit(3);
  }
#define NVRTC_API(kind, ret, name, params, args) a.name = reinterpret_cast<ret(*) params>(lookup(#name));
#include "shim/interpose/nvrtc_api.def"
#undef NVRTC_API
  return a;
}

Api* g_api = nullptr;

Api& api() {
  if (g_api) return *g_api;
  static Api loaded = load_api(std::getenv("PROBE_LOAD") ? std::getenv("PROBE_LOAD") : "linked");
  return loaded;
}

std::string hex(const char* data, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[(unsigned char)data[i] >> 4]);
    out.push_back(digits[(unsigned char)data[i] & 15]);
  }
  return out;
}

struct Out {
  std::string text;
  void line(const std::string& s) { text += s + "\n"; }
  void rc(const char* what, nvrtcResult r) { line(std::string(what) + " rc=" + std::to_string(r)); }
};

using SizeFn = nvrtcResult (*)(nvrtcProgram, size_t*);
using DataFn = nvrtcResult (*)(nvrtcProgram, char*);

// Getters must leave errno as they found it (NVRTC's do; so must the shim's).
void dump_output(Out& o, const char* label, nvrtcProgram p, SizeFn size_fn, DataFn data_fn) {
  size_t size = 0xdeadbeef;
  errno = 4242;
  const nvrtcResult size_rc = size_fn(p, &size);
  o.line(std::string(label) + " size_rc=" + std::to_string(size_rc) + " size=" + std::to_string(size) +
         " errno=" + std::to_string(errno));
  if (size_rc != NVRTC_SUCCESS || size > (256u << 20)) return;
  std::vector<char> buf(size + 16, '\xab');  // trailing canary bytes must stay untouched
  const nvrtcResult data_rc = data_fn(p, buf.data());
  o.line(std::string(label) + " data_rc=" + std::to_string(data_rc) + " bytes=" + hex(buf.data(), buf.size()));
}

void dump_program(Out& o, nvrtcProgram p, const std::vector<std::string>& names = {}) {
  dump_output(o, "log", p, api().nvrtcGetProgramLogSize, api().nvrtcGetProgramLog);
  dump_output(o, "ptx", p, api().nvrtcGetPTXSize, api().nvrtcGetPTX);
  dump_output(o, "cubin", p, api().nvrtcGetCUBINSize, api().nvrtcGetCUBIN);
  dump_output(o, "ltoir", p, api().nvrtcGetLTOIRSize, api().nvrtcGetLTOIR);
  dump_output(o, "optixir", p, api().nvrtcGetOptiXIRSize, api().nvrtcGetOptiXIR);
  for (const auto& n : names) {
    const char* lowered = "(untouched)";
    const nvrtcResult r = api().nvrtcGetLoweredName(p, n.c_str(), &lowered);
    o.line("lowered[" + n + "] rc=" + std::to_string(r) + " name=" + (lowered ? lowered : "(null)"));
  }
  o.rc("pch_create_status", api().nvrtcGetPCHCreateStatus(p));
  size_t heap = 0xdeadbeef;
  const nvrtcResult heap_rc = api().nvrtcGetPCHHeapSizeRequired(p, &heap);
  o.line("pch_heap_required rc=" + std::to_string(heap_rc) + " size=" + std::to_string(heap));
}

// Creates, adds names, compiles with `options`, dumps everything, destroys.
void compile_and_dump(Out& o, const std::string& src, const char* name, const std::vector<std::string>& options,
                      const std::vector<std::pair<std::string, std::string>>& headers = {},
                      const std::vector<std::string>& names = {}, const std::vector<std::string>& lookups = {}) {
  std::vector<const char*> header_src, header_names, opts;
  for (const auto& h : headers) {
    header_names.push_back(h.first.c_str());
    header_src.push_back(h.second.c_str());
  }
  for (const auto& opt : options) opts.push_back(opt.c_str());
  nvrtcProgram p = nullptr;
  o.rc("create", api().nvrtcCreateProgram(&p, src.c_str(), name, (int)headers.size(), header_src.data(), header_names.data()));
  for (const auto& n : names) o.rc(("add_name " + n).c_str(), api().nvrtcAddNameExpression(p, n.c_str()));
  o.rc("compile", api().nvrtcCompileProgram(p, (int)opts.size(), opts.data()));
  std::vector<std::string> all_lookups = names;
  all_lookups.insert(all_lookups.end(), lookups.begin(), lookups.end());
  dump_program(o, p, all_lookups);
  o.rc("destroy", api().nvrtcDestroyProgram(&p));
}

const char* kTrivial =
    "extern \"C\" __global__ void axpy(float a, const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

const char* kTemplate =
    "template <typename T, int N> __global__ void scale(T* x) { x[threadIdx.x] *= N; }\n"
    "__device__ int counter;\n";

void scenario_trivial(Out& o) { compile_and_dump(o, kTrivial, "trivial.cu", {}); }
void scenario_ptx(Out& o) { compile_and_dump(o, kTrivial, "ptx.cu", {"-arch=compute_80"}); }
void scenario_cubin(Out& o) { compile_and_dump(o, kTrivial, "cubin.cu", {"-arch=sm_80", "-lineinfo"}); }
void scenario_lto(Out& o) { compile_and_dump(o, kTrivial, "lto.cu", {"-arch=sm_80", "-dlto"}); }
void scenario_optix(Out& o) { compile_and_dump(o, kTrivial, "optix.cu", {"-arch=compute_80", "--optix-ir", "-rdc=true"}); }
void scenario_template(Out& o) {
  compile_and_dump(o, kTemplate, "template.cu", {"-arch=sm_80", "-std=c++17"},
                   {}, {"scale<float, 2>", "scale<double, 4>", "&counter", "scale<float, 2>"}, {"scale<int, 1>"});
}
void scenario_headers(Out& o) {
  const std::string src = "#include \"ops.h\"\n#include <consts.h>\n"
                          "__global__ void k(float* x) { x[0] = twice(x[0]) + kOffset; }\n";
  compile_and_dump(o, src, "headers.cu", {"-arch=sm_80"},
                   {{"ops.h", "#pragma once\n__device__ inline float twice(float v) { return 2 * v; }\n"},
                    {"consts.h", "#pragma once\nconstexpr float kOffset = 0.5f;\n"}});
}
void scenario_compile_error(Out& o) {
  compile_and_dump(o, "__global__ void k(int* x) { x[0] = undefined_function(); }\n", "error.cu", {"-arch=sm_80"});
}
void scenario_warnings(Out& o) {
  compile_and_dump(o, "__global__ void k(int* x) { int unused; x[0] = 1; }\n#warning \"a warning from the source\"\n",
                   "warnings.cu", {"-arch=sm_80"});
}
void scenario_invalid_option(Out& o) { compile_and_dump(o, kTrivial, "badopt.cu", {"--definitely-not-an-option"}); }
// PROBE_INCLUDE_DIR: one or more directories separated by ':', each passed as -I, in order.
void scenario_include_dir(Out& o) {
  const char* dirs = std::getenv("PROBE_INCLUDE_DIR");
  std::vector<std::string> options = {"-arch=sm_80", "-lineinfo"};
  std::string list = dirs ? dirs : ".";
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    options.push_back("-I" + list.substr(start, end - start));
    start = end + 1;
  }
  compile_and_dump(o, "#include \"probe_dep.h\"\n__global__ void k(int* x) { x[0] = PROBE_VALUE; }\n",
                   "include_dir.cu", options);
}
// PROBE_SOURCE_FILE: the program's source (read here, before the compile); -I for each directory in
// PROBE_INCLUDE_DIR (as include_dir); PROBE_OPTIONS: more options, separated by spaces;
// PROBE_PROGRAM_NAME: the program's name (default source_file.cu); PROBE_ARCH: the architecture
// option(s), separated by spaces ("-arch sm_90" is two options; default -arch=sm_80).
void scenario_source_file(Out& o) {
  const char* file = std::getenv("PROBE_SOURCE_FILE");
  std::ifstream in(file ? file : "");
  const std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> options;
  const char* arch = std::getenv("PROBE_ARCH");
  for (std::string list = arch ? arch : "-arch=sm_80"; !list.empty();) {
    const std::size_t end = std::min(list.find(' '), list.size());
    if (end > 0) options.push_back(list.substr(0, end));
    list.erase(0, end + 1);
  }
  const char* dirs = std::getenv("PROBE_INCLUDE_DIR");
  for (std::string list = dirs ? dirs : ""; !list.empty();) {
    const std::size_t end = std::min(list.find(':'), list.size());
    options.push_back("-I" + list.substr(0, end));
    list.erase(0, end + 1);
  }
  const char* extra = std::getenv("PROBE_OPTIONS");
  for (std::string list = extra ? extra : ""; !list.empty();) {
    const std::size_t end = std::min(list.find(' '), list.size());
    if (end > 0) options.push_back(list.substr(0, end));
    list.erase(0, end + 1);
  }
  const char* name = std::getenv("PROBE_PROGRAM_NAME");
  compile_and_dump(o, src, name ? name : "source_file.cu", options);
}
// A quoted include with no -I: found next to the working directory.
void scenario_relative_include(Out& o) {
  compile_and_dump(o, "#include \"local.h\"\n__global__ void k(int* x) { x[0] = LOCAL_VALUE; }\n",
                   "relative.cu", {"-arch=sm_80"});
}
void scenario_time_option(Out& o) {
  const char* file = std::getenv("PROBE_TIME_FILE");
  compile_and_dump(o, kTrivial, "time.cu", {"-arch=sm_80", std::string("--time=") + (file ? file : "time.csv")});
}
// What a host can find in its global scope: the shim's dependencies must not be there.
void scenario_global_scope(Out& o) {
  for (const char* name : {"mdb_env_create", "mdb_txn_begin", "blake2b_init", "blake2b", "XXH3_64bits",
                           "XXH64", "_ZN11nvrtc_cache4shim7Runtime8instanceEv"}) {
    o.line(std::string(name) + (dlsym(RTLD_DEFAULT, name) ? " visible" : " absent"));
  }
  int major = 0, minor = 0;
  o.rc("version", api().nvrtcVersion(&major, &minor));
  o.line("version " + std::to_string(major) + "." + std::to_string(minor));
}

// A process that forks after using the cache: parent and child both keep compiling.
void scenario_fork(Out& o) {
  compile_and_dump(o, kTrivial, "fork_parent.cu", {"-arch=sm_80"});
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    Out c;
    compile_and_dump(c, kTrivial, "fork_child.cu", {"-arch=sm_80"});
    compile_and_dump(c, kTrivial, "fork_parent.cu", {"-arch=sm_80"});
    std::fwrite(c.text.data(), 1, c.text.size(), stdout);
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  o.line("child exit " + std::to_string(status));
  compile_and_dump(o, kTrivial, "fork_after.cu", {"-arch=sm_80"});
}

// A forked child that compiles a program of its own and leaves through exit(), so that its exit
// handlers run (the shared tiers' writes of the child); fork_child_program compiles the same program.
void scenario_fork_child_program(Out& o) { compile_and_dump(o, kTrivial, "fork_write_child.cu", {"-arch=sm_80"}); }
void scenario_fork_write(Out& o) {
  compile_and_dump(o, kTrivial, "fork_write_parent.cu", {"-arch=sm_80"});
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    Out c;
    scenario_fork_child_program(c);
    std::fwrite(c.text.data(), 1, c.text.size(), stdout);
    std::fflush(stdout);
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  o.line("child exit " + std::to_string(status));
}

// Another thread opens files and reads the environment while this one compiles: none of that may
// become a dependency of the compile (the watch is per thread).
void scenario_busy_neighbour(Out& o) {
  std::atomic<bool> stop{false};
  std::thread neighbour([&stop] {
    while (!stop.load()) {
      if (FILE* f = std::fopen("/etc/hostname", "r")) std::fclose(f);
      struct stat st;
      (void)stat("/nonexistent-neighbour-probe", &st);
      (void)std::getenv("NEIGHBOUR_VARIABLE");
    }
  });
  compile_and_dump(o, kTrivial, "busy.cu", {"-arch=sm_80"});
  stop = true;
  neighbour.join();
}

// libc calls the shim interposes must leave errno and results as libc does.
void scenario_libc(Out& o) {
  errno = 4242;
  FILE* missing = std::fopen("/nonexistent/file", "r");
  o.line("fopen missing: " + std::string(missing ? "opened" : "null") + " errno=" + std::to_string(errno));
  errno = 4242;
  const char* home = std::getenv("HOME");
  o.line("getenv: " + std::string(home ? "set" : "unset") + " errno=" + std::to_string(errno));
  errno = 4242;
  struct stat st;
  const int rc = stat("/", &st);
  o.line("stat /: " + std::to_string(rc) + " errno=" + std::to_string(errno));
  errno = 4242;
  const int fd = open("/nonexistent", O_RDONLY);
  o.line("open missing: " + std::to_string(fd) + " errno=" + std::to_string(errno));
  char resolved[4096];
  errno = 4242;
  const char* r = realpath("/usr/../etc", resolved);
  o.line("realpath: " + std::string(r ? r : "null") + " errno=" + std::to_string(errno));
}

// Two NVRTC majors in one process, each reached by dlopen + dlsym: PROBE_NVRTC12 names an NVRTC 12
// library (e.g. the nvidia-cuda-nvrtc-cu12 wheel's), the other is libnvrtc.so.13.
void scenario_two_majors(Out& o) {
  const char* path12 = std::getenv("PROBE_NVRTC12");
  if (path12 == nullptr) {
    o.line("PROBE_NVRTC12 not set");
    return;
  }
  static Api nvrtc12 = load_api(std::string("path:") + path12);
  static Api nvrtc13 = load_api("soname");
  for (Api* which : {&nvrtc12, &nvrtc13, &nvrtc12}) {
    g_api = which;
    int major = 0, minor = 0;
    api().nvrtcVersion(&major, &minor);
    o.line("== NVRTC " + std::to_string(major) + "." + std::to_string(minor));
    compile_and_dump(o, kTemplate, "majors.cu", {"-arch=sm_80"}, {}, {"scale<float, 2>"});
  }
  g_api = nullptr;
}

void scenario_null_name(Out& o) { compile_and_dump(o, kTrivial, nullptr, {"-arch=compute_80"}); }

void scenario_recompile(Out& o) {
  nvrtcProgram p = nullptr;
  o.rc("create", api().nvrtcCreateProgram(&p, kTemplate, "recompile.cu", 0, nullptr, nullptr));
  o.rc("add_name", api().nvrtcAddNameExpression(p, "scale<float, 2>"));
  const char* first[] = {"-arch=compute_80"};
  o.rc("compile1", api().nvrtcCompileProgram(p, 1, first));
  dump_program(o, p, {"scale<float, 2>"});
  o.rc("add_name_after_compile", api().nvrtcAddNameExpression(p, "scale<int, 3>"));
  o.rc("add_null_name_after_compile", api().nvrtcAddNameExpression(p, nullptr));
  const char* second[] = {"-arch=sm_80"};
  o.rc("compile2", api().nvrtcCompileProgram(p, 1, second));
  dump_program(o, p, {"scale<float, 2>"});
  const char* bad[] = {"--bogus-option"};
  o.rc("compile3", api().nvrtcCompileProgram(p, 1, bad));
  dump_program(o, p, {"scale<float, 2>"});
  o.rc("destroy", api().nvrtcDestroyProgram(&p));
}

void scenario_bad_inputs(Out& o) {
  nvrtcProgram p = nullptr;
  const char* opts[] = {"-arch=sm_80"};
  o.rc("create_null_prog", api().nvrtcCreateProgram(nullptr, kTrivial, "x.cu", 0, nullptr, nullptr));
  o.rc("create_null_src", api().nvrtcCreateProgram(&p, nullptr, "x.cu", 0, nullptr, nullptr));
  o.rc("create_bad_header_count", api().nvrtcCreateProgram(&p, kTrivial, "x.cu", -1, nullptr, nullptr));
  o.rc("create_null_headers", api().nvrtcCreateProgram(&p, kTrivial, "x.cu", 1, nullptr, nullptr));
  o.rc("compile_null_prog", api().nvrtcCompileProgram(nullptr, 1, opts));
  size_t size = 7;
  o.rc("ptx_size_null_prog", api().nvrtcGetPTXSize(nullptr, &size));
  o.rc("log_size_null_prog", api().nvrtcGetProgramLogSize(nullptr, &size));
  o.rc("add_name_null_prog", api().nvrtcAddNameExpression(nullptr, "k"));
  o.rc("pch_status_null_prog", api().nvrtcGetPCHCreateStatus(nullptr));
  o.rc("destroy_null", api().nvrtcDestroyProgram(nullptr));

  o.rc("create", api().nvrtcCreateProgram(&p, kTemplate, "bad.cu", 0, nullptr, nullptr));
  o.line("-- getters before compile");
  dump_program(o, p, {"scale<float, 2>"});
  o.rc("add_name_null", api().nvrtcAddNameExpression(p, nullptr));
  o.rc("add_name", api().nvrtcAddNameExpression(p, "scale<float, 2>"));
  o.rc("compile_negative_count", api().nvrtcCompileProgram(p, -1, opts));
  o.rc("compile_null_options", api().nvrtcCompileProgram(p, 1, nullptr));
  o.rc("compile", api().nvrtcCompileProgram(p, 1, opts));
  o.line("-- NULL outputs after compile");
  o.rc("ptx_size_null", api().nvrtcGetPTXSize(p, nullptr));
  o.rc("ptx_null", api().nvrtcGetPTX(p, nullptr));
  o.rc("cubin_size_null", api().nvrtcGetCUBINSize(p, nullptr));
  o.rc("cubin_null", api().nvrtcGetCUBIN(p, nullptr));
  o.rc("ltoir_null", api().nvrtcGetLTOIR(p, nullptr));
  o.rc("optixir_null", api().nvrtcGetOptiXIR(p, nullptr));
  o.rc("log_size_null", api().nvrtcGetProgramLogSize(p, nullptr));
  o.rc("log_null", api().nvrtcGetProgramLog(p, nullptr));
  const char* lowered = "(untouched)";
  o.rc("lowered_null_name", api().nvrtcGetLoweredName(p, nullptr, &lowered));
  o.line(std::string("lowered after null name: ") + (lowered ? lowered : "(null)"));
  o.rc("lowered_null_out", api().nvrtcGetLoweredName(p, "scale<float, 2>", nullptr));
  o.rc("pch_heap_null", api().nvrtcGetPCHHeapSizeRequired(p, nullptr));
  dump_program(o, p, {"scale<float, 2>", "never_added"});
  o.rc("destroy", api().nvrtcDestroyProgram(&p));
  o.rc("destroy_again", api().nvrtcDestroyProgram(&p));
}

void scenario_threads(Out& o) {
  constexpr int kThreads = 16;
  std::vector<Out> outs(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &outs] {
      // Half the threads share a program (same key at once), half compile their own.
      const int variant = t % 2 == 0 ? 0 : t;
      const std::string src = "__global__ void k(int* x) { x[threadIdx.x] = " + std::to_string(variant) + "; }\n";
      compile_and_dump(outs[t], src, "thread.cu", {"-arch=sm_80"});
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) o.text += "== thread " + std::to_string(t) + "\n" + outs[t].text;
}

// A kernel heavy enough (CUB from the toolkit's headers on disk) that concurrent compiles overlap.
// PROBE_PID_FILE: written with this process's id first, for tests that kill it mid-compile.
const char* kCub =
    "#include <cub/block/block_reduce.cuh>\n"
    "extern \"C\" __global__ void block_sum(const int* in, int* out) {\n"
    "  using Reduce = cub::BlockReduce<int, 128>;\n"
    "  __shared__ typename Reduce::TempStorage temp;\n"
    "  int total = Reduce(temp).Sum(in[blockIdx.x * 128 + threadIdx.x]);\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = total;\n"
    "}\n";
const std::vector<std::string> kCubOptions = {"-arch=sm_80", "-std=c++17", "-I/usr/local/cuda/include/cccl",
                                              "-I/usr/local/cuda/include"};

void scenario_cub(Out& o) {
  if (const char* pid_file = std::getenv("PROBE_PID_FILE")) {
    if (FILE* f = std::fopen(pid_file, "w")) {
      std::fprintf(f, "%d\n", static_cast<int>(getpid()));
      std::fclose(f);
    }
  }
  compile_and_dump(o, kCub, "cub.cu", kCubOptions);
}

// 16 threads compile the same heavy program at once.
void scenario_cub_threads(Out& o) {
  constexpr int kThreads = 16;
  std::vector<Out> outs(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &outs, &ready] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      compile_and_dump(outs[t], kCub, "cub.cu", kCubOptions);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) o.text += "== thread " + std::to_string(t) + "\n" + outs[t].text;
}

const std::map<std::string, std::function<void(Out&)>>& scenarios() {
  static const std::map<std::string, std::function<void(Out&)>> all = {
      {"trivial", scenario_trivial},         {"ptx", scenario_ptx},
      {"cubin", scenario_cubin},             {"lto", scenario_lto},
      {"optix", scenario_optix},             {"template", scenario_template},
      {"headers", scenario_headers},         {"compile_error", scenario_compile_error},
      {"warnings", scenario_warnings},       {"invalid_option", scenario_invalid_option},
      {"include_dir", scenario_include_dir}, {"null_name", scenario_null_name},
      {"recompile", scenario_recompile},     {"bad_inputs", scenario_bad_inputs},
      {"threads", scenario_threads},         {"time_option", scenario_time_option},
      {"global_scope", scenario_global_scope}, {"fork", scenario_fork},
      {"relative_include", scenario_relative_include}, {"busy_neighbour", scenario_busy_neighbour},
      {"libc", scenario_libc},              {"source_file", scenario_source_file},
      {"two_majors", scenario_two_majors},  {"cub", scenario_cub},
      {"fork_write", scenario_fork_write},  {"fork_child_program", scenario_fork_child_program},
      {"cub_threads", scenario_cub_threads},
  };
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: nvrtc_probe SCENARIO... | list\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name == "list") {
      for (const auto& [n, fn] : scenarios()) std::printf("%s\n", n.c_str());
      continue;
    }
    auto it = scenarios().find(name);
    if (it == scenarios().end()) {
      std::fprintf(stderr, "unknown scenario %s\n", name.c_str());
      return 2;
    }
    Out o;
    o.line("### " + name);
    it->second(o);
    std::fwrite(o.text.data(), 1, o.text.size(), stdout);
  }
  return 0;
}
