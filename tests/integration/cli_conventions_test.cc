// The nvrtc-cache command's conventions, as ccache has them, run as processes: --version / -V and
// the version wherever it is shown; a misspelled command; help, the man page
// and the completion; sizes without a unit (GiB) and in human units; ages that need a unit; `~` and
// $VAR in paths; every command's warnings about its settings, with "did you mean" (doctor's verdicts:
// cli_doctor_test.cc; ccache's options: cli_shortcuts_test.cc).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.h"
#include "store/lmdb/lmdb_store.h"
#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

// The version CMakeLists.txt's project() declares.
std::string project_version() {
  const std::string cmake = read_file(std::string(NVRTC_CACHE_SOURCE_DIR) + "/CMakeLists.txt");
  std::smatch match;
  EXPECT_TRUE(std::regex_search(cmake, match, std::regex(R"(project\(nvrtc_cache VERSION ([0-9]+\.[0-9]+\.[0-9]+))")));
  return match.size() > 1 ? match[1].str() : "?";
}

// Every visible command path: "stats", "config get", ...
std::vector<std::vector<std::string>> command_paths() {
  return {{},
          {"run"},
          {"stats"},
          {"clear"},
          {"evict"},
          {"verify"},
          {"config"},
          {"config", "get"},
          {"config", "set"},
          {"ls"},
          {"inspect"},
          {"extract"},
          {"doctor"},
          {"remote"},
          {"remote", "check"},
          {"remote", "evict"},
          {"export"},
          {"import"},
          {"copy"},
          {"replay"},
          {"help"},
          {"version"}};
}

TEST(CliVersion, FlagsCommandStatsDoctorAndManPageShowTheProjectVersion) {
  TempDir home;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  const std::string version = project_version();
  for (const char* spelling : {"--version", "-V", "version"}) {
    const auto shown = cli({spelling}, env);
    EXPECT_EQ(shown.exit_code, 0) << spelling << shown.err;
    EXPECT_EQ(shown.out, "nvrtc-cache " + version + "\n") << spelling;
  }
  const auto stats = cli({"stats", "--json"}, env);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(nlohmann::json::parse(stats.out)["version"], version);
  const auto doctor = cli({"doctor", "--no-compile"}, env);
  EXPECT_NE(doctor.out.find("nvrtc-cache " + version), std::string::npos) << doctor.out;
  const auto man = cli({"help", "--man"}, env);
  EXPECT_NE(man.out.find(".TH NVRTC-CACHE 1 \"\" \"nvrtc-cache " + version + "\""), std::string::npos);
}

TEST(CliHelp, AMisspelledCommandGetsDidYouMeanAndOneUsageLine) {
  const auto typo = cli({"statz"}, {});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.out, "");
  const std::vector<std::string> lines = lines_of(typo.err);
  ASSERT_EQ(lines.size(), 2u) << typo.err;
  EXPECT_EQ(lines[0], "nvrtc-cache: unknown command 'statz'; did you mean 'stats'?");
  EXPECT_TRUE(lines[1].starts_with("usage: nvrtc-cache COMMAND")) << lines[1];
  EXPECT_NE(cli({"evcit"}, {}).err.find("did you mean 'evict'?"), std::string::npos);
  EXPECT_NE(cli({"docter"}, {}).err.find("did you mean 'doctor'?"), std::string::npos);
  const auto unrelated = cli({"frobnicate"}, {});
  EXPECT_EQ(unrelated.exit_code, 2);
  EXPECT_EQ(unrelated.err.find("did you mean"), std::string::npos) << unrelated.err;
  EXPECT_EQ(lines_of(unrelated.err).size(), 2u) << unrelated.err;
  // A bad option is the command's usage line, not its whole help.
  const auto bad = cli({"ls", "--bogus"}, {});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("usage: nvrtc-cache ls [OPTIONS]"), std::string::npos) << bad.err;
  EXPECT_LE(lines_of(bad.err).size(), 3u) << bad.err;
}

