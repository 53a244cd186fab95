// The handle lifecycle (shim/lifecycle/handle_lifecycle.h) in-process, over each handle library's own
// description (libraries/nvjitlink/description.h, libraries/nvvm/description.h) with a scripted library
// (function pointers to the fakes below), a memory store and a scripted host (shim/lifecycle/jit_host.h):
// the branches the real libraries cannot reach on demand — a hit served without the library, a
// changed input, return codes never kept, refused options, a tainted watch, a store that is
// unavailable, read-only or fails, single-flight, an exception after the real call, a getter a
// served entry cannot answer, and the caller's error state on each path. The real libraries'
// exactness is the integration tests' (tests/integration/nvjitlink_test.cc and the NVVM suites).
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "libraries/nvjitlink/description.h"
#include "libraries/nvvm/description.h"
#include "shim/lifecycle/handle_lifecycle.h"
#include "shim/lifecycle/jit_host.h"
#include "tests/support/scripted_host.h"

namespace nvrtc_cache::shim {
namespace {

namespace lifecycle = handle_lifecycle;

// ---- A scripted library: a handle holds its inputs; the completing call "links" them ----

struct FakeHandle {
  std::vector<std::string> inputs;
  std::string options;
  bool completed = false;
};

struct Script {
  int completes = 0;
  int complete_rc = 0;        // what the completing call returns
  int errno_after = 0;        // errno the completing call leaves
  int size_getter_calls = 0;  // calls of the library's own size getters
};
Script g_script;

FakeHandle& handle_of(const void* handle) { return *static_cast<FakeHandle*>(const_cast<void*>(handle)); }
std::string joined(const FakeHandle& h) {
  std::string all;
  for (const std::string& input : h.inputs) all += input + "|";
  return all + h.options;
}
std::string cubin_of(const FakeHandle& h) {
  std::string out = joined(h);
  std::reverse(out.begin(), out.end());
  return out;
}
std::string log_of(const FakeHandle& h) { return "log of " + joined(h); }

template <typename Result>
Result complete_fake(FakeHandle& h) {
  ++g_script.completes;
  h.completed = true;
  errno = g_script.errno_after;
  return static_cast<Result>(g_script.complete_rc);
}

// A size getter and a data getter of one output (`text`), answering an error before the completing call.
template <typename Result, typename Handle, std::string (*Text)(const FakeHandle&), int kNotReady>
Result fake_size(Handle handle, size_t* size) {
  ++g_script.size_getter_calls;
  const FakeHandle& h = handle_of(handle);
  if (!h.completed) return static_cast<Result>(kNotReady);
  *size = Text(h).size();
  return static_cast<Result>(0);
}
template <typename Result, typename Handle, typename Data, std::string (*Text)(const FakeHandle&), int kNotReady>
Result fake_data(Handle handle, Data* out) {
  const FakeHandle& h = handle_of(handle);
  if (!h.completed) return static_cast<Result>(kNotReady);
  const std::string text = Text(h);
  std::copy(text.begin(), text.end(), static_cast<char*>(static_cast<void*>(out)));
  return static_cast<Result>(0);
}

nvJitLinkResult fake_link(nvJitLinkHandle handle) { return complete_fake<nvJitLinkResult>(handle_of(handle)); }
nvJitLinkResult no_ptx_size(nvJitLinkHandle, size_t*) { return NVJITLINK_ERROR_INVALID_INPUT; }
nvJitLinkResult no_ptx(nvJitLinkHandle, char*) { return NVJITLINK_ERROR_INVALID_INPUT; }

interpose::RealNvJitLink fake_nvjitlink() {
  interpose::RealNvJitLink real;
  constexpr int kNotReady = NVJITLINK_ERROR_INTERNAL;
  real.nvJitLinkComplete = fake_link;
  real.nvJitLinkGetLinkedCubinSize = fake_size<nvJitLinkResult, nvJitLinkHandle, cubin_of, kNotReady>;
  real.nvJitLinkGetLinkedCubin = fake_data<nvJitLinkResult, nvJitLinkHandle, void, cubin_of, kNotReady>;
  real.nvJitLinkGetLinkedPtxSize = no_ptx_size;
  real.nvJitLinkGetLinkedPtx = no_ptx;
  real.nvJitLinkGetErrorLogSize = fake_size<nvJitLinkResult, nvJitLinkHandle, log_of, kNotReady>;
  real.nvJitLinkGetErrorLog = fake_data<nvJitLinkResult, nvJitLinkHandle, char, log_of, kNotReady>;
  real.nvJitLinkGetInfoLogSize = fake_size<nvJitLinkResult, nvJitLinkHandle, log_of, kNotReady>;
  real.nvJitLinkGetInfoLog = fake_data<nvJitLinkResult, nvJitLinkHandle, char, log_of, kNotReady>;
  real.identity = keying::LibraryIdentity{13, 0, "fake-nvjitlink-build"};
  return real;
}

nvvmResult fake_nvvm_compile(nvvmProgram prog, int n, const char** options) {
  FakeHandle& h = handle_of(prog);
  h.options.clear();
  for (int i = 0; i < n; ++i) h.options += std::string(options[i]) + ";";
  return complete_fake<nvvmResult>(h);
}

interpose::RealNvvm fake_nvvm() {
  interpose::RealNvvm real;
  constexpr int kNotReady = NVVM_ERROR_NO_MODULE_IN_PROGRAM;
  real.nvvmCompileProgram = fake_nvvm_compile;
  real.nvvmGetCompiledResultSize = fake_size<nvvmResult, nvvmProgram, cubin_of, kNotReady>;
  real.nvvmGetCompiledResult = fake_data<nvvmResult, nvvmProgram, char, cubin_of, kNotReady>;
  real.nvvmGetProgramLogSize = fake_size<nvvmResult, nvvmProgram, log_of, kNotReady>;
  real.nvvmGetProgramLog = fake_data<nvvmResult, nvvmProgram, char, log_of, kNotReady>;
  real.identity = keying::LibraryIdentity{2, 0, "fake-nvvm-build"};
  return real;
}

// ---- The host ----

using testing::FlakyStore;

class TestHost final : public testing::ScriptedHost {
 public:
  using ScriptedHost::ScriptedHost;

