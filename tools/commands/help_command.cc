// nvrtc-cache help [COMMAND...] [--man | --bash-completion], nvrtc-cache version: the overview (one
// line per command), a command's help, the man page (roff) and the bash completion script, all
// generated from the CLI11 definitions of the commands and from the settings table, so they cannot
// drift from --help. CMake runs the last two at build time and installs them. Every line of help is
// fitted to kHelpColumns.
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/settings.h"
#include "tools/commands.h"

namespace nvrtc_cache::tools {

std::string fit_to_columns(const std::string& text, std::size_t columns) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t newline = text.find('\n', start);
    const std::size_t end = newline == std::string::npos ? text.size() : newline;
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    const bool had_newline = newline != std::string::npos;
    if (line.size() <= columns) {
      out.append(line);
      if (had_newline) out += '\n';
      continue;
    }
    // The indentation of continuation lines: the column where the line's text starts, after its
    // leading spaces and, for an option or a command, after its name and the gap of 2+ spaces.
    std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string_view::npos) indent = 0;
    if (const std::size_t gap = line.find("  ", indent); gap != std::string_view::npos) {
      const std::size_t text_start = line.find_first_not_of(' ', gap);
      if (text_start != std::string_view::npos && text_start < columns / 2) indent = text_start;
    }
    if (indent >= columns / 2) indent = 4;
    std::string current;
    std::size_t position = 0;
    // Words are split at single spaces after the indentation; the part before it is kept whole.
    const std::size_t head = line.find_first_not_of(' ', std::min(indent, line.size()));
    std::string_view prefix = line.substr(0, head == std::string_view::npos ? line.size() : head);
    std::string_view rest = head == std::string_view::npos ? std::string_view() : line.substr(head);
    current = std::string(prefix);
    position = current.size();
    bool first_word = true;
    while (!rest.empty()) {
      const std::size_t space = rest.find(' ');
      const std::string_view word = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
      if (word.empty()) continue;
      if (!first_word && position + 1 + word.size() > columns) {
        out += current + "\n";
        current = std::string(indent, ' ');
        position = indent;
        first_word = true;
      }
      if (!first_word) {
        current += ' ';
        ++position;
      }
      current.append(word);
      position += word.size();
      first_word = false;
    }
    out += current;
    if (had_newline) out += '\n';
  }
  return out;
}

namespace {

class FittedFormatter : public CLI::Formatter {
 public:
  FittedFormatter() { column_width(26); }
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    return fit_to_columns(CLI::Formatter::make_help(app, std::move(name), mode));
  }
};

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}

// A description's first clause (up to ". ", ": " or "; " outside parentheses), or what comes
// before its first parenthesis when that is too long for `width`.
std::string first_sentence(const std::string& description, std::size_t width) {
  std::size_t end = description.size(), paren = std::string::npos;
  int depth = 0;
  for (std::size_t i = 0; i + 1 < description.size(); ++i) {
    const char c = description[i];
    if (c == '(') {
      if (depth++ == 0 && paren == std::string::npos) paren = i;
    } else if (c == ')') {
      --depth;
    } else if (depth == 0 && description[i + 1] == ' ' && (c == '.' || c == ':' || c == ';')) {
      end = i;
      break;
    }
  }
  if (end > width && paren != std::string::npos && paren < end) end = paren;
  while (end > 0 && (description[end - 1] == '.' || description[end - 1] == ' ')) --end;
  return description.substr(0, end);
}

// Markdown's `code` as roff's bold, everything else escaped: backslashes, dashes, and a leading
// '.' or '\''.
std::string roff(std::string_view text) {
  std::string out;
  bool code = false;
  for (const char c : text) {
    if (c == '`') {
      out += code ? "\\fR" : "\\fB";
      code = !code;
    } else if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (code) out += "\\fR";
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

void print_options_roff(const CLI::App& command) {
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_name() == "--help" || option->get_name().empty()) continue;
    fmt::print(".TP\n.B {}\n{}\n", roff(option->get_name(false, true)), roff(option->get_description()));
  }
}

