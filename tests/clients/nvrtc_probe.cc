// nvrtc_probe: a client linked with -lnvrtc that runs named scenarios and prints every observable
// result (each return code, each size, every byte of every output, lowered names) to stdout, so
// that runs directly, under the shim cold and under the shim warm can be compared byte for byte.
// Usage: nvrtc_probe SCENARIO...   (or "list"). PROBE_INCLUDE_DIR names the directory for the
// on-disk header scenario. The dump format and the portable scenarios are tests/support/probe_corpus.h's.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/probe_corpus.h"

namespace {

using namespace nvrtc_cache::probe;

// Every NVRTC function the probe calls, reached the way PROBE_LOAD says:
//   linked (default)   the -lnvrtc symbols (PLT)
//   soname             dlopen("libnvrtc.so.13", RTLD_LOCAL) + dlsym
//   path:/abs/lib.so   dlopen by absolute path + dlsym
//   loader:/abs/lib.so through an intermediate library opened RTLD_LOCAL that dlopens NVRTC itself
//   deepbind           dlopen("libnvrtc.so.13", RTLD_LOCAL | RTLD_DEEPBIND) + dlsym
// (PROBE_LAZY=1: those dlopen calls bind lazily, RTLD_LAZY instead of RTLD_NOW.) Built twice: linked
// with -lnvrtc (nvrtc_probe), and without any reference to NVRTC (nvrtc_probe_unlinked,
// NVRTC_PROBE_UNLINKED: no DT_NEEDED on it, "linked" is refused).
#ifndef NVRTC_PROBE_UNLINKED
// The -lnvrtc symbols: the functions of the nvrtc.h it is built against (the others stay nullptr).
Api linked_api() {
  Api a;
#define NVRTC_API(kind, ret, name, params, args) a.name = ::name;
#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API_OUTSIDE_HEADER
#undef NVRTC_API
  return a;
}
#endif

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
#else
    return linked_api();
#endif
  }
  if (handle == nullptr) {
    std::fprintf(stderr, "probe: cannot load NVRTC (%s): %s\n", how.c_str(), dlerror());
    std::exit(3);
  }
#define NVRTC_API(kind, ret, name, params, args) a.name = reinterpret_cast<ret(*) params>(lookup(#name));
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
  return a;
}

Api* g_api = nullptr;

}  // namespace

const nvrtc_cache::probe::Api& nvrtc_cache::probe::api() {
  if (g_api) return *g_api;
  static Api loaded = load_api(std::getenv("PROBE_LOAD") ? std::getenv("PROBE_LOAD") : "linked");
  return loaded;
}