  WatchedCall run_watched(const WatchedLibrary& library, const std::function<void()>& call,
                          const DependencyRule& rule) override {
    EXPECT_TRUE(claim_held || claims == 0 || read_only) << "called the library without holding the claim it took";
    EXPECT_FALSE(library.reads_files_always) << "a link reads no file of its own";
    watched.push_back(library.library);
    WatchedCall out;
    call();
    out.error_after = errno;
    if (taint) {
      out.dependencies.why_not = "the library listed a directory";
      out.dependencies.reason = direct::NotRecorded::kWroteOrListed;
      return out;
    }
    out.dependencies = rule({}, 0, {});
    out.internal_error = internal_error_after_call;
    return out;
  }

  bool taint = false;
  bool internal_error_after_call = false;
  std::vector<core::JitLibrary> watched;
};

// ---- One call through the lifecycle, as the hooks make it ----

struct Outcome {
  int rc = 0;
  int errno_after = 0;
  std::string cubin;  // the first output as its getters answer (empty when they fail)
  int cubin_rc = 0;
  std::string log;
  bool served = false;
};

class HandleLifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    g_script = Script{};
    host_ = std::make_unique<TestHost>(&store_);
  }
  void TearDown() override {
    for (auto& h : handles_) handle_table().erase(h.get());
  }

  FakeHandle* create(core::JitLibrary library, const keying::LibraryIdentity& identity,
                     const std::vector<std::string>& options) {
    handles_.push_back(std::make_unique<FakeHandle>());
    FakeHandle* h = handles_.back().get();
    lifecycle::record_created(h, library, identity, options, true, "");
    return h;
  }
  std::shared_ptr<HandleRecord> add(FakeHandle* h, const std::string& input, const char* name) {
    std::shared_ptr<HandleRecord> record = lifecycle::record_of(*host_, h);
    EXPECT_TRUE(record);
    h->inputs.push_back(input);
    lifecycle::record_input(*record, 0, 1, input.data(), input.size(), name, false);
    return record;
  }

