// nvJitLink through the shim (libraries/nvjitlink/): the JIT pipeline client (tests/clients/link_client.cc)
// run directly, then under the shim cold, then warm, each in its own process with the real NVRTC
// and the real nvJitLink; every return code, size, output byte and log must be identical, the warm
// run served (link hits, no link misses), for both ways of loading nvJitLink (linked, whose calls
// go through the release-suffixed names, and dlopen by soname + dlsym), under the preloaded shim and
// through the proxy's stand-in libnvJitLink.so.13 (`nvrtc-cache run --proxy`).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <set>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/entry_compression.h"
#include "store/lmdb/lmdb_store.h"
#include "tests/support/dynamic_section.h"
#include "tests/support/cold_and_warm.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {
namespace {

namespace fs = std::filesystem;

using Runs = ColdAndWarm;

// `client` with `scenarios` as its arguments.
std::vector<std::string> argv_of(const std::string& client, const std::vector<std::string>& scenarios) {
  std::vector<std::string> argv = {client};
  argv.insert(argv.end(), scenarios.begin(), scenarios.end());
  return argv;
}

// The warm run linked nothing for real: `links` link hits, no new link miss.
void expect_served(const Runs& r, std::int64_t links) {
  EXPECT_EQ(get(r.after_cold, "link_hits"), 0);
  EXPECT_EQ(get(r.after_cold, "link_misses"), links);
  EXPECT_EQ(get(r.after_warm, "link_hits"), links);
  EXPECT_EQ(get(r.after_warm, "link_misses"), links);
}

// The payloads of the entries whose keys start with `prefix` in `cache`'s store.
std::vector<std::string> payloads_of(const std::string& cache, char prefix) {
  store::Status status;
  auto opened = store::LmdbStore::open({cache + "/store", 64ull << 20}, &status);
  std::vector<std::string> out;
  if (!opened) return out;
  (void)opened->for_each([&](std::string_view key, std::optional<std::string_view> payload) {
    if (key.starts_with(prefix) && payload) out.emplace_back(*payload);
  });
  return out;
}

// The two ways of loading nvJitLink.
const std::vector<std::string> kClients = {LINK_CLIENT_PATH, LINK_CLIENT_UNLINKED_PATH};

TEST(NvJitLink, TheClientsLoadNvJitLinkAsTheirNamesSay) {
  EXPECT_TRUE(needs_library(LINK_CLIENT_PATH, "libnvJitLink.so.13"));
  EXPECT_FALSE(needs_library(LINK_CLIENT_UNLINKED_PATH, "libnvJitLink"));
  EXPECT_TRUE(needs_library(LINK_CLIENT_NVJITLINK12_PATH, "libnvJitLink.so.12"));
  EXPECT_FALSE(needs_library(LINK_CLIENT_NVJITLINK12_PATH, "libnvrtc"));  // NVRTC 12.9 by path
}

// LTO-IR from NVRTC linked with -lto into a CUBIN, and into PTX (-ptx); PTX linked without LTO.
TEST(NvJitLink, LinksAreServedByteForByteColdAndWarm) {
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const Runs r = cold_and_warm(argv_of(client, {"lto", "lto_ptx", "ptx"}), cache.path());
    ASSERT_NE(r.direct.out.find("lto\n  create=0"), std::string::npos) << r.direct.out;
    ASSERT_NE(r.direct.out.find("cubin size_rc=0 size="), std::string::npos) << r.direct.out;
    expect_identical(r);
    expect_served(r, 3);
  }
}

// Link entries are stored compressed by default (the `compression` setting, as NVRTC's), stored plain
// with compression 0, and either kind is served byte for byte.
TEST(NvJitLink, LinkEntriesAreStoredCompressedAsTheSettingSays) {
  for (const char* level : {"1", "0"}) {
    SCOPED_TRACE(std::string("compression ") + level);
    TempDir cache;
    const Runs r =
        cold_and_warm(argv_of(LINK_CLIENT_PATH, {"lto"}), cache.path(), {{"NVRTC_CACHE_COMPRESSION", level}});
    expect_identical(r);
    expect_served(r, 1);
    const std::vector<std::string> entries = payloads_of(cache.path(), 'L');
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(core::is_compressed_entry(entries[0]), std::string(level) == "1");
  }
}

// The hex digits the client printed for `what`'s first `size` bytes ("  cubin bytes=...").
std::string printed_hex(const std::string& out, const std::string& what, std::size_t size) {
  const std::string marker = "  " + what + " bytes=";
  const std::size_t at = out.find(marker);
  return at == std::string::npos ? "" : out.substr(at + marker.size(), 2 * size);
}

std::size_t printed_size(const std::string& out, const std::string& what) {
  const std::string marker = "  " + what + " size_rc=0 size=";
  const std::size_t at = out.find(marker);
  return at == std::string::npos ? 0 : std::stoul(out.substr(at + marker.size()));
}

