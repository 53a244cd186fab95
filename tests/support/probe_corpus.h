// probe_corpus: what the NVRTC probes share (tests/clients/nvrtc_probe.cc on Linux, tests/clients/windows/
// nvrtc_client.cc under Wine): the API as a table of function pointers, the dump of every observable
// result of a program (each return code, each size, every byte of every output, lowered names) as
// text, and the portable scenarios (no fork, no dlopen, no POSIX), so that runs directly, through the
// cache cold and through it warm can be compared byte for byte on either platform.
// Contract: single-threaded per Out; the client defines probe::api() (how NVRTC is reached); no
// filesystem access except the include_dir scenario's compile (PROBE_INCLUDE_DIR).
#pragma once

#include <nvrtc.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nvrtc_cache::probe {

// Every NVRTC function, as the client reached it (nullptr: not found).
struct Api {
#define NVRTC_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
};

// Defined by each client.
const Api& api();

struct Out {
  std::string text;
  void line(const std::string& s) { text += s + "\n"; }
  void rc(const char* what, nvrtcResult r) { line(std::string(what) + " rc=" + std::to_string(r)); }
};

std::string hex(const char* data, size_t n);

using SizeFn = nvrtcResult (*)(nvrtcProgram, size_t*);
using DataFn = nvrtcResult (*)(nvrtcProgram, char*);
// One output: its size call, then its bytes plus 16 canary bytes (getters must leave errno alone).
void dump_output(Out& o, const char* label, nvrtcProgram p, SizeFn size_fn, DataFn data_fn);
// Every getter of a compiled program, and the lowered name of each of `names`.
void dump_program(Out& o, nvrtcProgram p, const std::vector<std::string>& names = {});
// Creates, adds names, compiles with `options`, dumps everything, destroys.
void compile_and_dump(Out& o, const std::string& src, const char* name, const std::vector<std::string>& options,
                      const std::vector<std::pair<std::string, std::string>>& headers = {},
                      const std::vector<std::string>& names = {}, const std::vector<std::string>& lookups = {});

extern const char* const kTrivial;
extern const char* const kTemplate;

using Scenario = std::function<void(Out&)>;
// The scenarios every platform runs: trivial, ptx, cubin, lto, optix, template (name expressions),
// headers (in memory), compile_error, warnings, invalid_option, include_dir (PROBE_INCLUDE_DIR: one
// or more directories separated by PROBE_PATH_SEPARATOR, each passed as -I; the header
// probe_dep.h), null_name, recompile, bad_inputs.
const std::map<std::string, Scenario>& portable_scenarios();

// Runs the named scenarios of `all` (or "list"), printing each one's dump to stdout. Returns the
// exit status.
int run_scenarios(int argc, char** argv, const std::map<std::string, Scenario>& all);

}  // namespace nvrtc_cache::probe