  // nvJitLink: create with `options`, add `inputs`, complete, read the CUBIN and the error log back.
  Outcome link(const std::vector<std::string>& inputs, const std::vector<std::string>& options = {"-arch=sm_90"}) {
    FakeHandle* h = create(core::JitLibrary::nvjitlink, nvjitlink_.identity, options);
    h->options = "";
    for (const std::string& o : options) h->options += o + ";";
    std::shared_ptr<HandleRecord> record;
    for (std::size_t i = 0; i < inputs.size(); ++i) record = add(h, inputs[i], ("input" + std::to_string(i)).c_str());
    auto handle = reinterpret_cast<nvJitLinkHandle>(h);
    errno = 7;  // the caller's errno before the call
    Outcome out;
    out.rc = lifecycle::complete<NvJitLinkDescription>(*host_, nvjitlink_, handle,
                                                       [&] { return nvjitlink_.nvJitLinkComplete(handle); });
    out.errno_after = errno;
    out.served = record && record->served != nullptr;
    size_t size = 0;
    out.cubin_rc = lifecycle::size_getter<NvJitLinkDescription>(nvjitlink_, nvjitlink_.nvJitLinkGetLinkedCubinSize,
                                                                handle, kCubin, &size);
    if (out.cubin_rc == 0) {
      out.cubin.resize(size);
      out.cubin_rc = lifecycle::data_getter<NvJitLinkDescription>(nvjitlink_, nvjitlink_.nvJitLinkGetLinkedCubin,
                                                                  handle, kCubin, static_cast<void*>(out.cubin.data()));
    }
    if (lifecycle::size_getter<NvJitLinkDescription>(nvjitlink_, nvjitlink_.nvJitLinkGetErrorLogSize, handle, kErrorLog,
                                                     &size) == 0) {
      out.log.resize(size);
      (void)lifecycle::data_getter<NvJitLinkDescription>(nvjitlink_, nvjitlink_.nvJitLinkGetErrorLog, handle, kErrorLog,
                                                         out.log.data());
    }
    return out;
  }

  // libNVVM: add `modules`, compile with `options`, read the result back.
  Outcome nvvm_compile(const std::vector<std::string>& modules, const std::vector<std::string>& options) {
    FakeHandle* h = create(core::JitLibrary::nvvm, nvvm_.identity, {});
    std::shared_ptr<HandleRecord> record;
    for (std::size_t i = 0; i < modules.size(); ++i)
      record = add(h, modules[i], ("module" + std::to_string(i)).c_str());
    auto prog = reinterpret_cast<nvvmProgram>(h);
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    record->inputs.options = options;  // as nvvmCompileProgram's hook records them
    errno = 7;
    Outcome out;
    out.rc = lifecycle::complete<NvvmDescription>(*host_, nvvm_, prog, [&] {
      return nvvm_.nvvmCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
    });
    out.errno_after = errno;
    out.served = record->served != nullptr;
    size_t size = 0;
    out.cubin_rc =
        lifecycle::size_getter<NvvmDescription>(nvvm_, nvvm_.nvvmGetCompiledResultSize, prog, kResult, &size);
    if (out.cubin_rc == 0) {
      out.cubin.resize(size);
      out.cubin_rc =
          lifecycle::data_getter<NvvmDescription>(nvvm_, nvvm_.nvvmGetCompiledResult, prog, kResult, out.cubin.data());
    }
    return out;
  }

  FlakyStore store_;
  std::unique_ptr<TestHost> host_;
  interpose::RealNvJitLink nvjitlink_ = fake_nvjitlink();
  interpose::RealNvvm nvvm_ = fake_nvvm();
  std::vector<std::unique_ptr<FakeHandle>> handles_;
};

TEST_F(HandleLifecycle, ALinkIsStoredThenServedWithoutTheLibraryExactly) {
  const Outcome cold = link({"a.ltoir bytes", "b.ltoir bytes"});
  ASSERT_EQ(g_script.completes, 1);
  EXPECT_FALSE(cold.served);
  EXPECT_EQ(host_->count(core::Counter::link_misses), 1);
  EXPECT_EQ(host_->count(core::Counter::link_miss_new), 1);
  EXPECT_EQ(host_->stores_flushed, 1);
  EXPECT_EQ(host_->watched, std::vector<core::JitLibrary>{core::JitLibrary::nvjitlink});

  const int size_calls = g_script.size_getter_calls;
  const Outcome warm = link({"a.ltoir bytes", "b.ltoir bytes"});
  EXPECT_EQ(g_script.completes, 1) << "a hit called the library";
  EXPECT_EQ(g_script.size_getter_calls, size_calls) << "a hit's getters called the library";
  EXPECT_TRUE(warm.served);
  EXPECT_EQ(host_->count(core::Counter::link_hits), 1);
  EXPECT_EQ(warm.rc, cold.rc);
  EXPECT_EQ(warm.cubin, cold.cubin);
  EXPECT_EQ(warm.cubin, ";09_ms=hcra-|setyb riotl.b|setyb riotl.a");
  EXPECT_EQ(warm.log, cold.log);
  EXPECT_EQ(warm.cubin_rc, 0);
  EXPECT_EQ(warm.errno_after, 7) << "a hit changed errno";
}

