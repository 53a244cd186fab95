// The compile lifecycle (shim/lifecycle/compile_lifecycle.h) in-process: a scripted NVRTC (function pointers
// to the fakes below), a memory store, and a host whose watch reports one header read. Every branch
// the real NVRTC cannot reach on demand: hit, stale dependency, corrupt entry and manifest, every
// reason not to cache, store failures, a read-only store, an unavailable store, single-flight, and
// exceptions before and after the real compile. The real NVRTC's exactness is the integration
// tests' (tests/nvrtc_versions_test.cc, tests/shim_test.cc).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/compile_entry.h"
#include "direct/manifest.h"
#include "libraries/nvrtc/bundled_headers.h"
#include "shim/lifecycle/compile_lifecycle.h"
#include "store/memory_store.h"
#include "tests/support/scripted_host.h"
#include "util/clock.h"

namespace nvrtc_cache::shim {
namespace {

// ---- A scripted NVRTC ----

struct FakeProgram {
  std::string source;
  std::string options;
  bool compiled = false;
};

struct Script {
  nvrtcResult compile_rc = NVRTC_SUCCESS;
  int compiles = 0;
  int errno_after_compile = 0;  // errno the fake compile leaves
  bool unstable_ptx = false;    // the PTX getter writes different bytes at each call: not capturable
  int ptx_reads = 0;
};
Script g_script;

FakeProgram& program_of(nvrtcProgram prog) { return *reinterpret_cast<FakeProgram*>(prog); }
std::string log_of(const FakeProgram& p) { return "log: " + p.source + " with [" + p.options + "]"; }
std::string ptx_of(const FakeProgram& p) { return ".ptx " + p.source + p.options; }

nvrtcResult fake_compile(nvrtcProgram prog, int n, const char* const* options) {
  ++g_script.compiles;
  FakeProgram& p = program_of(prog);
  p.options.clear();
  for (int i = 0; i < n; ++i) p.options += std::string(options[i]) + ";";
  p.compiled = true;
  errno = g_script.errno_after_compile;
  return g_script.compile_rc;
}
nvrtcResult fake_log_size(nvrtcProgram prog, size_t* size) {
  *size = log_of(program_of(prog)).size() + 1;
  return NVRTC_SUCCESS;
}
nvrtcResult fake_log(nvrtcProgram prog, char* out) {
  const std::string log = log_of(program_of(prog));
  std::copy(log.c_str(), log.c_str() + log.size() + 1, out);
  return NVRTC_SUCCESS;
}
nvrtcResult fake_ptx_size(nvrtcProgram prog, size_t* size) {
  *size = ptx_of(program_of(prog)).size() + 1;
  return NVRTC_SUCCESS;
}
nvrtcResult fake_ptx(nvrtcProgram prog, char* out) {
  std::string ptx = ptx_of(program_of(prog));
  if (g_script.unstable_ptx) ptx[0] = static_cast<char>('0' + (++g_script.ptx_reads % 10));
  std::copy(ptx.c_str(), ptx.c_str() + ptx.size() + 1, out);
  return NVRTC_SUCCESS;
}
nvrtcResult fake_cubin_size(nvrtcProgram prog, size_t* size) {
  *size = ptx_of(program_of(prog)).size();
  return NVRTC_SUCCESS;
}
nvrtcResult fake_cubin(nvrtcProgram prog, char* out) {
  std::string cubin = ptx_of(program_of(prog));
  std::reverse(cubin.begin(), cubin.end());
  std::copy(cubin.begin(), cubin.end(), out);
  return NVRTC_SUCCESS;
}
// An output not asked for (LTO-IR, OptiX IR): empty, as NVRTC answers.
nvrtcResult fake_empty_size(nvrtcProgram, size_t* size) {
  *size = 0;
  return NVRTC_SUCCESS;
}
nvrtcResult fake_empty(nvrtcProgram, char*) { return NVRTC_SUCCESS; }
nvrtcResult fake_lowered_name(nvrtcProgram, const char*, const char** lowered) {
  *lowered = nullptr;
  return NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID;
}
nvrtcResult fake_pch_status(nvrtcProgram) { return NVRTC_SUCCESS; }
nvrtcResult fake_pch_heap(nvrtcProgram, size_t* size) {
  *size = 0;
  return NVRTC_SUCCESS;
}

interpose::RealNvrtc fake_nvrtc() {
  interpose::RealNvrtc real;
  real.nvrtcCompileProgram = fake_compile;
  real.nvrtcGetProgramLogSize = fake_log_size;
  real.nvrtcGetProgramLog = fake_log;
  real.nvrtcGetPTXSize = fake_ptx_size;
  real.nvrtcGetPTX = fake_ptx;
  real.nvrtcGetCUBINSize = fake_cubin_size;
  real.nvrtcGetCUBIN = fake_cubin;
  real.nvrtcGetLTOIRSize = fake_empty_size;
  real.nvrtcGetLTOIR = fake_empty;
  real.nvrtcGetOptiXIRSize = fake_empty_size;
  real.nvrtcGetOptiXIR = fake_empty;
  real.nvrtcGetLoweredName = fake_lowered_name;
  real.nvrtcGetPCHCreateStatus = fake_pch_status;
  real.nvrtcGetPCHHeapSizeRequired = fake_pch_heap;
  real.identity.major = 13;
  real.identity.minor = 0;
  real.identity.build_id = "fake";
  return real;
}

// ---- The host: one header file read per compile ----

using testing::FlakyStore;

class TestHost final : public testing::ScriptedHost {
 public:
  TestHost(std::string header, FlakyStore* store) : ScriptedHost(store), header_(std::move(header)) {}

