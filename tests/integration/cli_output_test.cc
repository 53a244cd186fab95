// The CLI's output into a pipe whose reader is gone, with SIGPIPE ignored (as under many supervisors
// and CI runners, and `nvrtc-cache inspect KEY | head -1` there): every command ends with status
// 141, as if SIGPIPE had ended it, and says nothing (`export -` says its archive is incomplete, exit
// status 1); never an abort. Real processes: bash starts the
// command after the pipe's reader (`true`) has exited.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

// `args` of the CLI with its stdout a pipe no one reads any more; SIGPIPE ignored.
ProcessResult into_closed_pipe(const std::vector<std::string>& args, const EnvVars& env) {
  std::vector<std::string> command = {"/bin/bash", "-c",
                                      "trap '' PIPE; set -o pipefail; { sleep 0.3; exec \"$@\"; } | true", "bash",
                                      NVRTC_CACHE_CLI_PATH};
  command.insert(command.end(), args.begin(), args.end());
  return run_process(command, env);
}

TEST(CliOutput, EveryCommandIntoAClosedPipeEndsQuietlyWith141) {
  TempDir home;
  EnvVars env = user_env(home);
  const std::string cache = home.path() + "/cache";
  env["NVRTC_CACHE_DIR"] = cache;
  const ProcessResult filled = probe({"trivial", "cubin"}, shim_env(cache));
  ASSERT_EQ(filled.exit_code, 0) << filled.err;
  const ProcessResult listed = cli({"ls", "--json"}, env);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const nlohmann::json entries = nlohmann::json::parse(listed.out, nullptr, false).value("entries", nlohmann::json());
  ASSERT_TRUE(entries.is_array() && !entries.empty()) << listed.out;
  const std::string key = entries[0].value("key", "");
  ASSERT_FALSE(key.empty()) << listed.out;
  // Precondition: the same commands write output when their reader stays.
  ASSERT_FALSE(cli({"inspect", key}, env).out.empty());

  const std::vector<std::vector<std::string>> commands = {{"stats"},
                                                          {"stats", "--json"},
                                                          {"ls"},
                                                          {"ls", "--json"},
                                                          {"inspect", key},
                                                          {"config"},
                                                          {"help"},
                                                          {"--version"},
                                                          {"--help"},
                                                          {"export", "-"},
                                                          {"doctor", "--no-compile"},
                                                          {"verify"},
                                                          {"remote", "--help"}};
  for (const std::vector<std::string>& args : commands) {
    SCOPED_TRACE(args[0] + (args.size() > 1 ? " " + args[1] : ""));
    const ProcessResult r = into_closed_pipe(args, env);
    if (args[0] == "export") {  // an archive cut short is a failed export, said so
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_NE(r.err.find("the archive is incomplete"), std::string::npos) << r.err;
    } else {
      EXPECT_EQ(r.exit_code, 141) << r.err;
    }
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Broken pipe"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace nvrtc_cache