std::string hex_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream hex;
  for (char c; in.get(c);) hex << "0123456789abcdef"[static_cast<unsigned char>(c) >> 4] << "0123456789abcdef"[c & 15];
  return hex.str();
}

// `ls`, `inspect`, `extract` and `stats` show links and NVVM compiles as they show compiles: kind,
// label ("link: INPUTS", "nvvm: MODULES"), status, sizes; an extracted output is byte for byte what
// the library returned.
TEST(NvJitLink, LinksAndNvvmCompilesAreListedInspectedAndExtracted) {
  TempDir cache, files;
  EnvVars env = shim_env(cache.path());
  env["NVRTC_CACHE_LOG"] = "debug";
  env["NVRTC_CACHE_LOG_FILE"] = files.path() + "/log.txt";
  const ProcessResult link = run_process({LINK_CLIENT_PATH, "lto"}, env);
  ASSERT_EQ(link.exit_code, 0) << link.err;
  const ProcessResult nvvm = run_process({NVVM_CLIENT_PATH, "ptx"}, env);
  ASSERT_EQ(nvvm.exit_code, 0) << nvvm.err;
  ASSERT_EQ(run_process({NVVM_CLIENT_PATH, "ptx"}, env).exit_code, 0);
  const EnvVars cli_env = {{"NVRTC_CACHE_DIR", cache.path()}, {"COLUMNS", "200"}};
  const ProcessResult ls = run_process({NVRTC_CACHE_CLI_PATH, "ls", "--json"}, cli_env);
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  const nlohmann::json listed = nlohmann::json::parse(ls.out, nullptr, false);
  std::string link_key, nvvm_key;
  for (const auto& e : listed["entries"]) {
    if (e["kind"] == "link") link_key = e["key"];
    if (e["kind"] == "nvvm") nvvm_key = e["key"];
    if (e["kind"] == "link") {
      EXPECT_EQ(e["status"], "ok");
      EXPECT_TRUE(e["label"].get<std::string>().starts_with("link: ")) << e.dump();
      EXPECT_EQ(e["sizes"]["cubin"], printed_size(link.out, "cubin")) << e.dump();
    }
  }
  ASSERT_FALSE(link_key.empty()) << ls.out;
  ASSERT_FALSE(nvvm_key.empty()) << ls.out;
  // The log names each link and NVVM compile as ls does.
  std::ifstream log_file(files.path() + "/log.txt");
  const std::string log((std::istreambuf_iterator<char>(log_file)), std::istreambuf_iterator<char>());
  for (const auto& e : listed["entries"]) {
    if (e["kind"] == "compile") continue;
    const std::string label = e["label"];
    EXPECT_NE(log.find("miss " + label + " (key "), std::string::npos) << label << "\n" << log;
    EXPECT_NE(log.find("stored " + label + " (key "), std::string::npos) << label << "\n" << log;
    if (e["kind"] == "nvvm") {
      EXPECT_NE(log.find("hit " + label + " (key "), std::string::npos) << label << "\n" << log;
    }
  }
  const ProcessResult table = run_process({NVRTC_CACHE_CLI_PATH, "ls"}, cli_env);
  EXPECT_NE(table.out.find("link: "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("nvvm: "), std::string::npos) << table.out;

  const ProcessResult inspected = run_process({NVRTC_CACHE_CLI_PATH, "inspect", link_key.substr(0, 8)}, cli_env);
  EXPECT_EQ(inspected.exit_code, 0) << inspected.err;
  EXPECT_NE(inspected.out.find("nvJitLink returned 0"), std::string::npos) << inspected.out;
  EXPECT_NE(inspected.out.find("now            hit"), std::string::npos) << inspected.out;

  const std::string cubin = files.path() + "/linked.cubin", ptx = files.path() + "/nvvm.ptx";
  ASSERT_EQ(run_process({NVRTC_CACHE_CLI_PATH, "extract", link_key, "--cubin", "-o", cubin}, cli_env).exit_code, 0);
  EXPECT_EQ(hex_of_file(cubin), printed_hex(link.out, "cubin", printed_size(link.out, "cubin")));
  ASSERT_EQ(run_process({NVRTC_CACHE_CLI_PATH, "extract", nvvm_key, "--ptx", "-o", ptx}, cli_env).exit_code, 0);
  EXPECT_EQ(hex_of_file(ptx), printed_hex(nvvm.out, "result", printed_size(nvvm.out, "result")));
  const ProcessResult no_cubin =
      run_process({NVRTC_CACHE_CLI_PATH, "extract", nvvm_key, "--cubin", "-o", cubin}, cli_env);
  EXPECT_EQ(no_cubin.exit_code, 1);
  EXPECT_NE(no_cubin.err.find("libNVVM result, which has no CUBIN"), std::string::npos) << no_cubin.err;

  const ProcessResult stats = run_process({NVRTC_CACHE_CLI_PATH, "stats"}, cli_env);
  EXPECT_NE(stats.out.find("link: "), std::string::npos) << stats.out;
}

// Failed links (an undefined function, no -arch) are cached with their error logs; a failed
// nvJitLinkCreate or nvJitLinkAddData is passed through (nothing to link, nothing cached).
TEST(NvJitLink, FailedLinksAreServedWithTheirLogsAndFailedCallsPassThrough) {
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const Runs r =
        cold_and_warm(argv_of(client, {"undefined", "missing_arch", "bad_option", "wrong_type"}), cache.path());
    ASSERT_NE(r.direct.out.find("undefined\n  create=0\n  add_data=0\n  complete=4"), std::string::npos)
        << r.direct.out;
    ASSERT_NE(r.direct.out.find("bad_option\n  create=1"), std::string::npos) << r.direct.out;
    expect_identical(r);
    EXPECT_GE(get(r.after_warm, "link_hits"), 1);
    EXPECT_EQ(get(r.after_warm, "link_misses"), get(r.after_cold, "link_misses"));
  }
}