  std::optional<std::string> shell_directory() override {
    if (throw_in_context) throw std::bad_alloc();
    return std::nullopt;
  }
  std::optional<NotCacheable> reason_not_cacheable() override { return platform_reason; }
  WatchedCall run_watched(const WatchedLibrary& library, const std::function<void()>& call,
                          const DependencyRule& rule) override {
    EXPECT_TRUE(claim_held || claims == 0 || read_only) << "compiled without holding the claim it took";
    EXPECT_EQ(library.library, core::JitLibrary::nvrtc);
    EXPECT_TRUE(library.reads_files_always);
    WatchedCall out;
    const std::int64_t start = util::realtime_ns();  // the header predates the compile
    call();
    out.error_after = errno;
    if (unobservable) {
      out.dependencies.why_not = "NVRTC's file accesses are not observable in this process";
      out.dependencies.reason = direct::NotRecorded::kUnobservable;
      return out;
    }
    const direct::Observation read{direct::ObservationKind::kOpen, true, false, header_, {}};
    out.dependencies = rule({read}, start, {});
    out.internal_error = internal_error_after_compile;
    return out;
  }
  // Asked for once per compile to be recorded (served or stored); no file, so nothing is written.
  std::string record_file() override {
    ++recorded;
    return {};
  }

  bool throw_in_context = false;
  bool unobservable = false;
  bool internal_error_after_compile = false;
  std::optional<NotCacheable> platform_reason;
  int recorded = 0;

