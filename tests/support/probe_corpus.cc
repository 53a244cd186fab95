#include "tests/support/probe_corpus.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nvrtc_cache::probe {
namespace {

#ifdef _WIN32
constexpr char kPathSeparator = ';';
#else
constexpr char kPathSeparator = ':';
#endif

void scenario_trivial(Out& o) { compile_and_dump(o, kTrivial, "trivial.cu", {}); }
void scenario_ptx(Out& o) { compile_and_dump(o, kTrivial, "ptx.cu", {"-arch=compute_80"}); }
void scenario_cubin(Out& o) { compile_and_dump(o, kTrivial, "cubin.cu", {"-arch=sm_80", "-lineinfo"}); }
void scenario_lto(Out& o) { compile_and_dump(o, kTrivial, "lto.cu", {"-arch=sm_80", "-dlto"}); }
void scenario_optix(Out& o) {
  compile_and_dump(o, kTrivial, "optix.cu", {"-arch=compute_80", "--optix-ir", "-rdc=true"});
}
void scenario_template(Out& o) {
  compile_and_dump(o, kTemplate, "template.cu", {"-arch=sm_80", "-std=c++17"}, {},
                   {"scale<float, 2>", "scale<double, 4>", "&counter", "scale<float, 2>"}, {"scale<int, 1>"});
}
void scenario_headers(Out& o) {
  const std::string src =
      "#include \"ops.h\"\n#include <consts.h>\n"
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
void scenario_include_dir(Out& o) {
  const char* dirs = std::getenv("PROBE_INCLUDE_DIR");
  std::vector<std::string> options = {"-arch=sm_80", "-lineinfo"};
  std::string list = dirs ? dirs : ".";
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t end = std::min(list.find(kPathSeparator, start), list.size());
    options.push_back("-I" + list.substr(start, end - start));
    start = end + 1;
  }
  compile_and_dump(o, "#include \"probe_dep.h\"\n__global__ void k(int* x) { x[0] = PROBE_VALUE; }\n", "include_dir.cu",
                   options);
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
  if (api().nvrtcGetTileIR) {
    o.rc("tileir_size_null", api().nvrtcGetTileIRSize(p, nullptr));
    o.rc("tileir_null", api().nvrtcGetTileIR(p, nullptr));
  }
  if (api().nvrtcGetNVVM) {
    o.rc("nvvm_size_null", api().nvrtcGetNVVMSize(p, nullptr));
    o.rc("nvvm_null", api().nvrtcGetNVVM(p, nullptr));
  }
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

}  // namespace

const char* const kTrivial =
    "extern \"C\" __global__ void axpy(float a, const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

const char* const kTemplate =
    "template <typename T, int N> __global__ void scale(T* x) { x[threadIdx.x] *= N; }\n"
    "__device__ int counter;\n";

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

void dump_program(Out& o, nvrtcProgram p, const std::vector<std::string>& names) {
  dump_output(o, "log", p, api().nvrtcGetProgramLogSize, api().nvrtcGetProgramLog);
  dump_output(o, "ptx", p, api().nvrtcGetPTXSize, api().nvrtcGetPTX);
  dump_output(o, "cubin", p, api().nvrtcGetCUBINSize, api().nvrtcGetCUBIN);
  // The outputs NVRTC 11.x lacks (LTO-IR, OptiX IR, the PCH queries) and those of NVRTCs other than
  // 13.0, where the NVRTC reached has them.
  if (api().nvrtcGetLTOIRSize && api().nvrtcGetLTOIR) {
    dump_output(o, "ltoir", p, api().nvrtcGetLTOIRSize, api().nvrtcGetLTOIR);
  }
  if (api().nvrtcGetOptiXIRSize && api().nvrtcGetOptiXIR) {
    dump_output(o, "optixir", p, api().nvrtcGetOptiXIRSize, api().nvrtcGetOptiXIR);
  }
  if (api().nvrtcGetTileIRSize && api().nvrtcGetTileIR) {
    dump_output(o, "tileir", p, api().nvrtcGetTileIRSize, api().nvrtcGetTileIR);
  }
  if (api().nvrtcGetNVVMSize && api().nvrtcGetNVVM)
    dump_output(o, "nvvm", p, api().nvrtcGetNVVMSize, api().nvrtcGetNVVM);
  for (const auto& n : names) {
    const char* lowered = "(untouched)";
    const nvrtcResult r = api().nvrtcGetLoweredName(p, n.c_str(), &lowered);
    o.line("lowered[" + n + "] rc=" + std::to_string(r) + " name=" + (lowered ? lowered : "(null)"));
  }
  if (!api().nvrtcGetPCHCreateStatus || !api().nvrtcGetPCHHeapSizeRequired) return;
  o.rc("pch_create_status", api().nvrtcGetPCHCreateStatus(p));
  size_t heap = 0xdeadbeef;
  const nvrtcResult heap_rc = api().nvrtcGetPCHHeapSizeRequired(p, &heap);
  o.line("pch_heap_required rc=" + std::to_string(heap_rc) + " size=" + std::to_string(heap));
}

void compile_and_dump(Out& o, const std::string& src, const char* name, const std::vector<std::string>& options,
                      const std::vector<std::pair<std::string, std::string>>& headers,
                      const std::vector<std::string>& names, const std::vector<std::string>& lookups) {
  std::vector<const char*> header_src, header_names, opts;
  for (const auto& h : headers) {
    header_names.push_back(h.first.c_str());
    header_src.push_back(h.second.c_str());
  }
  for (const auto& opt : options) opts.push_back(opt.c_str());
  nvrtcProgram p = nullptr;
  o.rc("create",
       api().nvrtcCreateProgram(&p, src.c_str(), name, (int)headers.size(), header_src.data(), header_names.data()));
  for (const auto& n : names) o.rc(("add_name " + n).c_str(), api().nvrtcAddNameExpression(p, n.c_str()));
  o.rc("compile", api().nvrtcCompileProgram(p, (int)opts.size(), opts.data()));
  std::vector<std::string> all_lookups = names;
  all_lookups.insert(all_lookups.end(), lookups.begin(), lookups.end());
  dump_program(o, p, all_lookups);
  o.rc("destroy", api().nvrtcDestroyProgram(&p));
}

const std::map<std::string, Scenario>& portable_scenarios() {
  static const std::map<std::string, Scenario> all = {
      {"trivial", scenario_trivial},
      {"ptx", scenario_ptx},
      {"cubin", scenario_cubin},
      {"lto", scenario_lto},
      {"optix", scenario_optix},
      {"template", scenario_template},
      {"headers", scenario_headers},
      {"compile_error", scenario_compile_error},
      {"warnings", scenario_warnings},
      {"invalid_option", scenario_invalid_option},
      {"include_dir", scenario_include_dir},
      {"null_name", scenario_null_name},
      {"recompile", scenario_recompile},
      {"bad_inputs", scenario_bad_inputs},
  };
  return all;
}

int run_scenarios(int argc, char** argv, const std::map<std::string, Scenario>& all) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SCENARIO... | list\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name == "list") {
      for (const auto& [n, fn] : all) std::printf("%s\n", n.c_str());
      continue;
    }
    auto it = all.find(name);
    if (it == all.end()) {
      std::fprintf(stderr, "unknown scenario %s\n", name.c_str());
      return 2;
    }
    Out o;
    o.line("### " + name);
    it->second(o);
    std::fwrite(o.text.data(), 1, o.text.size(), stdout);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace nvrtc_cache::probe