// A file added with nvJitLinkAddFile is keyed by its content: edited between runs, the link misses
// and gives the new result byte for byte; then the new result is served.
TEST(NvJitLink, AnAddedFileIsKeyedByItsContent) {
  TempDir cache, files;
  const std::string file = files.path() + "/callee.ptx";
  ASSERT_EQ(run_process({LINK_CLIENT_PATH, "write_callee_ptx"}, {{"LINK_FILE", file}}).exit_code, 0);
  const EnvVars env = {{"LINK_FILE", file}};
  Runs first = cold_and_warm(argv_of(LINK_CLIENT_PATH, {"file"}), cache.path(), env);
  ASSERT_NE(first.direct.out.find("add_file=0"), std::string::npos) << first.direct.out;
  expect_identical(first);
  expect_served(first, 1);
  // Another callee's PTX in the same file: a different input.
  ASSERT_EQ(run_process({LINK_CLIENT_PATH, "write_other_callee_ptx"}, {{"LINK_FILE", file}}).exit_code, 0);
  Runs second = cold_and_warm(argv_of(LINK_CLIENT_PATH, {"file"}), cache.path(), env);
  expect_identical(second);
  EXPECT_EQ(get(second.after_cold, "link_misses"), 2);
  EXPECT_EQ(get(second.after_warm, "link_hits"), 2);
  EXPECT_NE(second.direct.out, first.direct.out);
}

// NVRTC embeds the working directory in -dlto's LTO-IR, so the same pipeline run from a second
// directory links other inputs: a miss, said to be miss.working_directory (naming both directories),
// with nvJitLink's answer byte for byte (the same cubin from both); then each directory's link is served.
TEST(NvJitLink, ALinkOfLtoIrCompiledInAnotherDirectorySaysSo) {
  TempDir cache, root;
  const std::string a = root.path() + "/a", b = root.path() + "/b";
  fs::create_directories(a);
  fs::create_directories(b);
  EnvVars env = shim_env(cache.path());
  env["NVRTC_CACHE_LOG"] = "info";
  const std::vector<std::string> argv = argv_of(LINK_CLIENT_PATH, {"lto"});
  const ProcessResult direct_a = run_process(argv, {}, a), direct_b = run_process(argv, {}, b);
  ASSERT_EQ(direct_a.exit_code, 0) << direct_a.err;
  ASSERT_EQ(direct_b.exit_code, 0) << direct_b.err;
  const ProcessResult in_a = run_process(argv, env, a);
  EXPECT_TRUE(in_a.out == direct_a.out);
  const store::Counters after_a = counters_of(cache.path());
  ASSERT_EQ(get(after_a, "link_misses"), 1) << in_a.err;
  EXPECT_EQ(get(after_a, "link.miss.new_program"), 1);
  const ProcessResult in_b = run_process(argv, env, b);
  EXPECT_TRUE(in_b.out == direct_b.out);
  const store::Counters after_b = counters_of(cache.path());
  // The link's inputs differ (NVRTC's LTO-IR names the directory), though not its output.
  ASSERT_EQ(get(after_b, "link_misses"), 2) << "precondition: NVRTC's LTO-IR no longer names the directory";
  EXPECT_EQ(get(after_b, "link.miss.working_directory"), 1) << in_b.err;
  EXPECT_EQ(get(after_b, "link.miss.new_program"), 1);
  EXPECT_EQ(get(after_b, "miss.working_directory"), 2) << "the two compiles' own misses, from b";
  EXPECT_NE(in_b.err.find("a link of these inputs compiled in " + a + " was stored before"), std::string::npos)
      << in_b.err;
  EXPECT_NE(in_b.err.find("(these were compiled in " + b + ")"), std::string::npos) << in_b.err;
  for (const std::string& dir : {a, b}) {
    const ProcessResult warm = run_process(argv, env, dir);
    EXPECT_TRUE(warm.out == (dir == a ? direct_a.out : direct_b.out)) << dir;
  }
  const store::Counters warm = counters_of(cache.path());
  EXPECT_EQ(get(warm, "link_hits"), 2);
  EXPECT_EQ(get(warm, "link_misses"), 2);
}