TEST_F(HandleLifecycle, AChangedInputOrOptionIsAMiss) {
  link({"a", "b"});
  link({"a", "c"});
  link({"a", "b"}, {"-arch=sm_80"});
  EXPECT_EQ(g_script.completes, 3);
  EXPECT_EQ(host_->count(core::Counter::link_misses), 3);
  EXPECT_EQ(host_->count(core::Counter::link_hits), 0);
  link({"a", "c"});
  EXPECT_EQ(host_->count(core::Counter::link_hits), 1);
}

TEST_F(HandleLifecycle, TheLibrarysErrnoReachesTheCallerOnAMiss) {
  g_script.errno_after = 42;
  EXPECT_EQ(link({"a"}).errno_after, 42);
  EXPECT_EQ(link({"a"}).errno_after, 7) << "served: the caller's own errno";
}

TEST_F(HandleLifecycle, AResultThatMayNotRecurIsNeverKept) {
  g_script.complete_rc = NVJITLINK_ERROR_INTERNAL;
  EXPECT_EQ(link({"a"}).rc, NVJITLINK_ERROR_INTERNAL);
  EXPECT_EQ(link({"a"}).rc, NVJITLINK_ERROR_INTERNAL);
  EXPECT_EQ(g_script.completes, 2);
  EXPECT_EQ(host_->count(core::Counter::link_uncacheable), 2);
  EXPECT_EQ(host_->count(core::Counter::link_uncacheable_library_error), 2);
  EXPECT_EQ(store_.puts, 0);
  // A link error its inputs decide is kept and served as the library answered it.
  g_script.complete_rc = NVJITLINK_ERROR_INVALID_INPUT;
  link({"b"});
  EXPECT_EQ(link({"b"}).rc, NVJITLINK_ERROR_INVALID_INPUT);
  EXPECT_EQ(g_script.completes, 3);
}

TEST_F(HandleLifecycle, AnOptionThisBuildDoesNotKnowPassesThroughCounted) {
  link({"a"}, {"-arch=sm_90", "-no-such-option"});
  link({"a"}, {"-arch=sm_90", "-no-such-option"});
  EXPECT_EQ(g_script.completes, 2);
  EXPECT_EQ(host_->count(core::Counter::link_uncacheable_unknown_option), 2);
  EXPECT_EQ(host_->claims, 0) << "an uncacheable call claimed a key";
}

TEST_F(HandleLifecycle, ATaintedWatchIsNotStoredAndSaysWhy) {
  host_->taint = true;
  link({"a"});
  host_->taint = false;
  link({"a"});
  EXPECT_EQ(g_script.completes, 2);
  EXPECT_EQ(host_->count(core::Counter::link_uncacheable_wrote_file), 1);
  EXPECT_EQ(host_->count(core::Counter::link_misses), 1);
}

TEST_F(HandleLifecycle, AStoreThatIsUnavailableReadOnlyOrFullNeverChangesTheResult) {
  host_->store_available = false;
  const Outcome unavailable = link({"a"});
  EXPECT_EQ(host_->count(core::Counter::errors), 1);
  host_->store_available = true;
  host_->read_only = true;
  const Outcome read_only = link({"a"});
  EXPECT_EQ(host_->count(core::Counter::link_misses), 1);
  EXPECT_EQ(store_.puts, 0) << "a read-only cache stored";
  host_->read_only = false;
  store_.fail_puts = true;
  const Outcome full = link({"a"});
  EXPECT_EQ(host_->count(core::Counter::errors), 2);
  store_.fail_puts = false;
  EXPECT_EQ(g_script.completes, 3);
  EXPECT_EQ(unavailable.cubin, read_only.cubin);
  EXPECT_EQ(full.cubin, read_only.cubin);
  EXPECT_FALSE(link({"a"}).served);
}

TEST_F(HandleLifecycle, AnotherCallsResultFoundWhileWaitingIsServed) {
  link({"a"});  // stores (claiming the key first)
  ASSERT_EQ(host_->claims, 1);
  // As if another process were still linking: nothing to be found until it stores, meanwhile.
  store_.hidden = true;
  host_->while_waiting = [&] { store_.hidden = false; };
  const Outcome waited = link({"a"});
  EXPECT_TRUE(waited.served);
  EXPECT_EQ(g_script.completes, 1);
  EXPECT_EQ(host_->claims, 2);
  EXPECT_FALSE(host_->claim_held);
  // No result while waiting: this call holds the claim while it links and stores.
  store_.hidden = true;
  host_->while_waiting = nullptr;
  EXPECT_FALSE(link({"a"}).served);
  EXPECT_EQ(g_script.completes, 2);
  EXPECT_FALSE(host_->claim_held) << "the claim outlived the call";
}

