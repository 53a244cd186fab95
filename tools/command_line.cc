// The nvrtc-cache command line (tools/command_line.h): ccache's short options are accepted first on
// the line, as the commands they stand for: -s (stats), -z (stats --zero), -C (clear), -M SIZE
// (config set max_size SIZE), -p (config), -V (version), and their long forms.
#include "tools/command_line.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string_view>
#include <system_error>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "util/spelling.h"

namespace nvrtc_cache::tools {

namespace {

struct Shortcut {
  const char* short_name;  // "" where ccache has none
  const char* long_name;
  std::vector<std::string> expansion;  // the command it stands for; empty: not supported here
  const char* help;                    // or, where not supported, what to use instead
  const char* value_name = nullptr;    // the value it takes (SIZE, KEY=VALUE, ...), if any
};

// ccache's options, as the commands they stand for, or the ones that mean nothing here with what
// to use instead.
const std::vector<Shortcut>& shortcuts() {
  static const std::vector<Shortcut> kShortcuts = {
      {"-s", "--show-stats", {"stats"}, "show the statistics (stats); -s -z shows, then zeroes"},
      {"-z", "--zero-stats", {"stats", "--zero"}, "zero the statistics (stats -z)"},
      {"-C", "--clear", {"clear"}, "remove every entry (clear)"},
      {"-c", "--cleanup", {"evict"}, "trim the cache to 60% of the cap if above 75% (evict)"},
      {"", "--evict-older-than", {"evict", "--older-than"}, "evict entries unused for AGE (evict --older-than)", "AGE"},
      {"-M",
       "--max-size",
       {"config", "set", "max_size"},
       "set max_size in the user file (config set max_size SIZE); no unit: GiB",
       "SIZE"},
      {"-o", "--set-config", {"config", "set"}, "set a setting in the user file (config set KEY VALUE)", "KEY=VALUE"},
      {"-k", "--get-config", {"config", "get"}, "print one setting's effective value (config get KEY)", "KEY"},
      {"-p", "--show-config", {"config"}, "show the settings (config)"},
      {"-V", "--version", {"version"}, "print the version (version)"},
      {"-x", "--show-compression", {}, "`nvrtc-cache stats` shows the stored sizes (zstd level `compression`)"},
      {"-X",
       "--recompress",
       {},
       "`nvrtc-cache config set compression LEVEL` sets the level of new results; stored ones keep theirs",
       "LEVEL"},
      {"-F", "--max-files", {}, "the cache is capped by size only: `nvrtc-cache -M SIZE`", "NUM"},
  };
  return kShortcuts;
}

bool names(const Shortcut& s, const std::string& word) {
  return (s.short_name[0] != '\0' && word == s.short_name) || word == s.long_name;
}

// The shortcut `word` names (its short or long name), or null.
const Shortcut* shortcut_named(const std::string& word) {
  for (const Shortcut& s : shortcuts()) {
    if (names(s, word)) return &s;
  }
  return nullptr;
}

// The value of `s` given as `first` (and the word after it, taken from `rest`): -M10G, -M 10G,
// --max-size=10G, --max-size 10G; nullopt when `first` is not `s`; `*problem` when it lacks its value.
std::optional<std::string> value_of(const Shortcut& s, const std::string& first, std::vector<std::string>& rest,
                                    std::string* problem) {
  if (names(s, first)) {
    if (rest.empty()) {
      *problem = first + " needs a " + s.value_name;
      return std::nullopt;
    }
    std::string value = rest.front();
    rest.erase(rest.begin());
    return value;
  }
  if (s.short_name[0] != '\0' && first.starts_with(s.short_name) && first.size() > 2) return first.substr(2);
  if (first.starts_with(std::string(s.long_name) + "=")) return first.substr(std::strlen(s.long_name) + 1);
  return std::nullopt;
}

// The arguments with a leading shortcut replaced by its command; "" or the problem.
std::string expand_shortcut(std::vector<std::string>& args) {
  if (args.size() < 2) return "";
  // ccache's -s -z (either order, by either name, or -sz): the statistics shown, then zeroed.
  const Shortcut* show = shortcut_named("-s");
  const Shortcut* zero = shortcut_named("-z");
  const auto first_two_are = [&](const Shortcut* a, const Shortcut* b) {
    return args.size() >= 3 && shortcut_named(args[1]) == a && shortcut_named(args[2]) == b;
  };
  const bool show_and_zero =
      args[1] == "-sz" || args[1] == "-zs" || first_two_are(show, zero) || first_two_are(zero, show);
  if (show_and_zero) {
    const std::size_t consumed = args[1].size() == 3 ? 1 : 2;
    std::vector<std::string> rest(args.begin() + 1 + static_cast<std::ptrdiff_t>(consumed), args.end());
    args.resize(1);
    args.insert(args.end(), {"stats", "--show", "--zero"});
    args.insert(args.end(), rest.begin(), rest.end());
    return "";
  }
  for (const Shortcut& s : shortcuts()) {
    const std::string first = args[1];
    std::vector<std::string> rest(args.begin() + 2, args.end());
    std::vector<std::string> replaced = s.expansion;
    if (s.value_name != nullptr) {
      std::string problem;
      const std::optional<std::string> value = value_of(s, first, rest, &problem);
      if (!problem.empty()) return problem;
      if (!value) continue;
      if (std::string_view(s.long_name) == "--set-config") {  // KEY=VALUE: config set KEY VALUE
        const std::size_t equals = value->find('=');
        if (equals == std::string::npos || equals == 0) return first + " needs KEY=VALUE (e.g. -o max_size=10G)";
        replaced.push_back(value->substr(0, equals));
        replaced.push_back(value->substr(equals + 1));
      } else {
        replaced.push_back(*value);
      }
    } else if (!names(s, first)) {
      continue;
    }
    if (s.expansion.empty()) return first + " is not supported here: " + s.help;
    args.resize(1);
    args.insert(args.end(), replaced.begin(), replaced.end());
    args.insert(args.end(), rest.begin(), rest.end());
    return "";
  }
  return "";
}

// The deepest command this parse reached.
const CLI::App* parsed_command(const CLI::App& app) {
  const CLI::App* deepest = &app;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : deepest->get_subcommands()) {
      deepest = sub;
      deeper = true;
      break;
    }
  }
  return deepest;
}

}  // namespace

