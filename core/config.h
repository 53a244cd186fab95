// Config: the shim's settings, read once from the environment.
// Contract: from_environment() is pure apart from reading the variables through the given lookup;
// a bad value never fails: it yields one message naming the variable and a safe default.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "store/cache_directory.h"

namespace nvrtc_cache::core {

enum class LogLevel { kOff = 0, kError, kWarn, kInfo, kDebug };

struct Config {
  bool disabled = false;
  std::string cache_dir;
  std::uint64_t max_size_bytes = 5ull << 30;
  LogLevel log_level = LogLevel::kWarn;
  std::string log_file;  // empty: stderr
  bool shared = false;   // NVRTC_CACHE_SHARED=1: accept a cache directory shared between users
  std::string fallback_dir;  // node-local directory used when cache_dir is on a network filesystem
  // NVRTC_CACHE_WAIT_TIMEOUT: how long a compile waits for another compile of the same program
  // (shim/single_flight.h); 0 turns waiting off; unset: the adaptive default.
  std::optional<std::chrono::milliseconds> wait_timeout;
  // NVRTC_CACHE_REMOTE: shared tiers after the local store, URLs separated by white space
  // (store/remote/tier_set.h); NVRTC_CACHE_REMOTE_SECRET_FILE: the key that signs their values.
  std::string remote;
  std::string remote_secret_file;
  std::vector<std::string> problems;  // one message per bad value, already naming the variable

  std::string store_dir() const { return cache_dir + "/store"; }
};


using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

Config config_from_environment(const EnvLookup& lookup);
Config config_from_process_environment();

// Where and how the store is opened (store/cache_directory.h), from the configuration.
store::CachePolicy cache_policy(const Config& config);

// "30", "0.5" -> that many seconds (0 to 86400); nullopt when malformed or out of range.
std::optional<std::chrono::milliseconds> parse_seconds(const std::string& text);

// "10G", "512M", "4096", "1.5GiB" -> bytes (binary units); nullopt when malformed or zero.
std::optional<std::uint64_t> parse_size(const std::string& text);

}  // namespace nvrtc_cache::core