TEST_F(HandleLifecycle, AnExceptionAfterTheCallKeepsTheRealResult) {
  host_->internal_error_after_call = true;
  const Outcome out = link({"a"});
  host_->internal_error_after_call = false;
  EXPECT_EQ(out.rc, NVJITLINK_SUCCESS);
  EXPECT_EQ(host_->count(core::Counter::errors), 1);
  EXPECT_EQ(store_.puts, 0);
  EXPECT_EQ(g_script.completes, 1) << "the failure ran the library a second time";
}

TEST_F(HandleLifecycle, AGetterAServedEntryCannotAnswerRunsTheSkippedCallFirst) {
  const Outcome cold = link({"a"});
  FakeHandle* h = create(core::JitLibrary::nvjitlink, nvjitlink_.identity, {"-arch=sm_90"});
  h->options = "-arch=sm_90;";
  std::shared_ptr<HandleRecord> record = add(h, "a", "input0");
  auto handle = reinterpret_cast<nvJitLinkHandle>(h);
  ASSERT_EQ(lifecycle::complete<NvJitLinkDescription>(*host_, nvjitlink_, handle,
                                                      [&] { return nvjitlink_.nvJitLinkComplete(handle); }),
            NVJITLINK_SUCCESS);
  ASSERT_TRUE(record->served);
  ASSERT_FALSE(h->completed);
  // A NULL size pointer: the library's own answer, after the call it skipped.
  EXPECT_EQ(lifecycle::size_getter<NvJitLinkDescription>(nvjitlink_, no_ptx_size, handle, kCubin, nullptr),
            NVJITLINK_ERROR_INVALID_INPUT);
  EXPECT_TRUE(h->completed) << "the skipped call was not made";
  EXPECT_FALSE(record->served);
  EXPECT_EQ(g_script.completes, 2);
  size_t size = 0;
  ASSERT_EQ(nvjitlink_.nvJitLinkGetLinkedCubinSize(handle, &size), NVJITLINK_SUCCESS);
  EXPECT_EQ(size, cold.cubin.size());
}

TEST_F(HandleLifecycle, AnNvvmCompileIsStoredThenServedWithItsOptions) {
  const Outcome cold = nvvm_compile({"module bitcode"}, {"-arch=compute_90"});
  const Outcome warm = nvvm_compile({"module bitcode"}, {"-arch=compute_90"});
  EXPECT_EQ(g_script.completes, 1);
  EXPECT_TRUE(warm.served);
  EXPECT_EQ(warm.cubin, cold.cubin);
  EXPECT_EQ(warm.cubin, ";09_etupmoc=hcra-|edoctib eludom");
  EXPECT_EQ(host_->count(core::Counter::nvvm_hits), 1);
  EXPECT_EQ(host_->count(core::Counter::nvvm_misses), 1);
  EXPECT_EQ(host_->count(core::Counter::nvvm_miss_new), 1);
  EXPECT_EQ(host_->count(core::Counter::link_hits), 0) << "counted in another library's row";
  // Another option set is another compile; a library error not kept is counted in NVVM's row.
  nvvm_compile({"module bitcode"}, {"-arch=compute_80"});
  EXPECT_EQ(g_script.completes, 2);
  g_script.complete_rc = NVVM_ERROR_OUT_OF_MEMORY;
  nvvm_compile({"other"}, {"-arch=compute_90"});
  EXPECT_EQ(host_->count(core::Counter::nvvm_uncacheable_library_error), 1);
}

TEST_F(HandleLifecycle, AnEntryOfAnotherLibraryIsNeverServedUnderItsKey) {
  // The same inputs recorded as a link and as an NVVM compile are two keys (their schemas differ),
  // and an entry decoded under the other's key is refused by the library check.
  link({"same bytes"});
  nvvm_compile({"same bytes"}, {});
  EXPECT_EQ(g_script.completes, 2);
  EXPECT_EQ(host_->count(core::Counter::nvvm_hits), 0);
}

}  // namespace
}  // namespace nvrtc_cache::shim