namespace {

int run_command_line_unguarded(const CommandLine& line, int argc, char** argv) {
  // `run`'s arguments are another program's: they are never parsed here (only `run --help` is).
  if (line.run != nullptr && argc >= 2 && std::strcmp(argv[1], "run") == 0 &&
      !(argc >= 3 && (std::strcmp(argv[2], "--help") == 0 || std::strcmp(argv[2], "-h") == 0))) {
    return line.run(argc - 2, argv + 2);
  }
  std::vector<std::string> args(argv, argv + argc);
  CLI::App app{"nvrtc-cache: a drop-in cache for NVIDIA's runtime compiler (NVRTC)", "nvrtc-cache"};
  app.formatter(help_formatter());
  app.require_subcommand(1);
  app.footer(std::string("The cache lives in ") + line.cache_location +
             "; `nvrtc-cache config` shows every setting and where it comes from.");
  // Shown in --help; handled by expand_shortcut() before parsing.
  for (const auto& s : shortcuts()) {
    const std::string option_names =
        s.short_name[0] != '\0' ? std::string(s.short_name) + "," + s.long_name : std::string(s.long_name);
    CLI::Option* option =
        s.value_name != nullptr ? app.add_option(option_names)->type_name(s.value_name) : app.add_flag(option_names);
    option->description(s.expansion.empty() ? std::string("not supported: ") + s.help : std::string(s.help))
        ->group("ccache's options");
  }
  Outcome outcome;
  line.add_commands(app, outcome);

  if (const std::string problem = expand_shortcut(args); !problem.empty()) return usage_error(app, problem);
  if (args.size() < 2) return usage_error(app, "a command is required (`nvrtc-cache help` lists them)");
  if (!args[1].starts_with("-") && find_subcommand(app, args[1]) == nullptr) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
      names.push_back(sub->get_name());
    }
    const std::string suggestion = nvrtc_cache::util::closest(args[1], names);
    fmt::print(stderr,
               "nvrtc-cache: unknown command '{}'{}\nusage: nvrtc-cache COMMAND [OPTIONS] "
               "(`nvrtc-cache help` lists the commands)\n",
               args[1], suggestion.empty() ? "" : "; did you mean '" + suggestion + "'?");
    return 2;
  }
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 takes them last first
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());  // the help of the command the parse reached
    return 0;
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    return usage_error(*parsed_command(app), error.what());
  }
  return outcome.exit_code;
}

// The exit status of a command whose output could not be written: 141 (as if SIGPIPE had ended it)
// for a reader that went away (`nvrtc-cache ls | head -1` with SIGPIPE ignored), said nowhere; 1 for
// any other error, said once on stderr.
int output_failed(int error) {
  if (error == EPIPE) return 141;
  std::fprintf(stderr, "nvrtc-cache: cannot write the output: %s\n", std::strerror(error));
  return 1;
}

}  // namespace

int run_command_line(const CommandLine& line, int argc, char** argv) {
  int status = 0;
  try {
    status = run_command_line_unguarded(line, argc, argv);
  } catch (const std::system_error& error) {  // fmt::print's failed write
    return output_failed(error.code().value());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "nvrtc-cache: internal error: %s\n", error.what());
    return 1;
  }
  // What is still buffered: a failed flush is a failed command, never an abort at exit.
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) return output_failed(errno != 0 ? errno : EIO);
  return status;
}

void add_run_shared_options(CLI::App& run) {
  static std::string record_for_help;
  run.add_option("--record", record_for_help,
                 "Append a record of every compile CMD and its children make (hit or miss) to FILE, for "
                 "`nvrtc-cache replay` (sets NVRTC_CACHE_RECORD)")
      ->type_name("FILE");
  run.add_option("CMD")->description("the program to run, and its arguments");
}

}  // namespace nvrtc_cache::tools
