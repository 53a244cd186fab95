// nvrtc-cache.exe under Wine: the commands it shares with the Linux CLI (tools/windows/main.cc) on the
// cache the proxy filled with two real compiles (tests/clients/windows/nvrtc_client.cc through the
// proxy nvrtc64_130_0.dll beside it): `stats --json` has the Linux CLI's keys, `ls` lists both
// results (zstd-compressed, as on Linux: smaller than with `compression = 0`), `inspect` describes
// one, `extract --cubin` gives the bytes the real compile returned (to a file and to stdout),
// `config set` writes and replaces the user file, `evict` empties the cache, `help` lists the
// commands; export, import and copy move it to another cache; replay fills one from a recording.
// Needs NVRTC_CACHE_WINDOWS_PREFIX (the proxy and nvrtc-cache.exe, scripts/windows-build.sh) and the
// Wine preconditions of wine_test.cc; skips without them (fails where NVRTC_CACHE_REQUIRE_PYPI=1).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/compile_record.h"
#include "core/handle_record.h"
#include "tests/support/cli_testing.h"
#include "tests/support/wine_paths.h"

namespace nvrtc_cache::testing {
namespace {

namespace fs = std::filesystem;

std::string bytes_of_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// The bytes the client printed for `label` ("cubin size_rc=0 size=N", then "cubin data_rc=0 bytes=HEX"
// with 16 canary bytes after the N).
std::string dumped_output(const std::string& out, const std::string& label) {
  const std::size_t size_at = out.find(label + " size_rc=0 size=");
  const std::size_t bytes_at = out.find(label + " data_rc=0 bytes=");
  if (size_at == std::string::npos || bytes_at == std::string::npos) return "";
  const std::size_t size = std::stoul(out.substr(size_at + label.size() + 16));
  return bytes_of_hex(out.substr(bytes_at + label.size() + 17, size * 2));
}

// Text the Windows CLI printed (stdout in text mode: "\r\n" line ends), with Linux's line ends.
std::string text_of(std::string out) {
  std::erase(out, '\r');
  return out;
}

std::set<std::string> keys_of(const nlohmann::json& j) {
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.insert(key);
  return keys;
}

// Whether a directory at or above `path` is writable by others: Wine shows Windows such a directory
// (/tmp, sticky or not) as one Everyone may change, and replay refuses a DLL below it.
bool others_can_write_above(const std::string& path) {
  for (fs::path p = fs::path(path); !p.empty(); p = p.parent_path()) {
    struct stat st;
    if (::stat(p.c_str(), &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return true;
    if (p == p.root_path()) break;
  }
  return false;
}

// A directory only this user can change, all the way up (under $HOME), removed at the end.
class PrivateDir {
 public:
  PrivateDir() {
    const char* home = std::getenv("HOME");
    std::string pattern = std::string(home && *home ? home : "/root") + "/.nvrtc-cache-test-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~PrivateDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class WineCli : public ::testing::Test {
 protected:
  void SetUp() override {
    nvrtc_dir_ = env_or_empty("NVRTC_CACHE_WINE_NVRTC_DIR");
    loader_ = env_or_empty("NVRTC_CACHE_WINE");
    prefix_ = env_or_empty("NVRTC_CACHE_WINDOWS_PREFIX");
    const std::string bin = NVRTC_CACHE_WINDOWS_BIN_DIR;
    if (nvrtc_dir_.empty() || loader_.empty() || bin.empty() || prefix_.empty()) {
      NVRTC_CACHE_SKIP_WITHOUT_PYPI(
          "needs the Windows NVRTC and Wine (scripts/windows-nvrtc.sh), the Windows test programs and "
          "NVRTC_CACHE_WINDOWS_PREFIX (scripts/windows-build.sh)");
    }
    client_ = beside_.path() + "/nvrtc_client_loadlibrary.exe";
    fs::copy_file(bin + "/nvrtc_client_loadlibrary.exe", client_);
    fs::copy_file(prefix_ + "/bin/nvrtc64_130_0.dll", beside_.path() + "/nvrtc64_130_0.dll");
  }

  // A Windows program under Wine, with the proxy's settings: the real DLL, the cache, the user file.
  ProcessResult wine(const std::vector<std::string>& argv, const EnvVars& extra = {}) {
    EnvVars env = {{"WINEPREFIX", nvrtc_dir_ + "/wineprefix"},
                   {"WINEDEBUG", "-all"},
                   {"WINEDLLOVERRIDES", "mscoree,mshtml="},
                   {"NVRTC_CACHE_REAL_NVRTC", windows_path(nvrtc_dir_ + "/nvrtc64_130_0.dll")},
                   {"NVRTC_CACHE_DIR", windows_path(cache_.path())},
                   {"NVRTC_CACHE_CONFIG", windows_path(config_.path() + "/user.conf")}};
    for (const auto& [name, value] : extra) env[name] = value;
    std::vector<std::string> command = {loader_};
    command.insert(command.end(), argv.begin(), argv.end());
    return run_process(command, env);
  }

  // nvrtc-cache.exe ARGS...; expects exit status 0.
  ProcessResult exe(std::vector<std::string> args, const EnvVars& extra = {}) {
    args.insert(args.begin(), prefix_ + "/bin/nvrtc-cache.exe");
    ProcessResult r = wine(args, extra);
    EXPECT_EQ(r.exit_code, 0) << args[1] << ": " << r.err;
    return r;
  }

  nlohmann::json json_of(std::vector<std::string> args, const EnvVars& extra = {}) {
    args.push_back("--json");
    return nlohmann::json::parse(exe(std::move(args), extra).out, nullptr, false);
  }

  // The Windows NVRTC's directory where no one else can change it or a directory above it (replay
  // loads only such a DLL); otherwise (a checkout under /tmp) a copy of its two DLLs in `copy_`.
  std::string trusted_nvrtc_dir() {
    if (!others_can_write_above(nvrtc_dir_)) return nvrtc_dir_;
    EXPECT_FALSE(copy_.path().empty());
    for (const char* dll : {"nvrtc64_130_0.dll", "nvrtc-builtins64_130.dll"})
      fs::copy_file(nvrtc_dir_ + "/" + dll, copy_.path() + "/" + dll, fs::copy_options::overwrite_existing);
    EXPECT_FALSE(others_can_write_above(copy_.path())) << copy_.path() << ": $HOME is writable by others";
    return copy_.path();
  }

  std::string nvrtc_dir_, loader_, prefix_, client_;
  TempDir beside_, cache_, config_, linux_home_, uncompressed_;
  PrivateDir copy_;
};

TEST_F(WineCli, PortedCommandsMatchTheLinuxCli) {
  // Two real compiles through the proxy: a cubin (sm_80) and a PTX.
  const ProcessResult compiled = wine({client_, "cubin", "ptx"});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  const std::string cubin = dumped_output(compiled.out, "cubin");
  ASSERT_GT(cubin.size(), 100u) << "the client printed no cubin";

  // stats --json: the Linux CLI's keys (its output on an empty cache), and the two compiles missed.
  const nlohmann::json stats = json_of({"stats"});
  ASSERT_TRUE(stats.is_object());
  const ProcessResult linux_stats =
      cli({"stats", "--json"}, {{"NVRTC_CACHE_DIR", linux_home_.path() + "/cache"}, {"HOME", linux_home_.path()}});
  ASSERT_EQ(linux_stats.exit_code, 0) << linux_stats.err;
  const nlohmann::json linux_json = nlohmann::json::parse(linux_stats.out, nullptr, false);
  EXPECT_EQ(keys_of(stats), keys_of(linux_json));
  EXPECT_EQ(keys_of(stats["reasons"]), keys_of(linux_json["reasons"]));
  EXPECT_EQ(stats.value("schema_version", 0), 2);
  EXPECT_EQ(stats.value("misses", 0), 2);
  EXPECT_EQ(stats.value("results", 0), 2);

  // ls --json: both results; the one with the cubin is stored compressed (zstd on Windows too):
  // smaller than the same compile stored with `compression = 0`.
  const nlohmann::json listed = json_of({"ls"});
  ASSERT_TRUE(listed.contains("entries")) << listed.dump();
  ASSERT_EQ(listed["entries"].size(), 2u) << listed.dump();
  std::string key;
  std::uint64_t stored = 0;
  for (const auto& e : listed["entries"]) {
    if (e["sizes"]["cubin"] != cubin.size()) continue;
    key = e["key"];
    stored = e["sizes"]["stored"];
  }
  ASSERT_EQ(key.size(), 64u) << "no entry holds the cubin's " << cubin.size() << " bytes: " << listed.dump();
  const EnvVars uncompressed = {{"NVRTC_CACHE_DIR", windows_path(uncompressed_.path())},
                                {"NVRTC_CACHE_COMPRESSION", "0"}};
  ASSERT_EQ(wine({client_, "cubin"}, uncompressed).exit_code, 0);
  const nlohmann::json plain = json_of({"ls"}, uncompressed);
  ASSERT_EQ(plain["entries"].size(), 1u) << plain.dump();
  EXPECT_EQ(plain["entries"][0].value("key", ""), key);
  EXPECT_LT(stored, plain["entries"][0]["sizes"].value("stored", 0u)) << "the entry was not compressed";
  EXPECT_NE(exe({"ls"}).out.find(key.substr(0, 16)), std::string::npos) << "the table lists the key";
  EXPECT_EQ(exe({"verify"}).exit_code, 0);

  // inspect: the entry, by a prefix of its key.
  const nlohmann::json inspected = json_of({"inspect", key.substr(0, 12)});
  EXPECT_EQ(inspected.value("key", ""), key);
  EXPECT_EQ(inspected.value("architecture", ""), "sm_80") << inspected.dump();

  // extract --cubin: the real compile's bytes, to a file and to stdout (binary).
  const std::string file = config_.path() + "/out.cubin";
  exe({"extract", key.substr(0, 12), "--cubin", "-o", windows_path(file)});
  EXPECT_TRUE(read_file(file) == cubin) << "the extracted cubin differs from the real compile's";
  EXPECT_TRUE(exe({"extract", key.substr(0, 12), "--cubin", "-o", "-"}).out == cubin) << "stdout is not binary";

  // config set writes the user file, and replaces it (one line per setting); config shows its origin.
  exe({"config", "set", "max_size", "3G"});
  exe({"config", "set", "max_size", "4G"});
  EXPECT_EQ(read_file(config_.path() + "/user.conf"), "max_size = 4G\n");
  const std::string listing = text_of(exe({"-p"}).out), value = text_of(exe({"config", "get", "max_size"}).out);
  EXPECT_NE(listing.find("user.conf:1) max_size = " + value), std::string::npos) << value << " in\n" << listing;

  // evict down to 1 KiB of payload: the cubin's entry (about 2 KB stored) goes; the PTX's, compressed
  // to less than 1 KiB, may stay. help lists what Windows has.
  EXPECT_EQ(exe({"evict", "--max-size", "1K"}).out.rfind("evicted ", 0), 0u);
  const nlohmann::json kept = json_of({"ls"});
  for (const auto& e : kept["entries"]) EXPECT_NE(e.value("key", ""), key) << "the cubin's entry was kept";
  EXPECT_LT(json_of({"stats"}).value("results", -1), 2);
  const std::string help = text_of(exe({"help"}).out);
  for (const char* command : {"stats", "clear", "evict", "verify", "config", "ls", "inspect", "extract", "export",
                              "import", "copy", "remote", "doctor", "replay"})
    EXPECT_NE(help.find(std::string("\n  ") + command), std::string::npos) << command << " missing:\n" << help;
}

// export, import and copy on Windows (tools/commands/archive_command.cc over platform/stream_file.h): the cache
// the proxy filled, exported to an archive file and to stdout (binary: the same bytes), imported into
// a second cache that then serves the same client from hits alone, byte for byte; `--match` selects by
// program name (`*` and `?`); copy writes a file:// directory it creates, nested, which a third
// cache's proxy is then served from; `remote check` reports it (and a Redis tier that is down), and
// `remote evict` empties it.
TEST_F(WineCli, ExportImportCopyServeAnotherCacheExactly) {
  const ProcessResult compiled = wine({client_, "cubin", "ptx"});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  ASSERT_EQ(json_of({"stats"}).value("misses", 0), 2);
  std::string name;  // the cubin program's name, for --match
  const nlohmann::json listed = json_of({"ls"});
  for (const auto& e : listed["entries"]) name = e.value("program_name", "");
  ASSERT_FALSE(name.empty());

  const std::string archive = config_.path() + "/cache.nvca";
  const nlohmann::json exported = json_of({"export", windows_path(archive)});
  EXPECT_EQ(exported.value("results", 0), 2) << exported.dump();
  EXPECT_EQ(exported.value("complete", false), true) << exported.dump();
  ASSERT_TRUE(fs::exists(archive));
  for (const auto& entry : fs::directory_iterator(config_.path()))
    EXPECT_EQ(entry.path().filename().string().find(".partial-"), std::string::npos) << entry.path();
  EXPECT_TRUE(exe({"export", "-"}).out == read_file(archive)) << "the archive on stdout differs from the file";
  EXPECT_EQ(
      json_of({"export", windows_path(config_.path() + "/none.nvca"), "--match", "no-such-*"}).value("results", -1), 0);
  std::string pattern = name;
  pattern.back() = '?';
  EXPECT_EQ(
      json_of({"export", windows_path(config_.path() + "/one.nvca"), "--match", "*" + pattern}).value("results", 0), 1);

  // Imported into an empty cache: the client is served from hits alone, byte-identical.
  const TempDir second;
  const EnvVars in_second = {{"NVRTC_CACHE_DIR", windows_path(second.path())}};
  const nlohmann::json imported = json_of({"import", windows_path(archive)}, in_second);
  EXPECT_EQ(imported.value("added", 0), 4) << imported.dump();  // two results, two manifests
  const ProcessResult served = wine({client_, "cubin", "ptx"}, in_second);
  EXPECT_TRUE(served.out == compiled.out) << "the imported cache served other bytes";
  const nlohmann::json second_stats = json_of({"stats"}, in_second);
  EXPECT_EQ(second_stats.value("hits", 0), 2) << second_stats.dump();
  EXPECT_EQ(second_stats.value("misses", -1), 0) << second_stats.dump();

  // copy to a file:// directory that does not exist yet (two levels): a third cache is served from it.
  const TempDir shared, third;
  std::string url = "file:///" + windows_path(shared.path() + "/tier/nested");
  for (char& c : url) c = c == '\\' ? '/' : c;
  const nlohmann::json copied = json_of({"copy", "local", url});
  EXPECT_EQ(copied.value("results", 0), 2) << copied.dump();
  ASSERT_TRUE(fs::is_directory(shared.path() + "/tier/nested"));
  const EnvVars in_third = {{"NVRTC_CACHE_DIR", windows_path(third.path())}, {"NVRTC_CACHE_REMOTE", url}};
  EXPECT_TRUE(wine({client_, "cubin", "ptx"}, in_third).out == compiled.out) << "the tier served other bytes";
  const nlohmann::json third_stats = json_of({"stats"}, in_third);
  EXPECT_EQ(third_stats.value("hits", 0), 2) << third_stats.dump();
  EXPECT_EQ(third_stats.value("misses", -1), 0) << third_stats.dump();

  // remote check: the tier reachable and writable; with a Redis tier where nothing listens, not
  // reachable (exit status 1). remote evict trims the directory to nothing.
  const nlohmann::json checked = json_of({"remote", "check"}, in_third);
  ASSERT_EQ(checked["tiers"].size(), 1u) << checked.dump();
  EXPECT_TRUE(checked["tiers"][0].value("reachable", false)) << checked.dump();
  EXPECT_TRUE(checked["tiers"][0].value("writable", false)) << checked.dump();
  const ProcessResult down = wine({prefix_ + "/bin/nvrtc-cache.exe", "remote", "check", "--json"},
                                  {{"NVRTC_CACHE_REMOTE", "redis://127.0.0.1:1/0"}});
  EXPECT_EQ(down.exit_code, 1) << down.out << down.err;
  EXPECT_NE(down.out.find("\"reachable\": false"), std::string::npos) << down.out;
  const auto files_in = [](const std::string& directory) {
    std::size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(directory)) n += e.is_regular_file() ? 1 : 0;
    return n;
  };
  ASSERT_GT(files_in(shared.path()), 0u);
  exe({"remote", "evict", url, "--max-size", "1B"});
  EXPECT_EQ(files_in(shared.path()), 0u) << "remote evict left files in the tier";
}

// doctor on Windows (tools/doctor/doctor_command_windows.cc): the proxy DLLs beside nvrtc-cache.exe, the real
// DLL the proxy loads, the cache, and a sample compile run directly and twice through the proxy in a
// scratch cache (stored, then served, byte-identical); with only the proxy itself named as the real
// DLL, NVRTC is reported missing, the sample compile is not run, and the exit status is 1.
TEST_F(WineCli, DoctorChecksTheProxyNvrtcAndASampleCompile) {
  const std::string report = text_of(exe({"doctor"}).out);
  EXPECT_NE(report.find("ok    proxy            "), std::string::npos) << report;
  EXPECT_NE(report.find("ok    NVRTC            nvrtc64_130_0.dll -> "), std::string::npos) << report;
  EXPECT_NE(report.find("ok    cache directory  "), std::string::npos) << report;
  EXPECT_NE(report.find("ok    sample compile   intercepted, stored, then served from the cache, byte-identical to "
                        "NVRTC"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("verdict: caching works"), std::string::npos) << report;
  const ProcessResult missing = wine({prefix_ + "/bin/nvrtc-cache.exe", "doctor"},
                                     {{"NVRTC_CACHE_REAL_NVRTC", windows_path(prefix_ + "/bin/nvrtc64_130_0.dll")}});
  const std::string refused = text_of(missing.out);
  EXPECT_EQ(missing.exit_code, 1) << refused << missing.err;
  EXPECT_NE(refused.find("is nvrtc-cache's proxy, not NVRTC"), std::string::npos) << refused;
  EXPECT_NE(refused.find("FAIL  NVRTC            no real nvrtc64_130_0.dll found"), std::string::npos) << refused;
  EXPECT_NE(refused.find("note  sample compile   not run: no NVRTC that loads"), std::string::npos) << refused;
}

// replay on Windows (tools/replay/host_windows.cc): what the proxy recorded (NVRTC_CACHE_RECORD)
// while the client compiled its cubin and PTX programs is replayed into an empty cache, as recorded
// and for sm_90, by workers loading the proxy beside nvrtc-cache.exe, which forwards to the recorded
// DLL (judged on disk first: tools/doctor/nvrtc_dll_check.h). The client is then served from hits
// alone, byte for byte (the replay stored each result under the key the app computes); the sm_90
// variants are stored for sm_90 (the PTX's target says so); a second replay finds all four cached.
TEST_F(WineCli, ReplayFillsACacheTheAppIsServedFrom) {
  const std::string real = windows_path(trusted_nvrtc_dir() + "/nvrtc64_130_0.dll");
  const std::string record = config_.path() + "/compiles.rec";
  const EnvVars recording = {{"NVRTC_CACHE_RECORD", windows_path(record)}, {"NVRTC_CACHE_REAL_NVRTC", real}};
  const ProcessResult compiled = wine({client_, "cubin", "ptx"}, recording);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  ASSERT_TRUE(fs::exists(record)) << "the proxy wrote no recording";

  const TempDir second;
  const EnvVars in_second = {{"NVRTC_CACHE_DIR", windows_path(second.path())}, {"NVRTC_CACHE_REAL_NVRTC", real}};
  const nlohmann::json replayed =
      json_of({"replay", windows_path(record), "--arch", "sm_90", "--jobs", "2"}, in_second);
  EXPECT_EQ(replayed.value("programs", 0), 2) << replayed.dump();
  EXPECT_EQ(replayed.value("compiled", 0), 4) << replayed.dump();  // two programs, as recorded and for sm_90
  EXPECT_EQ(replayed.value("failed", -1), 0) << replayed.dump();
  EXPECT_EQ(replayed.value("refused", -1), 0) << replayed.dump();

  const ProcessResult served = wine({client_, "cubin", "ptx"}, in_second);
  EXPECT_TRUE(served.out == compiled.out) << "the replayed cache served other bytes";
  const nlohmann::json second_stats = json_of({"stats"}, in_second);
  EXPECT_EQ(second_stats.value("hits", 0), 2) << "the app's keys are not the replay's: " << second_stats.dump();
  EXPECT_EQ(second_stats.value("misses", -1), 4) << "only the replay's own compiles miss: " << second_stats.dump();

  std::set<std::string> architectures;
  std::string sm_90_ptx_key;
  const nlohmann::json listed = json_of({"ls"}, in_second);
  for (const auto& e : listed["entries"]) {
    architectures.insert(e.value("architecture", ""));
    if (e.value("architecture", "") == "compute_90") sm_90_ptx_key = e.value("key", "");
  }
  EXPECT_EQ(architectures, (std::set<std::string>{"sm_80", "compute_80", "sm_90", "compute_90"}));
  ASSERT_FALSE(sm_90_ptx_key.empty());
  const std::string ptx = exe({"extract", sm_90_ptx_key.substr(0, 12), "--ptx", "-o", "-"}, in_second).out;
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << ptx.substr(0, 400);

  const nlohmann::json again = json_of({"replay", windows_path(record), "--arch", "sm_90"}, in_second);
  EXPECT_EQ(again.value("already_cached", 0), 4) << again.dump();
  EXPECT_EQ(again.value("compiled", -1), 0) << again.dump();

  // `run --record FILE` records as NVRTC_CACHE_RECORD does: a program that loads the real DLL by its
  // full path (the launcher's proxy in it), recorded so, replays to the same four entries.
  const std::string launched_record = config_.path() + "/launched.rec";
  const ProcessResult launched = exe(
      {"run", "--record", windows_path(launched_record), "--",
       windows_path(std::string(NVRTC_CACHE_WINDOWS_BIN_DIR) + "/loader_client.exe"), "fullpath", real, "cubin", "ptx"},
      in_second);
  EXPECT_NE(launched.out.find("compile rc=0"), std::string::npos) << launched.out << launched.err;
  const core::RecordScan scan = core::scan_records(read_file(launched_record));
  EXPECT_EQ(scan.records.size(), 2u) << "run --record wrote no record per compile";
  const nlohmann::json from_launched = json_of({"replay", windows_path(launched_record), "--arch", "sm_90"}, in_second);
  EXPECT_EQ(from_launched.value("already_cached", 0), 4) << from_launched.dump();
  EXPECT_EQ(from_launched.value("refused", -1), 0) << from_launched.dump();
}

// A recording is untrusted: replay loads no DLL it cannot trust, and then compiles nothing (exit 1):
// a DLL someone else may change (a copy in a directory others can write, which Wine
// shows as one Everyone may change); a DLL that is not NVRTC's (the builtins DLL beside it); the proxy
// itself (NVRTC's name, another identity). --nvrtc names each, judged as a recorded path is.
TEST_F(WineCli, ReplayLoadsNoDllItCannotTrust) {
  const std::string dir = trusted_nvrtc_dir();
  const std::string record = config_.path() + "/compiles.rec";
  ASSERT_EQ(wine({client_, "ptx"}, {{"NVRTC_CACHE_RECORD", windows_path(record)},
                                    {"NVRTC_CACHE_REAL_NVRTC", windows_path(dir + "/nvrtc64_130_0.dll")}})
                .exit_code,
            0);
  const PrivateDir open_to_all;
  ASSERT_FALSE(open_to_all.path().empty());
  const std::string writable = open_to_all.path() + "/shared";
  fs::create_directory(writable);
  fs::copy_file(prefix_ + "/bin/nvrtc64_130_0.dll", writable + "/nvrtc64_130_0.dll");
  fs::permissions(writable, fs::perms::others_write, fs::perm_options::add);
  const std::string proxy_copy = open_to_all.path() + "/nvrtc64_130_0.dll";  // where only this user may change it
  fs::copy_file(prefix_ + "/bin/nvrtc64_130_0.dll", proxy_copy);

  const TempDir second;
  const EnvVars in_second = {{"NVRTC_CACHE_DIR", windows_path(second.path())}};
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {windows_path(writable + "/nvrtc64_130_0.dll"), "can be changed by Everyone"},
      {windows_path(dir + "/nvrtc-builtins64_130.dll"), "is not NVRTC 13's DLL"},
      {windows_path(proxy_copy), "their results would not be this DLL's"},
  };
  for (const auto& [dll, why] : refusals) {
    const ProcessResult r =
        wine({prefix_ + "/bin/nvrtc-cache.exe", "replay", windows_path(record), "--nvrtc", dll}, in_second);
    EXPECT_EQ(r.exit_code, 1) << dll << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("refusing to "), std::string::npos) << dll << ": " << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << dll << ": " << r.err;
    EXPECT_NE(r.out.find("1 refused"), std::string::npos) << dll << ": " << r.out;
  }
  EXPECT_EQ(json_of({"stats"}, in_second).value("results", -1), 0) << "a refused replay compiled something";
  // The recorded DLL itself passes: the refusals above were the DLLs', not the recording's.
  EXPECT_EQ(json_of({"replay", windows_path(record)}, in_second).value("compiled", 0), 1);

  // A link in the recording (as Linux records them) is refused here: the proxy serves NVRTC alone.
  core::HandleCallRecord link;
  link.library_path = "C:\\CUDA\\nvJitLink_130_0.dll";
  link.inputs.library = {13, 0, "pe:0123456789ab"};
  link.inputs.options = {"-arch=sm_80"};
  link.inputs.inputs.push_back({.type = 1, .from_file = false, .name = "a.cubin", .bytes = "x"});
  {
    std::ofstream out(record, std::ios::binary | std::ios::app);
    out << core::encode_handle_record(link);
  }
  const ProcessResult with_link =
      wine({prefix_ + "/bin/nvrtc-cache.exe", "replay", windows_path(record), "--json"}, in_second);
  EXPECT_EQ(with_link.exit_code, 1) << with_link.out << with_link.err;
  const nlohmann::json report = nlohmann::json::parse(with_link.out, nullptr, false);
  EXPECT_EQ(report["link_totals"].value("refused", 0), 1) << with_link.out;
  EXPECT_EQ(report.value("already_cached", 0), 1) << with_link.out;
  EXPECT_NE(with_link.out.find("replayed on Linux only"), std::string::npos) << with_link.out;
}

}  // namespace
}  // namespace nvrtc_cache::testing