void print_man(const CLI::App& app) {
  fmt::print(".TH NVRTC-CACHE 1 \"\" \"nvrtc-cache {}\" \"User Commands\"\n", roff(kVersion));
  fmt::print(".SH NAME\nnvrtc\\-cache \\- a drop\\-in cache for NVIDIA's runtime compiler (NVRTC)\n");
  fmt::print(
      ".SH SYNOPSIS\n.B nvrtc\\-cache\n.I command\n[\\fIoptions\\fR]\n.br\n.B nvrtc\\-cache run\n"
      "[\\fB\\-\\-proxy\\fR] [\\fB\\-\\-record\\fR \\fIFILE\\fR] [\\fB\\-\\-\\fR] \\fICMD\\fR [\\fIARGS\\fR...]\n"
      ".br\n.B nvrtc\\-cache\n[\\fB\\-s\\fR | \\fB\\-z\\fR | \\fB\\-C\\fR | \\fB\\-M\\fR \\fISIZE\\fR | "
      "\\fB\\-p\\fR | \\fB\\-V\\fR]\n");
  fmt::print(".SH DESCRIPTION\n{}\n.PP\nThis page describes nvrtc\\-cache {}.\n", roff(app.get_description()),
             roff(kVersion));
  fmt::print(".SH OPTIONS\nccache's options, accepted first on the line, as the commands they stand for:\n");
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_name() == "--help" || option->get_group() != "ccache's options") continue;
    fmt::print(".TP\n.B {}\n{}\n", roff(option->get_name(false, true)), roff(option->get_description()));
  }
  fmt::print(".SH COMMANDS\n");
  for (const CLI::App* sub : visible_subcommands(app)) {
    fmt::print(".SS {}\n{}\n", roff(sub->get_name()), roff(sub->get_description()));
    print_options_roff(*sub);
    for (const CLI::App* nested : visible_subcommands(*sub)) {
      fmt::print(".TP\n.B {} {}\n{}\n", roff(sub->get_name()), roff(nested->get_name()),
                 roff(nested->get_description()));
    }
  }
  fmt::print(
      ".SH CONFIGURATION\nSettings come from the environment, the user file "
      "(\\fI$XDG_CONFIG_HOME/nvrtc\\-cache/nvrtc\\-cache.conf\\fR, else "
      "\\fI~/.config/nvrtc\\-cache/nvrtc\\-cache.conf\\fR, or \\fB$NVRTC_CACHE_CONFIG\\fR), the system file "
      "(\\fI/etc/nvrtc\\-cache.conf\\fR) and defaults, in that order. Files hold \\fIkey = value\\fR lines; "
      "lines starting with # are comments. In a path, a leading ~ is $HOME and $VAR or ${{VAR}} is that "
      "variable. A size without a unit is in GiB (10 is 10G). A bad value, an unknown key or a misspelled "
      "NVRTC_CACHE_ variable gets one warning, from every command and from the shim.\n");
  for (const core::SettingSpec& s : core::settings()) {
    fmt::print(".TP\n.BR {} \" (\" {} )\n{} Default: {}.\n", roff(s.key), roff(s.env), roff(s.help),
               roff(s.default_text));
  }
  fmt::print(".SH ENVIRONMENT\nEvery setting above has its variable, which takes precedence over the files:\n");
  for (const core::SettingSpec& s : core::settings()) {
    fmt::print(".TP\n.B {}\nThe {} setting.\n", roff(s.env), roff(s.key));
  }
  fmt::print(".PP\nAnd:\n");
  for (const core::OtherVariable& v : core::other_variables()) {
    fmt::print(".TP\n.B {}\n{}\n", roff(v.name), roff(v.help));
  }
  fmt::print(
      ".TP\n.B LD_PRELOAD\nnvrtc\\-cache run puts the shim first on it (the rest is kept).\n"
      ".TP\n.B COLUMNS\nThe width ls fits its table to (else the terminal's, else 80).\n");
  fmt::print(
      ".SH FILES\n"
      ".TP\n.I ~/.config/nvrtc\\-cache/nvrtc\\-cache.conf\nThe user configuration file "
      "($XDG_CONFIG_HOME/nvrtc\\-cache/nvrtc\\-cache.conf when XDG_CONFIG_HOME is set; "
      "$NVRTC_CACHE_CONFIG names another).\n"
      ".TP\n.I /etc/nvrtc\\-cache.conf\nThe system configuration file.\n"
      ".TP\n.I ~/.cache/nvrtc\\-cache/\nThe cache directory (cache_dir; $XDG_CACHE_HOME/nvrtc\\-cache when "
      "XDG_CACHE_HOME is set).\n"
      ".TP\n.I CACHE_DIR/store/data.mdb\nThe LMDB store: every compile result and manifest (its lock file "
      "is lock.mdb beside it). It never shrinks by itself; clear \\-\\-compact and evict \\-\\-compact "
      "rewrite it.\n"
      ".TP\n.I CACHE_DIR/store/counters\nThe statistics every process adds to (stats shows them; stats "
      "\\-z zeroes them).\n");
  fmt::print(
      ".SH EXIT STATUS\n"
      ".TP\n.B 0\nSuccess.\n"
      ".TP\n.B 1\nThe command failed: the cache cannot be opened, an entry or archive is damaged, doctor "
      "found a problem that blocks caching.\n"
      ".TP\n.B 2\nA usage error: an unknown command or option, a bad value.\n"
      ".PP\nnvrtc\\-cache run exits with its command's status (126 or 127 when the command cannot be run, "
      "as a shell does).\n");
  fmt::print(
      ".SH EXAMPLES\n"
      ".TP\n.B nvrtc\\-cache run python train.py\nRun a program with its NVRTC compiles cached.\n"
      ".TP\n.B nvrtc\\-cache doctor\nCheck everything caching needs, with a sample compile.\n"
      ".TP\n.B nvrtc\\-cache \\-s\nShow the statistics (nvrtc\\-cache stats).\n"
      ".TP\n.B nvrtc\\-cache \\-M 20\nCap the cache at 20 GiB (config set max_size 20G).\n"
      ".TP\n.B nvrtc\\-cache ls \\-\\-sort time\nList the entries, the costliest compiles first.\n"
      ".TP\n.B nvrtc\\-cache evict \\-\\-older\\-than 30d\nRemove the entries unused for 30 days.\n"
      ".TP\n.B nvrtc\\-cache export cache.nvrc && nvrtc\\-cache import cache.nvrc\n"
      "Move a cache to another machine.\n"
      ".TP\n.B NVRTC_CACHE_LOG=debug nvrtc\\-cache run ./app\nSay for every compile whether it was a hit "
      "or a miss, and why.\n");
  fmt::print(".SH SEE ALSO\n\\fBnvrtc\\-cache config\\fR, \\fBnvrtc\\-cache doctor\\fR, \\fBccache\\fR(1)\n");
}

