// store_scaling: how the LMDB store's get latency and disk use grow with its entry count. Fills one
// store (store::LmdbStore, put/get directly) with entries of realistic sizes, log-uniform between
// MIN_KIB and MAX_KIB (fixed seed), and at each COUNT (ascending) measures GETS random gets of
// present keys and of absent keys. Prints one line per COUNT:
//   count put_mean_us get_median_ns get_p99_ns miss_median_ns disk_bytes payload_bytes
// disk_bytes is the allocated size of the store's files (st_blocks), payload_bytes the store's own
// size_bytes(). The map size (the cap) is chosen so that nothing is evicted.
// usage: store_scaling DIR MIN_KIB MAX_KIB GETS COUNT...
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "store/lmdb/lmdb_store.h"

namespace {

using namespace nvrtc_cache;
using Clock = std::chrono::steady_clock;

// A 33-byte key shaped like the shim's (a tag byte, then 32 digest-like bytes), unique per index.
std::string key_for(std::uint64_t index, char tag = 'r') {
  std::string key(1, tag);
  std::uint64_t x = index + 0x9e3779b97f4a7c15ull;
  for (int word = 0; word < 4; ++word) {
    x += 0x9e3779b97f4a7c15ull;  // splitmix64
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    key.append(reinterpret_cast<const char*>(&z), sizeof z);
  }
  return key;
}

std::uint64_t allocated_bytes(const std::filesystem::path& dir) {
  std::uint64_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    struct stat st;
    if (::stat(entry.path().c_str(), &st) == 0) total += static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  return total;
}

long long percentile(std::vector<long long> samples, double p) {
  const auto at = static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1));
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(at), samples.end());
  return samples[at];
}

long long ns_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: store_scaling DIR MIN_KIB MAX_KIB GETS COUNT...\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const double min_bytes = std::atof(argv[2]) * 1024, max_bytes = std::atof(argv[3]) * 1024;
  const int gets = std::atoi(argv[4]);
  std::vector<std::uint64_t> counts;
  for (int i = 5; i < argc; ++i) counts.push_back(std::strtoull(argv[i], nullptr, 10));
  if (min_bytes < 1 || max_bytes < min_bytes || gets <= 0 || !std::is_sorted(counts.begin(), counts.end())) return 2;

  // Log-uniform mean, for the map size: (max - min) / ln(max / min).
  const double mean = max_bytes > min_bytes ? (max_bytes - min_bytes) / std::log(max_bytes / min_bytes) : min_bytes;
  const auto map_size =
      static_cast<std::uint64_t>(std::max(1.0 * (1ull << 30), 3.0 * mean * static_cast<double>(counts.back())));
  store::Status status;
  auto s = store::LmdbStore::open({dir.string(), map_size}, &status);
  if (!s) {
    std::fprintf(stderr, "store_scaling: %s\n", status.message().c_str());
    return 1;
  }

  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> log_size(std::log(min_bytes), std::log(max_bytes));
  std::string noise(static_cast<std::size_t>(max_bytes) + 8, '\0');
  for (char& c : noise) c = static_cast<char>(rng());

  std::uint64_t stored = 0;
  for (const std::uint64_t count : counts) {
    const auto fill_start = Clock::now();
    const std::uint64_t before = stored;
    for (; stored < count; ++stored) {
      const auto size = static_cast<std::size_t>(std::exp(log_size(rng)));
      std::string value = noise.substr(stored % 4096, size);
      std::memcpy(value.data(), &stored, std::min(sizeof stored, value.size()));
      if (!(status = s->put(key_for(stored), value))) {
        std::fprintf(stderr, "store_scaling: put %llu: %s\n", static_cast<unsigned long long>(stored),
                     status.message().c_str());
        return 1;
      }
    }
    const double put_mean_us =
        stored > before ? static_cast<double>(ns_since(fill_start)) / 1e3 / static_cast<double>(stored - before) : 0.0;

    std::uniform_int_distribution<std::uint64_t> pick(0, stored - 1);
    std::vector<long long> hit_ns, miss_ns;
    std::size_t sink = 0;
    for (int i = 0; i < gets; ++i) {
      const std::string key = key_for(pick(rng));
      auto start = Clock::now();
      const auto value = s->get(key);
      hit_ns.push_back(ns_since(start));
      if (!value) {
        std::fprintf(stderr, "store_scaling: a stored key was not found\n");
        return 1;
      }
      sink += value->size();
      const std::string absent = key_for(pick(rng), 'x');
      start = Clock::now();
      sink += s->get(absent).has_value();
      miss_ns.push_back(ns_since(start));
    }
    std::printf("%llu %.1f %lld %lld %lld %llu %llu\n", static_cast<unsigned long long>(stored), put_mean_us,
                percentile(hit_ns, 0.5), percentile(hit_ns, 0.99), percentile(miss_ns, 0.5),
                static_cast<unsigned long long>(allocated_bytes(dir)),
                static_cast<unsigned long long>(s->size_bytes()));
    std::fflush(stdout);
    if (sink == 1) std::fputc('\n', stderr);  // keeps the reads observable
  }
  s->close();
  return 0;
}
