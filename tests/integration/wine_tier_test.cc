// Shared tiers, single-flight and compile records of the Windows proxy under Wine: two Wine "nodes"
// (separate cache directories) share a real redis-server on loopback (signed values) or a file://
// directory and one serves the other's results exactly; a Redis tier that is down fails open at once;
// one process waits for another's compile; a holder killed holding its claim is taken over; compile
// records are written.
#include "tests/integration/wine_fixture.h"

namespace nvrtc_cache::testing {
namespace {

// Two nodes sharing the tier `remote`: node A, cold, compiles for real (and writes the tier before
// each compile returns); node B, with an empty cache of its own, is served from the tier: as many
// hits as A had misses, each a tier hit, no miss (no real compile), and both outputs byte-identical
// to the direct run.
class WineSharedTier : public Wine {
 protected:
  const std::vector<std::string> kScenarios = {"template", "headers", "cubin"};

  EnvVars node_env(const TempDir& cache, const std::string& remote) {
    EnvVars env = cache_env();
    env["NVRTC_CACHE_DIR"] = windows_path(cache.path());
    env["NVRTC_CACHE_REMOTE"] = remote;
    return env;
  }

  nlohmann::json node_stats(const EnvVars& env) {
    ProcessResult r = run({prefix_ + "/bin/nvrtc-cache.exe", "stats", "--json"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  static std::int64_t tier_counter(const nlohmann::json& stats, const std::string& name) {
    return stats["counters"].value("tier.0." + name, std::int64_t{0});
  }

  // Returns node A's stderr.
  std::string expect_served_across_nodes(const std::string& remote, EnvVars extra = {}) {
    const std::string direct = client(direct_client("nvrtc_client_loadlibrary"), kScenarios).out;
    const std::string exe = client_beside_dll("nvrtc_client_loadlibrary");
    const TempDir node_a, node_b;
    EnvVars env_a = node_env(node_a, remote), env_b = node_env(node_b, remote);
    for (auto& [name, value] : extra) env_a[name] = env_b[name] = value;

    const ProcessResult a = client(exe, kScenarios, env_a);
    EXPECT_TRUE(a.out == direct) << "node A differs from the direct run";
    const nlohmann::json stats_a = node_stats(env_a);
    const std::int64_t compiles = stats_a.value("misses", std::int64_t{0});
    if (compiles <= 0) {
      ADD_FAILURE() << "node A compiled nothing for real: " << stats_a.dump();
      return a.err;
    }
    EXPECT_EQ(stats_a.value("hits", 0), 0) << stats_a.dump();
    EXPECT_GE(tier_counter(stats_a, "writes"), compiles) << stats_a.dump();
    EXPECT_EQ(tier_counter(stats_a, "errors"), 0) << a.err;

    const ProcessResult b = client(exe, kScenarios, env_b);
    EXPECT_TRUE(b.out == direct) << "node B differs from the direct run";
    const nlohmann::json stats_b = node_stats(env_b);
    EXPECT_EQ(stats_b.value("misses", -1), 0) << "node B compiled for real: " << stats_b.dump();
    EXPECT_EQ(stats_b.value("hits", 0), compiles) << stats_b.dump();
    EXPECT_GE(tier_counter(stats_b, "hits"), compiles) << "not served by the tier: " << stats_b.dump();
    EXPECT_EQ(b.err.find("shared tier"), std::string::npos) << b.err;
    return a.err;
  }
};

TEST_F(WineSharedTier, RedisServesTheOtherNodeExactly) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  // Signed values, as on Linux: both nodes hold the secret.
  const TempDir secret_dir;
  std::ofstream(secret_dir.path() + "/secret") << "f3a9c1d27e5b8046a1c3e5f7092b4d6e";
  expect_served_across_nodes(redis.url(0),
                             {{"NVRTC_CACHE_REMOTE_SECRET_FILE", windows_path(secret_dir.path() + "/secret")}});
  const store::remote::redis::Reply keys = redis.command({"DBSIZE"});
  EXPECT_GT(keys.integer, 0) << "nothing reached the server";
}

TEST_F(WineSharedTier, FileDirectoryServesTheOtherNodeExactly) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const TempDir shared;
  std::string url = "file:///" + windows_path(shared.path());
  for (char& c : url) c = c == '\\' ? '/' : c;
  // The Windows build has no TLS and no HTTP tier: those URLs are refused, each with one line, and
  // the file:// tier after them is used.
  const std::string log = expect_served_across_nodes("rediss://127.0.0.1:1/0 https://cache.invalid/x " + url);
  EXPECT_NE(log.find("rediss://127.0.0.1:1?db=0: TLS (rediss://) is not available in this build; not used"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("https://cache.invalid/x: HTTP tiers are not available in this build; not used"),
            std::string::npos)
      << log;
  std::size_t entries = 0;
  for (const auto& e : fs::recursive_directory_iterator(shared.path())) entries += e.is_regular_file() ? 1 : 0;
  EXPECT_GT(entries, 0u) << "nothing was written to the directory";
}

// A Redis tier with nothing listening: every result exact, one line about the tier on stderr (never
// stdout), and no more than a moment's delay against the same node without a tier.
TEST_F(WineSharedTier, RedisDownFailsOpenAtOnce) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  std::string url;
  {
    RedisServer redis;
    ASSERT_TRUE(redis.ok());
    url = redis.url(0);
  }  // stopped: its port refuses connections
  const std::string direct = client(direct_client("nvrtc_client_loadlibrary"), kScenarios).out;
  const std::string exe = client_beside_dll("nvrtc_client_loadlibrary");
  const TempDir without_tier, with_tier;
  const auto timed = [&](const EnvVars& env, ProcessResult* r) {
    const auto start = std::chrono::steady_clock::now();
    *r = client(exe, kScenarios, env);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  ProcessResult local, down;
  const double local_s = timed(node_env(without_tier, ""), &local);
  const double down_s = timed(node_env(with_tier, url), &down);
  EXPECT_TRUE(local.out == direct);
  EXPECT_TRUE(down.out == direct) << "a tier that is down changed a result";
  EXPECT_LT(down_s, local_s + 1.0) << "the tier that is down held the compiles up";
  std::size_t lines = 0;
  for (std::size_t at = down.err.find("shared tier"); at != std::string::npos;
       at = down.err.find("shared tier", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << down.err;
  EXPECT_NE(down.err.find("Connection refused"), std::string::npos) << down.err;
  const nlohmann::json stats = node_stats(node_env(with_tier, url));
  EXPECT_GT(stats.value("misses", 0), 0) << stats.dump();
  EXPECT_GE(tier_counter(stats, "errors"), 1) << stats.dump();
  EXPECT_EQ(tier_counter(stats, "hits"), 0) << stats.dump();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Polls (every 20 ms, at most `seconds`) until `done()`.
template <typename Done>
bool within(int seconds, Done done) {
  for (int polls = 0; polls < seconds * 50; ++polls) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// Two processes compiling one cold program at once: a holder that took the claim is held inside its
// compile (its own watcher thread suspends it: first_hit_client's hold: or die:) until a second
// process, started only then, says in its debug log that it waits for that compile; then the holder
// is resumed (hold) or ends without releasing its claim (die: TerminateProcess).
struct Overlap {
  bool holder_held = false;    // the holder had the claim and was inside its compile
  bool waiter_waited = false;  // the waiter was seen waiting for it
  ProcessResult holder, waiter;
  std::string waiter_log, holder_log;
  double go_to_waiter_exit_s = 0;  // from the holder's resumption (or end) to the waiter's exit
};

class WineSingleFlight : public Wine {
 protected:
  Overlap overlap(const std::string& holder_step, const std::string& program) {
    const std::string exe = client_beside_dll("first_hit_client");
    const std::string control = marks_.path() + "/control";
    const std::string log = marks_.path() + "/waiter.log";
    std::ofstream(control).close();
    Overlap o;
    std::atomic<bool> holder_ended{false};  // a holder that ended can no longer hold: stop waiting for it
    std::thread holder([&] {
      EnvVars env = cache_env();
      env["NVRTC_CACHE_LOG"] = "debug";
      env["NVRTC_CACHE_LOG_FILE"] = windows_path(marks_.path() + "/holder.log");
      o.holder = run({exe, "claims:" + windows_path(cache_.path() + "/claims"),
                      holder_step + ":" + windows_path(control), program},
                     env);
      holder_ended = true;
    });
    within(120, [&] { return fs::file_size(control) >= 1 || holder_ended; });
    o.holder_held = fs::file_size(control) >= 1;
    std::thread waiter;
    if (o.holder_held) {
      EnvVars env = cache_env();
      env["NVRTC_CACHE_LOG"] = "debug";
      env["NVRTC_CACHE_LOG_FILE"] = windows_path(log);
      waiter = std::thread([&, env] { o.waiter = run({exe, program}, env); });
      o.waiter_waited =
          within(120, [&] { return file_text(log).find("waiting for another compile of") != std::string::npos; });
    }
    const auto go = std::chrono::steady_clock::now();
    std::ofstream(control, std::ios::app) << (o.holder_held ? "g" : "gg");
    if (waiter.joinable()) waiter.join();
    o.go_to_waiter_exit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - go).count();
    holder.join();
    o.waiter_log = file_text(log);
    o.holder_log = file_text(marks_.path() + "/holder.log");
    return o;
  }

  std::size_t claim_files() const {
    std::size_t n = 0;
    if (fs::exists(cache_.path() + "/claims")) {
      for ([[maybe_unused]] const auto& entry : fs::directory_iterator(cache_.path() + "/claims")) ++n;
    }
    return n;
  }

  TempDir marks_;
};

// Single-flight between processes (shim/flight/single_flight.h; claim files locked with LockFileEx): the
// second process waits for the first one's compile and is served its result: one real compile, both
// results byte-identical to the real NVRTC's, no claim file left.
TEST_F(WineSingleFlight, TwoColdProcessesCompileOnce) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string direct = results_of(client(direct_client("first_hit_client"), {"fill:7"}).out)["fill:7"];
  ASSERT_FALSE(direct.empty());
  const Overlap o = overlap("hold", "fill:7");
  ASSERT_TRUE(o.holder_held) << "the first process never held a claim inside its compile (exit " << o.holder.exit_code
                             << "): " << o.holder.out << o.holder.err << o.holder_log;
  ASSERT_TRUE(o.waiter_waited) << "the second process did not wait for it: " << o.waiter_log << o.waiter.err;
  EXPECT_EQ(o.holder.exit_code, 0) << o.holder.err;
  EXPECT_EQ(o.waiter.exit_code, 0) << o.waiter.err;
  EXPECT_EQ(results_of(o.holder.out)["fill:7"], direct);
  EXPECT_EQ(results_of(o.waiter.out)["fill:7"], direct);
  EXPECT_NE(o.waiter_log.find(": served from the cache"), std::string::npos) << o.waiter_log;
  const nlohmann::json j = stats();
  EXPECT_EQ(j.value("misses", 0), 1) << "not compiled exactly once: " << j.dump();
  EXPECT_EQ(j.value("hits", 0), 1) << j.dump();
  EXPECT_EQ(j.value("waited", 0), 1) << j.dump();
  EXPECT_EQ(claim_files(), 0u) << "the holder's claim file was left behind";
}

// A holder that ends while it holds its claim (TerminateProcess: nothing released) does not keep its
// waiter waiting: the lock goes with the process, and the waiter takes the claim over at once,
// compiles (exactly) and stores, removing the claim file.
TEST_F(WineSingleFlight, KilledHolderIsTakenOver) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string direct = results_of(client(direct_client("first_hit_client"), {"fill:8"}).out)["fill:8"];
  ASSERT_FALSE(direct.empty());
  const Overlap o = overlap("die", "fill:8");
  ASSERT_TRUE(o.holder_held) << "the first process never held a claim inside its compile (exit " << o.holder.exit_code
                             << "): " << o.holder.out << o.holder.err << o.holder_log;
  ASSERT_TRUE(o.waiter_waited) << "the second process did not wait for it: " << o.waiter_log << o.waiter.err;
  EXPECT_EQ(o.holder.exit_code, 9) << "the holder was not ended holding its claim: " << o.holder.out;
  EXPECT_EQ(results_of(o.holder.out).count("fill:8"), 0u) << o.holder.out;
  EXPECT_EQ(o.waiter.exit_code, 0) << o.waiter.err;
  EXPECT_EQ(results_of(o.waiter.out)["fill:8"], direct);
  EXPECT_NE(o.waiter_log.find(": its holder is gone; compiling here"), std::string::npos) << o.waiter_log;
  std::printf("waiter done %.2f s after its holder was ended\n", o.go_to_waiter_exit_s);
  EXPECT_LT(o.go_to_waiter_exit_s, 20.0) << "the waiter was held up by its dead holder";
  const nlohmann::json j = stats();
  EXPECT_EQ(j.value("misses", 0), 1) << j.dump();
  EXPECT_EQ(j.value("waited", 0), 1) << j.dump();
  EXPECT_EQ(claim_files(), 0u) << "the claim file the waiter took over was left behind";
}

// Compile records on Windows (NVRTC_CACHE_RECORD, shim/record_writer.h): a cold and a warm process
// each append one record, read back by the Linux reader (core/compile_record.h) undamaged, naming the
// real DLL and the program's inputs as the client gave them, the same program both times.
TEST_F(Wine, CompileRecordsAreWritten) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string exe = client_beside_dll("first_hit_client");
  const std::string record = cache_.path() + "/compiles.rec";
  EnvVars env = cache_env();
  env["NVRTC_CACHE_RECORD"] = windows_path(record);
  const std::string cold = client(exe, {}, env).out;
  const std::string warm = client(exe, {}, env).out;
  EXPECT_EQ(results_of(warm)["kernel"], results_of(cold)["kernel"]);
  const nlohmann::json j = stats();
  ASSERT_EQ(j.value("misses", 0), 1) << j.dump();
  ASSERT_EQ(j.value("hits", 0), 1) << j.dump();
  const core::RecordScan scan = core::scan_records(file_text(record));
  EXPECT_TRUE(scan.damage.empty()) << scan.damage.front().what;
  ASSERT_EQ(scan.records.size(), 2u) << "one record per compile, hit or miss";
  for (const core::CompileRecord& r : scan.records) {
    EXPECT_EQ(r.library_path, windows_path(nvrtc_dir_ + "/nvrtc64_130_0.dll")) << "not the real DLL";
    EXPECT_EQ(r.inputs.library.major, 13);
    EXPECT_FALSE(r.inputs.library.build_id.empty());
    EXPECT_EQ(r.inputs.name, std::optional<std::string>("scale.cu"));
    EXPECT_NE(r.inputs.source.find("__global__ void scale(T* data)"), std::string::npos);
    EXPECT_EQ(r.inputs.options, (std::vector<std::string>{"-arch=compute_80", "-std=c++17"}));
    EXPECT_EQ(r.inputs.name_expressions, std::vector<std::string>{"scale<float, 2>"});
  }
  EXPECT_EQ(core::program_identity(scan.records[0]), core::program_identity(scan.records[1]));
}
}  // namespace
}  // namespace nvrtc_cache::testing