// -time puts the link's timings in the info log: never cached (passed through, counted); a NULL
// getter argument, a second Complete and an Add after a served Complete reach the real nvJitLink.
TEST(NvJitLink, UncacheableOptionsAndCallsTheEntryCannotAnswerReachNvJitLink) {
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const Runs r = cold_and_warm(argv_of(client, {"time", "null_arguments"}), cache.path());
    ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
    EXPECT_EQ(r.warm.exit_code, 0) << r.warm.err;
    EXPECT_EQ(get(r.after_warm, "link_uncacheable"), 2);  // -time, cold and warm
    EXPECT_EQ(get(r.after_warm, "link_hits"), 1);         // null_arguments, served warm
    // Everything but the timings (the info log of -time) is identical.
    const auto without_time = [](const std::string& out) { return out.substr(out.find("null_arguments")); };
    EXPECT_EQ(without_time(r.cold.out), without_time(r.direct.out));
    EXPECT_EQ(without_time(r.warm.out), without_time(r.direct.out));
  }
}

// -verbose (and -Xptxas=-v) put ptxas's "Compile time = ... ms" line in the info log: cached, as
// NVRTC's -Xptxas -v is, and served as the stored link measured it. The warm run gives the cold run's
// answer byte for byte (the cold run's second link was served from its first); the direct run
// differs from it in that line only.
TEST(NvJitLink, VerboseLinksAreServedAsTheStoredLinkMeasuredThem) {
  TempDir cache;
  const Runs r = cold_and_warm(argv_of(LINK_CLIENT_PATH, {"verbose", "verbose"}), cache.path());
  ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
  EXPECT_EQ(r.warm.out, r.cold.out);
  EXPECT_EQ(get(r.after_warm, "link_hits"), 3);  // the second link of the cold run, both warm
  const auto without_info_log = [](const std::string& out) {
    std::string kept;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      // The line's digits change the log's size too ("7.506 ms", "12.3 ms"): both lines go.
      if (line.find("info_log bytes=") == std::string::npos && line.find("info_log size_rc=") == std::string::npos) {
        kept += line + "\n";
      }
    }
    return kept;
  };
  EXPECT_EQ(without_info_log(r.cold.out), without_info_log(r.direct.out));
  EXPECT_NE(r.direct.out.find("info_log size_rc=0 size="), std::string::npos);
}

// Links and NVVM compiles travel like compiles: exported from one cache and imported into another,
// and through a shared directory tier from one node to another; `verify` reads them as sound.
TEST(NvJitLink, LinksTravelThroughArchivesAndSharedTiers) {
  TempDir first, second, tier, files;
  const std::string archive = files.path() + "/cache.nvrc";
  const std::vector<std::string> argv = {LINK_CLIENT_PATH, "lto", "undefined"};
  const ProcessResult direct = run_process(argv);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(run_process(argv, shim_env(first.path())).out, direct.out);
  const ProcessResult verify = run_process({NVRTC_CACHE_CLI_PATH, "verify"}, {{"NVRTC_CACHE_DIR", first.path()}});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("link/NVVM results   2 (0 malformed)"), std::string::npos) << verify.out;
  const ProcessResult exported =
      run_process({NVRTC_CACHE_CLI_PATH, "export", archive}, {{"NVRTC_CACHE_DIR", first.path()}});
  ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
  const ProcessResult imported =
      run_process({NVRTC_CACHE_CLI_PATH, "import", archive}, {{"NVRTC_CACHE_DIR", second.path()}});
  ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
  EXPECT_EQ(run_process(argv, shim_env(second.path())).out, direct.out);
  EXPECT_EQ(get(counters_of(second.path()), "link_hits"), 2);
  EXPECT_EQ(get(counters_of(second.path()), "link_misses"), 0);

  // Two nodes: the first links and writes behind to the shared directory, the second is served from it.
  const std::string remote = "file://" + tier.path();
  TempDir node_a, node_b;
  EXPECT_EQ(run_process(argv, node_env(node_a.path(), remote)).out, direct.out);
  EXPECT_EQ(run_process(argv, node_env(node_b.path(), remote)).out, direct.out);
  EXPECT_EQ(get(counters_of(node_b.path()), "link_hits"), 2);
  EXPECT_EQ(get(counters_of(node_b.path()), "link_misses"), 0);
}