 private:
  std::string header_;
};

class CompileLifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    g_script = Script{};
    dir_ = std::filesystem::temp_directory_path() / ("lifecycle-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    header_ = (dir_ / "kernel.h").string();
    write_header("#define N 1\n");
    host_ = std::make_unique<TestHost>(header_, &store_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write_header(const std::string& text) {
    std::ofstream(header_, std::ios::trunc) << text;
    std::filesystem::last_write_time(header_, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  }

  // One nvrtcCompileProgram of `source` with `options`, as a fresh program: its result code, the
  // error state left to the caller, and the program's record (served or not).
  struct Outcome {
    nvrtcResult rc;
    int error_after;
    std::shared_ptr<ProgramRecord> record;
    FakeProgram program;
  };
  Outcome compile(const std::string& source, std::vector<const char*> options = {"-arch=sm_90"},
                  bool flow_callback = false) {
    Outcome out{};
    out.program.source = source;
    out.record = std::make_shared<ProgramRecord>();
    out.record->inputs.library = real_.identity;
    out.record->inputs.name = "kernel.cu";
    out.record->inputs.source = source;
    out.record->has_flow_callback = flow_callback;
    auto prog = reinterpret_cast<nvrtcProgram>(&out.program);
    errno = 77;  // the caller's errno
    out.rc = compile_program(*host_, real_, *out.record, prog, static_cast<int>(options.size()), options.data(),
                             &out.error_after);
    return out;
  }

  std::filesystem::path dir_;
  std::string header_;
  interpose::RealNvrtc real_ = fake_nvrtc();
  FlakyStore store_;
  std::unique_ptr<TestHost> host_;
};

TEST_F(CompileLifecycle, AMissIsCompiledAndStoredThenServedWithoutCompiling) {
  g_script.errno_after_compile = 5;
  const Outcome cold = compile("kernel A");
  EXPECT_EQ(cold.rc, NVRTC_SUCCESS);
  EXPECT_EQ(cold.error_after, 5) << "the caller sees NVRTC's errno after a real compile";
  EXPECT_EQ(g_script.compiles, 1);
  EXPECT_FALSE(cold.record->served);
  EXPECT_EQ(host_->count(core::Counter::misses), 1);
  EXPECT_EQ(host_->count(core::Counter::miss_new), 1);
  EXPECT_EQ(host_->count(core::Counter::stores), 1);
  EXPECT_EQ(host_->claims, 1);
  EXPECT_FALSE(host_->claim_held) << "the claim outlived the compile";
  EXPECT_EQ(host_->recorded, 1);
  EXPECT_EQ(host_->stores_flushed, 1);

  const Outcome warm = compile("kernel A");
  EXPECT_EQ(warm.rc, NVRTC_SUCCESS);
  EXPECT_EQ(warm.error_after, 77) << "a hit leaves the caller's errno as it was";
  EXPECT_EQ(g_script.compiles, 1) << "a hit compiled";
  ASSERT_TRUE(warm.record->served);
  const FakeProgram as_compiled{"kernel A", "-arch=sm_90;", true};
  EXPECT_EQ(warm.record->served->output(core::OutputKind::log).bytes, log_of(as_compiled) + '\0');
  EXPECT_EQ(warm.record->served->output(core::OutputKind::ptx).bytes, ptx_of(as_compiled) + '\0');
  std::string cubin = ptx_of(as_compiled);
  std::reverse(cubin.begin(), cubin.end());
  EXPECT_EQ(warm.record->served->output(core::OutputKind::cubin).bytes, cubin);
  EXPECT_FALSE(warm.record->served->output(core::OutputKind::tileir).available) << "the fake has no Tile IR getter";
  EXPECT_EQ(host_->count(core::Counter::hits), 1);
  EXPECT_EQ(host_->claims, 1) << "a hit took a claim";
  EXPECT_EQ(host_->recorded, 2);

  compile("kernel A", {"-arch=sm_80"});  // other options: another program
  EXPECT_EQ(g_script.compiles, 2);
}

TEST_F(CompileLifecycle, AChangedHeaderIsAMissAndBothVersionsAreKept) {
  compile("kernel A");
  write_header("#define N 2\n");
  compile("kernel A");
  EXPECT_EQ(g_script.compiles, 2);
  EXPECT_EQ(host_->count(core::Counter::miss_dependency), 1);
  write_header("#define N 1\n");
  const Outcome back = compile("kernel A");
  EXPECT_TRUE(back.record->served) << "the first version's result was displaced";
  EXPECT_EQ(g_script.compiles, 2);
}

TEST_F(CompileLifecycle, ACorruptEntryOrManifestIsDroppedCountedAndRecompiled) {
  compile("kernel A");
  // Corrupt the manifest: decode fails -> counted corrupt, erased, recompiled and stored again.
  const keying::CacheKey key = [&] {
    ProgramRecord r;
    r.inputs.library = real_.identity;
    r.inputs.name = "kernel.cu";
    r.inputs.source = "kernel A";
    const char* options[] = {"-arch=sm_90"};
    record_compile_context(r, 1, options, compile_context(*host_));
    return keying::compute_key(r.inputs);
  }();
  const std::string manifest_key = direct::manifest_store_key(key);
  ASSERT_TRUE(store_.memory.get(manifest_key)) << "the test computes another key than the lifecycle";
  ASSERT_TRUE(store_.memory.put(manifest_key, "not a manifest").is_ok());
  compile("kernel A");
  EXPECT_EQ(g_script.compiles, 2);
  EXPECT_EQ(host_->count(core::Counter::corrupt), 1);
  EXPECT_TRUE(compile("kernel A").record->served) << "the recompiled result was not stored again";

  // Corrupt the entry the manifest names.
  const std::optional<direct::Manifest> manifest = direct::decode_manifest(*store_.memory.get(manifest_key));
  ASSERT_TRUE(manifest);
  ASSERT_EQ(manifest->results.size(), 1u);
  const std::string entry_key = direct::result_store_key(manifest->results[0].result_key);
  ASSERT_TRUE(store_.memory.put(entry_key, "not an entry").is_ok());
  const Outcome after = compile("kernel A");
  EXPECT_FALSE(after.record->served);
  EXPECT_EQ(g_script.compiles, 3);
  EXPECT_EQ(host_->count(core::Counter::corrupt), 2);
  EXPECT_TRUE(compile("kernel A").record->served);
}

TEST_F(CompileLifecycle, EveryReasonNotToCacheCompilesForRealAndCountsIt) {
  struct Case {
    std::vector<const char*> options;
    bool flow_callback;
    core::Counter reason;
  };
  const std::vector<Case> cases = {
      {{"-arch=sm_90", "--create-pch=x.pch"}, false, core::Counter::uncacheable_side_effect_option},
      {{"-arch=sm_90", "--an-option-no-nvrtc-has"}, false, core::Counter::uncacheable_unknown_option},
      {{"-arch=sm_90"}, true, core::Counter::uncacheable_flow_callback},
  };
  for (const Case& c : cases) {
    const int before = g_script.compiles;
    for (int i = 0; i < 2; ++i) {
      const Outcome o = compile("kernel B", c.options, c.flow_callback);
      EXPECT_FALSE(o.record->served);
    }
    EXPECT_EQ(g_script.compiles, before + 2);
    EXPECT_EQ(host_->count(c.reason), 2) << core::kCounterNames[static_cast<std::size_t>(c.reason)];
  }
  EXPECT_EQ(store_.puts, 0);

  host_->platform_reason = NotCacheable{"the watch is not installed", core::Counter::uncacheable_unobservable};
  compile("kernel C");
  compile("kernel C");
  EXPECT_EQ(host_->count(core::Counter::uncacheable_unobservable), 2);
  host_->platform_reason.reset();

  host_->unobservable = true;
  compile("kernel D");
  compile("kernel D");
  EXPECT_EQ(host_->count(core::Counter::uncacheable_unobservable), 4);
  host_->unobservable = false;

  compile("const char* t = __TIME__;");  // decided in direct/dependencies.cc, counted as such
  compile("const char* t = __TIME__;");
  EXPECT_EQ(host_->count(core::Counter::uncacheable_time), 2);

  g_script.compile_rc = NVRTC_ERROR_OUT_OF_MEMORY;  // not a result worth keeping
  EXPECT_EQ(compile("kernel E").rc, NVRTC_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(compile("kernel E").rc, NVRTC_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(host_->count(core::Counter::uncacheable_library_error), 2);
  EXPECT_EQ(store_.puts, 0);

  g_script.compile_rc = NVRTC_ERROR_COMPILATION;  // a compile error is a result: cached
  compile("kernel F");
  const Outcome served_error = compile("kernel F");
  EXPECT_TRUE(served_error.record->served);
  EXPECT_EQ(served_error.rc, NVRTC_ERROR_COMPILATION);

  g_script.compile_rc = NVRTC_SUCCESS;
  g_script.unstable_ptx = true;  // an output that reads back differently each time: not stored
  compile("kernel G");
  EXPECT_FALSE(compile("kernel G").record->served);
  EXPECT_EQ(host_->count(core::Counter::uncacheable_output), 2);
}

// NVRTC 11.x: every compile goes to NVRTC, counted under its own reason.
TEST_F(CompileLifecycle, Nvrtc11IsPassedThroughUnderItsOwnReason) {
  real_.identity.major = 11;
  real_.identity.minor = 8;
  for (int i = 0; i < 2; ++i) EXPECT_FALSE(compile("kernel A").record->served);
  EXPECT_EQ(g_script.compiles, 2);
  EXPECT_EQ(host_->count(core::Counter::uncacheable_unsupported_version), 2);
  EXPECT_EQ(host_->count(core::Counter::uncacheable_unknown_option), 0);
  EXPECT_EQ(store_.puts, 0);
}

// --use-bundled-headers=DIR: the install is made before the lookup, hit or miss, wherever DIR's
// marker does not name the NVRTC's version; an install that fails sends the compile to NVRTC.
int g_installs = 0;
nvrtcResult g_install_rc = NVRTC_SUCCESS;
nvrtcResult fake_install(const char* dir, unsigned flags, const char** log) {
  ++g_installs;
  EXPECT_EQ(flags, 0u);
  if (g_install_rc != NVRTC_SUCCESS) {
    if (log) *log = "read-only";
    return g_install_rc;
  }
  std::filesystem::create_directories(dir);
  std::ofstream(std::string(dir) + "/.nvrtc_headers_version")
      << "# marker\nformat_version=1\ncuda_major=13\ncuda_minor=5\ntimestamp=" << g_installs << "\n";
  return NVRTC_SUCCESS;
}

TEST_F(CompileLifecycle, BundledHeadersAreInstalledBeforeAHitOrMiss) {
  real_.identity.minor = 5;
  real_.nvrtcInstallBundledHeaders = fake_install;
  g_installs = 0;
  g_install_rc = NVRTC_SUCCESS;
  const std::string dir = (dir_ / "bundled").string();
  const std::string option = "--use-bundled-headers=" + dir;
  const std::vector<const char*> options = {"-arch=sm_90", option.c_str()};
  EXPECT_FALSE(compile("kernel A", options).record->served);
  EXPECT_EQ(g_installs, 1);
  EXPECT_TRUE(compile("kernel A", options).record->served);
  EXPECT_EQ(g_installs, 1) << "the marker names 13.5: nothing to install";
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(compile("kernel A", options).record->served);
  EXPECT_EQ(g_installs, 2) << "a hit leaves the headers where NVRTC would have installed them";
  EXPECT_TRUE(std::filesystem::exists(dir + "/.nvrtc_headers_version"));
  EXPECT_EQ(g_script.compiles, 1);

  std::ofstream(dir + "/.nvrtc_headers_version") << "format_version=1\ncuda_major=13\ncuda_minor=4\n";
  EXPECT_TRUE(compile("kernel A", options).record->served);
  EXPECT_EQ(g_installs, 3) << "another version's marker: NVRTC's install decides";

  std::filesystem::remove_all(dir);
  g_install_rc = NVRTC_ERROR_BUILTIN_OPERATION_FAILURE;
  EXPECT_FALSE(compile("kernel A", options).record->served);
  EXPECT_EQ(g_script.compiles, 2);
  EXPECT_EQ(host_->count(core::Counter::uncacheable_side_effect_option), 1);

  EXPECT_TRUE(is_bundled_headers_bookkeeping(dir + "/.nvrtc_install.lock", std::vector<std::string>{dir}));
  EXPECT_TRUE(is_bundled_headers_bookkeeping(dir + "//.nvrtc_headers_version", std::vector<std::string>{dir + "/"}));
  EXPECT_FALSE(is_bundled_headers_bookkeeping(dir + "/cuda_fp16.h", std::vector<std::string>{dir}));
  EXPECT_FALSE(is_bundled_headers_bookkeeping(dir + "x/.nvrtc_install.lock", std::vector<std::string>{dir}));
}

TEST_F(CompileLifecycle, AServedProgramCompiledUncachedIsFirstCompiledForReal) {
  compile("kernel A");
  Outcome warm = compile("kernel A");
  ASSERT_TRUE(warm.record->served);
  const int before = g_script.compiles;
  // The same program, compiled again with a flow callback set meanwhile: NVRTC first compiles it as
  // it was served, then as asked.
  warm.record->has_flow_callback = true;
  const char* options[] = {"-arch=sm_90", "-G"};
  int error_after = 0;
  (void)compile_program(*host_, real_, *warm.record, reinterpret_cast<nvrtcProgram>(&warm.program), 2, options,
                        &error_after);
  EXPECT_EQ(g_script.compiles, before + 2);
  EXPECT_EQ(warm.program.options, "-arch=sm_90;-G;");
  EXPECT_FALSE(warm.record->served);
}

TEST_F(CompileLifecycle, StoreFailuresAndAnUnavailableOrReadOnlyStoreStillReturnNvrtcsResult) {
  store_.fail_puts = true;
  EXPECT_EQ(compile("kernel A").rc, NVRTC_SUCCESS);
  EXPECT_EQ(host_->count(core::Counter::errors), 1);
  EXPECT_EQ(host_->count(core::Counter::stores), 0);
  EXPECT_FALSE(compile("kernel A").record->served);
  EXPECT_EQ(g_script.compiles, 2);
  store_.fail_puts = false;

  host_ = std::make_unique<TestHost>(header_, &store_);
  store_.puts = 0;
  host_->read_only = true;
  EXPECT_EQ(compile("kernel B").rc, NVRTC_SUCCESS);
  EXPECT_EQ(host_->count(core::Counter::misses), 1);
  EXPECT_EQ(host_->claims, 0) << "a read-only cache took a claim it cannot honour";
  EXPECT_EQ(store_.puts, 0) << "a read-only cache wrote";

  host_ = std::make_unique<TestHost>(header_, &store_);
  host_->store_available = false;
  EXPECT_EQ(compile("kernel C").rc, NVRTC_SUCCESS);
  EXPECT_EQ(host_->count(core::Counter::errors), 1);
  EXPECT_EQ(g_script.compiles, 4);
}

TEST_F(CompileLifecycle, AResultStoredWhileWaitingForTheClaimIsServed) {
  host_->while_waiting = [&] {  // another compile of the same program, holding the claim, stores it
    FakeProgram program{"kernel A", "", false};
    ProgramRecord record;
    record.inputs.library = real_.identity;
    record.inputs.name = "kernel.cu";
    record.inputs.source = "kernel A";
    const char* options[] = {"-arch=sm_90"};
    TestHost other(header_, &store_);
    int error_after = 0;
    (void)compile_program(other, real_, record, reinterpret_cast<nvrtcProgram>(&program), 1, options, &error_after);
    EXPECT_EQ(other.count(core::Counter::stores), 1);
  };
  const Outcome waited = compile("kernel A");
  EXPECT_TRUE(waited.record->served) << "the result stored while waiting was not served";
  EXPECT_EQ(g_script.compiles, 1) << "compiled again after waiting";
  EXPECT_EQ(host_->count(core::Counter::hits), 1);
  EXPECT_FALSE(host_->claim_held);
}

TEST_F(CompileLifecycle, AnExceptionBeforeTheCompileFallsBackAndAfterItKeepsTheResult) {
  host_->throw_in_context = true;
  g_script.errno_after_compile = 9;
  const Outcome before = compile("kernel A");
  EXPECT_EQ(before.rc, NVRTC_SUCCESS);
  EXPECT_EQ(before.error_after, 9);
  EXPECT_EQ(g_script.compiles, 1);
  EXPECT_EQ(host_->count(core::Counter::errors), 1);
  host_->throw_in_context = false;

  host_->internal_error_after_compile = true;
  const Outcome after = compile("kernel B");
  EXPECT_EQ(after.rc, NVRTC_SUCCESS);
  EXPECT_EQ(g_script.compiles, 2) << "a failure after the real compile compiled again";
  EXPECT_EQ(host_->count(core::Counter::errors), 2);
  EXPECT_EQ(store_.puts, 0);
}

}  // namespace
}  // namespace nvrtc_cache::shim