void print_bash_completion(const CLI::App& app) {
  std::string commands;
  std::string cases;
  std::string run_options;
  for (const CLI::App* sub : visible_subcommands(app)) {
    commands += (commands.empty() ? "" : " ") + sub->get_name();
    std::string words;
    for (const CLI::Option* option : sub->get_options()) {
      if (option->get_name() == "--help") continue;
      for (const auto& name : option->get_lnames()) words += " --" + name;
      for (const auto& name : option->get_snames()) words += " -" + name;
    }
    if (sub->get_name() == "run") {  // after its options, a command and that command's own arguments
      run_options = words.empty() ? "" : words.substr(1);
      continue;
    }
    for (const CLI::App* nested : visible_subcommands(*sub)) words += " " + nested->get_name();
    cases += fmt::format("    {}) words=\"{}\" ;;\n", sub->get_name(), words.empty() ? "" : words.substr(1));
  }
  std::string shortcuts;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group() != "ccache's options") continue;
    for (const auto& name : option->get_snames()) shortcuts += " -" + name;
    for (const auto& name : option->get_lnames()) shortcuts += " --" + name;
  }
  std::string keys;
  for (const core::SettingSpec& s : core::settings()) keys += (keys.empty() ? "" : " ") + std::string(s.key);
  fmt::print(R"(# bash completion for nvrtc-cache (generated by `nvrtc-cache help --bash-completion`)
_nvrtc_cache() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" command="${{COMP_WORDS[1]}}" words i
  if [ "$COMP_CWORD" -eq 1 ]; then
    case "$cur" in
      -*) COMPREPLY=($(compgen -W "{}" -- "$cur")) ;;
      *) COMPREPLY=($(compgen -W "{}" -- "$cur")) ;;
    esac
    return
  fi
  case "$command" in
    run)
      # run's options until its command; then the command's own arguments (files).
      for ((i = 2; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
          --record) ((i++)) ;;
          --) ((i++)); break ;;
          -*) ;;
          *) break ;;
        esac
      done
      if [ "$i" -lt "$COMP_CWORD" ]; then
        COMPREPLY=($(compgen -f -- "$cur"))
      elif [ "${{COMP_WORDS[COMP_CWORD-1]}}" = --record ]; then
        COMPREPLY=($(compgen -f -- "$cur"))
      elif [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "{} --" -- "$cur"))
      else
        COMPREPLY=($(compgen -c -- "$cur"))
      fi
      return ;;
{}    *) words="" ;;
  esac
  if [ "$command" = config ] && [ "$COMP_CWORD" -eq 3 ]; then
    case "${{COMP_WORDS[2]}}" in get|set) words="{}" ;; esac
  fi
  if [ "$command" = help ] && [ "$COMP_CWORD" -eq 2 ]; then
    words="$words {}"
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
  [ ${{#COMPREPLY[@]}} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))
}}
complete -F _nvrtc_cache nvrtc-cache
)",
             shortcuts.empty() ? "" : shortcuts.substr(1), commands, run_options, cases, keys, commands);
}

}  // namespace

