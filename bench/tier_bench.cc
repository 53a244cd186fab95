// Shared-tier hit latency against a local hit: tier_bench [ENTRIES] [VALUE_BYTES] [TIER_DIR]
// A writer fills a file:// tier (through a TieredStore and its write-behind); then, on a "node" with
// an empty LMDB store, every key is read once (a shared hit: tier read, unseal, write-back to
// LMDB) and again (a local hit); the tier's read and unseal alone are timed too. Prints the median and mean per get, in milliseconds. TIER_DIR
// defaults to a fresh directory under $TMPDIR (pass a mounted NFS directory to measure one).
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "store/lmdb/lmdb_store.h"
#include "store/remote/sealed_value.h"
#include "store/remote/tiered_store.h"

namespace fs = std::filesystem;
using namespace nvrtc_cache;
using Clock = std::chrono::steady_clock;

namespace {

std::unique_ptr<store::remote::TieredStore> node(const std::string& local_dir, const std::string& tier_dir) {
  store::Status status;
  auto local = store::LmdbStore::open({local_dir, 1ull << 30}, &status);
  if (!local) {
    std::fprintf(stderr, "cannot open %s: %s\n", local_dir.c_str(), status.message().c_str());
    std::exit(1);
  }
  store::remote::TierSet set = store::remote::open_tiers("file://" + tier_dir + "?timeout=10000", "");
  for (const auto& p : set.problems) std::fprintf(stderr, "%s\n", p.c_str());
  return std::make_unique<store::remote::TieredStore>(std::move(local), std::move(set.tiers), std::nullopt,
                                                      [](std::string_view, std::string_view m) {
                                                        std::fprintf(stderr, "%.*s\n", int(m.size()), m.data());
                                                      });
}

void report(const char* what, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double v : ms) sum += v;
  std::printf("%-28s median %.3f ms  mean %.3f ms  p90 %.3f ms  (%zu gets)\n", what, ms[ms.size() / 2],
              sum / double(ms.size()), ms[ms.size() * 9 / 10], ms.size());
}

}  // namespace

int main(int argc, char** argv) {
  const int entries = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::size_t value_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64 * 1024;
  std::string scratch = (fs::temp_directory_path() / "tier-bench-XXXXXX").string();
  if (::mkdtemp(scratch.data()) == nullptr) return 1;
  const std::string tier_dir = argc > 3 ? argv[3] : scratch + "/tier";
  fs::create_directories(tier_dir);

  std::vector<std::string> keys;
  {
    auto writer = node(scratch + "/writer", tier_dir);
    for (int i = 0; i < entries; ++i) {
      keys.push_back("R" + std::to_string(i) + std::string(31, 'k'));
      std::string value(value_bytes, static_cast<char>('a' + i % 26));
      (void)writer->put(keys.back(), value);
    }
    if (!writer->flush(std::chrono::seconds(60))) std::fprintf(stderr, "the writes did not finish\n");
  }
  // The tier alone: read and unseal, no write-back.
  std::vector<double> tier_only;
  {
    store::remote::TierSet set = store::remote::open_tiers("file://" + tier_dir + "?timeout=10000", "");
    store::remote::Tier& tier = *set.tiers.at(0).tier;
    for (const auto& key : keys) {
      const auto t0 = Clock::now();
      const store::remote::TierResult r = tier.get(key, Clock::now() + std::chrono::seconds(10));
      const auto u = store::remote::unseal_value(key, r.value, nullptr);
      tier_only.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      if (u.code != store::remote::UnsealCode::kOk || u.payload.size() != value_bytes) return 2;
    }
  }
  auto reader = node(scratch + "/reader", tier_dir);
  std::vector<double> shared, local;
  for (const auto& key : keys) {
    const auto t0 = Clock::now();
    const auto v = reader->get(key);
    shared.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!v || v->size() != value_bytes) return 2;
  }
  for (const auto& key : keys) {
    const auto t0 = Clock::now();
    const auto v = reader->get(key);
    local.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!v || v->size() != value_bytes) return 2;
  }
  std::printf("%d entries of %zu bytes, tier %s\n", entries, value_bytes, tier_dir.c_str());
  report("tier read + unseal", tier_only);
  report("shared-tier hit (+write-back)", shared);
  report("local hit (LMDB)", local);
  fs::remove_all(scratch);
  return 0;
}