namespace {

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
  compile_and_dump(o, "#include \"local.h\"\n__global__ void k(int* x) { x[0] = LOCAL_VALUE; }\n", "relative.cu",
                   {"-arch=sm_80"});
}
void scenario_time_option(Out& o) {
  const char* file = std::getenv("PROBE_TIME_FILE");
  compile_and_dump(o, kTrivial, "time.cu", {"-arch=sm_80", std::string("--time=") + (file ? file : "time.csv")});
}
// What a host can find in its global scope: the shim's dependencies must not be there.
void scenario_global_scope(Out& o) {
  for (const char* name : {"mdb_env_create", "mdb_txn_begin", "blake2b_init", "blake2b", "XXH3_64bits", "XXH64",
                           "_ZN11nvrtc_cache4shim7Runtime8instanceEv"}) {
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

// A long-lived client whose compiles the test paces, so that it can change the world (kill or freeze
// a server) between two compiles of one process and time each: for each number N in PROBE_ROUNDS
// (separated by spaces) it waits until PROBE_ROUNDS_DIR/go.N exists, compiles a trivial program of
// its own for N (a new key per number), then creates PROBE_ROUNDS_DIR/done.N.
void scenario_rounds(Out& o) {
  const char* dir = std::getenv("PROBE_ROUNDS_DIR");
  const char* rounds = std::getenv("PROBE_ROUNDS");
  if (dir == nullptr || rounds == nullptr) {
    o.line("PROBE_ROUNDS_DIR or PROBE_ROUNDS not set");
    return;
  }
  std::istringstream numbers(rounds);
  for (std::string n; numbers >> n;) {
    const std::string go = std::string(dir) + "/go." + n;
    while (access(go.c_str(), F_OK) != 0) usleep(1000);
    o.line("== round " + n);
    compile_and_dump(o, "__global__ void k(int* x) { x[0] = " + n + "; }\n", "round.cu", {"-arch=sm_80"});
    if (FILE* done = std::fopen((std::string(dir) + "/done." + n).c_str(), "w")) std::fclose(done);
  }
}

// Tile programs (NVRTC 13.5): cuda_tile IR beside the CUBIN, Tile IR only, and unannotated functions
// taken as Tile functions. NVRTCs without Tile reject the options (NVRTC_ERROR_INVALID_OPTION).
const char* const kTileSource = "__tile_global__ void tk(int* x) { }\n__global__ void g(int* x) { x[0] = 1; }\n";
void scenario_tile(Out& o) { compile_and_dump(o, kTileSource, "tile.cu", {"--enable-tile", "-arch=sm_100"}); }
void scenario_tile_only(Out& o) { compile_and_dump(o, kTileSource, "tile_only.cu", {"--tile-only", "-arch=sm_100"}); }
void scenario_default_tile(Out& o) {
  compile_and_dump(o, "void f(float* x) { }\n__global__ void g(int* x) { x[0] = 1; }\n", "default_tile.cu",
                   {"--enable-tile", "-default-tile", "-default-device", "-arch=sm_100"});
}

// NVRTC 13.5's bundled headers: installed into PROBE_BUNDLED_DIR, described, used by a compile
// through -I, then removed. Without those functions, says so.
void scenario_bundled_headers(Out& o) {
  if (!api().nvrtcInstallBundledHeaders || !api().nvrtcGetBundledHeadersInfo || !api().nvrtcRemoveBundledHeaders) {
    o.line("bundled headers: not in this NVRTC");
    return;
  }
  const char* dir_env = std::getenv("PROBE_BUNDLED_DIR");
  const std::string dir = dir_env ? dir_env : "/tmp/nvrtc-probe-bundled";
  const char* error_log = nullptr;
  o.rc("install", api().nvrtcInstallBundledHeaders(dir.c_str(), 0, &error_log));
  o.line(std::string("install log: ") + (error_log ? error_log : "(null)"));
  struct Info {  // nvrtcBundledHeadersInfo (13.5 nvrtc.h)
    int available;
    size_t compressed_size, uncompressed_size;
    int major, minor;
    unsigned num_files;
  } info{};
  o.rc("info", api().nvrtcGetBundledHeadersInfo(&info, nullptr));
  o.line("info available=" + std::to_string(info.available) + " version=" + std::to_string(info.major) + "." +
         std::to_string(info.minor) + " files=" + std::to_string(info.num_files));
  o.rc("install_again", api().nvrtcInstallBundledHeaders(dir.c_str(), 0, nullptr));
  compile_and_dump(o,
                   "#include <cuda/std/cstdint>\n#include <cuda_fp16.h>\n"
                   "__global__ void k(__half* x, cuda::std::int32_t n) { x[0] = __float2half(float(n)); }\n",
                   "bundled.cu", {"-arch=sm_80", "-I" + dir, "-I" + dir + "/cccl"});
  o.rc("install_bad_flags", api().nvrtcInstallBundledHeaders(dir.c_str(), 0x80, nullptr));
  o.rc("remove", api().nvrtcRemoveBundledHeaders(dir.c_str(), nullptr));
}

// The tree `dir` holds, one line per entry in name order: its path, and for a file its size and an
// FNV-1a hash of its bytes; the version marker by its lines but the install's timestamps.
void dump_tree(Out& o, const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> entries;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    entries.push_back(std::filesystem::relative(it->path(), dir).string());
  }
  if (ec) o.line("tree error " + ec.message());
  std::sort(entries.begin(), entries.end());
  o.line("tree " + std::to_string(entries.size()) + " entries");
  for (const std::string& entry : entries) {
    const std::string path = dir + "/" + entry;
    if (std::filesystem::is_directory(path)) {
      o.line("dir " + entry);
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (entry == ".nvrtc_headers_version") {
      std::istringstream lines(bytes);
      for (std::string line; std::getline(lines, line);) {
        if (!line.starts_with("timestamp")) o.line("marker " + line);
      }
      continue;
    }
    std::uint64_t hash = 14695981039346656037ull;
    for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
    o.line("file " + entry + " " + std::to_string(bytes.size()) + " " + std::to_string(hash));
  }
}

// --use-bundled-headers=DIR (NVRTC 13.5): DIR (PROBE_BUNDLED_DIR/option) removed first, so the first
// compile installs the headers there, the second finds them; then what DIR holds.
void scenario_bundled_option(Out& o) {
  if (!api().nvrtcInstallBundledHeaders) {
    o.line("bundled headers: not in this NVRTC");
    return;
  }
  const char* dir_env = std::getenv("PROBE_BUNDLED_DIR");
  const std::string dir = std::string(dir_env ? dir_env : "/tmp/nvrtc-probe-bundled") + "/option";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  for (int i = 0; i < 2; ++i) {
    compile_and_dump(o,
                     "#include <cuda/std/cstdint>\n#include <cuda_fp16.h>\n"
                     "__global__ void k(__half* x, cuda::std::int32_t n) { x[0] = __float2half(float(n)); }\n",
                     "bundled_option.cu", {"-arch=sm_80", "--use-bundled-headers=" + dir});
  }
  dump_tree(o, dir);
}

// A compile its flow callback cancels (never cached), then the same program without a callback, and
// one whose callback lets it run.
int cancel_compile(void*, void*) { return 1; }
int continue_compile(void*, void*) { return 0; }
void scenario_cancelled(Out& o) {
  for (auto callback : {&cancel_compile, &continue_compile, static_cast<int (*)(void*, void*)>(nullptr)}) {
    nvrtcProgram p = nullptr;
    o.rc("create", api().nvrtcCreateProgram(&p, kTemplate, "cancelled.cu", 0, nullptr, nullptr));
    o.rc("add_name", api().nvrtcAddNameExpression(p, "scale<float, 2>"));
    if (callback) o.rc("set_callback", api().nvrtcSetFlowCallback(p, callback, nullptr));
    const char* options[] = {"-arch=sm_80"};
    o.rc("compile", api().nvrtcCompileProgram(p, 1, options));
    dump_program(o, p, {"scale<float, 2>"});
    o.rc("destroy", api().nvrtcDestroyProgram(&p));
  }
}

// Which functions of every 12.x/13.x NVRTC the probe found, the way PROBE_LOAD reached NVRTC.
void scenario_symbols(Out& o) {
#define NVRTC_API(kind, ret, name, params, args) \
  o.line(std::string(#name) + (api().name != nullptr ? ": found" : ": absent"));
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
}

// NVRTC's own cache turned off for the compile (12.9 on). (Not with -Xptxas -v: ptxas's "Compile time" line
// differs from one compile to the next.)
void scenario_no_cache(Out& o) { compile_and_dump(o, kTrivial, "no_cache.cu", {"-arch=sm_80", "--no-cache"}); }

// Which NVRTC the probe reached.
void scenario_version(Out& o) {
  int major = -1, minor = -1;
  o.rc("version", api().nvrtcVersion(&major, &minor));
  o.line("nvrtc " + std::to_string(major) + "." + std::to_string(minor));
}

// The stand-in newer NVRTC (tests/clients/future_nvrtc/): a compile with its option --future-output=FILE
// (PROBE_FUTURE_FILE), whether FILE was written, and its getter nvrtcGetFutureIR where it has one,
// after a plain compile and after that one.
void scenario_future(Out& o) {
  (void)api();  // loads the library first
  const char* path = std::getenv("PROBE_LOAD");
  void* library = path && std::strncmp(path, "path:", 5) == 0 ? dlopen(path + 5, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  using Size = nvrtcResult (*)(nvrtcProgram, size_t*);
  using Data = nvrtcResult (*)(nvrtcProgram, char*);
  auto size_fn = library ? reinterpret_cast<Size>(dlsym(library, "nvrtcGetFutureIRSize")) : nullptr;
  auto data_fn = library ? reinterpret_cast<Data>(dlsym(library, "nvrtcGetFutureIR")) : nullptr;
  o.line(std::string("future getter: ") + (size_fn && data_fn ? "present" : "absent"));
  const char* file_env = std::getenv("PROBE_FUTURE_FILE");
  const std::string file = file_env ? file_env : "/tmp/nvrtc-probe-future.txt";
  for (const bool with_option : {false, true}) {
    std::remove(file.c_str());
    std::vector<std::string> options = {"-arch=sm_80"};
    if (with_option) options.push_back("--future-output=" + file);
    std::vector<const char*> argv;
    for (const auto& option : options) argv.push_back(option.c_str());
    nvrtcProgram p = nullptr;
    o.rc("create", api().nvrtcCreateProgram(&p, kTrivial, "future.cu", 0, nullptr, nullptr));
    o.rc("compile", api().nvrtcCompileProgram(p, static_cast<int>(argv.size()), argv.data()));
    dump_program(o, p);
    if (size_fn && data_fn) dump_output(o, "future_ir", p, size_fn, data_fn);
    struct stat st;
    o.line(std::string("future file written: ") + (stat(file.c_str(), &st) == 0 ? "yes" : "no"));
    o.rc("destroy", api().nvrtcDestroyProgram(&p));
  }
  std::remove(file.c_str());
}

// The portable scenarios (tests/support/probe_corpus.h) and the POSIX ones.
const std::map<std::string, Scenario>& scenarios() {
  static const std::map<std::string, Scenario> all = [] {
    std::map<std::string, Scenario> both = portable_scenarios();
    both.insert({
        {"threads", scenario_threads},
        {"time_option", scenario_time_option},
        {"global_scope", scenario_global_scope},
        {"fork", scenario_fork},
        {"relative_include", scenario_relative_include},
        {"busy_neighbour", scenario_busy_neighbour},
        {"libc", scenario_libc},
        {"source_file", scenario_source_file},
        {"two_majors", scenario_two_majors},
        {"cub", scenario_cub},
        {"fork_write", scenario_fork_write},
        {"fork_child_program", scenario_fork_child_program},
        {"cub_threads", scenario_cub_threads},
        {"rounds", scenario_rounds},
        {"tile", scenario_tile},
        {"tile_only", scenario_tile_only},
        {"default_tile", scenario_default_tile},
        {"bundled_headers", scenario_bundled_headers},
        {"bundled_option", scenario_bundled_option},
        {"cancelled", scenario_cancelled},
        {"version", scenario_version},
        {"future", scenario_future},
        {"symbols", scenario_symbols},
        {"no_cache", scenario_no_cache},
    });
    return both;
  }();
  return all;
}

}  // namespace

int main(int argc, char** argv) { return nvrtc_cache::probe::run_scenarios(argc, argv, scenarios()); }
