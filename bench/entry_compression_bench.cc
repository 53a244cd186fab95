// Compressed entries (core/entry_compression.h) on real NVRTC outputs: compiles the CUB kernel of
// bench_kernels.h once to CUBIN and once to PTX, then for each zstd level measures the stored size
// (counter `ratio`: uncompressed / stored) and the part of a hit compression touches: the LMDB get
// and decode_entry (which expands a compressed entry) of that entry. Level 0 is the uncompressed entry.
#include <benchmark/benchmark.h>
#include <nvrtc.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "bench/bench_kernels.h"
#include "core/compile_entry.h"
#include "core/entry_compression.h"
#include "store/lmdb/lmdb_store.h"

namespace {

using namespace nvrtc_cache;

// The CUB kernel's entry as the shim stores it: `ptx` selects PTX (compute_80) over CUBIN (sm_80).
const core::CompileEntry* cub_entry(bool ptx) {
  static core::CompileEntry entries[2];
  static bool compiled[2] = {false, false};
  core::CompileEntry& e = entries[ptx];
  if (compiled[ptx]) return &e;
  const nvrtc_bench::Kernel k = nvrtc_bench::kernel_named("cub");
  std::vector<const char*> options = k.options;
  options[0] = ptx ? "-arch=compute_80" : "-arch=sm_80";
  nvrtcProgram p = nullptr;
  if (nvrtcCreateProgram(&p, k.source, "cub.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return nullptr;
  const nvrtcResult rc = nvrtcCompileProgram(p, static_cast<int>(options.size()), options.data());
  auto read = [&](nvrtcResult (*size_of)(nvrtcProgram, size_t*), nvrtcResult (*data_of)(nvrtcProgram, char*)) {
    core::RecordedOutput o;
    size_t size = 0;
    o.size_rc = size_of(p, &size);
    o.size_written = true;
    o.size = size;
    o.bytes.assign(size, '\0');
    o.data_rc = data_of(p, o.bytes.data());
    if (o.data_rc != NVRTC_SUCCESS) o.bytes.clear(), o.size = 0;
    return o;
  };
  e.compile_rc = rc;
  e.log = read(nvrtcGetProgramLogSize, nvrtcGetProgramLog);
  e.ptx = read(nvrtcGetPTXSize, nvrtcGetPTX);
  e.cubin = read(nvrtcGetCUBINSize, nvrtcGetCUBIN);
  e.ltoir = {0, true, 0, 6, ""};
  e.optixir = {0, true, 0, 6, ""};
  e.unknown_name = {"", NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION, true, true, ""};
  nvrtcDestroyProgram(&p);
  compiled[ptx] = rc == NVRTC_SUCCESS && core::is_well_formed(e);
  return compiled[ptx] ? &e : nullptr;
}

// range(0): 0 CUBIN, 1 PTX; range(1): the zstd level (0: uncompressed).
void BM_HitOfCubEntry(benchmark::State& state) {
  const core::CompileEntry* entry = cub_entry(state.range(0) != 0);
  if (entry == nullptr) {
    state.SkipWithError("the CUB kernel did not compile");
    return;
  }
  const std::string plain = core::encode_entry(*entry);
  const std::string stored = core::compress_entry(plain, static_cast<int>(state.range(1)));
  std::string dir = (std::filesystem::temp_directory_path() / "nvrtc-cache-bench-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  {
    store::Status status;
    auto s = store::LmdbStore::open({dir, 256ull << 20}, &status);
    if (!s) {
      state.SkipWithError(status.message().c_str());
      return;
    }
    (void)s->put("key", stored);
    for (auto _ : state) {
      std::optional<std::string> bytes = s->get("key");
      benchmark::DoNotOptimize(core::decode_entry(*bytes));
    }
  }
  std::filesystem::remove_all(dir);
  state.counters["entry_bytes"] = static_cast<double>(plain.size());
  state.counters["stored_bytes"] = static_cast<double>(stored.size());
  state.counters["ratio"] = static_cast<double>(plain.size()) / static_cast<double>(stored.size());
}
BENCHMARK(BM_HitOfCubEntry)->ArgsProduct({{0, 1}, {0, 1, 3, 9, 19}})->Unit(benchmark::kMicrosecond);

// The writer's side: compressing the entry at each level, once per stored result.
void BM_CompressCubEntry(benchmark::State& state) {
  const core::CompileEntry* entry = cub_entry(state.range(0) != 0);
  if (entry == nullptr) {
    state.SkipWithError("the CUB kernel did not compile");
    return;
  }
  const std::string plain = core::encode_entry(*entry);
  for (auto _ : state) benchmark::DoNotOptimize(core::compress_entry(plain, static_cast<int>(state.range(1))));
}
BENCHMARK(BM_CompressCubEntry)->ArgsProduct({{0, 1}, {1, 3, 9, 19}})->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