// An nvJitLink wheel of each major, behind the clients that load it: nvJitLink 13.5
// (nvidia-nvjitlink: its LTO-IR getters and release suffixes _13_0 to _13_5) with the NVRTC wheel
// beside it, behind the linked client; nvJitLink 12.9 (nvidia-nvjitlink-cu12), linking what NVRTC
// 12.9 (nvidia-cuda-nvrtc-cu12) compiles (LTO-IR links only within one release), behind the client
// linked against libnvJitLink.so.12 (calling __nvJitLinkCreate_12_9 ... and __nvJitLinkAddFile_12_0:
// the shim's exports in libnvJitLink.so.12) and the client that dlopens it by soname (the plain names
// and __nvJitLinkAddFile_12_0 through dlsym).
struct LinkWheel {
  std::string name;
  const char* library_variable;  // the wheel's nvJitLink
  const char* nvrtc_variable;    // the NVRTC whose LTO-IR it links, or nullptr: the client's own
  std::vector<std::string> clients;
  std::string soname;
};

class NvJitLinkWheel : public ::testing::TestWithParam<LinkWheel> {
 protected:
  // The environment the clients run with, or nullopt (the test skipped or failed) without the wheel.
  std::optional<EnvVars> wheel_env() {
    const LinkWheel& wheel = GetParam();
    const char* library = std::getenv(wheel.library_variable);
    const char* nvrtc = wheel.nvrtc_variable ? std::getenv(wheel.nvrtc_variable) : nullptr;
    if (library == nullptr || (wheel.nvrtc_variable && nvrtc == nullptr)) {
      if (pypi_required()) ADD_FAILURE() << "required: " << wheel.library_variable << " (" << wheel.name << ")";
      return std::nullopt;
    }
    EnvVars env = {{"LD_LIBRARY_PATH", fs::path(library).parent_path().string()},
                   {"LINK_CLIENT_NVJITLINK", wheel.soname}};
    if (nvrtc) env["LINK_CLIENT_NVRTC"] = nvrtc;
    return env;
  }
};

// The links that reached nvJitLinkComplete in a run's output.
std::int64_t completed_links(const std::string& out) {
  std::int64_t links = 0;
  for (std::size_t at = out.find("\n  complete="); at != std::string::npos; at = out.find("\n  complete=", at + 1)) {
    ++links;
  }
  return links;
}

// LTO-IR linked into a CUBIN and into PTX, PTX linked, a file added by path, and failed links (an
// undefined function, no -arch, an option nvJitLink refuses): every
// return code, output and log byte for byte, cold and warm in separate processes, the warm run
// linking nothing (a hit for each link, no new miss).
TEST_P(NvJitLinkWheel, LinksAreServedByteForByteColdAndWarm) {
  const std::optional<EnvVars> wheel_env_vars = wheel_env();
  if (!wheel_env_vars) GTEST_SKIP() << GetParam().library_variable << " is not set";
  for (const std::string& client : GetParam().clients) {
    SCOPED_TRACE(client);
    TempDir cache, files;
    EnvVars env = *wheel_env_vars;
    env["LINK_FILE"] = files.path() + "/callee.ptx";
    ASSERT_EQ(run_process({client, "write_callee_ptx"}, env).exit_code, 0);
    const Runs r =
        cold_and_warm(argv_of(client, {"lto", "lto_ptx", "ptx", "file", "undefined", "missing_arch", "bad_option"}),
                      cache.path(), env);
    ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
    ASSERT_NE(r.direct.out.find("lto\n  create=0\n  add_data=0\n  add_data=0\n  complete=0\n  cubin size_rc=0 size="),
              std::string::npos)
        << r.direct.out;
    ASSERT_NE(r.direct.out.find("add_file=0"), std::string::npos) << r.direct.out;
    ASSERT_NE(r.direct.out.find("bad_option\n  create=1"), std::string::npos) << r.direct.out;
    expect_identical(r);
    const std::int64_t links = completed_links(r.direct.out);
    EXPECT_GE(links, 5);  // lto, lto_ptx, ptx, file, undefined (and missing_arch where nvJitLinkCreate takes it)
    expect_served(r, links);
    EXPECT_EQ(get(r.after_warm, "link_uncacheable"), 0);
  }
}

