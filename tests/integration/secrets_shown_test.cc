// Passwords in tier URLs never show, through the real processes: every kind of URL the parser knows,
// with passwords holding '/', '?', '#', '@' or percent-encoding, through `nvrtc-cache config`
// (list, get, set), `remote check` (and --json), `doctor`, `stats` (and --json), `export` and `copy`
// (and --json), and the shim's warnings when the tier is unreachable (stderr and the log file).
// Nothing listens on the tiers' ports, so every check fails and says so, naming the tier.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"
#include "tests/support/nginx_server.h"
#include "tests/support/process.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

struct Password {
  std::string written;               // in the URL
  std::vector<std::string> secrets;  // what must not show: as written, decoded, and its pieces
};

const std::vector<Password> kPasswords = {
    {"Qm9vc2Vy/YmFzZTY0+Lw==", {"Qm9vc2Vy/YmFzZTY0+Lw==", "Qm9vc2Vy", "YmFzZTY0"}},
    {"tr7xqa?qp4kzb#zu9wyc", {"tr7xqa?qp4kzb#zu9wyc", "tr7xqa", "qp4kzb", "zu9wyc"}},
    {"ka3mwd/vb8nfe@wq5ehr", {"ka3mwd/vb8nfe@wq5ehr", "ka3mwd", "vb8nfe", "wq5ehr"}},
    {"dy4fjk%2Fce1pmo%40gz8sqt%23",
     {"dy4fjk%2Fce1pmo%40gz8sqt%23", "dy4fjk/ce1pmo@gz8sqt#", "dy4fjk", "ce1pmo", "gz8sqt"}},
};

// One URL of each kind with `userinfo`, on a loopback port where nobody listens.
std::vector<std::string> urls_with(const std::string& userinfo, std::uint16_t port, const std::string& dir) {
  const std::string at = "@127.0.0.1:" + std::to_string(port);
  const std::string quick = "timeout=300&connect-timeout=100";
  return {
      "redis://" + userinfo + at + "/1?" + quick,
      "rediss://" + userinfo + at + "?" + quick,
      "redis+cluster://" + userinfo + at + "?" + quick,
      "rediss+cluster://" + userinfo + at + "?" + quick,
      "redis+unix://" + userinfo + "@" + dir + "/absent.sock?" + quick,
      "http://" + userinfo + at + "/cache?" + quick,
      "https://" + userinfo + at + "/cache?layout=bazel&" + quick,
  };
}

void expect_hidden(const ProcessResult& r, const Password& password, const std::string& what) {
  for (const std::string& secret : password.secrets) {
    EXPECT_EQ(r.out.find(secret), std::string::npos) << what << " shows '" << secret << "' on stdout:\n" << r.out;
    EXPECT_EQ(r.err.find(secret), std::string::npos) << what << " shows '" << secret << "' on stderr:\n" << r.err;
  }
}

EnvVars remote_user(const TempDir& home, const std::string& remote) {
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  env["NVRTC_CACHE_REMOTE"] = remote;
  return env;
}