std::shared_ptr<CLI::FormatterBase> help_formatter() { return std::make_shared<FittedFormatter>(); }

std::string command_overview(const CLI::App& app) {
  std::string out = fmt::format("{}\n\nusage: nvrtc-cache COMMAND [OPTIONS]\n\ncommands:\n", app.get_description());
  std::size_t width = 0;
  for (const CLI::App* sub : visible_subcommands(app)) width = std::max(width, sub->get_name().size());
  for (const CLI::App* sub : visible_subcommands(app)) {
    std::string line = fmt::format("  {:<{}}  {}", sub->get_name(), width,
                                   first_sentence(sub->get_description(), kHelpColumns - width - 4));
    if (line.size() > kHelpColumns) {
      line.resize(kHelpColumns - 3);
      line.resize(line.rfind(' '));
      line += "...";
    }
    out += line + "\n";
  }
  out += "\nccache's options (first on the line):\n";
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group() != "ccache's options") continue;
    out += fit_to_columns(fmt::format("  {:<18}  {}",
                                      option->get_name(false, true) + (option->get_type_name().empty() ? "" : " SIZE"),
                                      option->get_description())) +
           "\n";
  }
  out +=
      "\n`nvrtc-cache help COMMAND` (or `nvrtc-cache COMMAND --help`) shows a command's\n"
      "help, `nvrtc-cache help --man` the manual page.\n";
  return out;
}

void add_help_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand(
      "help",
      "Show the commands, one line each; with COMMAND, that command's help; the man page, or the bash "
      "completion script.");
  auto man = std::make_shared<bool>(false);
  auto completion = std::make_shared<bool>(false);
  auto names = std::make_shared<std::vector<std::string>>();
  command->add_option("COMMAND", *names, "the command (and subcommand) whose help to show");
  command->add_flag("--man", *man, "print the man page (roff), generated from these definitions");
  command->add_flag("--bash-completion", *completion, "print the bash completion script");
  command->callback([&app, &outcome, command, man, completion, names] {
    if (*man) {
      print_man(app);
      return;
    }
    if (*completion) {
      print_bash_completion(app);
      return;
    }
    if (names->empty()) {
      fmt::print("{}", command_overview(app));
      return;
    }
    const CLI::App* shown = &app;
    for (const std::string& name : *names) {
      const CLI::App* sub = find_subcommand(*shown, name);
      if (sub == nullptr || sub->get_group().empty()) {
        outcome.exit_code = usage_error(*command, "no command '" + name + "' (`nvrtc-cache help` lists them)");
        return;
      }
      shown = sub;
    }
    fmt::print("{}", shown->help(shown->get_parent() ? command_path(*shown->get_parent()) : ""));
  });

  CLI::App* version = app.add_subcommand("version", "Print the version (also -V, --version).");
  version->callback([] { fmt::print("nvrtc-cache {}\n", kVersion); });
}

}  // namespace nvrtc_cache::tools