// -time (its info log is the link's timings) is passed through uncached, counted, cold and warm.
TEST_P(NvJitLinkWheel, TimedLinksPassThroughCounted) {
  const std::optional<EnvVars> env = wheel_env();
  if (!env) GTEST_SKIP() << GetParam().library_variable << " is not set";
  TempDir cache;
  const Runs r = cold_and_warm(argv_of(GetParam().clients.front(), {"time", "lto"}), cache.path(), *env);
  ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
  EXPECT_EQ(get(r.after_warm, "link_uncacheable"), 2);
  EXPECT_EQ(get(r.after_warm, "link.uncacheable.side_effect_option"), 2) << "-time is a side effect, counted so";
  EXPECT_EQ(get(r.after_warm, "link_hits"), 1);
  EXPECT_EQ(get(r.after_warm, "link_misses"), 1);
  EXPECT_EQ(get(r.after_warm, "link.miss.new_program"), 1);
  // `stats --json` gives the links' reasons beside their totals.
  const ProcessResult stats =
      run_process({NVRTC_CACHE_CLI_PATH, "stats", "--json"}, {{"NVRTC_CACHE_DIR", cache.path()}});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const nlohmann::json links = nlohmann::json::parse(stats.out)["links"];
  EXPECT_EQ(links["reasons"]["uncacheable"], nlohmann::json({{"side_effect_option", 2}})) << links;
  EXPECT_EQ(links["reasons"]["miss"], nlohmann::json({{"new_program", 1}})) << links;
  // and the hit's latency split: keying and the store lookup took time (the split is the hit's own).
  EXPECT_GT(links["hit_keying_ns"].get<std::int64_t>(), 0) << links;
  EXPECT_GT(links["hit_lookup_ns"].get<std::int64_t>(), 0) << links;
  EXPECT_GE(links["hit_validate_ns"].get<std::int64_t>(), 0) << links;
  const ProcessResult human = run_process({NVRTC_CACHE_CLI_PATH, "stats"}, {{"NVRTC_CACHE_DIR", cache.path()}});
  EXPECT_NE(human.out.find("links (nvJitLink): uncacheable by reason\n         2  side_effect_option"),
            std::string::npos)
      << human.out;
  // Each library labelled in the headline, and a total over all of them.
  EXPECT_NE(human.out.find("links (nvJitLink) 1 hits, 1 misses (50.0%), 2 uncacheable"), std::string::npos)
      << human.out;
  EXPECT_NE(human.out.find("all libraries     "), std::string::npos) << human.out;
}

// Proxy mode (`run --proxy`) with each major's wheel behind its stand-in (libnvJitLink.so.13, or
// libnvJitLink.so.12, which reaches a 12.x nvJitLink only), named by NVRTC_CACHE_REAL_NVJITLINK: the
// linked and the soname clients' links byte for byte, the warm run served.
TEST_P(NvJitLinkWheel, ProxyModeServesEachMajorsWheel) {
  const std::optional<EnvVars> wheel_env_vars = wheel_env();
  if (!wheel_env_vars) GTEST_SKIP() << GetParam().library_variable << " is not set";
  for (const std::string& client : GetParam().clients) {
    SCOPED_TRACE(client);
    TempDir cache;
    EnvVars env = *wheel_env_vars;
    env["NVRTC_CACHE_REAL_NVJITLINK"] = std::getenv(GetParam().library_variable);
    const Runs r =
        proxy_cold_and_warm(NVRTC_CACHE_CLI_PATH, argv_of(client, {"lto", "lto_ptx", "undefined"}), cache.path(), env);
    ASSERT_NE(r.direct.out.find("cubin size_rc=0 size="), std::string::npos) << r.direct.out << r.direct.err;
    expect_identical(r);
    expect_served(r, 3);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Majors, NvJitLinkWheel,
    ::testing::Values(
        LinkWheel{"nvJitLink13", "NVRTC_CACHE_TEST_NVJITLINK13", nullptr, {LINK_CLIENT_PATH}, "libnvJitLink.so.13"},
        LinkWheel{"nvJitLink12",
                  "NVRTC_CACHE_TEST_NVJITLINK12",
                  "NVRTC_CACHE_TEST_NVRTC12",
                  {LINK_CLIENT_NVJITLINK12_PATH, LINK_CLIENT_UNLINKED_PATH},
                  "libnvJitLink.so.12"}),
    [](const ::testing::TestParamInfo<LinkWheel>& param_info) { return param_info.param.name; });

// Proxy mode (`nvrtc-cache run --proxy`, no preload): the stand-in libnvJitLink.so.13 the linked
// client finds first on the library path, and the one the unlinked client dlopens by soname, forward to
// the proxy core, which links with the toolkit's nvJitLink by absolute path: every output and log byte
// for byte, the warm run served (and NVRTC's compiles through the proxy libnvrtc.so.13 with it).
TEST(NvJitLink, ProxyModeServesLinksByteForByteColdAndWarm) {
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const Runs r = proxy_cold_and_warm(
        NVRTC_CACHE_CLI_PATH, argv_of(client, {"lto", "lto_ptx", "ptx", "undefined", "bad_option"}), cache.path());
    ASSERT_NE(r.direct.out.find("cubin size_rc=0 size="), std::string::npos) << r.direct.out;
    expect_identical(r);
    EXPECT_EQ(r.cold.err.find("reached the cache"), std::string::npos) << r.cold.err;
    EXPECT_EQ(get(r.after_cold, "link_hits"), 0);
    EXPECT_EQ(get(r.after_cold, "link_misses"), 4);  // the bad option fails at nvJitLinkCreate: nothing to link
    EXPECT_EQ(get(r.after_warm, "link_hits"), 4);
    EXPECT_EQ(get(r.after_warm, "link_misses"), 4);
    // NVRTC's compiles, through the proxy core: none compiled again warm.
    EXPECT_GT(get(r.after_cold, "misses"), 0);
    EXPECT_EQ(get(r.after_warm, "misses"), get(r.after_cold, "misses"));
  }
}