TEST(CliHelp, HelpListsEveryCommandOnceOnOneLineAndHelpCommandShowsItsHelp) {
  const auto overview = cli({"help"}, {});
  EXPECT_EQ(overview.exit_code, 0) << overview.err;
  for (const auto& path : command_paths()) {
    if (path.size() != 1) continue;
    std::size_t found = 0;
    for (const std::string& line : lines_of(overview.out)) {
      found += line.starts_with("  " + path[0] + " ") ? 1 : 0;
    }
    EXPECT_EQ(found, 1u) << path[0] << " in " << overview.out;
  }
  EXPECT_EQ(overview.out.find("__"), std::string::npos) << "hidden commands stay hidden";
  for (const auto& path : command_paths()) {
    if (path.empty()) continue;
    std::vector<std::string> help_args = {"help"};
    help_args.insert(help_args.end(), path.begin(), path.end());
    std::vector<std::string> flag_args = path;
    flag_args.push_back("--help");
    const auto by_help = cli(help_args, {});
    EXPECT_EQ(by_help.exit_code, 0) << path[0];
    EXPECT_EQ(by_help.out, cli(flag_args, {}).out) << path[0];
  }
  EXPECT_NE(cli({"help", "stats"}, {}).out.find("Usage: nvrtc-cache stats"), std::string::npos);
  EXPECT_EQ(cli({"help", "nope"}, {}).exit_code, 2);
}

TEST(CliHelp, EveryLineOfEveryHelpFitsEightyColumns) {
  std::vector<std::vector<std::string>> invocations = {{"help"}};
  for (const auto& path : command_paths()) {
    std::vector<std::string> args = path;
    args.push_back("--help");
    invocations.push_back(args);
  }
  for (const auto& args : invocations) {
    const auto help = cli(args, {});
    EXPECT_EQ(help.exit_code, 0) << args.front();
    for (const std::string& line : lines_of(help.out)) {
      EXPECT_LE(line.size(), 80u) << (args.size() > 1 ? args[0] : "") << ": " << line;
    }
  }
}