TEST(SecretsShown, NoCommandShowsAPasswordOfAnyUrlKind) {
  TempDir home;
  const std::uint16_t port = free_loopback_tcp_port();
  for (const Password& password : kPasswords) {
    for (const std::string& userinfo : {"ci:" + password.written, ":" + password.written}) {
      const std::vector<std::string> urls = urls_with(userinfo, port, home.path());
      std::string all;
      for (const std::string& url : urls) all += (all.empty() ? "" : " ") + url;
      // Each URL alone (its own check and messages), then all of them as one list.
      std::vector<std::string> remotes = urls;
      remotes.push_back(all);
      for (const std::string& remote : remotes) {
        SCOPED_TRACE(remote);
        const EnvVars env = remote_user(home, remote);
        const ProcessResult config = cli({"config"}, env);
        EXPECT_EQ(config.exit_code, 0) << config.err;
        EXPECT_NE(config.out.find("remote = "), std::string::npos) << config.out;
        EXPECT_NE(config.out.find(":***@"), std::string::npos) << config.out;
        expect_hidden(config, password, "config");
        const ProcessResult get = cli({"config", "get", "remote"}, env);
        EXPECT_EQ(get.exit_code, 0) << get.err;
        expect_hidden(get, password, "config get remote");
        const ProcessResult check = cli({"remote", "check"}, env);
        EXPECT_EQ(check.exit_code, 1) << "nothing listens: " << check.out << check.err;
        EXPECT_NE((check.out + check.err).find("***@"), std::string::npos) << check.out << check.err;
        expect_hidden(check, password, "remote check");
        const ProcessResult check_json = cli({"remote", "check", "--json"}, env);
        EXPECT_NE(check_json.out.find("\"tiers\""), std::string::npos) << check_json.out;
        expect_hidden(check_json, password, "remote check --json");
        const ProcessResult doctor = cli({"doctor", "--no-compile"}, env);
        EXPECT_NE(doctor.out.find("shared tier"), std::string::npos) << doctor.out;
        expect_hidden(doctor, password, "doctor");
        expect_hidden(cli({"stats"}, env), password, "stats");
        expect_hidden(cli({"stats", "--json"}, env), password, "stats --json");
      }
      // Written to the user file by `config set`, and read back from it.
      EnvVars file_user = remote_user(home, "");
      file_user["NVRTC_CACHE_REMOTE"] = std::nullopt;
      const ProcessResult set = cli({"config", "set", "remote", all}, file_user);
      EXPECT_EQ(set.exit_code, 0) << set.err;
      EXPECT_NE(set.out.find(":***@"), std::string::npos) << set.out;
      expect_hidden(set, password, "config set");
      const ProcessResult from_file = cli({"config"}, file_user);
      EXPECT_NE(from_file.out.find("(" + home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf"), std::string::npos)
          << from_file.out;
      expect_hidden(from_file, password, "config (user file)");
      expect_hidden(cli({"remote", "check"}, file_user), password, "remote check (user file)");
    }
  }
}

// `export --from`, `copy` (both ways) and their --json reports name a tier URL given on the command
// line the same way.
TEST(SecretsShown, ExportAndCopyNameATierWithoutItsPassword) {
  TempDir home;
  const std::uint16_t port = free_loopback_tcp_port();
  const EnvVars env = remote_user(home, "");
  for (const Password& password : kPasswords) {
    for (const std::string& url : urls_with("ci:" + password.written, port, home.path())) {
      SCOPED_TRACE(url);
      const ProcessResult exported = cli({"export", home.path() + "/a.tar", "--from", url, "--json"}, env);
      if (exported.exit_code != 0) {  // a failure names the tier (a cluster with no node answering exports nothing)
        EXPECT_NE((exported.out + exported.err).find("ci:***@"), std::string::npos) << exported.out << exported.err;
      }
      expect_hidden(exported, password, "export --from --json");
      expect_hidden(cli({"export", home.path() + "/a.tar", "--from", url}, env), password, "export --from");
      expect_hidden(cli({"copy", url, "local", "--json"}, env), password, "copy URL local --json");
      expect_hidden(cli({"copy", "local", url}, env), password, "copy local URL");
    }
  }
}

TEST(SecretsShown, RefusedUrlsAreNamedWithoutTheirPassword) {
  TempDir home;
  const Password ambiguous = {"xq7wnb", {"xq7wnb"}};
  for (const std::string remote : {"http://127.0.0.1:9/xq7wnb@site/c",  // ambiguous: a path or a password?
                                   "redis://u:xq7wnb@127.0.0.1:99999",  // a bad port
                                   "https://u:xq7wnb%zz@127.0.0.1",     // bad percent-encoding
                                   "ftp://u:xq7wnb/x@127.0.0.1",        // an unknown scheme
                                   "u:xq7wnb/x@127.0.0.1",              // no scheme at all
                                   "file://u:xq7wnb@/tmp/x"}) {         // a shared directory has no user information
    SCOPED_TRACE(remote);
    const EnvVars env = remote_user(home, remote);
    const ProcessResult check = cli({"remote", "check"}, env);
    EXPECT_FALSE(check.err.empty()) << "no message";  // the URL, or the setting without a scheme, refused
    expect_hidden(check, ambiguous, "remote check");
    expect_hidden(cli({"config"}, env), ambiguous, "config");
    expect_hidden(cli({"doctor", "--no-compile"}, env), ambiguous, "doctor");
    const ProcessResult set = cli({"config", "set", "remote", remote}, env);
    expect_hidden(set, ambiguous, "config set");
  }
  const ProcessResult said = cli({"remote", "check"}, remote_user(home, "http://127.0.0.1:9/xq7wnb@site/c"));
  EXPECT_NE(said.err.find("%40"), std::string::npos) << "no advice on how to write it: " << said.err;
}

// The shim, in a host whose tiers are unreachable: its warnings, on stderr and in a log file at the
// most verbose level, never hold a password; the host's results are NVRTC's all the same.
TEST(SecretsShown, TheShimsWarningsNeverShowAPassword) {
  TempDir root;
  const std::uint16_t port = free_loopback_tcp_port();
  const ProcessResult direct = probe({"trivial"}, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  int run = 0;
  for (const Password& password : kPasswords) {
    std::string all;
    for (const std::string& url : urls_with("ci:" + password.written, port, root.path()))
      all += (all.empty() ? "" : " ") + url;
    for (const std::string& url : urls_with(":" + password.written, port, root.path())) all += " " + url;
    for (const char* level : {"warn", "debug"}) {
      const std::string node = root.path() + "/node" + std::to_string(++run);
      const std::string log = node + ".log";
      EnvVars env = node_env(node, all + " http://127.0.0.1:9/" + password.written + "@site/c");  // and refused
      env["NVRTC_CACHE_LOG"] = level;
      const ProcessResult to_stderr = probe({"trivial"}, env);
      EXPECT_EQ(to_stderr.exit_code, 0) << to_stderr.err;
      EXPECT_EQ(to_stderr.out, direct.out);
      EXPECT_NE(to_stderr.err.find("127.0.0.1"), std::string::npos) << "no warning names a tier: " << to_stderr.err;
      expect_hidden(to_stderr, password, "the shim's stderr");
      env["NVRTC_CACHE_DIR"] = node + "-logged";  // cold again: the tiers are asked again
      env["NVRTC_CACHE_LOG_FILE"] = log;
      const ProcessResult to_file = probe({"trivial"}, env);
      EXPECT_EQ(to_file.exit_code, 0) << to_file.err;
      expect_hidden(to_file, password, "the shim's stderr (log file set)");
      const std::string logged = read_file(log);
      EXPECT_NE(logged.find("127.0.0.1"), std::string::npos) << "no warning names a tier: " << logged;
      for (const std::string& secret : password.secrets) {
        EXPECT_EQ(logged.find(secret), std::string::npos) << "the log shows '" << secret << "':\n" << logged;
      }
    }
  }
}

}  // namespace
}  // namespace nvrtc_cache