// Proxy mode with the nvJitLink wheel (13.5) behind the stand-in (NVRTC_CACHE_REAL_NVJITLINK), the
// linked client finding the stand-ins before the wheel's directory: the same links, served byte for byte.
TEST(NvJitLink, ProxyModeServesTheNvJitLinkWheelByteForByte) {
  const char* wheel = std::getenv("NVRTC_CACHE_TEST_NVJITLINK13");
  if (wheel == nullptr) NVRTC_CACHE_SKIP_WITHOUT_PYPI("NVRTC_CACHE_TEST_NVJITLINK13 (the nvidia-nvjitlink wheel)");
  TempDir cache;
  // The client's NVRTC is the one beside the wheel's nvJitLink when there is one (nvidia-cu13 holds both):
  // the proxy core is told to forward to it too.
  const fs::path dir = fs::path(wheel).parent_path();
  EnvVars env = {{"LD_LIBRARY_PATH", dir.string()}, {"NVRTC_CACHE_REAL_NVJITLINK", wheel}};
  if (fs::exists(dir / "libnvrtc.so.13")) env["NVRTC_CACHE_REAL_NVRTC"] = (dir / "libnvrtc.so.13").string();
  const Runs r = proxy_cold_and_warm(NVRTC_CACHE_CLI_PATH, argv_of(LINK_CLIENT_PATH, {"lto", "lto_ptx", "undefined"}),
                                     cache.path(), env);
  expect_identical(r);
  expect_served(r, 3);
}

// Proxy mode with no real nvJitLink where NVRTC_CACHE_REAL_NVJITLINK points: the client still runs,
// each nvJitLink call failing as nvJitLink fails (NVJITLINK_ERROR_INTERNAL), the reason said on stderr.
TEST(NvJitLink, ProxyModeWithoutTheRealNvJitLinkFailsOpen) {
  for (const std::string& client : kClients) {
    SCOPED_TRACE(client);
    TempDir cache;
    const std::string missing = cache.path() + "/missing/libnvJitLink.so.13";
    const ProcessResult run = run_process({NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", client, "lto"},
                                          {{"NVRTC_CACHE_DIR", cache.path()}, {"NVRTC_CACHE_REAL_NVJITLINK", missing}});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("lto\n  create=6\n"), std::string::npos) << run.out;
    EXPECT_NE(run.err.find("cannot load the real nvJitLink (" + missing), std::string::npos) << run.err;
    EXPECT_EQ(get(counters_of(cache.path()), "link_misses"), 0);
  }
}