TEST(CliHelp, TheManPageHasItsReferenceSectionsAndNoMarkdown) {
  const auto man = cli({"help", "--man"}, {});
  ASSERT_EQ(man.exit_code, 0);
  for (const char* section : {".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH COMMANDS", ".SH CONFIGURATION",
                              ".SH ENVIRONMENT", ".SH FILES", ".SH EXIT STATUS", ".SH EXAMPLES", ".SH SEE ALSO"}) {
    EXPECT_NE(man.out.find(section), std::string::npos) << section;
  }
  const std::string environment = man.out.substr(man.out.find(".SH ENVIRONMENT"));
  auto roff = [](std::string_view name) {
    std::string out;
    for (const char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out;
  };
  for (const core::SettingSpec& s : core::settings()) {
    EXPECT_NE(environment.find(".B " + roff(s.env) + "\n"), std::string::npos) << s.env;
  }
  for (const char* variable : {"NVRTC_CACHE_CONFIG", "NVRTC_CACHE_SYSTEM_CONFIG", "NVRTC_CACHE_SHIM",
                               "NVRTC_CACHE_REAL_NVRTC", "NVRTC_CACHE_REAL_NVJITLINK", "NVRTC_CACHE_REAL_NVVM"}) {
    EXPECT_NE(environment.find(".B " + std::string(variable) + "\n"), std::string::npos) << variable;
  }
  const std::string files = man.out.substr(man.out.find(".SH FILES"));
  for (const char* file :
       {"nvrtc\\-cache.conf", "/etc/nvrtc\\-cache.conf", "data.mdb", "counters", ".cache/nvrtc\\-cache"}) {
    EXPECT_NE(files.find(file), std::string::npos) << file;
  }
  EXPECT_EQ(man.out.find('`'), std::string::npos) << "Markdown's backticks are bold in roff";
  // The page renders without warnings where man(1) is installed.
  if (std::filesystem::exists("/usr/bin/groff")) {
    TempDir dir;
    write_file(dir.path() + "/nvrtc-cache.1", man.out);
    const auto rendered = run_process({"/bin/sh", "-c", "groff -man -Tutf8 -ww " + dir.path() + "/nvrtc-cache.1"});
    EXPECT_EQ(rendered.exit_code, 0) << rendered.err;
    EXPECT_EQ(rendered.err, "") << "groff's warnings";
  }
}

// Completes `words` (the line as bash splits it, the cursor on the last word) with the generated script.
std::set<std::string> complete(const std::vector<std::string>& words, const std::string& cwd = "") {
  const std::string script = cli({"help", "--bash-completion"}, {}).out;
  std::string array;
  for (const std::string& w : words) array += " '" + w + "'";
  const std::string program = script + "\nCOMP_WORDS=(" + array + ")\nCOMP_CWORD=" + std::to_string(words.size() - 1) +
                              "\n_nvrtc_cache\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const auto run = run_process({"/bin/bash", "-c", program}, {}, cwd);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::set<std::string> out;
  for (const std::string& line : lines_of(run.out)) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

TEST(CliHelp, CompletionListsEachCommandOnceAndCompletesRunsOptions) {
  const std::string script = cli({"help", "--bash-completion"}, {}).out;
  EXPECT_EQ(run_process({"/bin/bash", "-n", "-c", script}).exit_code, 0);
  // Each command once in the script's list of commands (a set would hide a duplicate).
  const std::string program = script +
                              "\nCOMP_WORDS=(nvrtc-cache '')\nCOMP_CWORD=1\n_nvrtc_cache\n"
                              "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const std::vector<std::string> commands = lines_of(run_process({"/bin/bash", "-c", program}).out);
  const std::set<std::string> unique(commands.begin(), commands.end());
  EXPECT_EQ(unique.size(), commands.size()) << script;
  EXPECT_EQ(unique.count("run"), 1u);
  EXPECT_EQ(unique.count("version"), 1u);
  std::size_t run_cases = 0;
  for (const std::string& line : lines_of(script)) run_cases += line.find(" run)") != std::string::npos ? 1 : 0;
  EXPECT_EQ(run_cases, 1u) << "one case for run";

  EXPECT_EQ(complete({"nvrtc-cache", "run", "--pr"}), std::set<std::string>{"--proxy"});
  EXPECT_EQ(complete({"nvrtc-cache", "run", "--rec"}), std::set<std::string>{"--record"});
  EXPECT_EQ(complete({"nvrtc-cache", "sta"}), std::set<std::string>{"stats"});
  EXPECT_EQ(complete({"nvrtc-cache", "-"}).count("--show-stats"), 1u);
  EXPECT_EQ(complete({"nvrtc-cache", "config", "get", "max_s"}), std::set<std::string>{"max_size"});
  EXPECT_EQ(complete({"nvrtc-cache", "help", "doc"}), std::set<std::string>{"doctor"});
  TempDir dir;
  write_file(dir.path() + "/train.py", "");
  // After run's command: that command's arguments (files), not run's options.
  EXPECT_EQ(complete({"nvrtc-cache", "run", "python", "tra"}, dir.path()), std::set<std::string>{"train.py"});
  EXPECT_EQ(complete({"nvrtc-cache", "run", "--proxy", "--", "python", "tra"}, dir.path()),
            std::set<std::string>{"train.py"});
}

TEST(CliSizes, AUnitlessSizeIsGibAndSizesAreShownInHumanUnits) {
  TempDir home;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  write_file(home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf", "max_size = 10\n");
  EXPECT_EQ(cli({"config", "get", "max_size"}, env).out, "10G\n");
  const auto human = cli({"stats"}, env);
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("size              0 B stored, compressed (0.0% of the 10.0 GiB cap)"), std::string::npos)
      << human.out;
  EXPECT_NE(human.out.find("hit rate          – (no compile looked up)"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("compiles (NVRTC)  0 hits, 0 misses, 0 uncacheable"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("results           0 (0 B)"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("manifests         0 (0 B;"), std::string::npos) << human.out;
  env["NVRTC_CACHE_MAX_SIZE"] = "1.5";
  EXPECT_EQ(cli({"config", "get", "max_size"}, env).out, "1536M\n");
  for (const char* size : {"10G", "500M", "1.5G", "64MiB"}) {
    env["NVRTC_CACHE_MAX_SIZE"] = size;
    const auto shown = cli({"config", "get", "max_size"}, env);
    EXPECT_EQ(shown.err, "") << size;
  }
  // An age needs its unit.
  const auto no_unit = cli({"evict", "--older-than", "30"}, env);
  EXPECT_EQ(no_unit.exit_code, 2);
  EXPECT_NE(no_unit.err.find("'30' is not an age"), std::string::npos) << no_unit.err;
  EXPECT_NE(no_unit.err.find("s, m, h, d or w"), std::string::npos) << no_unit.err;
  EXPECT_EQ(cli({"evict", "--older-than", "30d"}, env).exit_code, 0);
  EXPECT_EQ(cli({"export", home.path() + "/x.nvrc", "--newer-than", "7"}, env).exit_code, 2);
}

TEST(CliSettings, PathsExpandTildeAndVariablesInFilesAndEnvironment) {
  TempDir home;
  EnvVars env = user_env(home);
  env["TEAM"] = "gpu";
  const std::string user = home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf";
  write_file(user, "cache_dir = ~/caches/$TEAM\nrecord = ${HOME}/records/${TEAM}.rec\n");
  EXPECT_EQ(cli({"config", "get", "cache_dir"}, env).out, home.path() + "/caches/gpu\n");
  EXPECT_EQ(cli({"config", "get", "record"}, env).out, home.path() + "/records/gpu.rec\n");
  const auto stats = cli({"stats", "--json"}, env);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(nlohmann::json::parse(stats.out)["directory"], home.path() + "/caches/gpu");
  env["NVRTC_CACHE_DIR"] = "~/elsewhere";
  EXPECT_EQ(cli({"config", "get", "cache_dir"}, env).out, home.path() + "/elsewhere\n");
  env["NVRTC_CACHE_DIR"] = "$NO_SUCH_VARIABLE_HERE/x";
  const auto unset = cli({"config", "get", "cache_dir"}, env);
  EXPECT_EQ(unset.out, home.path() + "/caches/gpu\n") << "the file's value is kept";
  EXPECT_NE(unset.err.find("NVRTC_CACHE_DIR='$NO_SUCH_VARIABLE_HERE/x' names $NO_SUCH_VARIABLE_HERE, which is not set"),
            std::string::npos)
      << unset.err;
  // config set keeps the text as given, and checks it expanded.
  env.erase("NVRTC_CACHE_DIR");
  EXPECT_EQ(cli({"config", "set", "cache_dir", "$HOME/c"}, env).exit_code, 0);
  EXPECT_NE(read_file(user).find("cache_dir = $HOME/c\n"), std::string::npos) << read_file(user);
  EXPECT_EQ(cli({"config", "get", "cache_dir"}, env).out, home.path() + "/c\n");
}

TEST(CliSettings, EveryCommandWarnsAboutABadSettingOnceAsTheShimDoes) {
  TempDir home, cache;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = "relative";
  const std::string warning =
      "NVRTC_CACHE_DIR='relative' is not an absolute path; using " + home.path() + "/.cache/nvrtc-cache (default)";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"stats"},
                                             {"ls"},
                                             {"verify"},
                                             {"evict"},
                                             {"config"},
                                             {"config", "get", "max_size"},
                                             {"inspect", "0000"},
                                             {"export", home.path() + "/a.nvrc"}}) {
    const auto run = cli(args, env);
    std::size_t count = 0;
    for (std::size_t at = run.err.find(warning); at != std::string::npos; at = run.err.find(warning, at + 1)) ++count;
    EXPECT_EQ(count, 1u) << args[0] << ": " << run.err;
    EXPECT_NE(run.err.find("nvrtc-cache: " + warning + "\n"), std::string::npos) << args[0] << ": " << run.err;
  }
  // The shim's words.
  EnvVars shimmed = testing::shim_env(cache.path());
  shimmed.insert(env.begin(), env.end());
  shimmed["NVRTC_CACHE_DIR"] = "relative";
  const auto probed = testing::probe({"trivial"}, shimmed);
  EXPECT_NE(probed.err.find(warning), std::string::npos) << probed.err;
}

TEST(CliSettings, MisspelledVariablesAndKeysGetDidYouMean) {
  TempDir home;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  env["NVRTC_CACHE_MAXSIZE"] = "3";
  env["NVRTC_CACHE_LOGFILE"] = "/tmp/x";
  env["NVRTC_CACHE_SOME_OTHER_TOOLS_SETTING"] = "1";
  write_file(home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf", "max_sise = 3\nNVRTC_CACHE_LOG = debug\n");
  const auto stats = cli({"stats"}, env);
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  for (const std::string expected :
       {"nvrtc-cache: NVRTC_CACHE_MAXSIZE is not a variable nvrtc-cache reads; did you mean NVRTC_CACHE_MAX_SIZE?\n",
        "nvrtc-cache: NVRTC_CACHE_LOGFILE is not a variable nvrtc-cache reads; did you mean NVRTC_CACHE_LOG_FILE?\n",
        "nvrtc-cache.conf:1: unknown setting 'max_sise'; did you mean 'max_size'?",
        "nvrtc-cache.conf:2: unknown setting 'NVRTC_CACHE_LOG'; did you mean 'log'?"}) {
    EXPECT_NE(stats.err.find(expected), std::string::npos) << expected << " in " << stats.err;
  }
  EXPECT_EQ(stats.err.find("SOME_OTHER_TOOLS"), std::string::npos) << "another tool's variable is doctor's to list";
  EXPECT_EQ(lines_of(stats.err).size(), 4u) << stats.err;
  const auto get = cli({"config", "get", "max_sise"}, env);
  EXPECT_EQ(get.exit_code, 2);
  EXPECT_NE(get.err.find("unknown setting 'max_sise'; did you mean 'max_size'?"), std::string::npos) << get.err;

  const auto doctor = cli({"doctor", "--no-compile"}, env);
  EXPECT_NE(doctor.out.find("WARN  configuration    NVRTC_CACHE_MAXSIZE is not a variable nvrtc-cache reads; did "
                            "you mean NVRTC_CACHE_MAX_SIZE?"),
            std::string::npos)
      << doctor.out;
  EXPECT_NE(doctor.out.find("note  configuration    NVRTC_CACHE_SOME_OTHER_TOOLS_SETTING is not a variable"),
            std::string::npos)
      << doctor.out;
  EXPECT_EQ(doctor.out.find("ok    configuration"), std::string::npos) << doctor.out;
}

// ls fits the width it is given ($COLUMNS, else 80 when not a terminal), says each compile's status
// (a cached compile error is not listed as a success), and labels a program named default_program
// (as cuda.core names every program) or nothing by its first name expression, its first kernel, or
// its options.
TEST(CliLs, FitsTheWidthShowsEachStatusAndABetterLabelThanDefaultProgram) {
  TempDir dir;
  const std::string cache = dir.path() + "/cache";
  ASSERT_EQ(testing::probe({"cubin", "compile_error", "template", "null_name"}, testing::shim_env(cache)).exit_code, 0);
  EnvVars named = testing::shim_env(cache);
  write_file(dir.path() + "/k.cu", "__global__ void saxpy_kernel(float* x) { x[0] *= 2; }\n");
  named["PROBE_SOURCE_FILE"] = dir.path() + "/k.cu";
  named["PROBE_PROGRAM_NAME"] = "default_program";
  named["PROBE_ARCH"] = "-arch=compute_80";
  named["NVRTC_CACHE_LOG"] = "debug";
  named["NVRTC_CACHE_LOG_FILE"] = dir.path() + "/log.txt";
  ASSERT_EQ(testing::probe({"source_file"}, named).exit_code, 0);
  ASSERT_EQ(testing::probe({"source_file"}, named).exit_code, 0);
  // The log names it as ls does, with the name it was given.
  const std::string log = read_file(dir.path() + "/log.txt");
  EXPECT_NE(log.find("miss program 'saxpy_kernel' (name 'default_program'; key "), std::string::npos) << log;
  EXPECT_NE(log.find("stored program 'saxpy_kernel' (name 'default_program'; key "), std::string::npos) << log;
  EXPECT_NE(log.find("hit program 'saxpy_kernel' (name 'default_program'; key "), std::string::npos) << log;
  EXPECT_NE(log.find("ms)"), std::string::npos) << "a miss says how long NVRTC took: " << log;
  named.erase("NVRTC_CACHE_LOG");
  named.erase("NVRTC_CACHE_LOG_FILE");
  write_file(dir.path() + "/k.cu",
             "template <typename T> __global__ void scaled(T* x) { x[0] *= 3; }\n"
             "template __global__ void scaled<double>(double*);\n");
  named["PROBE_OPTIONS"] = "-lineinfo";
  ASSERT_EQ(testing::probe({"source_file"}, named).exit_code, 0);

  EnvVars env = {{"NVRTC_CACHE_DIR", cache}, {"COLUMNS", std::nullopt}};
  const nlohmann::json listed = nlohmann::json::parse(cli({"ls", "--json"}, env).out);
  std::map<std::string, nlohmann::json> by_label;
  for (const auto& e : listed["entries"]) by_label[e["label"].get<std::string>()] = e;
  ASSERT_EQ(by_label.size(), 6u) << listed.dump(2);
  EXPECT_EQ(by_label["cubin.cu"]["status"], "ok");
  EXPECT_EQ(by_label["error.cu"]["status"], "compile error");
  EXPECT_EQ(by_label["template.cu"]["program_name"], "template.cu") << "a real name is kept";
  EXPECT_EQ(by_label["axpy"]["program_name"], "(unnamed)") << "no name: the PTX's kernel";
  EXPECT_EQ(by_label["saxpy_kernel"]["program_name"], "default_program") << "demangled";
  EXPECT_EQ(by_label["scaled<double>"]["program_name"], "default_program");

  const auto table = cli({"ls"}, env);
  EXPECT_EQ(table.exit_code, 0) << table.err;
  const std::vector<std::string> rows = lines_of(table.out);
  ASSERT_EQ(rows.size(), 7u) << table.out;
  for (const std::string& row : rows) EXPECT_LE(row.size(), 80u) << row;
  for (const std::string& row : rows) {
    if (row.find("error.cu") != std::string::npos) {
      EXPECT_NE(row.find(" compile error "), std::string::npos) << row;
    }
    if (row.find("cubin.cu") != std::string::npos) {
      EXPECT_NE(row.find(" ok "), std::string::npos) << row;
    }
  }
  EXPECT_NE(table.out.find("  saxpy_kernel "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("  scaled<double> "), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("default_program"), std::string::npos) << table.out;
  for (const char* columns : {"50", "120", "200"}) {
    env["COLUMNS"] = columns;
    const auto fitted = cli({"ls"}, env);
    for (const std::string& row : lines_of(fitted.out)) {
      EXPECT_LE(row.size(), std::stoul(columns)) << columns << ": " << row;
      EXPECT_TRUE(row.find("status") != std::string::npos || row.find(" ok") != std::string::npos ||
                  row.find(" compile error") != std::string::npos)
          << "the status is always shown: " << row;
    }
  }
  const auto wide = cli({"ls"}, env);
  EXPECT_NE(wide.out.find(" -arch=sm_80 -lineinfo\n"), std::string::npos) << "options when there is room: " << wide.out;
}

// One name for a program everywhere: a program named by a temporary path (CuPy's) or
// "default_program" (cuda.core's) is called by its kernel in ls, stats and inspect, `inspect NAME`
// finds it, and `export --match` selects it by that name.
TEST(CliNames, OneNameEverywhereInspectByNameAndExportMatch) {
  TempDir dir;
  const std::string cache = dir.path() + "/cache";
  EnvVars named = testing::shim_env(cache);
  write_file(dir.path() + "/k.cu", "__global__ void reduce_rows(float* x) { x[0] += 1; }\n");
  named["PROBE_SOURCE_FILE"] = dir.path() + "/k.cu";
  named["PROBE_PROGRAM_NAME"] = "/tmp/tmpq81xk2/4fd2a1c9e0b7.cu";
  ASSERT_EQ(testing::probe({"source_file"}, named).exit_code, 0);
  write_file(dir.path() + "/k.cu", "__global__ void block_sum(int* x) { x[0] *= 5; }\n");
  named["PROBE_PROGRAM_NAME"] = "default_program";
  ASSERT_EQ(testing::probe({"source_file"}, named).exit_code, 0);

  const EnvVars env = {{"NVRTC_CACHE_DIR", cache}, {"COLUMNS", "120"}};
  const std::string table = cli({"ls"}, env).out;
  EXPECT_NE(table.find("  reduce_rows "), std::string::npos) << table;
  EXPECT_NE(table.find("  block_sum "), std::string::npos) << table;
  EXPECT_EQ(table.find("/tmp/tmpq81xk2"), std::string::npos) << table;
  const nlohmann::json stats = nlohmann::json::parse(cli({"stats", "--json"}, env).out);
  std::set<std::string> top;
  for (const auto& e : stats["top_compile_time"]) top.insert(e["program_name"].get<std::string>());
  EXPECT_EQ(top, (std::set<std::string>{"reduce_rows", "block_sum"})) << stats.dump(2);

  const auto by_name = cli({"inspect", "reduce_rows"}, env);
  EXPECT_EQ(by_name.exit_code, 0) << by_name.err;
  EXPECT_NE(by_name.out.find("reduce_rows"), std::string::npos) << by_name.out;
  const auto given_name = cli({"inspect", "/tmp/tmpq81xk2/4fd2a1c9e0b7.cu"}, env);
  EXPECT_EQ(given_name.exit_code, 0) << "the name it was given finds it too: " << given_name.err;
  const auto unknown = cli({"inspect", "no_such_kernel"}, env);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no program is named 'no_such_kernel'"), std::string::npos) << unknown.err;

  const auto exported = cli({"export", dir.path() + "/sum.nvrc", "--match", "block_*", "--json"}, env);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(nlohmann::json::parse(exported.out)["results"], 1) << exported.out;
}

// stats tells results ('R' keys) and manifests ('M' keys) apart, shows the size as a part of the cap,
// and when the counters were last zeroed.
TEST(CliStats, ResultsAndManifestsApartAPartOfTheCapAndWhenZeroed) {
  TempDir dir;
  const std::string cache = dir.path() + "/cache";
  ASSERT_EQ(testing::probe({"cubin", "template"}, testing::shim_env(cache)).exit_code, 0);
  const EnvVars env = {{"NVRTC_CACHE_DIR", cache}, {"NVRTC_CACHE_MAX_SIZE", "64M"}};
  const nlohmann::json s = nlohmann::json::parse(cli({"stats", "--json"}, env).out);
  EXPECT_EQ(s["results"], 2);
  EXPECT_EQ(s["manifests"], 2);
  EXPECT_EQ(s["entries"], 4 + s["directory_markers"].get<int>());
  EXPECT_GT(s["result_bytes"].get<std::uint64_t>(), s["manifest_bytes"].get<std::uint64_t>());
  EXPECT_EQ(s["max_bytes"], 64ull << 20);
  EXPECT_NEAR(s["used_fraction"].get<double>(), s["bytes"].get<double>() / (64 << 20), 1e-9);
  EXPECT_TRUE(s["zeroed_at"].is_null());
  const std::string human = cli({"stats"}, env).out;
  EXPECT_NE(human.find("results           2 ("), std::string::npos) << human;
  EXPECT_NE(human.find("manifests         2 ("), std::string::npos) << human;
  EXPECT_TRUE(
      std::regex_search(human, std::regex(R"(size +[0-9.]+ KiB stored, compressed \([0-9.]+% of the 64\.0 MiB cap\))")))
      << human;
  EXPECT_NE(human.find("counting since    never zeroed"), std::string::npos) << human;
  ASSERT_EQ(cli({"stats", "-z"}, env).exit_code, 0);
  const std::string zeroed = cli({"stats"}, env).out;
  EXPECT_TRUE(std::regex_search(zeroed, std::regex(R"(counting since    20[0-9-]+ [0-9:]+ \(stats -z\))"))) << zeroed;
  EXPECT_NE(zeroed.find("results           2 ("), std::string::npos) << "entries are kept";
}

// clear --compact and evict --compact rewrite data.mdb without its free pages, so that it shrinks; while
// another process (here: this test) has the cache open, compaction is refused, naming it, and nothing
// is replaced. The compacted store works as before.
TEST(CliCompact, ClearAndEvictCompactShrinkTheDataFileAndRefuseWhileTheCacheIsInUse) {
  TempDir dir;
  const std::string data = dir.path() + "/store/data.mdb";
  auto fill = [&](int count) {
    store::Status status;
    auto cache = store::LmdbStore::open({dir.path() + "/store", 64ull << 20}, &status);
    ASSERT_TRUE(cache) << status.message();
    for (int i = 0; i < count; ++i)
      ASSERT_TRUE(cache->put("k" + std::to_string(i), std::string(50000, static_cast<char>('a' + i % 26))));
  };
  fill(300);
  const auto filled = std::filesystem::file_size(data);
  ASSERT_GT(filled, 10u << 20);
  auto inode = [&] {
    struct stat st {};
    return ::stat(data.c_str(), &st) == 0 ? st.st_ino : 0;
  };
  const auto original = inode();
  const EnvVars env = {{"NVRTC_CACHE_DIR", dir.path()}, {"NVRTC_CACHE_MAX_SIZE", "64M"}};
  {
    store::Status status;
    auto held = store::LmdbStore::open({dir.path() + "/store", 64ull << 20}, &status);  // another user of the cache
    ASSERT_TRUE(held) << status.message();
    const auto refused = cli({"clear", "--compact"}, env);
    EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
    EXPECT_NE(refused.out.find("cleared "), std::string::npos) << "the clear itself is done";
    EXPECT_NE(refused.err.find(data + " is in use by another process (process " + std::to_string(::getpid()) +
                               " has it open); compaction needs the cache to itself"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(inode(), original) << "nothing replaced";
    EXPECT_GE(std::filesystem::file_size(data), filled);
    EXPECT_FALSE(held->get("k1")) << "cleared";
  }
  const auto compacted = cli({"clear", "--compact"}, env);
  EXPECT_EQ(compacted.exit_code, 0) << compacted.err;
  EXPECT_NE(compacted.out.find("compacted the store's file from "), std::string::npos) << compacted.out;
  EXPECT_LT(std::filesystem::file_size(data), filled / 20);
  for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/store")) {
    EXPECT_FALSE(e.path().filename().string().starts_with("data.mdb.compact")) << "no temporary left";
  }
  EXPECT_EQ(std::filesystem::status(data).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);

  // The store works after compaction: filled again, trimmed by evict --compact, read and written.
  fill(300);
  const auto refilled = std::filesystem::file_size(data);
  const auto trimmed = cli({"evict", "--max-size", "1M", "--compact"}, env);
  EXPECT_EQ(trimmed.exit_code, 0) << trimmed.err;
  EXPECT_NE(trimmed.out.find("compacted the store's file from "), std::string::npos) << trimmed.out;
  EXPECT_LT(std::filesystem::file_size(data), refilled / 5);
  const auto stats = cli({"stats", "--json"}, env);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(nlohmann::json::parse(stats.out)["entries"], 20);
  store::Status status;
  auto reopened = store::LmdbStore::open({dir.path() + "/store", 64ull << 20}, &status);
  ASSERT_TRUE(reopened) << status.message();
  // Every entry eviction kept reads back whole (which ones are kept depends on access times a second
  // apart: entries written within one second are evicted in key order).
  int intact = 0;
  for (int i = 0; i < 300; ++i) {
    if (reopened->get("k" + std::to_string(i)) == std::string(50000, static_cast<char>('a' + i % 26))) ++intact;
  }
  EXPECT_EQ(intact, 20) << "an entry kept by the eviction does not read back whole";
  EXPECT_TRUE(reopened->put("new", "value").is_ok());
  EXPECT_EQ(reopened->get("new"), "value");
}

}  // namespace
}  // namespace nvrtc_cache
