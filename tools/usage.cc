// The commands' shared usage helpers (tools/commands.h): finding a subcommand, a command's full
// path, and the one way a usage error is said. In the library, not in main.cc: the commands call them.
#include <string>

#include <fmt/format.h>

#include "tools/commands.h"

namespace nvrtc_cache::tools {

const CLI::App* find_subcommand(const CLI::App& app, const std::string& name) {
  const auto found = app.get_subcommands([&name](const CLI::App* sub) { return sub->get_name() == name; });
  return found.empty() ? nullptr : found.front();
}

std::string command_path(const CLI::App& command) {
  std::string path = command.get_name();
  for (const CLI::App* parent = command.get_parent(); parent != nullptr; parent = parent->get_parent()) {
    path = parent->get_name() + " " + path;
  }
  return path;
}

int usage_error(const CLI::App& command, const std::string& message) {
  const std::string path = command_path(command);
  const bool has_subcommands =
      !command.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); }).empty();
  std::string positionals;
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_positional() && option->get_name() != "--help") {
      positionals += " " + (option->get_required() ? option->get_name() : "[" + option->get_name() + "]");
    }
  }
  fmt::print(stderr, "{}: {}\nusage: {} [OPTIONS]{}{}\n`{} --help` says more.\n", path, message, path,
             has_subcommands ? " [COMMAND]" : "", positionals, path);
  return 2;
}

}  // namespace nvrtc_cache::tools
