// Shared-tier throughput and hit latency against a local hit:
//   tier_bench [ENTRIES] [VALUE_BYTES] [TIER]
// TIER is a tier URL (redis://…, redis+unix://…, file:///dir) or a directory (a file:// tier there);
// default: a fresh file:// directory under $TMPDIR (pass a mounted NFS directory to measure one).
// 1. Put throughput: ENTRIES sealed values written straight to the tier, by one writer and then by
//    16 writer threads at once (values/s and MB/s of payload).
// 2. A writer node fills the tier through a TieredStore and its write-behind (as the shim does).
// 3. On a "node" with an empty LMDB store every key is read once (a shared hit: tier read, unseal,
//    write-back to LMDB) and again (a local hit); the tier's read and unseal alone are timed too.
// 4. Read throughput: every key read (and unsealed) by 16 reader threads at once, from the tier
//    alone and from the node's local store (values/s).
// Prints medians, means and p90 per get in milliseconds.
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "store/lmdb/lmdb_store.h"
#include "store/remote/sealed_value.h"
#include "store/remote/shown_url.h"
#include "store/remote/tiered_store.h"

namespace fs = std::filesystem;
using namespace nvrtc_cache;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kDeadline = std::chrono::seconds(10);

std::string with_timeout(const std::string& url) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + "timeout=10000";
}

store::remote::TierSet tiers(const std::string& url) {
  store::remote::TierSet set = store::remote::open_tiers(with_timeout(url), "");
  for (const auto& p : set.problems) std::fprintf(stderr, "%s\n", p.c_str());
  if (set.tiers.empty()) {
    std::fprintf(stderr, "no tier at %s\n", store::remote::shown_url(url).c_str());
    std::exit(1);
  }
  return set;
}

std::unique_ptr<store::remote::TieredStore> node(const std::string& local_dir, const std::string& url) {
  store::Status status;
  auto local = store::LmdbStore::open({local_dir, 1ull << 30}, &status);
  if (!local) {
    std::fprintf(stderr, "cannot open %s: %s\n", local_dir.c_str(), status.message().c_str());
    std::exit(1);
  }
  return std::make_unique<store::remote::TieredStore>(
      std::move(local), std::move(tiers(url).tiers), std::nullopt,
      [](std::string_view, std::string_view m) { std::fprintf(stderr, "%.*s\n", int(m.size()), m.data()); });
}

void report(const char* what, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double v : ms) sum += v;
  std::printf("%-30s median %.3f ms  mean %.3f ms  p90 %.3f ms  (%zu gets)\n", what, ms[ms.size() / 2],
              sum / double(ms.size()), ms[ms.size() * 9 / 10], ms.size());
}

// Writes every value of `keys` straight to the tier from `writers` threads; returns false on a failure.
bool put_all(store::remote::Tier& tier, const std::vector<std::string>& keys, const std::vector<std::string>& sealed,
             int writers, std::size_t value_bytes) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < keys.size();) {
        if (!tier.put(keys[i], sealed[i], Clock::now() + kDeadline).ok()) failed = true;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("put, %2d writer%s %8.0f values/s  %8.1f MB/s  (%zu values in %.3f s)\n", writers,
              writers == 1 ? ": " : "s:", double(keys.size()) / seconds,
              double(keys.size() * value_bytes) / seconds / 1e6, keys.size(), seconds);
  return !failed;
}

