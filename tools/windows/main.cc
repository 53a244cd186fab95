// nvrtc-cache.exe: the command line of the Windows port (tools/windows/commands.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string_view>

#include "core/config.h"
#include "tools/windows/commands.h"

namespace nvrtc_cache::tools::windows {

std::unique_ptr<store::LmdbStore> open_store(std::string* directory) {
  const core::Config config = core::config_from_process_environment();
  for (const std::string& problem : config.problems) std::fprintf(stderr, "nvrtc-cache: %s\n", problem.c_str());
  if (config.cache_dir.empty()) {
    std::fprintf(stderr, "nvrtc-cache: no cache directory (set NVRTC_CACHE_DIR or LOCALAPPDATA)\n");
    return nullptr;
  }
  store::OpenedCache opened = store::open_cache(core::cache_policy(config));
  for (const std::string& message : opened.messages) std::fprintf(stderr, "nvrtc-cache: %s\n", message.c_str());
  *directory = opened.directory;
  if (!opened.store) std::fprintf(stderr, "nvrtc-cache: %s\n", opened.status.message().c_str());
  return std::move(opened.store);
}

}  // namespace nvrtc_cache::tools::windows

int main(int argc, char** argv) {
  namespace cli = nvrtc_cache::tools::windows;
  // run takes the rest of the command line as it is (CMD's own options included).
  if (argc >= 2 && std::string_view(argv[1]) == "run") return cli::run_command();
  CLI::App app{"nvrtc-cache: the NVRTC compile cache's command line (Windows)"};
  app.require_subcommand(1);
  int exit_code = 0;
  bool json = false;
  app.add_subcommand("run", "run [--] CMD [ARGS...]: runs CMD with the cache loaded into it, whichever way it loads NVRTC");
  CLI::App* stats = app.add_subcommand("stats", "the counters every process merged into the cache");
  stats->add_flag("--json", json, "as JSON");
  stats->callback([&] { exit_code = cli::stats(json); });
  app.add_subcommand("clear", "removes every entry and resets the counters")->callback([&] {
    exit_code = cli::clear();
  });
  app.add_subcommand("verify", "reads every entry and checks its envelope and format")->callback([&] {
    exit_code = cli::verify();
  });
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
