#include "tests/support/harness.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "store/lmdb/lmdb_store.h"

namespace nvrtc_cache::testing {

EnvVars node_env(const std::string& cache_dir, const std::string& remote, const std::string& secret_file) {
  EnvVars env = shim_env(cache_dir);
  env["NVRTC_CACHE_REMOTE"] = remote;
  if (!secret_file.empty()) env["NVRTC_CACHE_REMOTE_SECRET_FILE"] = secret_file;
  return env;
}

ProcessResult* DirectRunSuite::direct_ = nullptr;

void DirectRunSuite::SetUpTestSuite() { direct_ = new ProcessResult(probe(kTierScenarios, {})); }

void DirectRunSuite::TearDownTestSuite() {
  delete direct_;
  direct_ = nullptr;
}

void DirectRunSuite::SetUp() {
  ASSERT_EQ(direct_->exit_code, 0) << direct_->err;
  ASSERT_NE(direct_->out.find("compile rc=0"), std::string::npos);
}

ProcessResult probe(const std::vector<std::string>& scenarios, EnvVars env, const std::string& cwd) {
  std::vector<std::string> argv = {NVRTC_PROBE_PATH};
  argv.insert(argv.end(), scenarios.begin(), scenarios.end());
  env.try_emplace("PROBE_INCLUDE_DIR", kIncludeDir);
  return run_process(argv, env, cwd);
}

namespace {

std::string round_list(const std::vector<int>& rounds) {
  std::string list;
  for (int n : rounds) list += (list.empty() ? "" : " ") + std::to_string(n);
  return list;
}

void touch(const std::string& path) {
  if (FILE* f = std::fopen(path.c_str(), "w")) std::fclose(f);
}

}  // namespace

PacedProbe::PacedProbe(const std::vector<int>& rounds, EnvVars env) : rounds_(rounds) {
  env["PROBE_ROUNDS_DIR"] = dir_.path();
  env["PROBE_ROUNDS"] = round_list(rounds);
  process_ = std::thread([this, env] { result_ = probe({"rounds"}, env); });
}

PacedProbe::~PacedProbe() { finish(); }

std::chrono::milliseconds PacedProbe::round(int n) {
  const auto start = std::chrono::steady_clock::now();
  touch(dir_.path() + "/go." + std::to_string(n));
  const std::string done = dir_.path() + "/done." + std::to_string(n);
  while (access(done.c_str(), F_OK) != 0 && std::chrono::steady_clock::now() - start < std::chrono::minutes(1)) {
    usleep(1000);
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
}

ProcessResult PacedProbe::finish() {
  for (int n : rounds_) touch(dir_.path() + "/go." + std::to_string(n));
  if (process_.joinable()) process_.join();
  return result_;
}

ProcessResult PacedProbe::reference(const std::vector<int>& rounds) {
  TempDir dir;
  for (int n : rounds) touch(dir.path() + "/go." + std::to_string(n));
  return probe({"rounds"}, {{"PROBE_ROUNDS_DIR", dir.path()}, {"PROBE_ROUNDS", round_list(rounds)}});
}

EnvVars shim_env(const std::string& cache_dir) {
  return {{"LD_PRELOAD", NVRTC_CACHE_SHIM_PATH}, {"NVRTC_CACHE_DIR", cache_dir}};
}

store::Counters counters_of(const std::string& cache_dir) {
  store::Status status;
  auto s = store::LmdbStore::open({cache_dir + "/store", 64ull << 20}, &status);
  if (!s) return {};
  return s->counters();
}

bool pypi_required() {
  const char* value = std::getenv("NVRTC_CACHE_REQUIRE_PYPI");
  return value != nullptr && std::string_view(value) == "1";
}

std::int64_t get(const store::Counters& counters, const std::string& name) {
  auto it = counters.find(name);
  return it == counters.end() ? 0 : it->second;
}

}  // namespace nvrtc_cache::testing