// Reads every key `rounds` times from `readers` threads at once through `get` (true: the value was
// right); prints values/s.
template <typename Get>
bool get_all(const char* what, const std::vector<std::string>& keys, int readers, int rounds, Get&& get) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> failed{0};
  const std::size_t total = keys.size() * static_cast<std::size_t>(rounds);
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int r = 0; r < readers; ++r) {
    threads.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < total;) {
        if (!get(keys[i % keys.size()])) ++failed;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("%s, %2d readers: %8.0f values/s  (%zu gets in %.3f s, %zu failed)\n", what, readers,
              double(total) / seconds, total, seconds, failed.load());
  return failed == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int entries = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::size_t value_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64 * 1024;
  std::string scratch = (fs::temp_directory_path() / "tier-bench-XXXXXX").string();
  if (::mkdtemp(scratch.data()) == nullptr) return 1;
  std::string url = argc > 3 ? argv[3] : scratch + "/tier";
  if (url.find("://") == std::string::npos) {
    fs::create_directories(url);
    url = "file://" + url;
  }

  // 1. Raw put throughput (its own keys, so that the fill below starts from an empty tier).
  std::string shown;  // the tier as logs show it (no password)
  {
    store::remote::TierSet set = tiers(url);
    store::remote::Tier& tier = *set.tiers.at(0).tier;
    shown = tier.display_name();
    std::printf("%d entries of %zu bytes, tier %s\n", entries, value_bytes, shown.c_str());
    std::vector<std::string> keys, sealed;
    for (int i = 0; i < entries; ++i) {
      keys.push_back("P" + std::to_string(i) + std::string(31, 'p'));
      sealed.push_back(store::remote::seal_value(keys.back(), std::string(value_bytes, char('A' + i % 26)), nullptr));
    }
    if (!put_all(tier, keys, sealed, 1, value_bytes) || !put_all(tier, keys, sealed, 16, value_bytes)) {
      std::fprintf(stderr, "a put failed\n");
      return 2;
    }
  }
  // 2. A writer node fills the tier as the shim does.
  std::vector<std::string> keys;
  {
    auto writer = node(scratch + "/writer", url);
    for (int i = 0; i < entries; ++i) {
      keys.push_back("R" + std::to_string(i) + std::string(31, 'k'));
      std::string value(value_bytes, static_cast<char>('a' + i % 26));
      (void)writer->put(keys.back(), value);
    }
    if (!writer->flush(std::chrono::seconds(60))) std::fprintf(stderr, "the writes did not finish\n");
  }
  // 3. The tier alone (read and unseal, no write-back), then a fresh node: shared hits, local hits.
  std::vector<double> tier_only;
  {
    store::remote::TierSet set = tiers(url);
    store::remote::Tier& tier = *set.tiers.at(0).tier;
    for (const auto& key : keys) {
      const auto t0 = Clock::now();
      const store::remote::TierResult r = tier.get(key, Clock::now() + kDeadline);
      const auto u = store::remote::unseal_value(key, r.value, nullptr);
      tier_only.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      if (u.code != store::remote::UnsealCode::kOk || u.payload.size() != value_bytes) return 2;
    }
  }
  auto reader = node(scratch + "/reader", url);
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
  report("tier read + unseal", tier_only);
  report("shared-tier hit (+write-back)", shared);
  report("local hit (LMDB)", local);
  // 4. 16 readers at once: the tier alone (its connection pool), and the node's local store.
  {
    store::remote::TierSet set = tiers(url);
    store::remote::Tier& tier = *set.tiers.at(0).tier;
    // One get first: a cluster tier's slot map is filled by its first operation, and the others
    // that come while it is being filled fail at once (redis+cluster: one refresh at a time).
    (void)tier.get(keys.front(), Clock::now() + kDeadline);
    // At least 20 000 tier gets and 200 000 local ones: long enough runs (about a second each) to time.
    const int rounds = std::max(1, 20000 / std::max(1, entries));
    const bool tier_ok = get_all("tier get + unseal", keys, 16, rounds, [&](const std::string& key) {
      const store::remote::TierResult r = tier.get(key, Clock::now() + kDeadline);
      const auto u = store::remote::unseal_value(key, r.value, nullptr);
      const bool right = u.code == store::remote::UnsealCode::kOk && u.payload.size() == value_bytes;
      if (!right && !r.ok()) std::fprintf(stderr, "get failed: %s\n", r.detail.c_str());
      return right;
    });
    const bool local_ok = get_all("local get (LMDB)", keys, 16, rounds * 10, [&](const std::string& key) {
      const auto v = reader->get(key);
      return v && v->size() == value_bytes;
    });
    if (!tier_ok || !local_ok) return 3;
  }
  fs::remove_all(scratch);
  return 0;
}
