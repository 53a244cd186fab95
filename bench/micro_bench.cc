// Micro-benchmarks (Google Benchmark) of the pieces on the cache-hit path: keying, entry decoding,
// store lookups (memory and LMDB), and the statistics a hit counts.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/compile_entry.h"
#include "core/stats.h"
#include "keying/cache_key.h"
#include "store/counter_file.h"
#include "store/lmdb/lmdb_store.h"
#include "store/memory_store.h"

namespace {

using namespace nvrtc_cache;

keying::ProgramInputs inputs_with_source(std::size_t bytes) {
  keying::ProgramInputs in;
  in.library = {13, 0, std::string(20, 'b')};
  in.name = "bench.cu";
  in.source = std::string(bytes, 'x');
  in.options = {"-arch=sm_80", "-std=c++17", "-default-device"};
  in.working_directory = "/home/user/project";
  return in;
}

core::CompileEntry entry_with_cubin(std::size_t bytes) {
  core::CompileEntry e;
  e.log = {0, true, 1, 0, std::string(1, '\0')};
  e.cubin = {0, true, bytes, 0, std::string(bytes, 'c')};
  e.ptx = {0, true, 1, 0, std::string(1, '\0')};
  return e;
}

void BM_ComputeKey(benchmark::State& state) {
  const auto in = inputs_with_source(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(keying::compute_key(in));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ComputeKey)->Arg(1 << 10)->Arg(64 << 10)->Arg(1 << 20);

void BM_DecodeEntry(benchmark::State& state) {
  const std::string bytes = core::encode_entry(entry_with_cubin(static_cast<std::size_t>(state.range(0))));
  for (auto _ : state) benchmark::DoNotOptimize(core::decode_entry(bytes));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_DecodeEntry)->Arg(8 << 10)->Arg(256 << 10)->Arg(4 << 20);

void BM_MemoryStoreGet(benchmark::State& state) {
  store::MemoryStore s(1ull << 30);
  const std::string value(static_cast<std::size_t>(state.range(0)), 'v');
  (void)s.put("key", value);
  for (auto _ : state) benchmark::DoNotOptimize(s.get("key"));
}
BENCHMARK(BM_MemoryStoreGet)->Arg(8 << 10)->Arg(256 << 10);

void BM_LmdbStoreGet(benchmark::State& state) {
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
    const std::string value(static_cast<std::size_t>(state.range(0)), 'v');
    (void)s->put("key", value);
    for (auto _ : state) benchmark::DoNotOptimize(s->get("key"));
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_LmdbStoreGet)->Arg(8 << 10)->Arg(256 << 10);

}  // namespace

// A counters file in a fresh temporary directory, removed with it.
class BenchCountersFile {
 public:
  explicit BenchCountersFile(const std::string& name)
      : dir_(std::filesystem::temp_directory_path().string() + "/" + name) {
    std::filesystem::create_directories(dir_);
    file_ = store::CounterFile::open(dir_, true, false, &problem_);
  }
  ~BenchCountersFile() {
    file_.reset();
    std::filesystem::remove_all(dir_);
  }
  store::CounterFile* get() const { return file_.get(); }
  const std::string& problem() const { return problem_; }

 private:
  std::string dir_, problem_;
  std::unique_ptr<store::CounterFile> file_;
};

// What a hit adds to the statistics: the six counters an NVRTC hit counts (count_hit in
// shim/lifecycle/through_cache.h, and the replay time), into the mapped counters file (shared by every
// process, kept whatever the exit) and, for comparison, into the process's
// own deltas (what the statistics cost before the file).
void BM_HitCountersInTheFile(benchmark::State& state) {
  const BenchCountersFile file("micro-bench-counters");
  if (file.get() == nullptr) {
    state.SkipWithError(file.problem().c_str());
    return;
  }
  core::StatsDeltas stats;
  if (state.range(0) != 0) stats.attach([](void* f) { return static_cast<store::CounterFile*>(f); }, file.get());
  for (auto _ : state) {
    stats.add(core::Counter::hits);
    stats.add(core::Counter::hit_keying_ns, 1000);
    stats.add(core::Counter::hit_lookup_ns, 1000);
    stats.add(core::Counter::hit_validate_ns, 1000);
    stats.add(core::Counter::hit_replay_ns, 1000);
    stats.add(core::Counter::saved_ns, 1000);
  }
}
BENCHMARK(BM_HitCountersInTheFile)->Arg(0)->Arg(1);

// The same six counts as bare atomic adds to the mapped cells (no generation check, no check that
// counting stopped after a fault: store/counter_file.h), for the ratio beside
// BM_HitCountersInTheFile/1.
void BM_HitCountersUnguarded(benchmark::State& state) {
  const BenchCountersFile file("micro-bench-counters-raw");
  if (file.get() == nullptr) {
    state.SkipWithError(file.problem().c_str());
    return;
  }
  std::atomic<std::int64_t>* cells[6] = {};
  int n = 0;
  for (const char* name : {"hits", "hit_keying_ns", "hit_lookup_ns", "hit_validate_ns", "hit_replay_ns", "saved_ns"}) {
    cells[n++] = file.get()->cell(name);
  }
  for (auto _ : state) {
    cells[0]->fetch_add(1, std::memory_order_relaxed);
    for (int i = 1; i < 6; ++i) cells[i]->fetch_add(1000, std::memory_order_relaxed);
  }
}
BENCHMARK(BM_HitCountersUnguarded);

BENCHMARK_MAIN();