// The stand-in exports every function of 13.5, yet a dlsym client (ctypes, by soname) finds exactly
// the names the real nvJitLink behind it has: with 13.0, no LTO-IR getter and no suffix after _13_0,
// as without the proxy; with the 13.5 wheel, all of them.
TEST(NvJitLink, ProxyModeDlsymFindsWhatTheRealNvJitLinkHas) {
  const std::string python = python_binary("python3");
  ASSERT_FALSE(python.empty());
  const std::string script =
      "import ctypes\n"
      "lib = ctypes.CDLL('libnvJitLink.so.13')\n"
      "for name in ['nvJitLinkCreate', '__nvJitLinkCreate_13_0', '__nvJitLinkCreate_13_1', '__nvJitLinkCreate_13_5',\n"
      "             'nvJitLinkGetLinkedLTOIR', '__nvJitLinkGetLinkedLTOIRSize_13_5', 'nvJitLinkVersion',\n"
      "             '__nvJitLinkAPI', 'nvrtcVersion', 'nvrtc_cache_proxy_entries']:\n"
      "    print(name, hasattr(lib, name))\n"
      "major, minor = ctypes.c_uint(), ctypes.c_uint()\n"
      "print('version', lib.nvJitLinkVersion(ctypes.byref(major), ctypes.byref(minor)), major.value, minor.value)\n";
  std::vector<std::string> libraries = {fs::path(NVRTC_CACHE_REAL_NVJITLINK_PATH).parent_path().string()};
  if (const char* wheel = std::getenv("NVRTC_CACHE_TEST_NVJITLINK13")) {
    libraries.push_back(fs::path(wheel).parent_path().string());
  } else if (pypi_required()) {
    FAIL() << "NVRTC_CACHE_TEST_NVJITLINK13 (the nvidia-nvjitlink wheel) is required";
  }
  for (const std::string& dir : libraries) {
    SCOPED_TRACE(dir);
    TempDir cache;
    const ProcessResult direct = run_process({python, "-c", script}, {{"LD_LIBRARY_PATH", dir}});
    ASSERT_EQ(direct.exit_code, 0) << direct.err;
    const bool wheel = dir != libraries.front();
    EXPECT_NE(direct.out.find(wheel ? "nvJitLinkGetLinkedLTOIR True" : "nvJitLinkGetLinkedLTOIR False"),
              std::string::npos)
        << direct.out;
    const ProcessResult proxied = run_process({NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", python, "-c", script},
                                              {{"LD_LIBRARY_PATH", dir},
                                               {"NVRTC_CACHE_REAL_NVJITLINK", dir + "/libnvJitLink.so.13"},
                                               {"NVRTC_CACHE_DIR", cache.path()}});
    EXPECT_EQ(proxied.exit_code, 0) << proxied.err;
    EXPECT_EQ(proxied.out, direct.out) << proxied.err;
  }
}

// The stand-in exports exactly what nvJitLink 13.5 exports (every function, the release-suffixed
// names of 13.0 to 13.5, in nvJitLink's version node), a superset of 13.0's, and nothing else; its
// soname is nvJitLink's.
TEST(NvJitLink, TheProxyStandInExportsNvJitLinksFunctionsOnly) {
  const std::string standin = std::string(NVRTC_CACHE_PROXY_DIR) + "/libnvJitLink.so.13";
  const std::set<std::string> exported = defined_dynamic_symbols(standin);
  ASSERT_FALSE(exported.empty()) << standin;
  EXPECT_EQ(exported.size(), 108u);  // 15 functions x 7 names, nvJitLinkVersion, __nvJitLinkAPI, the node
  for (const std::string& symbol : exported) {
    if (symbol == "libnvJitLink.so.13") continue;  // the version node's own symbol
    const bool nvjitlink = symbol.rfind("nvJitLink", 0) == 0 || symbol.rfind("__nvJitLink", 0) == 0;
    EXPECT_TRUE(nvjitlink && symbol.find("@@libnvJitLink.so.13") != std::string::npos) << symbol;
  }
  for (const std::string& symbol : defined_dynamic_symbols(NVRTC_CACHE_REAL_NVJITLINK_PATH)) {
    EXPECT_TRUE(exported.count(symbol)) << "the toolkit's nvJitLink exports " << symbol;
  }
  EXPECT_EQ(soname_of(standin), "libnvJitLink.so.13");
  const char* wheel = std::getenv("NVRTC_CACHE_TEST_NVJITLINK13");
  if (wheel == nullptr) NVRTC_CACHE_SKIP_WITHOUT_PYPI("NVRTC_CACHE_TEST_NVJITLINK13 (the nvidia-nvjitlink wheel)");
  EXPECT_EQ(exported, defined_dynamic_symbols(wheel));
}

// Python's JIT stacks (scripts/python_env.sh): cuda.core's Linker and cuda.bindings.nvjitlink, which
// load the nvJitLink wheel by absolute path and look its functions up with dlsym.
class PythonLinkStack : public ::testing::TestWithParam<std::string> {};

TEST_P(PythonLinkStack, ColdThenWarmIsByteIdenticalAndServed) {
  const char* python = std::getenv("NVRTC_CACHE_TEST_PYTHON");
  if (python == nullptr || access(python, X_OK) != 0) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI("set NVRTC_CACHE_TEST_PYTHON (scripts/python_env.sh makes one)");
  }
  TempDir cache;
  const Runs r = cold_and_warm(
      argv_of(python, {std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/link_stacks.py", GetParam()}),
      cache.path(), {{"PYTHONDONTWRITEBYTECODE", "1"}});
  expect_identical(r);
  ASSERT_NE(r.direct.out.find("cubin "), std::string::npos) << r.direct.out;
  const std::int64_t links = GetParam() == "core" ? 2 : 1;
  expect_served(r, links);
}

INSTANTIATE_TEST_SUITE_P(Stacks, PythonLinkStack, ::testing::Values("core", "bindings"));

// The whole JIT pipeline in one process (NVRTC, nvJitLink, libNVVM through cuda.core): its second
// run makes no real compile, link or NVVM compile, every result byte for byte.
TEST(NvJitLink, AWholePipelineRunsItsSecondTimeWithNothingCompiledOrLinked) {
  const char* python = std::getenv("NVRTC_CACHE_TEST_PYTHON");
  if (python == nullptr || access(python, X_OK) != 0) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI("set NVRTC_CACHE_TEST_PYTHON (scripts/python_env.sh makes one)");
  }
  TempDir cache;
  const Runs r = cold_and_warm(
      argv_of(python, {std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/link_stacks.py", "pipeline"}),
      cache.path(), {{"PYTHONDONTWRITEBYTECODE", "1"}});
  expect_identical(r);
  for (const char* kind : {"", "link_", "nvvm_"}) {
    SCOPED_TRACE(kind);
    const std::string hits = std::string(kind) + "hits", misses = std::string(kind) + "misses";
    EXPECT_GE(get(r.after_cold, misses), 1);  // cold: each of the three compiled for real
    EXPECT_EQ(get(r.after_cold, hits), 0);
    EXPECT_EQ(get(r.after_warm, misses), get(r.after_cold, misses));  // warm: nothing compiled or linked
    EXPECT_EQ(get(r.after_warm, hits), get(r.after_cold, misses));
    EXPECT_EQ(get(r.after_warm, std::string(kind) + "uncacheable"), 0);
  }
}

}  // namespace
}  // namespace nvrtc_cache::testing
