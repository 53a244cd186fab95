// hit_floor: the cost floor of a cache hit on one kernel of the corpus (bench/bench_kernels.h),
// measured with the bare primitives a hit cannot avoid:
//   hash  BLAKE2b-256 over the program's source, options and name expressions;
//   stat  one stat() of every dependency path (read from stdin, one per line; missing ones too);
//   copy  one copy of the outputs (OUTPUT_BYTES into a freshly allocated buffer).
// Prints the median nanoseconds of each over ITERATIONS rounds: "hash_ns stat_ns copy_ns".
// usage: hit_floor KERNEL OUTPUT_BYTES [ITERATIONS] < paths
#include <blake2.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench_kernels.h"

namespace {

using Clock = std::chrono::steady_clock;

long long median_ns(std::vector<long long> samples) {
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2), samples.end());
  return samples[samples.size() / 2];
}

template <typename F>
long long time_ns(F&& body) {
  const auto start = Clock::now();
  body();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: hit_floor KERNEL OUTPUT_BYTES [ITERATIONS] < paths\n");
    return 2;
  }
  const nvrtc_bench::Kernel k = nvrtc_bench::kernel_named(argv[1]);
  const std::size_t output_bytes = std::strtoull(argv[2], nullptr, 10);
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 200;
  if (k.source == nullptr || iterations <= 0) return 2;
  std::vector<std::string> paths;
  for (std::string line; std::getline(std::cin, line);) {
    if (!line.empty()) paths.push_back(line);
  }

  std::string inputs = k.source;
  for (const char* option : k.options) inputs.append(option).push_back('\0');
  for (const char* name : k.name_expressions) inputs.append(name).push_back('\0');
  const std::string outputs(output_bytes, 'o');

  std::vector<long long> hash, stats, copy;
  std::uint8_t digest[32];
  std::uint64_t sink = 0;
  for (int i = 0; i < iterations; ++i) {
    hash.push_back(time_ns([&] {
      blake2b(digest, inputs.data(), nullptr, sizeof digest, inputs.size(), 0);
      sink += digest[0];
    }));
    stats.push_back(time_ns([&] {
      struct stat st;
      for (const std::string& path : paths) sink += ::stat(path.c_str(), &st) == 0 ? st.st_size : 1;
    }));
    copy.push_back(time_ns([&] {
      std::string replayed(outputs);
      sink += static_cast<unsigned char>(replayed[replayed.size() / 2]);
    }));
  }
  std::printf("%lld %lld %lld\n", median_ns(hash), median_ns(stats), median_ns(copy));
  return sink == 42 ? 1 : 0;  // keeps `sink` (and the work behind it) observable
}
